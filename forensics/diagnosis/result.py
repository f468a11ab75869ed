"""The shape of one incident's diagnosis: every key of the JSON contract
present (``null`` / ``[]`` / ``false`` when it does not apply), and evidence
text that is the message alone.

It lives in the diagnosis stage because the diagnosis builds it; the report
stage (``report.contract``) normalises the whole document around it and owns
the schema."""
from __future__ import annotations

import re
from typing import Any

from forensics.envelope.clean import clean_message
from forensics.events.phases import PHASE_ORDER
from forensics.incidents.lifetimes import Incident

EARLY_WARNING_DEFAULTS: dict[str, Any] = {
    "why": None, "subjects": [], "score": None,
    "signature": None, "predicts": [], "lead_seconds": None, "count": 1, "learned": False,
    "support": None, "lift": None,
}

# What a console or an outer log put in front of the message, when a whole
# source did not carry it (so the envelope could not learn it): a web
# console's "  |   | 2025-11-04 10:07:58.27 master-0 >> ", a leftover border.
_CONSOLE_PREFIX = re.compile(
    r"^\s*(?:[|│┃]\s*)+(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+)?(?:[\w.@:-]+\s+>>\s?)?"
    r"|^\s*(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+)?[\w.@:-]+\s+>>\s?")
_TRAILING_BORDER = re.compile(r"\s+[|│┃]\s*$")
# A colour code whose ESC byte was lost, anywhere ("[36m(RayWorkerWrapper ...").
# A bare "[m" only where it cannot be text ("[model_runner.py:1054]", "addr=[mac.lan]").
_LOST_SGR = re.compile(r"\x1b\[(?:\d{1,3}(?:;\d{1,3})*)?m|\[(?:\d{1,3}(?:;\d{1,3})*m|m(?![\w.-]))")


def evidence_text(text: str) -> str:
    """The message alone: no colour codes, no console/envelope prefix, no
    trailing border (the evidence's ``line`` says where it was)."""
    text = clean_message(text)
    if "m" in text and "[" in text:
        text = _LOST_SGR.sub("", text)
    if ">>" in text or text[:1] in (" ", "|", "│", "┃"):
        m = _CONSOLE_PREFIX.match(text)
        if m and m.end() < len(text):
            text = text[m.end():]
        text = _TRAILING_BORDER.sub("", text)
    return text.strip() or text


def normalize_incident(inc: dict[str, Any]) -> dict[str, Any]:
    """One incident's diagnosis with every key of the contract present."""
    inc.setdefault("classifier", None)
    inc.setdefault("failed_first", None)
    inc.setdefault("consequences", [])
    for e in inc.get("evidence") or ():
        e["text"] = evidence_text(e.get("text") or "")
        e.setdefault("role", "supporting")
    for w in inc.get("early_warnings") or ():
        w["text"] = evidence_text(w.get("text") or "")
        for k, v in EARLY_WARNING_DEFAULTS.items():
            if k not in w:
                w[k] = list(v) if isinstance(v, list) else v
    return inc


def incident_skeleton(inc: Incident) -> dict[str, Any]:
    """An incident's diagnosis before anything is decided: what the lifetime
    itself says (lines, times, server, exit, phases), every other key empty."""
    return {
        "index": inc.index, "verdict": None, "root_cause": None, "confidence": None, "decided_by": None,
        "signature": None, "summary": None, "remediation": None, "phase": None, "evidence": [],
        "early_warnings": [], "candidates": [], "truncated": False,
        "start_line": inc.start_line, "end_line": inc.end_line,
        "start_ts": inc.start_ts.isoformat() if inc.start_ts else None,
        "end_ts": inc.end_ts.isoformat() if inc.end_ts else None,
        "duration_s": inc.duration_s, "time_to_failure_s": None,
        "server": inc.server, "unit": inc.unit, "host": inc.host, "exit": inc.exit,
        "phases": [s.to_dict() for s in sorted(inc.phases.values(), key=lambda s: PHASE_ORDER[s.phase])],
        "reached_phase": inc.reached(),
    }
