"""A batch table in a few lines: counts by verdict, root cause and phase, the
most frequent signatures, and the early warnings with the longest median
lead time (``forensics batch --summary``, ``forensics report``)."""
from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from typing import Any

import pandas as pd

from forensics.report.cells import to_float


def summary_line(df: pd.DataFrame, files: int | None = None) -> str:
    """``12 files, 15 incidents, 9 failures, 1 unreadable``."""
    err = df["error"].notna()
    n_files = files if files is not None else int(df["source"].nunique())
    incidents = int((~err & df["incident"].notna()).sum())  # an empty log's row is a file, not an incident
    failures = int((df["verdict"] == "failed").fillna(False).sum())
    unreadable = int(df.loc[err, "source"].nunique())
    return f"{n_files} files, {incidents} incidents, {failures} failures, {unreadable} unreadable"


def _warning_leads(df: pd.DataFrame) -> dict[str, list[float]]:
    leads: dict[str, list[float]] = defaultdict(list)
    for raw in df["early_warnings"].dropna():
        try:
            warnings = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(warnings, list):
            continue
        for w in warnings:
            if not isinstance(w, dict):
                continue
            key = str(w.get("signature") or w.get("template") or str(w.get("text") or "")[:80])
            lead = to_float(w.get("lead_seconds"))
            if not math.isnan(lead) and not math.isinf(lead):
                leads[key].append(lead)
            else:
                leads.setdefault(key, [])
    return leads


def summary_counts(df: pd.DataFrame, top: int = 10, files: int | None = None) -> dict[str, Any]:
    """What the summary says, as data (the text report and the HTML page both
    read this, so their counts are the same): the head line, counts by
    verdict, root cause and phase, the top signatures, and the early warnings
    ranked by median lead time (``(median or None, n, key)``)."""
    ok = df[df["error"].isna() & df["incident"].notna()]
    failed = ok[ok["verdict"] == "failed"]
    leads = _warning_leads(ok)
    ranked = sorted(((statistics.median(v) if v else None, len(v), k) for k, v in leads.items()),
                    key=lambda t: (t[0] is None, -(t[0] or 0.0), t[2]))
    errs = df[df["error"].notna()]
    return {
        "head": summary_line(df, files),
        "verdicts": list(ok["verdict"].astype("string").value_counts().items()),
        "root_causes": list(failed["root_cause"].astype("string").fillna("(none)").value_counts().items()),
        "phases": list(failed["phase"].astype("string").fillna("(unknown)").value_counts().items()),
        "signatures": list(failed["signature"].dropna().value_counts().items())[:top],
        "warnings": ranked[:top],
        "unreadable": list(zip(errs["source"], errs["error"])),
    }


def render_summary(df: pd.DataFrame, top: int = 10, files: int | None = None) -> str:
    """Counts by root cause and by phase, the most frequent signatures, and the
    early warnings with the longest median lead time."""
    counts = summary_counts(df, top, files)
    out = [counts["head"]]

    def block(title: str, items: list[tuple[Any, Any]]) -> None:
        out.append("")
        out.append(title)
        if not items:
            out.append("  (none)")
            return
        w = max(len(str(k)) for k, _ in items)
        for k, v in items:
            out.append(f"  {str(k):<{w}}  {v}")

    block("verdicts:", counts["verdicts"])
    block("failures by root cause:", counts["root_causes"])
    block("failures by phase:", counts["phases"])
    block(f"most frequent signatures (top {top}):", counts["signatures"])
    ranked = counts["warnings"]
    out.append("")
    out.append(f"early warnings by median lead time (top {top}):")
    if not ranked:
        out.append("  (none)")
    else:
        w = max(len(k) for _, _, k in ranked)
        for med, n, k in ranked:
            med_s = f"{med:8.1f} s" if med is not None else "       - s"
            out.append(f"  {k:<{w}}  median lead {med_s}  (n={n})")
    errs = counts["unreadable"]
    if errs:
        out.append("")
        out.append("unreadable:")
        for src, e in errs[:top]:
            out.append(f"  {src}: {e}")
        if len(errs) > top:
            out.append(f"  ... and {len(errs) - top} more")
    return "\n".join(out)
