"""The JSON contract of ``classify`` (and of ``watch``'s failure events):
every key always present (``null`` / ``[]`` / ``false`` when it does not
apply), a ``schema_version``, and evidence text that is the message alone
(one incident's keys and its evidence text: ``diagnosis.result``).

The schema itself is ``forensics/report/schema/forensics.schema.json``
(shipped in the wheel; ``schema()`` loads it). Within one schema_version new
keys may be added; consumers ignore keys they do not know. Removing or
retyping a key bumps the version.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema") / "forensics.schema.json"

STATS_DEFAULTS: dict[str, Any] = {
    "lines": 0, "parsed": 0, "unparsed": 0, "events": 0, "tracebacks": 0, "truncated_tracebacks": 0,
    "format": None, "clipped_lines": 0, "caps_hit": {}, "truncated_gzip": False, "compression": None,
}


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
