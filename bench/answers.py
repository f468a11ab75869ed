"""Classify answers of every corpus log, as digests: to prove a speed change
changed no answer.

    python bench/answers.py --out bench/out/answers-before.json     # snapshot (e.g. at the branch point)
    python bench/answers.py --check bench/out/answers-before.json   # the same answers now? (exit 1 if not)
    FORENSICS_MATCHER=regex python bench/answers.py --check FILE    # ... with the fallback engine

Each log's full ``classify --format json`` answer (classifier on) is hashed
after dropping the fields that may legitimately differ between builds
(``versions``: the signature digest changes with any edit to a YAML file).
Only digests are written, so a snapshot holds nothing from the real logs.
Logs: ``corpora/*`` (``*.log``) and, when present, ``../shared/corpora-real/*``
and ``../shared/seeds``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

DROP = ("versions",)


def corpus_logs() -> Iterator[tuple[str, Path]]:
    """(stable key, path) of every log the answers are taken on."""
    for d in sorted((ROOT / "corpora").iterdir()):
        if d.is_dir() and d.name != "reproduce":
            for p in sorted(d.rglob("*.log")):
                yield f"corpora/{p.relative_to(ROOT / 'corpora')}", p
    real = SHARED / "corpora-real"
    if real.is_dir():
        for p in sorted(real.rglob("*.log")):
            yield f"real/{p.relative_to(real)}", p
    seeds = SHARED / "seeds"
    if seeds.is_dir():
        for p in sorted(seeds.iterdir()):
            if p.is_file():
                yield f"seeds/{p.name}", p


def canonical(result: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in result.items() if k not in DROP}, sort_keys=True, ensure_ascii=False,
                      default=str)


def answers(keys: set[str] | None = None) -> dict[str, str]:
    from forensics.pipeline import diagnose_source, load_classifier
    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import Source

    sset = signature_set()
    clf = load_classifier(True)
    out = {}
    for key, path in corpus_logs():
        if keys is not None and key not in keys:
            continue
        res = diagnose_source(Source(str(path), path), sset=sset, classifier=clf)
        res["source"] = key
        out[key] = hashlib.sha256(canonical(res).encode()).hexdigest()[:20]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", help="write a snapshot")
    g.add_argument("--check", help="compare with a snapshot")
    a = ap.parse_args(argv)
    got = answers()
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(got, indent=0, sort_keys=True) + "\n")
        print(f"{len(got)} answers -> {a.out}")
        return 0
    want = json.loads(Path(a.check).read_text())
    diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    for k in diff:
        print(f"differs: {k}")
    print(f"{len(got)} answers, {len(diff)} differ from {a.check}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
