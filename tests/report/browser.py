"""Headless Chromium for the page tests: Debian's ``chromium`` driven by
Playwright (never Playwright's own browser download). Without either, the
tests skip with one line, except under ``CI=true``, where they fail.

Each page is opened from a ``file://`` URL with every request that is not the
page itself recorded and aborted, and every console message and page error
kept: a page that works must ask for nothing and say nothing.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import IN_CI, REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
# Screenshots the tests save (CI keeps them as artifacts): $FORENSICS_TEST_ARTIFACTS or bench/out/pages.
ARTIFACTS = Path(os.environ.get("FORENSICS_TEST_ARTIFACTS") or REPO / "bench" / "out" / "pages")


def no_browser_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no browser tests: playwright is not installed (pip install -e '.[test]')"
    if CHROMIUM is None:
        return "no browser tests: Debian's chromium is not installed (apt-get install chromium; .ci/run does)"
    return None


@dataclass
class Opened:
    page: Any
    console: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return self.console + [f"network request: {u}" for u in self.requests]


@pytest.fixture(scope="module", name="browser")
def chromium() -> Iterator[Any]:
    """The browser (as the fixture ``browser``); a test module imports ``chromium`` to have it."""
    reason = no_browser_reason()
    if reason:
        if IN_CI:
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def open_page(browser: Any, path: Path, dark: bool = False, width: int = 1200) -> Opened:
    """Open ``path`` in a fresh context; requests other than the file itself are aborted and recorded."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="dark" if dark else "light")
    page = ctx.new_page()
    opened = Opened(page)
    me = path.resolve().as_uri()

    def route(r: Any) -> None:
        if r.request.url.split("#")[0] != me:
            opened.requests.append(r.request.url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    page.on("console", lambda m: opened.console.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: opened.console.append(f"page error: {e}"))
    page.goto(me, wait_until="load")
    return opened


def screenshot(opened: Opened, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    opened.page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000, "the screenshot is (nearly) empty"
    return out


def box(page: Any, selector: str) -> dict[str, float]:
    """The rendered bounding box of an element (it must be drawn)."""
    b = page.locator(selector).bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return b
