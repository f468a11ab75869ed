"""``python -m forensics.lab.ew_live_why``: why each labelled early warning of ``corpora/public``
was not printed live, decided by code (issue 28's live recall).

Each labelled failure is replayed as ``watch`` reads it, held out as ``rules_holdout`` holds it
(its family's own signatures out; with ``--baseline-held-out`` the healthy baseline rebuilt
without the family's healthy logs too). At the labelled line the rules' path is retraced and the
first step that kept it quiet names the bucket: the line never arrives as an event the watcher
reads; it came at or after the fatal line; a precursor named it and kept it quiet (weak, familiar,
its quiet context; or its context stated only later in the log: "no context yet"); or, named by
no precursor, the general rules kept it quiet (no warning level and no wording class, a wording
class read after the fact only, the healthy baseline prints it, a library's Python warning, a
degraded start, no live cue, no rare strong subject, no topic). ``--aside FILE`` (one family a
line after a first line that says how they were drawn) reports those families as figures only.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from forensics.lab.figures_json import json_target_refused, write_json


def _quiet_precursor(hit: Any, facts: dict[str, Any], final: frozenset[str], announced: set) -> str:
    """Why a precursor that names the labelled line kept it quiet."""
    from forensics.diagnosis.early_warnings.baseline import baseline
    from forensics.diagnosis.early_warnings.context import matching

    sig = hit.signature
    have = facts.get("context", frozenset())
    if sig.id in announced:
        return "precursor: its signature announced an earlier line"
    if sig.live_when and not matching(sig.live_when, have) and matching(sig.live_when, final):
        return "precursor: no context yet (stated later in the log)"
    if sig.strength == "weak" and not matching(sig.live_when, have):
        return "precursor: weak, its context not stated"
    if sig.quiet_when and matching(sig.quiet_when, have):
        return "precursor: in its quiet context"
    if baseline().familiar(hit.text):
        return "precursor: healthy start-ups print it (familiar), no context"
    return "precursor: other"


def _quiet_general(ev: Any, server: str | None) -> str:
    """Why the general rules (no precursor) kept the labelled line quiet: the first step of
    ``live._unusual_decision`` that returned nothing."""
    from forensics.diagnosis.early_warnings import live
    from forensics.diagnosis.early_warnings.baseline import baseline
    from forensics.diagnosis.early_warnings.candidates import is_noise, template, text_level
    from forensics.diagnosis.early_warnings.scoring import _topic
    from forensics.diagnosis.early_warnings.subjects import subjects
    from forensics.diagnosis.early_warnings.vocab import DEGRADED_RE, LABEL_TOPICS, cuda_error_label
    from forensics.diagnosis.early_warnings.wording import figures_decide, wording_class
    from forensics.events import types as kinds

    text, base = ev.text, baseline()
    if ev.kind not in (kinds.LOG, kinds.MESSAGE, kinds.PACKAGE_WALK_WARNING, kinds.PHASE_MARKER):
        return f"general: an event the watcher does not read ({ev.kind})"
    if is_noise(text):
        return "general: noise"
    said = wording_class(text)
    if said is not None and not said[4]:
        return f"general: wording class read after the fact only ({said[0]})"
    code = cuda_error_label(text)
    if code is None and not (said and said[3]) and text_level(ev) not in ("WARNING", "ERROR"):
        return "general: no warning level and no wording class"
    if (base.usual(template(text), server) or base.familiar(text)) and not (said and figures_decide(said[0])):
        return "general: the healthy baseline prints it"
    if said is not None:
        return "general: wording class with nothing it predicts"
    if live.LIVE_CUE.search(text) is None:
        return "general: no live cue"
    if DEGRADED_RE.search(text) and not live.HARD_BREAK.search(text):
        return "general: says how the program copes (degraded)"
    if live.PYTHON_WARNING.search(text[:400]):
        return "general: a library's Python warning"
    subs = subjects(text)
    strong = [s for s in subs if s.split(":", 1)[0] in live.STRONG_KINDS and base.rarity(s) >= 0.5]
    if not strong:
        return "general: no rare strong subject"
    if not (code or [lab for lab in LABEL_TOPICS if _topic(lab, subs, text) >= 1.0]):
        return "general: no topic"
    return "general: other"


def replay(row: dict[str, str], sset: Any) -> dict[str, Any]:
    """``watch`` over one labelled failure: live or the bucket of why not, at its labelled line."""
    from forensics.diagnosis.diagnose import record_hits
    from forensics.diagnosis.early_warnings import live_early_warnings
    from forensics.events.parser import iter_source_events
    from forensics.incidents.lifetimes import IncidentBuilder
    from forensics.ingest.sources import Source
    from forensics.lab.evaluate import _raw_lines, evidence_names

    path = Path(row["_path"])
    early, fatal = (row.get("early_warning_substring") or "").strip(), row.get("fatal_substring") or ""
    fatal_at = next((i + 1 for i, t in enumerate(_raw_lines(row["_path"])) if fatal and fatal in t), None)
    builder = IncidentBuilder(str(path), record_hits(sset))
    announced: set[str] = set()
    cur, quiet, live_at = None, [], None
    for ev in iter_source_events(Source(str(path), path)):
        for _ in builder.feed(ev):
            pass
        if builder.cur is not cur:
            cur, announced = builder.cur, set()
        before = set(announced)
        got = live_early_warnings(builder.cur, ev, announced)
        mine = evidence_names(early, [{"line": ev.line, "text": ev.text}], row["_path"])
        if any(evidence_names(early, [w], row["_path"]) for w in got):
            live_at = live_at or min(w["line"] for w in got if evidence_names(early, [w], row["_path"]))
        elif mine:
            quiet.append((ev, before, builder.cur))
    if live_at is not None:
        return {"bucket": "live" if fatal_at is None or live_at < fatal_at else "printed at or after the fatal line"}
    if not quiet:
        return {"bucket": "never an event of its own (another line's continuation)"}
    ev, before, inc = quiet[0]
    if fatal_at is not None and ev.line >= fatal_at:
        return {"bucket": "at or after the fatal line", "line": ev.line, "text": ev.text[:160]}
    notes = getattr(inc, "ew_notes", None)
    facts = notes.facts if notes is not None else {}
    final = (getattr(builder.cur, "ew_notes", None) or notes).facts.get("context", frozenset()) if notes else frozenset()
    hits = [h for h in getattr(inc, "precursor_hits", ()) if h.line == ev.line]
    why = (_quiet_precursor(hits[0], facts, final, before) if hits
           else _quiet_general(ev, getattr(inc, "server", None)))
    return {"bucket": why, "line": ev.line, "text": ev.text[:160],
            "signature": hits[0].signature.id if hits else None}


def run(aside: frozenset[str], held_baseline: bool) -> dict[str, Any]:
    from forensics.diagnosis.early_warnings.baseline import HELD_OUT
    from forensics.lab.ew_heldout import scored_rows
    from forensics.lab.ew_misses import _held_baselines
    from forensics.lab.rules_holdout import REAL_PROJECT, held_out_signatures

    of = held_out_signatures()
    rows = [(r, g) for r, g in scored_rows(project=REAL_PROJECT)
            if not g.startswith("project:") and r.get("root_cause") and (r.get("early_warning_substring") or "").strip()]
    bases = _held_baselines({g for _r, g in rows}) if held_baseline else {}
    out = []
    for row, group in rows:
        token = HELD_OUT.set(bases.get(group))
        try:
            got = replay(row, of(group))
        finally:
            HELD_OUT.reset(token)
        out.append({"family": group, "path": row["_path"].split("corpora/")[-1], "aside": group in aside,
                    "warning": row["early_warning_substring"][:160], **got})
    return {"rows": out, "held_baseline": held_baseline}


def render(out: dict[str, Any]) -> str:
    lines = []
    for part in ("studied", "aside"):
        rows = [r for r in out["rows"] if r["aside"] == (part == "aside")]
        tally = Counter(r["bucket"] for r in rows)
        lines.append(f"{part}: {len(rows)} labelled, live {tally.get('live', 0)}")
        lines += [f"   {n:>4}  {b}" for b, n in tally.most_common() if b != "live"]
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in out["rows"]:
        if not r["aside"] and r["bucket"] != "live":
            by[r["bucket"]].append(r)
    for b, rs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"\n== {b} ({len(rs)})")
        lines += [f"   {r['family']} {r['path']} {r.get('line')}: {r.get('text') or r['warning']!r:.150}"
                  + (f" sig={r['signature']}" if r.get("signature") else "") for r in rs]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.ew_live_why", description=__doc__.splitlines()[0])
    ap.add_argument("--aside", type=Path, help="families reported as figures only (first line: how drawn)")
    ap.add_argument("--baseline-held-out", action="store_true", help="also hold the family out of the baseline")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args(argv)
    if json_target_refused(args.json):
        return 2
    aside = frozenset(x.strip() for x in args.aside.read_text(encoding="utf-8").splitlines()[1:]
                      if x.strip()) if args.aside else frozenset()
    out = run(aside, args.baseline_held_out)
    print(render(out))
    return write_json(args.json, out) if args.json else 0


if __name__ == "__main__":
    sys.exit(main())
