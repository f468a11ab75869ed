"""Where ``forensics classify`` spends its time (for optimisation work).

    python bench/profile_classify.py                 # 200k-line generated log
    python bench/profile_classify.py --lines 50000 --top 40
    python bench/profile_classify.py --file some.log

Prints, and writes to ``bench/out/profile-classify.txt`` (+ ``.prof`` for
snakeviz / pstats):

1. fixed costs: imports (``python -X importtime``, top entries), loading the
   signature set, loading the classifier, a 1-line classify end to end;
2. per-stage throughput, each stage run alone over the same file, cumulative:
   ingest (bytes -> numbered lines), envelope (-> journald records), events
   (-> typed events, tracebacks assembled), classify (-> incidents, signatures,
   diagnosis); the difference between consecutive rows is that stage's cost;
3. cProfile of the classify core (``diagnose_source``), top N by cumulative and
   by own (tottime) time.

Uses forensics internals (``forensics.ingest``, ``forensics.envelope``,
``forensics.events.parser``); if those move, update the stage functions here.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import OUT, ROOT, child_env, forensics_argv, measure, warm_cache  # noqa: E402

sys.path.insert(0, str(ROOT))


def _timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def importtime(log: Path, top: int) -> str:
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "forensics", "classify", str(log)],
                       capture_output=True, text=True, env=child_env(), cwd=ROOT)
    rows = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, rest = line.split(":", 1)
        self_us, cum_us, name = rest.split("|", 2)
        rows.append((int(cum_us), int(self_us), name.rstrip()[1:]))
    total = sum(c for c, _, n in rows if not n.startswith(" "))  # top-level imports only
    out = [f"imports total (top-level cumulative): {total / 1000:.0f} ms; top {top} by cumulative:"]
    for cum, slf, name in sorted(rows, reverse=True)[:top]:
        out.append(f"  {cum / 1000:8.1f} ms cum {slf / 1000:7.1f} ms self  {name}")
    return "\n".join(out)


def fixed_costs(log1: Path) -> str:
    code = (
        "import time, sys\n"
        "t0=time.perf_counter()\n"
        "import forensics.cli.main, forensics.cli.classify, forensics.pipeline\n"
        "from forensics.diagnosis.signatures import signature_set\n"
        "from forensics.pipeline import load_classifier\n"
        "t1=time.perf_counter()\n"
        "s=signature_set()\n"
        "t2=time.perf_counter()\n"
        "c=load_classifier(True)\n"
        "t3=time.perf_counter()\n"
        "from forensics.events.grammars import parse_message\n"
        "parse_message('Registering 336 cuda graph addresses')\n"
        "t4=time.perf_counter()\n"
        "print(f'  import forensics (cli, run):            {(t1-t0)*1000:7.1f} ms')\n"
        "print(f'  signature_set() ({len(s)} signatures):     {(t2-t1)*1000:7.1f} ms')\n"
        "print(f'  load_classifier(True) -> {type(c).__name__}: {(t3-t2)*1000:7.1f} ms')\n"
        "print(f'  first parse_message (Lark grammars):    {(t4-t3)*1000:7.1f} ms')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), cwd=ROOT)
    lines = ["fixed costs (fresh interpreter, in order):", p.stdout.rstrip() or p.stderr[-2000:]]
    base = min(measure([sys.executable, "-c", "pass"]).wall_s for _ in range(3))
    one = min(measure(forensics_argv() + ["classify", str(log1)], stderr=subprocess.DEVNULL).wall_s
              for _ in range(3))
    lines.append(f"  python -c pass: {base * 1000:.0f} ms; forensics classify of a 1-line log: {one * 1000:.0f} ms "
                 "(best of 3, wall incl. interpreter)")
    return "\n".join(lines)


# ---------------------------------------------------------------- stages
def stage_ingest(path: Path) -> int:
    from forensics.events.parser import number_lines
    from forensics.ingest.sources import Source

    n = 0
    for _ in number_lines(Source(str(path), path).blocks()):
        n += 1
    return n


def stage_envelope(path: Path) -> int:
    from forensics.envelope.clock import Clock
    from forensics.envelope.readers import iter_records
    from forensics.envelope.sniff import detect_format
    from forensics.events.parser import SAMPLE_LINES, number_lines
    from forensics.ingest.sources import Source

    numbered = number_lines(Source(str(path), path).blocks())
    sample = []
    for item in numbered:
        sample.append(item)
        if len(sample) >= SAMPLE_LINES:
            break
    fmt = detect_format([t for _, t in sample])

    def chained():  # type: ignore[no-untyped-def]
        yield from sample
        yield from numbered

    n = 0
    for _ in iter_records(chained(), fmt, Clock()):
        n += 1
    return n


def stage_events(path: Path) -> int:
    from forensics.events.parser import iter_source_events
    from forensics.ingest.sources import Source

    n = 0
    for _ in iter_source_events(Source(str(path), path)):
        n += 1
    return n


def stage_classify(path: Path, sset, clf) -> dict:  # type: ignore[no-untyped-def]
    from forensics.pipeline import diagnose_source
    from forensics.ingest.sources import Source

    return diagnose_source(Source(str(path), path), sset=sset, classifier=clf)


def stages(path: Path, lines: int) -> str:
    from forensics.pipeline import load_classifier
    from forensics.diagnosis.signatures import signature_set

    sset = signature_set()
    clf = load_classifier(True)
    stage_events(path)  # warm up lazily built grammars/regexes
    rows = [("ingest   (bytes -> numbered lines)", lambda: stage_ingest(path)),
            ("envelope (+ journald records)", lambda: stage_envelope(path)),
            ("events   (+ prefixes, grammar, tracebacks)", lambda: stage_events(path)),
            ("classify (+ incidents, signatures, diagnosis)", lambda: stage_classify(path, sset, clf))]
    out = [f"per-stage, cumulative (in-process, {lines:,} lines, imports and loading excluded):",
           f"  {'stage':<46} {'s':>7} {'lines/s':>10} {'stage s':>8} {'share':>6}"]
    prev = 0.0
    total = None
    results = []
    for name, fn in rows:
        t, _ = _timed(fn)
        results.append((name, t, t - prev))
        prev = t
        total = t
    for name, t, d in results:
        out.append(f"  {name:<46} {t:7.2f} {lines / t:>10,.0f} {d:8.2f} {d / total:6.1%}")  # type: ignore[operator]
    return "\n".join(out)


def cprofile(path: Path, top: int, prof_out: Path) -> str:
    from forensics.pipeline import load_classifier
    from forensics.diagnosis.signatures import signature_set

    sset = signature_set()
    clf = load_classifier(True)
    pr = cProfile.Profile()
    pr.enable()
    stage_classify(path, sset, clf)
    pr.disable()
    pr.dump_stats(prof_out)
    parts = []
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        ps = pstats.Stats(pr, stream=buf).strip_dirs().sort_stats(key)
        ps.print_stats(top)
        text = buf.getvalue()
        text = text[text.find("   ncalls"):] if "   ncalls" in text else text
        parts.append(f"cProfile of diagnose_source, top {top} by {key}:\n{text.rstrip()}")
    return "\n\n".join(parts)


def main() -> None:
    import genlog

    ap = argparse.ArgumentParser(description="Profile forensics classify.")
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--file", default=None, help="profile this log instead of a generated one")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if a.file:
        path = Path(a.file)
    else:
        from run import ensure_log

        path, _ = ensure_log(a.lines)
    lines = sum(1 for _ in open(path, "rb"))
    warm_cache(path)
    log1 = OUT / "profile-1line.log"
    with open(log1, "wb") as f:
        w = genlog.LogWriter(f, genlog.START_EPOCH)
        w.emit("python3[1]", "[2026-05-30 06:00:00] hello")
        w.flush()
    sections = [f"profile of forensics classify on {path} ({lines:,} lines)", fixed_costs(log1),
                importtime(log1, 15), stages(path, lines),
                cprofile(path, a.top, OUT / "profile-classify.prof")]
    text = "\n\n".join(sections) + "\n"
    (OUT / "profile-classify.txt").write_text(text)
    print(text)
    print(f"written: {OUT / 'profile-classify.txt'} and {OUT / 'profile-classify.prof'}")


if __name__ == "__main__":
    main()
