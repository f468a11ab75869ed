"""Goodlog: every signature (failure, precursor, wrapper) over the project's
own healthy logs; a hit that the named list of known false positives does not
explain fails, and so does a listed false positive that no longer occurs.

    python -m forensics.lab.goodlog [--root DIR] [--shared DIR] [--known FILE]

Healthy logs are found the way the labels mark them: rows of
``corpora/*/labels.csv`` with no root cause (verdict ready/starting/...), the
``good`` column of ``corpora/*/pairs.csv``, and, when ``../shared`` is laid
beside the checkout, every healthy row of ``corpora-real/healthy`` and
``healthy-b``. The known false positives are data:
``corpora/goodlog-known.yaml`` (not under ``signatures/``: the loader reads
every YAML file there, and their bytes make the signature digest).

Exit 0: every hit is known and every entry still occurs; 1: an unknown hit or
a stale entry (one line each); 2: unreadable input (one line)."""
from __future__ import annotations

import argparse
import csv
import fnmatch
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from forensics.api import parse
from forensics.diagnosis.signatures import SignatureSet, load_signatures
from forensics.errors import ForensicsError
from forensics.exitcodes import FAILURE, OK, USAGE

ROOT = Path(__file__).resolve().parents[2]
KNOWN = Path("corpora") / "goodlog-known.yaml"
REAL_SETS = ("healthy", "healthy-b")
SHARED_PREFIX = "../shared/"  # how a log of ../shared is named in output and in the known list


class GoodlogError(ForensicsError):
    pass


@dataclass(frozen=True)
class Log:
    name: str  # repo-relative ("corpora/gpu-pairs/x-good.log") or "../shared/corpora-real/healthy/003.log"
    path: Path


@dataclass(frozen=True)
class Hit:
    signature: str
    kind: str
    log: str
    line: int
    text: str


@dataclass(frozen=True)
class Known:
    index: int  # 1-based position in the list (what a stale report names)
    signature: str
    file: str  # a glob over Log.name
    why: str
    line: int | None = None
    text: str | None = None

    def explains(self, hit: Hit) -> bool:
        return (hit.signature == self.signature and fnmatch.fnmatchcase(hit.log, self.file)
                and (self.line is None or hit.line == self.line)
                and (self.text is None or self.text in hit.text))


