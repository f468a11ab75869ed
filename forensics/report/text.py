"""Stage 6: the human report: short, readable in a terminal."""
from __future__ import annotations

from typing import Any, Callable

from forensics.report.shown import LISTED

# How text is coloured: ``style(text, fg=..., bold=...)`` (the CLI passes click.style on a colour terminal).
Style = Callable[..., str]

_VERDICT_COLOR = {"failed": "red", "ready": "green", "starting": "yellow", "stalled": "yellow", "no-failure": "green"}


def human_duration(s: float | None) -> str:
    """Seconds for people: ``45 s``, ``2 min 5 s``, ``3 h 12 min``, ``1 d 0 h``; ``unknown`` without times."""
    if s is None:
        return "unknown"
    s = max(0.0, float(s))
    if s < 10:
        return f"{s:.1f} s".replace(".0 s", " s")
    n = int(round(s))
    if n < 60:
        return f"{n} s"
    if n < 3600:
        return f"{n // 60} min {n % 60} s"
    if n < 86400:
        return f"{n // 3600} h {n % 3600 // 60} min"
    return f"{n // 86400} d {n % 86400 // 3600} h"


def _when(result: dict[str, Any]) -> str | None:
    ttf, dur = result.get("time_to_failure_s"), result.get("duration_s")
    if result.get("verdict") == "failed":
        if ttf is None:
            return "time of failure unknown (no timestamps)"
        if ttf < 1:
            return "failed at the log's first timestamp"
        return f"failed {human_duration(ttf)} after the log's first line"
    if dur is None:
        return None
    return f"ran {human_duration(dur)}"


def confidence_text(result: dict[str, Any]) -> str:
    """How the answer was reached. A rule match is not a probability (its
    0.95 is a fixed prior), so only the classifier's calibrated probability
    is printed as a percentage."""
    by = result.get("decided_by")
    clf = result.get("classifier") or {}
    conf = result.get("confidence")
    if by == "signature":
        return "matched a rule"
    if by == "both":
        p = clf.get("confidence")
        return "matched a rule" + (f"; classifier probability {p:.0%}" if p is not None else "")
    if by == "classifier" and conf is not None:
        return f"classifier probability {conf:.0%}"
    return f"by {by}" if by else ""


def plain(text: str, **_: Any) -> str:
    """The ``Style`` of uncoloured text."""
    return text


def render_text(result: dict[str, Any], style: Style = plain) -> str:
    st = style
    lines: list[str] = []
    verdict = result.get("verdict") or "?"
    head = f"{result['source']}: {st(verdict.upper(), fg=_VERDICT_COLOR.get(verdict), bold=True)}"
    if result.get("root_cause"):
        how = confidence_text(result)
        head += f"  {st(result['root_cause'], bold=True)}" + (f" ({how})" if how else "")
    lines.append(head)
    if result.get("summary"):
        lines.append(f"  {result['summary']}")
    where = []
    if result.get("phase"):
        where.append(f"phase {result['phase']}")
    when = _when(result)
    if when:
        where.append(when)
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
            lead = f"{human_duration(w['lead_seconds'])} before" if w.get("lead_seconds") is not None else "before"
            why = f" ({w['why']})" if w.get("why") else ""
            lines.append(f"    line {w['line']} ({lead}): {_clip(w['text'], 160)}{why}")
    if result.get("remediation"):
        lines.append(st("  try:", bold=True) + f" {result['remediation']}")
    incs = result.get("incidents") or []
    if len(incs) > 1:
        seq = ", ".join(f"{i['verdict']}" + (f" ({i['root_cause']})" if i.get("root_cause") else "")
                        for i in incs[:LISTED])
        more = f", … {len(incs) - LISTED} more" if len(incs) > LISTED else ""
        lines.append(f"  process lifetimes in this log: {seq}{more}")
    stats = result.get("stats") or {}
    if stats:
        lines.append(f"  ({stats.get('lines', 0)} lines, {stats.get('events', 0)} events, "
                     f"{stats.get('tracebacks', 0)} tracebacks)")
    return "\n".join(lines)


def _clip(text: str, n: int = 220) -> str:
    text = text.replace("\n", " | ")
    return text if len(text) <= n else text[: n - 1] + "…"
