"""Multi-pattern engines for the signature set, measured on this machine:
RE2's set matcher (google-re2), Hyperscan (hyperscan, two modes), and the
regex fallback (one search per pattern after a literal prefilter).

    python bench/engines.py                        # crash-loop log (1000 lifetimes), shipped signatures
    python bench/engines.py --log FILE --limit 200000

What is timed: compiling the shipped ``text`` patterns into one database,
and scanning the ``text`` view of every event of the log (what
``SignatureSet.match_event`` scans), best of 3, one process. Every engine
must report the same matches as the fallback (counted per view).
Results: stdout and ``bench/out/engines.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proc import OUT  # noqa: E402


def views(log: Path, limit: int) -> list[str]:
    from forensics.api import parse
    from forensics.diagnosis import matcher as M
    from forensics.diagnosis.signatures import event_views

    out = []
    for ev in parse(log):
        for v in event_views(ev):
            out.append(M.prepare(v.text))
        if len(out) >= limit:
            break
    return out


def best(fn, n: int = 3) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    t, r = float("inf"), 0
    for _ in range(n):
        t0 = time.perf_counter()
        r = fn()
        t = min(t, time.perf_counter() - t0)
    return t, r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default=None, help="default: the crash-loop log of 1000 lifetimes")
    ap.add_argument("--limit", type=int, default=200_000, help="views at most")
    ap.add_argument("--no-hs-utf8", action="store_true",
                    help="skip Hyperscan's UTF-8 mode (compiling the set that way takes minutes)")
    a = ap.parse_args(argv)
    if a.log:
        log = Path(a.log)
    else:
        from run import ensure_crashloop

        log, _ = ensure_crashloop(1000)
    from forensics.diagnosis import matcher as M
    from forensics.diagnosis.signatures import load_signatures

    sset = load_signatures()
    pats = sorted({p.pattern for s in sset.signatures for c in s.conditions for f, p in (*c.patterns, *c.unless)
                   if f == "text"})
    texts = views(log, a.limit)
    nbytes = sum(len(t.encode("utf-8", "replace")) for t in texts)
    print(f"{len(pats)} text patterns; {len(texts):,} views of {log.name} ({nbytes / 1e6:.1f} MB)")
    rows: dict[str, dict] = {}

    def report(name: str, compile_s: float, scan: tuple[float, int], note: str = "") -> None:
        t, hits = scan
        rows[name] = {"compile_ms": round(compile_s * 1000, 1), "scan_s": round(t, 3),
                      "us_per_view": round(t / len(texts) * 1e6, 3), "views_per_s": round(len(texts) / t),
                      "matches": hits, "note": note}
        print(f"  {name:<34} compile {compile_s * 1000:9.1f} ms   scan {t / len(texts) * 1e6:7.3f} us/view   "
              f"{hits:6d} matches  {note}")

    # the fallback: what the per-pattern path costs
    t0 = time.perf_counter()
    fb = M.RegexField(pats, list(range(len(pats))))
    c_fb = time.perf_counter() - t0
    report("regex (fallback, prefiltered)", c_fb, best(lambda: sum(len(fb.scan(t)) for t in texts), 1))
    want = rows["regex (fallback, prefiltered)"]["matches"]

    import re2

    t0 = time.perf_counter()
    r2 = M.RE2Field(pats, list(range(len(pats))))
    c_r2 = time.perf_counter() - t0
    report("re2.Set (google-re2)", c_r2, best(lambda: sum(len(r2.scan(t)) for t in texts)),
           f"google-re2 {getattr(re2, '__version__', '')}".strip())

    try:
        import hyperscan
    except ImportError:
        print("  hyperscan not installed (pip install hyperscan): skipped")
    else:
        modes = [("bytes", 0, "'.' and {n,m} count bytes, \\w etc. ASCII"),
                 ("UTF-8", hyperscan.HS_FLAG_UTF8, "'.' and {n,m} count characters")]
        for mode, flags, note in modes[:1] if a.no_hs_utf8 else modes:
            f = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY | flags
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            t0 = time.perf_counter()
            db.compile(expressions=[p.encode() for p in pats], ids=list(range(len(pats))), elements=len(pats),
                       flags=[f] * len(pats))
            c_hs = time.perf_counter() - t0
            found: list[int] = []
            cb = lambda i, a, b, fl, ctx: found.append(i)  # noqa: E731

            def scan_hs() -> int:
                n = 0
                for t in texts:
                    found.clear()
                    db.scan(t.encode("utf-8", "replace"), match_event_handler=cb)
                    n += len(found)
                return n

            report(f"hyperscan ({mode} mode)", c_hs, best(scan_hs), note)
    bad = [k for k, v in rows.items() if v["matches"] != want]
    if bad:
        print(f"  matches differ from the fallback: {', '.join(bad)}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "engines.json").write_text(json.dumps({"log": str(log), "views": len(texts), "patterns": len(pats),
                                                  "engines": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
