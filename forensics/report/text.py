"""Stage 6: the human report: short, readable in a terminal."""
from __future__ import annotations

from typing import Any

import click

_VERDICT_COLOR = {"failed": "red", "ready": "green", "starting": "yellow", "stalled": "yellow", "no-failure": "green"}


def _dur(s: float | None) -> str:
    if s is None:
        return "?"
    if s < 120:
        return f"{s:.0f}s"
    return f"{s / 60:.1f}min"


def render_text(result: dict[str, Any], color: bool = False) -> str:
    def st(text: str, **kw: Any) -> str:
        return click.style(text, **kw) if color else text

    lines: list[str] = []
    verdict = result.get("verdict") or "?"
    head = f"{result['source']}: {st(verdict.upper(), fg=_VERDICT_COLOR.get(verdict), bold=True)}"
    if result.get("root_cause"):
        conf = result.get("confidence")
        head += f"  {st(result['root_cause'], bold=True)}" + (f" ({conf:.0%} sure" if conf is not None else " (")
        head += f", by {result.get('decided_by')})"
    lines.append(head)
    if result.get("summary"):
        lines.append(f"  {result['summary']}")
    where = []
    if result.get("phase"):
        where.append(f"phase {result['phase']}")
    if result.get("time_to_failure_s") is not None:
        where.append(f"failed {_dur(result['time_to_failure_s'])} after start")
    elif result.get("duration_s") is not None:
        where.append(f"ran {_dur(result['duration_s'])}")
    n_inc = len(result.get("incidents") or [])
    if n_inc > 1:
        where.append(f"incident {result.get('incident', 0) + 1} of {n_inc} process lifetimes")
    if result.get("truncated"):
        where.append(st("traceback cut short", fg="yellow"))
    if where:
        lines.append("  " + ", ".join(where))
    if result.get("signature"):
        lines.append(f"  signature: {result['signature']}")
    if result.get("classifier") and result.get("decided_by") == "both" and \
            result["classifier"]["label"] != result.get("root_cause"):
        c = result["classifier"]
        lines.append(f"  classifier disagrees: {c['label']} ({c['confidence']:.0%})")
    if result.get("candidates") and result.get("root_cause") == "unknown":
        cands = ", ".join(f"{c['label']} {c['confidence']:.0%}" for c in result["candidates"][:3])
        lines.append(f"  candidates: {cands}")
    if result.get("evidence"):
        lines.append(st("  evidence:", bold=True))
        for e in result["evidence"]:
            lines.append(f"    line {e['line']}: {_clip(e['text'])}")
    if result.get("early_warnings"):
        lines.append(st("  early warnings (printed before the failure):", bold=True, fg="yellow"))
        for w in result["early_warnings"]:
            lead = f"{w['lead_seconds']:.0f} s before" if w.get("lead_seconds") is not None else "before"
            why = f" ({w['why']})" if w.get("why") else ""
            lines.append(f"    line {w['line']} ({lead}): {_clip(w['text'], 160)}{why}")
    if result.get("remediation"):
        lines.append(st("  try:", bold=True) + f" {result['remediation']}")
    incs = result.get("incidents") or []
    if len(incs) > 1:
        seq = ", ".join(f"{i['verdict']}" + (f" ({i['root_cause']})" if i.get("root_cause") else "") for i in incs[:8])
        more = f", … {len(incs) - 8} more" if len(incs) > 8 else ""
        lines.append(f"  process lifetimes in this log: {seq}{more}")
    stats = result.get("stats") or {}
    if stats:
        lines.append(f"  ({stats.get('lines', 0)} lines, {stats.get('events', 0)} events, "
                     f"{stats.get('tracebacks', 0)} tracebacks)")
    return "\n".join(lines)


def _clip(text: str, n: int = 220) -> str:
    text = text.replace("\n", " | ")
    return text if len(text) <= n else text[: n - 1] + "…"
