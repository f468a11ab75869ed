"""Classify answers of every corpus log, as digests: to prove a speed change
changed no answer.

    python bench/answers.py --out bench/out/answers-before.json     # snapshot (e.g. at the branch point)
    python bench/answers.py --check bench/out/answers-before.json   # the same answers now? (exit 1 if not)
    FORENSICS_MATCHER=regex python bench/answers.py --check FILE    # ... with the fallback engine
    python bench/answers.py --events --out FILE                     # also every log's `parse` NDJSON
    python bench/answers.py --show KEY                              # one log's answer as it is digested
    FORENSICS_PURE_PYTHON=1 python bench/answers.py --events --check FILE   # the pure-Python core agrees?

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
from typing import Any, Callable, Iterator

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


def answer_digest(result: dict[str, Any], key: str) -> str:
    """The digest of one log's full classify JSON (its ``source`` set to the stable key)."""
    return hashlib.sha256(canonical({**result, "source": key}).encode()).hexdigest()[:20]


def answers(keys: set[str] | None = None, events: bool = False,
            also: Callable[[str, dict[str, Any]], dict[str, str]] | None = None) -> dict[str, str]:
    """Key -> digest of the log's full classify JSON; with ``events`` also
    "events:" + key -> digest of its ``parse`` NDJSON (what the CLI writes);
    ``also(key, result)`` adds more entries from the same answer (the tests'
    shared reference answers add the pinned fields' digest)."""
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
        if also is not None:
            out.update(also(key, res))
        out[key] = answer_digest(res, key)
        if events:
            out[f"events:{key}"] = _events_digest(path)
    return out


def _events_digest(path: Path) -> str:
    from forensics.ingest.sources import Source
    from forensics.pipeline import write_events

    h = hashlib.sha256()
    st = write_events(Source(str(path), path), lambda s: h.update(s.encode("utf-8", "surrogatepass")))
    if st is not None:
        h.update(json.dumps(st.to_dict(), sort_keys=True).encode())
    return h.hexdigest()[:20]


def show(key: str) -> int:
    """Print the canonical JSON of one log's answer, indented (what ``answer_digest`` hashes)."""
    from forensics.pipeline import diagnose_source, load_classifier
    from forensics.ingest.sources import Source

    path = dict(corpus_logs()).get(key)
    if path is None:
        print(f"no log {key!r} in the walk", file=sys.stderr)
        return 2
    res = diagnose_source(Source(str(path), path), classifier=load_classifier(True))
    print(json.dumps(json.loads(canonical({**res, "source": key})), indent=1, sort_keys=True, ensure_ascii=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", help="write a snapshot")
    g.add_argument("--check", help="compare with a snapshot")
    g.add_argument("--show", metavar="KEY", help="print one log's full classify JSON as it is digested (to diff)")
    ap.add_argument("--events", action="store_true", help="also digest each log's parse NDJSON")
    a = ap.parse_args(argv)
    from forensics import native

    from forensics.diagnosis.matcher import engine_name

    print(f"per-line core: {native.core()}" + (f" ({native.WHY_PURE})" if native.WHY_PURE else ""),
          file=sys.stderr)
    print(f"matching engine: {engine_name()}", file=sys.stderr)
    if a.show:
        return show(a.show)
    got = answers(events=a.events)
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
