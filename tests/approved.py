"""Whole-log expectations kept as data (approval tests): each fixture log has a
sidecar ``tests/fixtures/<corpus>/<name>.expected.json`` holding the classify
fields that matter. ``FORENSICS_UPDATE_FIXTURES=1`` rewrites them after an
intended change (review the diff, then commit it)."""
from __future__ import annotations

import difflib
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensics.api import classify

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
UPDATE = os.environ.get("FORENSICS_UPDATE_FIXTURES", "") == "1"
SUFFIX = ".expected.json"
# The project's corpora whose every log carries an approved answer.
CORPORA = ("corpora/seeds", "corpora/journald", "corpora/gpu", "corpora/gpu-early-warning",
           "corpora/gpu-pairs", "corpora/cpu", "examples")


def corpus_logs() -> list[Path]:
    """Every log that must carry an approved answer: the fixture corpora's, and
    any small ``tests/fixtures/<folder>/<name>.log`` kept beside its expectation."""
    return [p for c in CORPORA for p in sorted((REPO / c).glob("*.log"))] + sorted(FIXTURES.rglob("*.log"))


def sidecar_for(log: Path) -> Path:
    """corpora/seeds/seed1.short.log -> tests/fixtures/seeds/seed1.short.expected.json"""
    if log.is_relative_to(FIXTURES):  # a small log kept beside its expectation
        return log.with_name(log.name.removesuffix(".log") + SUFFIX)
    return FIXTURES / log.parent.name / (log.name.removesuffix(".log") + SUFFIX)


def sidecars() -> list[Path]:
    return sorted(FIXTURES.rglob("*" + SUFFIX))


def read_sidecar(sidecar: Path) -> dict[str, Any]:
    return json.loads(sidecar.read_text(encoding="utf-8"))


def log_of(sidecar: Path, doc: dict[str, Any] | None = None) -> Path:
    """The log a sidecar judges: its "log" path (repo-relative), else the .log beside it."""
    doc = read_sidecar(sidecar) if doc is None else doc
    if doc.get("log"):
        return REPO / doc["log"]
    return sidecar.with_name(sidecar.name.removesuffix(SUFFIX) + ".log")


@lru_cache(maxsize=None)
def result(log: Path) -> dict[str, Any]:
    """classify's answer (the dict ``--format json`` prints), once per log per session."""
    return classify(log)


def _evidence(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"line": e["line"], "role": e["role"], "text": e["text"]} for e in items]


def _warnings(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"line": w["line"], "signature": w.get("signature"), "lead_seconds": w.get("lead_seconds"),
             "text": w["text"]} for w in items]


def expectation(d: dict[str, Any]) -> dict[str, Any]:
    """The fields a fixture pins: the verdict, cause, phase, what decided, the
    proving lines and the early-warning lines, and each lifetime's verdict."""
    return {
        "verdict": d["verdict"], "root_cause": d["root_cause"], "phase": d["phase"],
        "decided_by": d.get("decided_by"), "signature": d.get("signature"), "truncated": d.get("truncated"),
        "evidence": _evidence(d.get("evidence") or []),
        "early_warnings": _warnings(d.get("early_warnings") or []),
        "incidents": [{"verdict": i["verdict"], "root_cause": i["root_cause"], "phase": i["phase"],
                       "start_line": i.get("start_line"), "end_line": i.get("end_line")}
                      for i in d.get("incidents") or []],
    }


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def write_sidecar(sidecar: Path, log: Path, doc: dict[str, Any]) -> None:
    """Rewrite the expectation (the "log" and "note" fields are kept)."""
    out: dict[str, Any] = {}
    if not log.is_relative_to(FIXTURES):
        out["log"] = log.relative_to(REPO).as_posix()
    if doc.get("note"):
        out["note"] = doc["note"]
    out["expected"] = expectation(result(log))
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text(_dump(out), encoding="utf-8")


def mismatch(sidecar: Path) -> str | None:
    """A unified diff approved -> actual, or None when they agree."""
    doc = read_sidecar(sidecar)
    want, got = _dump(doc.get("expected")), _dump(expectation(result(log_of(sidecar, doc))))
    if want == got:
        return None
    diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "approved", "actual", lineterm="", n=2)
    return "\n".join(diff)


def pinned_digest(result: dict[str, Any]) -> str:
    """The digest ``tests/fixtures/answer-digests.json`` pins for one answer: its
    ``expectation`` fields (no confidence floats, so it holds on any machine)."""
    pinned = expectation(result)
    return hashlib.sha256(json.dumps(pinned, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]
