"""The JSON contract of ``classify`` (and of ``watch``'s failure events):
every key always present (``null`` / ``[]`` / ``false`` when it does not
apply), a ``schema_version``, and evidence text that is the message alone.

The schema itself is ``forensics/report/schema/forensics.schema.json``
(shipped in the wheel; ``schema()`` loads it). Within one schema_version new
keys may be added; consumers ignore keys they do not know. Removing or
retyping a key bumps the version.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensics.envelope.clean import clean_message

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema") / "forensics.schema.json"

EARLY_WARNING_DEFAULTS: dict[str, Any] = {
    "why": None, "subjects": [], "score": None,
    "signature": None, "predicts": [], "lead_seconds": None, "count": 1, "learned": False,
    "support": None, "lift": None,
}
STATS_DEFAULTS: dict[str, Any] = {
    "lines": 0, "parsed": 0, "unparsed": 0, "events": 0, "tracebacks": 0, "truncated_tracebacks": 0,
    "format": None, "clipped_lines": 0, "caps_hit": {}, "truncated_gzip": False, "compression": None,
}

# What a console or an outer log put in front of the message, when a whole
# source did not carry it (so the envelope could not learn it): a web
# console's "  |   | 2025-11-04 10:07:58.27 master-0 >> ", a leftover border.
_CONSOLE_PREFIX = re.compile(
    r"^\s*(?:[|│┃]\s*)+(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+)?(?:[\w.@:-]+\s+>>\s?)?"
    r"|^\s*(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\S*\s+)?[\w.@:-]+\s+>>\s?")
_TRAILING_BORDER = re.compile(r"\s+[|│┃]\s*$")
# A colour code whose ESC byte was lost, anywhere ("[36m(RayWorkerWrapper ...").
_LOST_SGR = re.compile(r"\x1b?\[(?:\d{1,3}(?:;\d{1,3})*)?m")


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


def normalize_result(res: dict[str, Any]) -> dict[str, Any]:
    """The top-level object of ``classify --format json``, every key present."""
    res["schema_version"] = SCHEMA_VERSION
    res.setdefault("classifier", None)
    res.setdefault("failed_first", None)
    res.setdefault("consequences", [])
    res.setdefault("incident", None)
    res.setdefault("warnings", [])
    stats = res.get("stats") or {}
    for k, v in STATS_DEFAULTS.items():
        if k not in stats:
            stats[k] = dict(v) if isinstance(v, dict) else v
    res["stats"] = stats
    return res


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every JSON document forensics prints."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
