"""How far a faster per-line reader could take classify (issue 29, item 1).

    python bench/reader_bound.py                 # the crash loop and both archives
    python bench/reader_bound.py --file X.log    # any log
    python bench/reader_bound.py --repeats 5

For each log, in one process with everything loaded and warm (best of
``--repeats``, CPU s): the per-line reader's stages, cumulative -- ingest
(bytes -> numbered lines), envelope (-> journald records), events (->
typed events: prefixes, the router, the line-level event parse,
tracebacks; also once cold, as the process's first run: grammars built,
no per-text memo warm) -- and classify after them (text: what the text
report diagnoses; json: every lifetime in full). Then, as separate processes
(median of ``--repeats``, CPU s of the child): Drain3 and ``forensics
classify`` in both output modes.

The bound: a reader that cost nothing would save the events stage's time
(its cold run, the larger) and no more, so classify's whole-process CPU
minus that stage is the best any compiled reader (Cython, C, Rust) could
give; its ratio to Drain3 is printed beside the 2.5x target. Run it
compiled and with ``FORENSICS_PURE_PYTHON=1`` to see what the compiled core
already took.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ROOT, forensics_argv, measure, warm_cache

sys.path.insert(0, str(ROOT))
TARGET = 2.5


def _best_cpu(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def in_process(path: Path, repeats: int) -> tuple[int, dict[str, float]]:
    """Lines, and CPU s of each cumulative stage over ``path`` in this process."""
    import profile_classify as pc

    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source, load_classifier

    sset, clf = signature_set(), load_classifier(True)

    def classify(shown: bool) -> None:
        diagnose_source(Source(str(path), path), sset=sset, classifier=clf, shown_only=shown)

    t0 = time.process_time()
    pc.stage_events(path)  # cold: the reader's first use (grammars, regexes) and no memo warm yet
    cold = time.process_time() - t0
    classify(False)  # first use: the catalogue, grammars, RE2 sets
    stages = {"ingest": lambda: pc.stage_ingest(path), "envelope": lambda: pc.stage_envelope(path),
              "events": lambda: pc.stage_events(path), "classify text": lambda: classify(True),
              "classify json": lambda: classify(False)}
    return pc.stage_ingest(path), {"events, cold": cold, **{k: _best_cpu(fn, repeats) for k, fn in stages.items()}}


def processes(path: Path, repeats: int) -> dict[str, float]:
    """Median CPU s of whole processes: Drain3, classify text, classify json."""
    wl = str(Path(__file__).resolve().parent / "workloads.py")
    runs: dict[str, list[float]] = {"drain3": [], "text": [], "json": []}
    argv = {"drain3": [sys.executable, wl, "drain3", str(path)],
            "text": forensics_argv() + ["classify", str(path)],
            "json": forensics_argv() + ["classify", str(path), "--format", "json"]}
    for i in range(repeats):
        for key in (list(argv) if i % 2 == 0 else list(argv)[::-1]):
            runs[key].append(measure(argv[key]).cpu_s)
    return {k: statistics.median(v) for k, v in runs.items()}


def report(path: Path, repeats: int) -> None:
    from forensics import native

    warm_cache(path)
    n, st = in_process(path, repeats)
    pr = processes(path, repeats)
    print(f"{path.name}: {n:,} lines, core {native.core()}")
    prev = 0.0
    for k, t in st.items():
        base = st["events"] if k.startswith("classify") else (0.0 if k == "events, cold" else prev)
        print(f"  {k:<14} {t:7.3f} s cumulative  {(t - base) / n * 1e6:7.2f} us/line of its own")
        prev = t if k != "events, cold" else 0.0
    reader = max(st["events"], st["events, cold"])  # the generous bound: all of the reader's first run
    print(f"  whole processes, CPU s (median of {repeats}): Drain3 {pr['drain3']:.2f}, "
          f"text {pr['text']:.2f}, json {pr['json']:.2f}")
    for mode in ("text", "json"):
        now, floor = pr["drain3"] / pr[mode], pr["drain3"] / max(pr[mode] - reader, 1e-9)
        print(f"  {mode}: {now:.2f}x Drain3 now; with a reader that cost nothing {floor:.2f}x "
              f"(target {TARGET}x: {'reachable' if floor >= TARGET else 'out of reach'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", action="append", default=None, help="a log (repeatable); default: bench's three")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if a.file:
        paths = [Path(f) for f in a.file]
    else:
        import run

        paths = [run.ensure_crashloop(1000)[0]]
        paths += [run.ensure_archive(k, root, logs)[0] for k, (_, root, logs) in run.real_archives().items()]
    for p in paths:
        report(p, a.repeats)


if __name__ == "__main__":
    main()
