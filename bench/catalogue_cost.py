"""What the message catalogue costs classify, log by log: an older catalogue
(default: main's ``signatures/catalogue``) against this checkout's, in the same
run, with the same code (issue 27).

    python bench/catalogue_cost.py                       # visible real sets + examples/
    python bench/catalogue_cost.py --old HEAD~3 corpora/public/batch-0{1,2,3}
    python bench/catalogue_cost.py --old-regex           # also the pre-issue-27 template regexes

Each catalogue is timed in its own child process (the catalogue and the
memos over its answers are per process): one warm-up classify, then every log
once, CPU seconds (``time.process_time``: the machine is shared, wall time
says more about the other jobs than about this one) and wall seconds, each
log stopped after ``--timeout`` seconds of wall time. The child also counts,
per catalogue lookup, the candidates the index hands over and the template
regexes run: the lookup is meant to examine a bounded number of entries per
line whatever the catalogue's size. ``--old-regex`` adds a third child, the
new catalogue with the regexes built as before issue 27's fix (adjacent
placeholders kept apart, no atomic groups): it shows the cost that fix removed.

Prints a table (per log: CPU s of each, the most candidates and regexes of
one lookup) and the summary (median and max per catalogue, catalogue MB), and
writes it all as JSON to ``bench/out/catalogue-cost.json`` (``--json``).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import OUT, ROOT, child_env  # noqa: E402

REAL = ROOT.parent / "shared" / "corpora-real"


def default_paths() -> list[Path]:
    sets = sorted(p for p in REAL.glob("*") if p.is_dir()) if REAL.is_dir() else []
    return sets + [ROOT / "examples"]


def logs_of(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and not f.name.endswith((".md", ".json", ".yaml", ".csv")))
        elif p.is_file():
            out.append(p)
    return out


def old_catalogue(ref: str) -> Path:
    """``signatures/catalogue`` at git ``ref``, unpacked under bench/out (kept while the ref's tree is)."""
    tree = subprocess.run(["git", "-C", str(ROOT), "rev-parse", f"{ref}:signatures/catalogue"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dest = OUT / f"catalogue-{tree[:12]}"
    if not (dest / "lookup-index.gz").is_file():
        raw = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "signatures/catalogue"],
                             capture_output=True, check=True).stdout
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    (dest / Path(m.name).name).write_bytes(tf.extractfile(m).read())  # type: ignore[union-attr]
    return dest


def catalogue_mb(d: Path) -> float:
    return round(sum(f.stat().st_size for f in d.iterdir() if f.is_file()) / 1e6, 2)


def _old_template_regex(template: str) -> str:
    """template_regex as it was before issue 27's fix (each placeholder its own
    lazy wildcard, no atomic group): kept here only to measure what it cost."""
    from forensics.events.templates import split_template

    first = template.split("\n", 1)[0] if "\n" in template else template
    parts: list[str] = []
    for lit, ph in split_template(first):
        if lit:
            parts.append(r"\s+".join(re.escape(w) for w in lit.split()) if lit.strip() else r"\s*")
            if lit[:1].isspace() and parts[-1] != r"\s*":
                parts[-1] = r"\s*" + parts[-1]
            if lit[-1:].isspace() and parts[-1] != r"\s*":
                parts[-1] = parts[-1] + r"\s*"
        if ph is not None:
            parts.append(r".*?")
    while parts and parts[0] in (r".*?", r"\s*"):
        parts.pop(0)
    while parts and parts[-1] in (r".*?", r"\s*"):
        parts.pop()
    return "".join(parts)


class _Counts:
    """Per lookup: the candidates the index hands over and the regexes run."""

    def __init__(self) -> None:
        self.lookups = self.cands = self.regexes = self.max_cands = self.max_regexes = 0
        self._run = 0

    def install(self) -> None:
        from forensics.events import catalogue_index as ci

        cands, regex = ci.CatalogueIndex.candidates, ci.CatalogueIndex.regex
        counts = self

        def candidates(idx, message):  # type: ignore[no-untyped-def]
            got = cands(idx, message)
            counts.lookups += 1
            counts.cands += len(got[0])
            counts.max_cands = max(counts.max_cands, len(got[0]))
            counts._run = 0
            return got

        def counted_regex(idx, i):  # type: ignore[no-untyped-def]
            counts.regexes += 1
            counts._run += 1
            counts.max_regexes = max(counts.max_regexes, counts._run)
            return regex(idx, i)

        ci.CatalogueIndex.candidates, ci.CatalogueIndex.regex = candidates, counted_regex

    def take(self) -> dict:
        got = {"lookups": self.lookups, "candidates": self.cands, "regexes": self.regexes,
               "max_candidates": self.max_cands, "max_regexes": self.max_regexes}
        self.__init__()  # type: ignore[misc]
        return got


class _Timeout(Exception):
    pass


def _classify(path: Path) -> str:
    from forensics.cli.options import sources_of
    from forensics.pipeline import diagnose_source

    verdicts = []
    for src in sources_of((str(path),), None):
        verdicts.append(diagnose_source(src, shown_only=True)["verdict"])
    return ",".join(verdicts)


def _time_one(path: Path, timeout: float) -> dict:
    def _alarm(*_a):  # type: ignore[no-untyped-def]
        raise _Timeout()

    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        verdict = _classify(path)
    except _Timeout:
        verdict = "timeout"
    except Exception as e:  # noqa: BLE001 - an unreadable input is a row, not the end of the run
        verdict = f"error: {type(e).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"cpu_s": round(time.process_time() - c0, 3), "wall_s": round(time.perf_counter() - w0, 3),
            "verdict": verdict}


