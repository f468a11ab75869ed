"""Text rendering of ``forensics diff`` (colour on a terminal): most telling first."""
from __future__ import annotations

from typing import Any

from forensics.report.text import Style, plain

LISTED = 12  # lines per section in the text report; the JSON has them all (up to its own cap)


def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _secs(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def _val(v: Any) -> str:
    return "—" if v is None else _clip(str(v), 70)


def render_diff(r: dict[str, Any], style: Style = plain) -> str:
    out: list[str] = []
    for section in (_head, _new_in_bad, _facts, _timing, _gone_in_bad):
        if out:
            out.append("")
        out.extend(section(r, style))
    return "\n".join(out)


def _head(r: dict[str, Any], st: Style) -> list[str]:
    g, b = r["good"], r["bad"]
    out = [f"GOOD {g['source']} (lifetime {g['incident']} of {g['incidents']}, {g['verdict']})  vs  "
           f"BAD {b['source']} (lifetime {b['incident']} of {b['incidents']}, {b['verdict']})"]
    f = r.get("failure")
    if f:
        conf = f.get("confidence")
        how = f" ({conf:.0%} sure)" if conf is not None else ""
        out.append(f"{st('BAD failed', fg='red', bold=True)}: {st(str(f.get('root_cause')), bold=True)}{how}"
                   f" in phase {f.get('phase')}" + (f", line {f['line']}" if f.get("line") else ""))
        if f.get("summary"):
            out.append(f"  {f['summary']}")
        if r.get("phase_good_passed"):
            out.append(f"  GOOD passed {r['phase_good_passed']}"
                       + (f" and reached {', '.join(r['phases_not_reached'])}" if r.get("phases_not_reached") else ""))
    else:
        out.append(st("BAD did not fail", fg="green") + f" (verdict {b['verdict']}).")
    return out


def _new_in_bad(r: dict[str, Any], st: Style) -> list[str]:
    new = r["new_in_bad"]
    out = [st(f"New in BAD: {r['new_in_bad_total']} warning/error message(s) GOOD never printed", bold=True)]
    for m in new[:LISTED]:
        when = f"{_secs(m['lead_seconds'])} before" if m.get("lead_seconds") is not None else (
            "after the failure" if m.get("after_failure") else "")
        tag = st(" [early warning]", fg="yellow", bold=True) if m.get("early_warning") else (
            st(" [failure]", fg="red") if m.get("fatal") else "")
        why = f" ({m['why']})" if m.get("why") else ""
        out.append(f"  line {m['line']}" + (f" ({when})" if when else "") + f"{tag}: {_clip(m['text'])}{why}")
    if len(new) > LISTED:
        out.append(f"  … {r['new_in_bad_total'] - LISTED} more (--format json lists them)")
    return out


def _facts(r: dict[str, Any], st: Style) -> list[str]:
    changed = [c for c in r["facts"]["changed"] if not c["volatile"] and not c["one_sided"]]
    one_sided = [c for c in r["facts"]["changed"] if c["one_sided"] and not c["volatile"]]
    volatile = [c for c in r["facts"]["changed"] if c["volatile"]]
    out = [st(f"What the runs were: {len(changed)} difference(s)", bold=True)]
    for c in changed[:LISTED * 2]:
        out.append(f"  {c['key']}: {_val(c['good'])} → {st(_val(c['bad']), fg='yellow')}")
    if len(changed) > LISTED * 2:
        out.append(f"  … {len(changed) - LISTED * 2} more")
    if one_sided:
        only_b = sum(1 for c in one_sided if c["good"] is None)
        out.append(f"  ({len(one_sided)} arguments printed by one run only, {only_b} of them by BAD: another server version)")
    if volatile:
        out.append(f"  ({len(volatile)} that change on every run not shown: {', '.join(c['key'] for c in volatile[:6])})")
    return out


def _timing(r: dict[str, Any], st: Style) -> list[str]:
    t = r["timing"]
    out = [st("Timing (seconds per phase)", bold=True)]
    slow = (t.get("first_slower") or {}).get("phase")
    for row in t["phases"]:
        mark = st("  ← first phase over 2× as long", fg="yellow") if row["phase"] == slow else ""
        out.append(f"  {row['phase']:<20} GOOD {_secs(row['good_s']):>8}   BAD {_secs(row['bad_s']):>8}{mark}")
    return out


def _gone_in_bad(r: dict[str, Any], st: Style) -> list[str]:
    gone = r["gone_in_bad"]
    cut = f" (GOOD up to line {r['gone_cut_line']}, where BAD stopped following it)" if r.get("gone_cut_line") else ""
    out = [st(f"Gone in BAD: {r['gone_in_bad_total']} message(s) GOOD printed that BAD never did{cut}", bold=True)]
    for m in gone[:LISTED]:
        out.append(f"  GOOD line {m['line']}: {_clip(m['text'])}")
    if len(gone) > LISTED:
        out.append(f"  … {r['gone_in_bad_total'] - LISTED} more")
    return out
