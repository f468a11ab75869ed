"""Build the healthy baseline that early-warning linking weighs against.

``python -m forensics.lab.ew_baseline [DIR ...] [--out PATH]``

For every healthy log (a ``labels.csv`` row with no ``root_cause``, or the
``good`` run of a ``pairs.csv`` row) of the given collections -- by default every collection under ``corpora/`` -- it
records:

* the masked templates of the warning-ish lines a healthy start-up printed
  (the candidates ``early_warnings.collect`` keeps), per server;
* in how many healthy logs each subject value appears (any line), so linking
  can weigh a shared subject by its rarity (an IDF table).

The output (``forensics/diagnosis/data/healthy_baseline.json``) is data: it
names the logs it was built from. Never point it at ../shared/corpora-real:
those logs measure the tool, they do not teach it.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensics.diagnosis.early_warnings import BASELINE_PATH, coarse_template, subject_value, subjects, template

ROOT = Path(__file__).resolve().parents[2]
# Every collection under corpora/, the public corpus's batches among them (its ~100+ real
# healthy logs of every server family are what a healthy start-up prints in the wild).
DEFAULT_DIRS = sorted({p.parent for pat in ("*/labels.csv", "*/pairs.csv", "public/*/labels.csv")
                       for p in (ROOT / "corpora").glob(pat)})


def healthy_logs(dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        pairs = d / "pairs.csv"
        if pairs.exists():  # GOOD/BAD pairs (forensics diff): every GOOD run is healthy
            with open(pairs, newline="", encoding="utf-8") as f:
                out += [d / r["good"] for r in csv.DictReader(f) if r.get("good") and (d / r["good"]).exists()]
        labels = d / "labels.csv"
        if not labels.exists():
            continue
        with open(labels, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("root_cause"):
                    continue
                if row.get("verdict") == "failed":
                    continue
                cands = [d / f"{row['id']}.log"] + sorted(d.glob(f"{row['id']}.*"))
                log = next((c for c in cands if c.exists() and c.suffix != ".csv"), None)
                if log is not None:
                    out.append(log)
    return out


# A healthy log vouches for the warnings it printed in its own context only, where that context
# changes what the warning means: a vLLM platform plugin (vllm-ascend, vllm-neuron, ...) supplies the
# platform, so vLLM's "No platform detected, vLLM is running on UnspecifiedPlatform" is expected there,
# and the same line on a CUDA host says the GPU is not seen (a failure follows). Templates such logs
# print are kept under "templates_in_context", not in the tables that silence warnings everywhere.
SCOPED_CONTEXTS = frozenset(("plugin:platform",))
# A warning is silenced as "healthy start-ups print it" only where at least this many distinct
# healthy logs printed it (issue 28: a baseline learned from many healthy logs; a warning is a
# prediction, and one or two start-ups that printed it and came up -- an SGLang start on a V100 whose
# model ran in float16 after "Compute capability below sm80" -- do not show it never predicts one).
MIN_HEALTHY_LOGS = 3


@lru_cache(maxsize=None)
def _good_runs(d: Path) -> frozenset[str]:
    pairs = d / "pairs.csv"
    if not pairs.exists():
        return frozenset()
    with open(pairs, newline="", encoding="utf-8") as f:
        return frozenset(r["good"] for r in csv.DictReader(f) if r.get("good"))


def vouches(log: Path) -> int:
    """How many healthy logs one counts for: the GOOD run of a GOOD/BAD pair (``forensics diff``) is
    a controlled twin -- same host and set-up as a failing run, it printed the line and came up -- so
    it shows alone that the line does not decide a failure there; any other healthy log counts once."""
    return MIN_HEALTHY_LOGS if log.name in _good_runs(log.parent) else 1


def scan(path: Path) -> tuple[str | None, set[str], set[str], set[str], set[str]]:
    """(server, warning templates, their shapes, subject values, scoped context tokens) of one healthy log."""
    from forensics.pipeline import diagnose_source
    from forensics.ingest.sources import Source

    incs: list[Any] = []
    diagnose_source(Source(str(path), path), use_classifier=False, keep_incidents=incs, thin=False)
    templates: set[str] = set()
    shapes: set[str] = set()
    values: set[str] = set()
    server = None
    for inc in incs:
        server = server or inc.server
        texts = [h.text for h in inc.precursor_hits]  # precursors that healthy runs print too
        if inc.ew_notes is not None:
            texts += [cand.event.text for cand in inc.ew_notes.candidates()]
        for text in texts:
            templates.add(template(text))
            shapes.add(coarse_template(text))
    from forensics.diagnosis.early_warnings.context import context_tokens
    from forensics.events.parser import iter_source_events

    contexts: set[str] = set()
    for ev in iter_source_events(Source(str(path), path)):
        if ev.kind == "access":
            continue
        for s in subjects(ev.text[:2000]):
            values.add(subject_value(s))
        contexts |= context_tokens(ev.text) & SCOPED_CONTEXTS
    return server, templates, shapes, values, contexts


def _rel(p: Path) -> str:
    """A log's name as the baseline records it: under corpora/ when it is
    there; a capture read from another checkout keeps its corpora/ path."""
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        parts = p.resolve().parts
        return "/".join(parts[parts.index("corpora"):]) if "corpora" in parts else str(p)


# (log, server, templates, shapes, subject values, scoped context tokens)
Scan = tuple[Path, str | None, set[str], set[str], set[str], set[str]]


def scan_all(logs: list[Path]) -> list[Scan]:
    """Every healthy log scanned once (``forensics.lab.ew_train`` assembles a
    baseline per held-out family from these)."""
    return [(log, *scan(log)) for log in logs]


def assemble(scans: list[Scan]) -> dict[str, Any]:
    """The baseline's data from scanned healthy logs."""
    by_server: dict[str, set[str]] = defaultdict(set)
    in_context: dict[str, set[str]] = defaultdict(set)
    support: Counter = Counter()  # distinct healthy logs (outside a scoped context) per template
    shape_support: Counter = Counter()
    df: Counter = Counter()
    digest = hashlib.sha256()
    for log, server, templates, log_shapes, values, contexts in scans:
        if contexts:
            for c in sorted(contexts):
                in_context[c].update(templates)
        else:
            by_server[server or "other"].update(templates)
            weight = vouches(log)
            support.update(dict.fromkeys(templates, weight))
            shape_support.update(dict.fromkeys(log_shapes, weight))
        df.update(values)
        digest.update(log.read_bytes())
    shapes = {s for s, n in shape_support.items() if n >= MIN_HEALTHY_LOGS}
    names = [_rel(scanned[0]) for scanned in scans]
    return {
        "about": "Masked templates of warning-ish lines that at least min_healthy_logs healthy start-ups printed "
                 "(those printed only where a platform plugin supplies the platform: templates_in_context), "
                 "and per subject the number of "
                 "healthy logs that mention it. Built by python -m forensics.lab.ew_baseline.",
        "n_logs": len(scans),
        "sources": sorted({str(Path(n).parent) for n in names}),
        "logs_sha256": digest.hexdigest(),
        "min_healthy_logs": MIN_HEALTHY_LOGS,
        "templates_by_server": {k: sorted(t for t in v if support[t] >= MIN_HEALTHY_LOGS)
                                for k, v in sorted(by_server.items())},
        "templates_in_context": {k: sorted(v) for k, v in sorted(in_context.items())},
        "shapes": sorted(shapes),
        "subject_df": dict(sorted(df.items())),
    }


def build(dirs: list[Path]) -> dict[str, Any]:
    return assemble(scan_all(healthy_logs(dirs)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="collections with labels.csv (default: corpora/*)")
    ap.add_argument("--extra", nargs="*", type=Path, default=[], help="more collections, added to the default")
    ap.add_argument("--out", type=Path, default=BASELINE_PATH)
    a = ap.parse_args(argv)
    dirs = list(a.dirs or DEFAULT_DIRS) + list(a.extra)
    if any("corpora-real" in str(d) for d in dirs):
        print("refusing ../shared/corpora-real: those logs measure the tool, they do not build it", file=sys.stderr)
        return 2
    data = build(dirs)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    from forensics.atomic import atomic_write_text

    atomic_write_text(a.out, json.dumps(data, indent=0, sort_keys=False) + "\n")
    n_t = sum(len(v) for v in data["templates_by_server"].values())
    print(f"{a.out}: {data['n_logs']} healthy logs, {n_t} templates, {len(data['subject_df'])} subjects")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
