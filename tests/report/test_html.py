"""The HTML pages without a browser (issue 31): self-contained, escaped, the
batch page's counts equal to ``forensics report``'s text, the command line's
usage errors and page files. (``test_html_browser.py`` opens them.)"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import CORPORA, REAL, REPO, SHARED, needs_real, run_cli

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

SEED1 = REPO / "examples" / "sglang-b300-flash-attn-cute.log"


class _Blocks(HTMLParser):
    """The tables of the page's ``data-block`` sections: block -> [(first cell, other cells)]."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[str, list[list[str]]] = {}
        self.block: str | None = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and a.get("data-block"):
            self.block = a["data-block"]
            self.blocks[self.block] = []
        elif tag == "tr" and self.block:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.cell is not None and self.row is not None:
            self.row.append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None and self.block:
            if self.row:
                self.blocks[self.block].append(self.row)
            self.row = None
        elif tag == "section":
            self.block = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def text_blocks(text: str) -> dict[str, list[tuple[str, int]]]:
    """``forensics report``'s blocks of counts: title -> [(key, count)]."""
    names = {"verdicts:": "verdicts", "failures by root cause:": "root_causes", "failures by phase:": "phases"}
    out: dict[str, list[tuple[str, int]]] = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("most frequent signatures"):
            cur = "signatures"
            out[cur] = []
        elif line in names:
            cur = names[line]
            out[cur] = []
        elif not line.strip() or not line.startswith("  "):
            cur = None
        elif cur and line.strip() != "(none)":
            key, n = line.strip().rsplit(None, 1)
            out[cur].append((key, int(n)))
    return out


def page_blocks(page: str) -> dict[str, list[tuple[str, int]]]:
    p = _Blocks()
    p.feed(page)
    return {k: [(r[0], int(r[1].replace(",", ""))) for r in rows] for k, rows in p.blocks.items()
            if k in ("verdicts", "root_causes", "phases", "signatures")}


def _batch_and_report(tmp_path: Path, inputs: list[str]) -> tuple[str, str]:
    table = tmp_path / "t.parquet"
    proc = run_cli("batch", *inputs, "--out", str(table), "--jobs", "2", "--no-progress", timeout=1200)
    assert proc.returncode == 0, proc.stderr.decode()
    page = tmp_path / "r.html"
    proc = run_cli("report", str(table), "--html", str(page), timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode(), page.read_text(encoding="utf-8")


def _assert_same_counts(text: str, page: str) -> None:
    want, got = text_blocks(text), page_blocks(page)
    assert set(want) == {"verdicts", "root_causes", "phases", "signatures"} and want["verdicts"]
    assert got == want
    head = text.splitlines()[0]
    assert f'id="headline">{head}<' in page


def test_batch_page_counts_equal_the_text_report(tmp_path):
    text, page = _batch_and_report(tmp_path, ["corpora/cpu", "corpora/gpu", "corpora/journald", "examples"])
    _assert_same_counts(text, page)
    assert len(page.encode()) < 2_000_000


@needs_real
def test_batch_page_over_every_corpus_and_real_set_counts_equal_the_text_report(tmp_path):
    inputs = [str(CORPORA), "examples", str(REAL), str(SHARED / "seeds")]
    text, page = _batch_and_report(tmp_path, inputs)
    _assert_same_counts(text, page)
    assert int(re.match(r"(\d+) files", text).group(1)) > 1500


def test_page_is_self_contained(tmp_path):
    out = tmp_path / "p.html"
    proc = run_cli("classify", "--format", "html", "--out", str(out), str(SEED1))
    assert proc.returncode == 1 and b"page written" in proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # Nothing to fetch: no src= or href= to anything but the page's own anchors.
    assert not re.search(r"""\b(?:src|href)\s*=\s*(?!["']?#)""", page)
    assert not re.search(r"url\((?!#)", page) and "@import" not in page  # (a log's own URLs are text)
    assert page.count("<svg") >= 1 and "1 min 43 s before the failure" in page


def test_log_text_is_escaped_and_line_numbers_match(tmp_path):
    lines = [f"Jan 01 00:00:{i:02d} h python[7]: INFO step {i}" for i in range(1, 40)]
    lines[9] = "Jan 01 00:00:10 h python[7]: <script>alert(1)</script> & <img src=x onerror=alert(2)>"
    lines[30] = "Jan 01 00:00:31 h python[7]: ModuleNotFoundError: No module named 'flash_attn'"
    lines[20] = "Jan 01 00:00:21 h python[7]: a line with a form feed \f and a \r carriage return inside"
    log = tmp_path / "x.log"
    log.write_bytes(("\n".join(lines) + "\n").encode())
    proc = run_cli("classify", "--format", "html", str(log))
    page = proc.stdout.decode()
    assert proc.returncode == 1
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Line 31 of the file is line 31 of the page (a \f or \r inside a line does not split it here).
    m = re.search(r'id="L31" data-n="31">([^<]*)<', page)
    assert m and "No module named &#x27;flash_attn&#x27;" in m.group(1)


def test_stdin_gives_the_same_page(tmp_path):
    from_file = run_cli("classify", "--format", "html", str(SEED1)).stdout.decode()
    from_stdin = run_cli("classify", "--format", "html", input=SEED1.read_bytes()).stdout.decode()
    assert from_stdin.replace("<code>-</code>", "").count('class="ln') == from_file.count('class="ln')
    assert 'id="L213"' in from_stdin and "package walk" in from_stdin


def test_several_inputs_need_a_directory(tmp_path):
    proc = run_cli("classify", "--format", "html", str(SEED1), str(SEED1))
    assert proc.returncode == 2 and b"--out DIR" in proc.stderr and b"Traceback" not in proc.stderr
    proc = run_cli("classify", "--out", str(tmp_path / "x.html"), str(SEED1))
    assert proc.returncode == 2 and b"--out goes with --format html" in proc.stderr
    proc = run_cli("classify", "--format", "html", "--out", str(tmp_path), str(SEED1), "corpora/seeds")
    assert proc.returncode == 1
    pages = sorted(p.name for p in tmp_path.glob("*.html"))
    assert "sglang-b300-flash-attn-cute.log.html" in pages and len(pages) > 2


def test_report_html_to_an_unwritable_place_is_one_line(tmp_path):
    table = tmp_path / "t.jsonl"
    proc = run_cli("batch", str(SEED1), "--out", str(table), "--no-progress")
    assert proc.returncode == 0
    proc = run_cli("report", str(table), "--html", str(tmp_path / "no" / "such" / "dir" / "r.html"))
    err = proc.stderr.decode().strip()
    assert proc.returncode == 2 and "cannot write" in err and len(err.splitlines()) == 1


def test_a_big_log_keeps_only_windows(tmp_path):
    from forensics.ingest.sources import Source
    from forensics.report.html.log_lines import read_excerpt

    log = tmp_path / "big.log"
    log.write_text("".join(f"line {i} " + "x" * 100 + "\n" for i in range(1, 20001)))
    ex = read_excerpt(Source(str(log), log), [5000, 15000], whole_bytes=100_000)
    assert not ex.complete and ex.total == 20000
    assert sorted(ex.lines) == list(range(4996, 5005)) + list(range(14996, 15005))
    assert ex.lines[5000].startswith("line 5000 ")
