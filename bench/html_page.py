"""Issue 31: the batch page for 100,000 incidents is under 10 MB and opens in under 3 s.

Builds a table of N incidents by resampling the rows of a real batch table
(default: ``forensics batch`` over corpora/cpu, corpora/gpu, corpora/journald
and examples/) and spreading them over 60 days, 400 hosts, 6 units and 2,000
sources, with a crash-looping source among them; renders it with
``forensics report --html`` (timed, in a fresh process) and opens the page in
headless Chromium (Debian's, through Playwright), timing the load event and
the moment the incident table is drawn (the page's ``forensics-table-ready``
mark), five times.

    python bench/html_page.py [--incidents 100000] [--table T.parquet] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "report"))


def base_table(work: Path) -> Path:
    out = work / "base.parquet"
    subprocess.run([sys.executable, "-m", "forensics", "batch", "corpora/cpu", "corpora/gpu", "corpora/journald",
                    "examples", "--out", str(out), "--jobs", "2", "--no-progress"], cwd=REPO, check=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True)
    return out


def synthetic(base: Path, n: int, out: Path) -> None:
    import numpy as np
    import pandas as pd

    from forensics.report.frames import read_table, write_table

    df = read_table(base)
    rng = np.random.default_rng(31)
    big = df.iloc[rng.integers(0, len(df), n)].reset_index(drop=True)
    t0 = pd.Timestamp("2026-09-01", tz="UTC")
    big["start_ts"] = t0 + pd.to_timedelta(rng.uniform(0, 60 * 86400, n), unit="s")
    loop = rng.random(n) < 0.02  # one source restarting every ~minute for a day
    big.loc[loop, "start_ts"] = t0 + pd.to_timedelta(np.sort(rng.uniform(0, 86400, int(loop.sum()))), unit="s")
    big["source"] = [f"/var/log/archive/host-{h:03d}/sglang-{s:04d}.log.gz"
                     for h, s in zip(rng.integers(0, 400, n), rng.integers(0, 2000, n))]
    big.loc[loop, "source"] = "/var/log/archive/host-007/sglang-crashloop.log.gz"
    big["host"] = [f"gpu-node-{h:03d}" for h in rng.integers(0, 400, n)]
    big["unit"] = pd.array([f"sglang-{u}.service" for u in rng.integers(0, 6, n)], dtype="string")
    big["incident"] = pd.array(rng.integers(0, 50, n), dtype="Int64")
    write_table(big, out)


def open_times(page_path: Path, repeats: int) -> list[dict[str, float]]:
    from browser import CHROMIUM, FLAGS
    from playwright.sync_api import expect, sync_playwright

    out = []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for _ in range(repeats):
            page = b.new_context(viewport={"width": 1200, "height": 900}).new_page()
            t = time.perf_counter()
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            load = time.perf_counter() - t
            expect(page.locator("html")).to_have_attribute("data-ready", "1", timeout=30_000)
            ready = time.perf_counter() - t
            mark = page.evaluate("() => performance.getEntriesByName('forensics-table-ready')[0].startTime")
            out.append({"load_s": round(load, 3), "table_ready_s": round(ready, 3), "mark_s": round(mark / 1000, 3)})
            page.context.close()
        b.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--incidents", type=int, default=100_000)
    ap.add_argument("--table", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "out" / "html-page.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        table = work / "big.parquet"
        synthetic(args.table or base_table(work), args.incidents, table)
        page = work / "big.html"
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "forensics", "report", str(table), "--html", str(page)], cwd=REPO,
                       check=True, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True)
        render_s = time.perf_counter() - t
        opens = open_times(page, args.repeats)
        res = {"incidents": args.incidents, "page_bytes": page.stat().st_size, "render_s": round(render_s, 2),
               "opens": opens, "worst_table_ready_s": max(o["table_ready_s"] for o in opens)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))
    ok = res["page_bytes"] < 10e6 and res["worst_table_ready_s"] < 3.0
    print(f"{'met' if ok else 'NOT met'}: {res['page_bytes'] / 1e6:.2f} MB (< 10), opens with the table drawn in "
          f"{res['worst_table_ready_s']:.2f} s at worst (< 3)")


if __name__ == "__main__":
    main()