# ---------------------------------------------------------------- which logs are healthy
def _rows(table: Path) -> list[dict[str, str]]:
    try:
        with open(table, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GoodlogError(f"{table}: cannot read: {e}") from None


def _healthy_ids(labels: Path) -> list[str]:
    """Rows without a root cause whose verdict is not 'failed': what labels.csv calls healthy."""
    return [r["id"] for r in _rows(labels)
            if not (r.get("root_cause") or "").strip() and (r.get("verdict") or "") != "failed"]


def _log(base: Path, rel: Path, name: str) -> Log:
    path = base / rel
    if not path.is_file():
        raise GoodlogError(f"{path}: listed as a healthy log but missing")
    return Log(name, path)


def project_logs(root: Path) -> list[Log]:
    logs: dict[str, Log] = {}
    for labels in sorted((root / "corpora").glob("*/labels.csv")):
        for lid in _healthy_ids(labels):
            rel = labels.parent.relative_to(root) / f"{lid}.log"
            logs.setdefault(rel.as_posix(), _log(root, rel, rel.as_posix()))
    for pairs in sorted((root / "corpora").glob("*/pairs.csv")):
        for row in _rows(pairs):
            rel = pairs.parent.relative_to(root) / row["good"]
            logs.setdefault(rel.as_posix(), _log(root, rel, rel.as_posix()))
    return sorted(logs.values(), key=lambda lg: lg.name)


def real_logs(shared: Path) -> list[Log]:
    out: list[Log] = []
    for sub in REAL_SETS:
        labels = shared / "corpora-real" / sub / "labels.csv"
        if not labels.is_file():
            continue
        for lid in _healthy_ids(labels):
            out.append(_log(labels.parent, Path(f"{lid}.log"), f"{SHARED_PREFIX}corpora-real/{sub}/{lid}.log"))
    return out


# ---------------------------------------------------------------- the known false positives
def _entry(path: Path, i: int, raw: object, ids: set[str]) -> Known:
    where = f"{path}: entry {i}"
    if not isinstance(raw, dict):
        raise GoodlogError(f"{where}: must be a mapping")
    missing = [k for k in ("signature", "file", "why") if not str(raw.get(k) or "").strip()]
    if missing:
        raise GoodlogError(f"{where}: field {missing[0]!r} is required")
    unknown = set(raw) - {"signature", "file", "why", "line", "text"}
    if unknown:
        raise GoodlogError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    if raw["signature"] not in ids:
        raise GoodlogError(f"{where}: no signature has id {raw['signature']!r}")
    line = raw.get("line")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
        raise GoodlogError(f"{where}: field 'line' must be a line number")
    text = raw.get("text")
    return Known(i, str(raw["signature"]), str(raw["file"]), " ".join(str(raw["why"]).split()),
                 line, None if text is None else str(text))


def load_known(path: Path, ids: set[str]) -> list[Known]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise GoodlogError(f"{path}: cannot read: {e.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise GoodlogError(f"{path}: invalid YAML ({' '.join(str(e).split())[:200]})") from None
    raws = (doc or {}).get("known") if isinstance(doc, dict) else None
    if not isinstance(raws, list):
        raise GoodlogError(f"{path}: top level must be a mapping with a list under 'known'")
    return [_entry(path, i, raw, ids) for i, raw in enumerate(raws, 1)]


# ---------------------------------------------------------------- the run
def scan(logs: list[Log], sigs: SignatureSet) -> list[Hit]:
    hits: list[Hit] = []
    for log in logs:
        for ev in parse(log.path):
            for sig, _ in sigs.match_event(ev):
                hits.append(Hit(sig.id, sig.kind, log.name, ev.line, " ".join(ev.text.split())))
    return hits


def triage(hits: list[Hit], known: list[Known], shared_seen: bool) -> tuple[list[Hit], list[Known], int]:
    """(unknown hits, stale entries, explained hits). An entry is stale when it
    explains no hit; an entry about ../shared is not judged when ../shared is absent."""
    used: set[int] = set()
    unknown: list[Hit] = []
    for hit in hits:
        by = [k.index for k in known if k.explains(hit)]
        used.update(by)
        if not by:
            unknown.append(hit)
    stale = [k for k in known if k.index not in used
             and (shared_seen or not k.file.startswith(SHARED_PREFIX))]
    return unknown, stale, len(hits) - len(unknown)


def _hit_line(h: Hit) -> str:
    text = h.text if len(h.text) <= 160 else h.text[:157] + "..."
    return f"goodlog: UNKNOWN HIT {h.signature} ({h.kind}) at {h.log}:{h.line}: {text}"


def _stale_line(k: Known, known_path: Path) -> str:
    what = f"{k.signature} in {k.file}" + (f" line {k.line}" if k.line else "") + (f" text {k.text!r}" if k.text else "")
    return f"goodlog: STALE entry {k.index} of {known_path} ({what}) no longer occurs: remove it"


def run(root: Path, shared: Path, known_path: Path, out=sys.stdout) -> int:
    sigs = load_signatures()
    known = load_known(known_path, set(sigs.by_id))
    logs = project_logs(root)
    n_project = len(logs)
    if not (shared / "corpora-real").is_dir():
        print(f"goodlog: {shared}/corpora-real missing: the real healthy sets ({', '.join(REAL_SETS)}) "
              f"were not checked", file=out)
    else:
        logs += real_logs(shared)
    shared_seen = len(logs) > n_project
    hits = scan(logs, sigs)
    unknown, stale, explained = triage(hits, known, shared_seen)
    for h in unknown:
        print(_hit_line(h), file=out)
    for k in stale:
        print(_stale_line(k, known_path), file=out)
    print(f"goodlog: {len(sigs)} signatures over {len(logs)} healthy logs ({n_project} project, "
          f"{len(logs) - n_project} real): {explained} known false-positive hits ({len(known)} entries), "
          f"{len(unknown)} unknown, {len(stale)} stale", file=out)
    return FAILURE if unknown or stale else OK


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.goodlog", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: the one holding this module)")
    ap.add_argument("--shared", type=Path, default=None, help="the shared folder (default: ROOT/../shared)")
    ap.add_argument("--known", type=Path, default=None, help=f"the known false positives (default: ROOT/{KNOWN})")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not (root / "corpora").is_dir():
        print(f"goodlog: {root}/corpora not found (run from a checkout of the project)", file=sys.stderr)
        return USAGE
    try:
        return run(root, args.shared or root.parent / "shared", args.known or root / KNOWN)
    except ForensicsError as e:
        print(f"goodlog: {e}", file=sys.stderr)
        return USAGE


if __name__ == "__main__":
    sys.exit(main())
