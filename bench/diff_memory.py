"""Bounded memory of ``forensics diff`` (issue 19) on two long logs.

    python bench/diff_memory.py                       # 100k, 300k and 1M lines per side
    python bench/diff_memory.py --lines 1000000       # one size only

GOOD and BAD are two different draws of bench/genlog.py (seed 7 with 4 TP ranks, seed 8 with 8;
SGLang, three lifetimes each, mostly serving lines). For each size the script runs
``forensics diff --format json GOOD BAD`` once and records, for that one process, wall time,
CPU time and peak RSS (``os.wait4``), and the sizes of the diff. Memory must stay flat
as the logs grow: diff keeps per lifetime only capped template tables and facts.
Results: ``bench/out/diff-memory.json``; figure: ``bench/diff-memory.png`` (committed).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import BENCH, OUT, child_env, forensics_argv, measure, warm_cache  # noqa: E402


def make_log(lines: int, seed: int, tp: int, lifetimes: int | None) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    p = OUT / f"diff-sglang-{lines}-s{seed}-tp{tp}-l{lifetimes or 3}.log"
    if not p.exists():
        extra = ["--lifetimes", str(lifetimes)] if lifetimes else []
        subprocess.run([sys.executable, str(BENCH / "genlog.py"), "--lines", str(lines), "--seed", str(seed),
                        "--tp", str(tp), *extra, "-o", str(p)], check=True, env=child_env())
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, action="append", help="lines per side (repeatable)")
    ap.add_argument("--lifetimes", type=int, default=None,
                    help="lifetimes per log (default genlog's 3; 1 = one lifetime holding every line)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    sizes = args.lines or [100_000, 300_000, 1_000_000]
    rows = []
    for n in sizes:
        good, bad = make_log(n, 7, 4, args.lifetimes), make_log(n, 8, 8, args.lifetimes)
        warm_cache(good)
        warm_cache(bad)
        with tempfile.TemporaryFile() as out:
            m = measure([*forensics_argv(), "diff", "--format", "json", str(good), str(bad)], stdout=out)
            out.seek(0)
            d = json.loads(out.read())
        row = {"lines_per_side": n, "lifetimes": args.lifetimes or 3, "bytes_per_side": good.stat().st_size, "wall_s": round(m.wall_s, 2),
               "cpu_s": round(m.cpu_s, 2), "max_rss_mib": round(m.max_rss_kib / 1024, 1), "rc": m.returncode,
               "good_templates": d["good"]["templates"], "bad_templates": d["bad"]["templates"],
               "new_in_bad": d["new_in_bad_total"], "facts_changed": len(d["facts"]["changed"])}
        rows.append(row)
        print(json.dumps(row), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    name = "diff-memory.json" if not args.lifetimes else f"diff-memory-l{args.lifetimes}.json"
    (OUT / name).write_text(json.dumps(rows, indent=2))
    if not args.no_plot and len(rows) > 1 and not args.lifetimes:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
        x = [r["lines_per_side"] / 1e6 for r in rows]
        ax[0].plot(x, [r["max_rss_mib"] for r in rows], "o-")
        ax[0].set_xlabel("lines per side (millions)")
        ax[0].set_ylabel("peak RSS (MiB)")
        ax[0].set_ylim(0, max(r["max_rss_mib"] for r in rows) * 1.3)
        ax[0].set_title("forensics diff: memory")
        ax[1].plot(x, [r["wall_s"] for r in rows], "o-", color="tab:orange")
        ax[1].set_xlabel("lines per side (millions)")
        ax[1].set_ylabel("wall time (s)")
        ax[1].set_title("forensics diff: time (2 logs)")
        fig.tight_layout()
        fig.savefig(BENCH / "diff-memory.png", dpi=110)
        print(f"wrote {BENCH / 'diff-memory.png'}")


if __name__ == "__main__":
    main()
