"""Which evidence line proves the failure, learned (issue 27): every line the
diagnosis lists as evidence gets features (its role, whether it is an exception
line, a compiler's or a device runtime's error, a wrapper's or a consequence's
wording, where it stands among the others) and a logistic regression trained on
the public corpus's labelled proving lines ranks them; the best comes first.

The list's roles are kept (a ``wrapper`` stays a wrapper wherever it lands)."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from forensics.diagnosis.decision.pair_model import load
from forensics.diagnosis.phase_priors import STARTUP_FAILED
from forensics.incidents import outcome

ROLES = ("cause", "supporting", "root", "last-frame", "fragment", "wrapper", "build-error", "runtime-error",
         "consequence", "fatal")
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|$)")
_ERROR_WORD = re.compile(r"(?i)\berror\b|\bfatal\b|\bfailed\b|\bnot found\b|\bcannot\b|\bunable\b")
_FRAME = re.compile(r'^\s*File "|^\s*at |^\s*#\d+ ')
FEATURES: tuple[str, ...] = tuple(f"role:{r}" for r in ROLES) + (
    "first", "position", "exception_line", "error_word", "compiler_error", "proof_runtime", "proof_build",
    "proof_assert", "consequence_wording", "startup_wrapper_wording", "frame_line", "earliest", "latest", "short")
INDEX = {name: i for i, name in enumerate(FEATURES)}


def entry_vector(entry: dict[str, Any], i: int, lines: list[int]) -> list[float]:
    """The features of evidence entry ``i`` (``lines``: every entry's line number)."""
    x = [0.0] * len(FEATURES)
    role = entry.get("role")
    if role in ROLES:
        x[INDEX[f"role:{role}"]] = 1.0
    text = str(entry.get("text") or "")
    head = text[:2000]
    x[INDEX["first"]] = 1.0 if i == 0 else 0.0
    x[INDEX["position"]] = i / 5.0
    x[INDEX["exception_line"]] = 1.0 if _EXCEPTION.search(head) else 0.0
    x[INDEX["error_word"]] = 1.0 if _ERROR_WORD.search(head) else 0.0
    x[INDEX["compiler_error"]] = 1.0 if outcome.is_compiler_error(head) else 0.0
    cls = outcome.proof_class(head)
    if cls in ("runtime", "build", "assert"):
        x[INDEX[f"proof_{cls}"]] = 1.0
    x[INDEX["consequence_wording"]] = 1.0 if outcome.CONSEQUENCE.search(head) else 0.0
    x[INDEX["startup_wrapper_wording"]] = 1.0 if STARTUP_FAILED.search(head) else 0.0
    x[INDEX["frame_line"]] = 1.0 if _FRAME.search(head) else 0.0
    line = entry.get("line")
    if isinstance(line, int) and lines:
        x[INDEX["earliest"]] = 1.0 if line == min(lines) else 0.0
        x[INDEX["latest"]] = 1.0 if line == max(lines) else 0.0
    x[INDEX["short"]] = 1.0 if len(text.strip()) < 40 else 0.0
    return x


@lru_cache(maxsize=4)
def _weights(key: int) -> tuple[float, ...] | None:
    data = load("evidence.json", "FORENSICS_EVIDENCE_MODEL")
    if data is None or tuple(data["features"]) != FEATURES:
        return None
    return tuple(float(w) for w in data["weights"])


def ranker() -> tuple[float, ...] | None:
    """The shipped ranker's weights (``FORENSICS_EVIDENCE_MODEL`` names another; ``off`` turns it off)."""
    data = load("evidence.json", "FORENSICS_EVIDENCE_MODEL")
    return _weights(id(data)) if data is not None else None


def rank(evidence: list[dict[str, Any]], weights: tuple[float, ...] | None = None) -> list[dict[str, Any]]:
    """``evidence`` best first (stable: equal scores keep the diagnosis's order)."""
    w = weights if weights is not None else ranker()
    if w is None or len(evidence) < 2:
        return evidence
    lines = [e["line"] for e in evidence if isinstance(e.get("line"), int)]
    scores = [sum(a * b for a, b in zip(w, entry_vector(e, i, lines))) for i, e in enumerate(evidence)]
    order = sorted(range(len(evidence)), key=lambda i: -scores[i])
    return [evidence[i] for i in order]