def child(catalogue: str, old_regex: bool, timeout: float, logs: list[str]) -> None:
    """One catalogue: a warm-up classify, then every log; one JSON object per log on stdout."""
    os.environ["FORENSICS_CATALOGUE"] = catalogue
    from forensics.events import catalogue_index

    if old_regex:
        catalogue_index.template_regex = _old_template_regex
    counts = _Counts()
    counts.install()
    warm = sorted((ROOT / "examples").glob("*.log"))
    if warm:
        _classify(warm[0])
    counts.take()
    for p in logs:
        row = {"log": p, **_time_one(Path(p), timeout), **counts.take()}
        print(json.dumps(row), flush=True)


def run_child(name: str, catalogue: Path, logs: list[Path], timeout: float, old_regex: bool = False) -> list[dict]:
    argv = [sys.executable, __file__, "--child", str(catalogue), "--timeout", str(timeout)]
    argv += ["--old-regex"] if old_regex else []
    proc = subprocess.run(argv + [str(p) for p in logs], capture_output=True, text=True, env=child_env())
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode:
        print(f"{name}: child exited {proc.returncode}: {proc.stderr[-2000:]}", file=sys.stderr)
    return rows


def summary(rows: list[dict]) -> dict:
    cpu = [r["cpu_s"] for r in rows]
    return {"logs": len(rows), "cpu_median_s": round(statistics.median(cpu), 3) if cpu else None,
            "cpu_max_s": max(cpu, default=None), "cpu_total_s": round(sum(cpu), 2),
            "timeouts": sum(r["verdict"] == "timeout" for r in rows),
            "max_candidates": max((r["max_candidates"] for r in rows), default=0),
            "max_regexes": max((r["max_regexes"] for r in rows), default=0),
            "lookups": sum(r["lookups"] for r in rows), "regexes": sum(r["regexes"] for r in rows)}


def report(runs: dict[str, list[dict]], mbs: dict[str, float]) -> str:
    names = list(runs)
    out = ["log " + " ".join(f"{n}:cpu_s/cands/rx" for n in names)]
    for k, row in enumerate(runs[names[0]]):
        cells = []
        for n in names:
            r = runs[n][k] if k < len(runs[n]) else None
            cells.append(f"{r['cpu_s']:.2f}{'!' if r['verdict'] == 'timeout' else ''}/{r['max_candidates']}/"
                         f"{r['max_regexes']}" if r else "-")
        out.append(f"{os.path.relpath(row['log'], ROOT)} " + " ".join(cells))
    for n in names:
        out.append(f"{n}: {json.dumps(summary(runs[n]))} catalogue {mbs[n]} MB")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--old", default="main", help="git ref of the catalogue to compare with (default main)")
    ap.add_argument("--old-regex", action="store_true", help="also: the new catalogue, regexes as before the fix")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds of wall time per log")
    ap.add_argument("--json", type=Path, default=OUT / "catalogue-cost.json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child, a.old_regex, a.timeout, [str(p) for p in a.paths])
        return 0
    logs = logs_of(a.paths or default_paths())
    cats = {"old": old_catalogue(a.old), "new": ROOT / "signatures" / "catalogue"}
    runs = {n: run_child(n, d, logs, a.timeout) for n, d in cats.items()}
    if a.old_regex:
        cats["new-old-regex"] = cats["new"]
        runs["new-old-regex"] = run_child("new-old-regex", cats["new"], logs, a.timeout, old_regex=True)
    mbs = {n: catalogue_mb(d) for n, d in cats.items()}
    text = report(runs, mbs)
    print(text)
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps({"old": a.old, "catalogue_mb": mbs, "runs": runs,
                                  "summary": {n: summary(r) for n, r in runs.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
