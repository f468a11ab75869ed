"""The HTML pages opened in headless Chromium (issue 31): no console error, no
network request, the charts drawn, seed 1's warning on its timeline, the
incident table sorting and opening an incident, and a screenshot of each
page saved (``browser.ARTIFACTS``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from browser import box, chromium, open_page, screenshot  # noqa: F401  (chromium: the fixture 'browser')
from conftest import REPO, run_cli

SEED1 = REPO / "examples" / "sglang-b300-flash-attn-cute.log"
BATCH_INPUTS = ["corpora/cpu", "corpora/gpu", "corpora/journald", "examples"]


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "seed1.html"
    proc = run_cli("classify", "--format", "html", "--out", str(out), str(SEED1))
    assert proc.returncode == 1, proc.stderr.decode()  # a failure was diagnosed
    return out


@pytest.fixture(scope="module")
def batch_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("batch")
    table = d / "incidents.parquet"
    proc = run_cli("batch", *BATCH_INPUTS, "--out", str(table), "--jobs", "2", "--no-progress", timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()
    page = d / "report.html"
    proc = run_cli("report", str(table), "--html", str(page))
    assert proc.returncode == 0, proc.stderr.decode()
    return page


def expect(locator):  # type: ignore[no-untyped-def]
    """Playwright's polling assertions (they poll from outside the page: its policy forbids eval)."""
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def _charts_drawn(page) -> int:  # type: ignore[no-untyped-def]
    """Every chart SVG has a real size and drawn shapes; returns how many there are."""
    charts = page.locator("svg.chart")
    n = charts.count()
    for i in range(n):
        b = charts.nth(i).bounding_box()
        assert b and b["width"] > 300 and b["height"] > 80, f"chart {i} is not drawn: {b}"
        assert charts.nth(i).locator("path, rect, use").count() > 5
    return n


def test_seed1_page_opens_clean_and_shows_the_warning_before_the_failure_in_warmup(browser, seed_page):
    opened = open_page(browser, seed_page)
    page = opened.page
    assert opened.problems() == []
    assert _charts_drawn(page) >= 1
    assert "env.module-missing" in page.locator("#verdict h1").inner_text()
    # On the timeline: the package-walk warning (line 79), 1 min 43 s before the failure.
    assert page.locator("svg.chart text", has_text="line 79: 1 min 43 s before the failure").count() == 1
    warn, fail = box(page, "#tl-warning-79"), box(page, "#tl-failure")
    warmup, capture = box(page, "#tl-band-warmup"), box(page, "#tl-band-cuda-graph-capture")
    fail_x, warn_x = fail["x"] + fail["width"] / 2, warn["x"] + warn["width"] / 2
    # The failure sits in the warmup band (drawn: its line crosses the band's extent).
    assert warmup["x"] - 1 <= fail_x <= warmup["x"] + warmup["width"] + 1
    # 103 s before the failure: the capture band starts at 14:46:09, the warning is at 14:46:10 and the
    # failure at 14:47:53, so on the drawn axis (fail - warn) / (fail - capture start) = 103 / 104.
    ratio = (fail_x - warn_x) / (fail_x - capture["x"])
    assert abs(ratio - 103 / 104) < 0.02, ratio
    # The chart's text form says the same.
    table = page.locator("#timeline-chart details table").text_content() or ""
    assert "1 min 43 s before the failure" in table and "in the warmup band" in table
    screenshot(opened, "classify-seed1")


def test_seed1_page_search_and_links_reach_folded_lines(browser, seed_page):
    opened = open_page(browser, seed_page)
    page = opened.page
    line150 = page.locator("#L150")
    assert not line150.is_visible()  # folded away: far from every line of interest
    page.fill("#search", "RemoteDisconnected")
    expect(page.locator("#hits")).to_contain_text("lines")
    hit = page.locator("#logtext .ln.hit").first
    assert hit.is_visible() and "RemoteDisconnected" in hit.inner_text()
    page.click("#evidence a[href='#L213']")
    assert page.locator("#L213").is_visible() and "Vendored FlashAttention" in page.locator("#L213").inner_text()
    page.goto(seed_page.resolve().as_uri() + "#L150")
    assert page.locator("#L150").is_visible()  # a link to a folded line opens its fold
    assert opened.problems() == []


def test_seed1_page_in_dark_mode(browser, seed_page):
    opened = open_page(browser, seed_page, dark=True)
    page = opened.page
    bg = page.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    text = page.locator("svg.chart text").first.evaluate("t => getComputedStyle(t).fill")
    assert _luminance(bg) < 0.2 and _luminance(text) > 0.6, (bg, text)
    screenshot(opened, "classify-seed1-dark")


def _luminance(css: str) -> float:
    nums = [float(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
    return sum(nums) / (3 * 255)


def test_batch_page_charts_sort_and_open_an_incident(browser, batch_page):
    opened = open_page(browser, batch_page)
    page = opened.page
    expect(page.locator("html")).to_have_attribute("data-ready", "1")
    assert opened.problems() == []
    assert _charts_drawn(page) >= 5
    rows = page.locator("#incidents tbody tr")
    assert rows.count() == 100  # one page of rows
    page.click("#incidents th[data-key=root_cause]")
    first = [rows.nth(i).locator("td").nth(4).inner_text() for i in range(100)]
    filled = [x for x in first if x]
    assert filled == sorted(filled) and filled[0] < filled[-1]
    page.click("#incidents th[data-key=root_cause]")  # again: descending
    assert page.locator("#incidents th[data-key=root_cause]").get_attribute("aria-sort") == "descending"
    desc = rows.first.locator("td").nth(4).inner_text()
    assert desc >= filled[-1]
    # A row's link opens its incident: the evidence and warnings from the table.
    row = rows.first
    source = row.locator("td").first.inner_text()
    row.locator("a").click()
    detail = page.locator("#detail")
    # The click's handler shows the panel on the page's next turn: wait for it (a loaded CI machine
    # once looked before it had run), then read it.
    detail.wait_for(state="visible", timeout=15000)
    assert source in detail.inner_text()
    assert "Evidence" in detail.inner_text() and detail.locator("ul.evidence li").count() >= 1
    screenshot(opened, "report-batch")


def test_batch_page_filter_and_pages(browser, batch_page):
    opened = open_page(browser, batch_page)
    page = opened.page
    expect(page.locator("html")).to_have_attribute("data-ready", "1")
    total = page.locator("#shown").inner_text()
    page.fill("#filter", "gpu.out-of-memory")
    expect(page.locator("#shown")).to_contain_text("filtered")
    causes = page.locator("#incidents tbody tr td:nth-child(5)").all_inner_texts()
    assert causes and all(c == "gpu.out-of-memory" for c in causes)
    page.fill("#filter", "")
    expect(page.locator("#shown")).to_have_text(total)
    page.click("#fwd")
    assert page.locator("#shown").inner_text().startswith("rows 101–")
    assert opened.problems() == []


def test_seed1_page_prints_the_numbers_on_white(browser, seed_page):
    opened = open_page(browser, seed_page, dark=True)
    page = opened.page
    numbers = page.locator("#timeline-chart details table")
    assert not numbers.is_visible()  # folded on screen
    page.emulate_media(media="print")
    assert numbers.is_visible() and not page.locator("#search").is_visible()
    assert page.locator("body").evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(255, 255, 255)"
    assert opened.problems() == []
