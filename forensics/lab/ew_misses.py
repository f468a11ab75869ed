"""``python -m forensics.lab.ew_misses``: every labelled early warning of ``corpora/public``,
scored as ``rules_holdout`` scores it -- with its family's *own* signatures held out (a
signature only that family's real logs match) -- and, with ``--baseline-held-out``, with the
healthy baseline rebuilt without that family's healthy logs too (``ew_heldout``).

One row per labelled warning: found after the fact and printed live, seen and held out, the
own signatures the family lost, and what was listed instead. This is the list to read when
asking what general knowledge (a shared library's wording, resource arithmetic, a context
relation) would have caught a warning known only as one family's precursor. ``--families``
restricts the rows (the families kept aside while deriving are read with ``--summary``:
figures, no lines). False live warnings are counted on the same families' healthy logs,
with the same reduced signatures.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from forensics.lab.evaluate import _live_hit, _live_warnings, evidence_names
from forensics.lab.ew_heldout import scored_rows
from forensics.lab.figures_json import json_target_refused, write_json
from forensics.lab.rules_holdout import REAL_PROJECT, _diagnose, _recording, own_signatures


def _held_baselines(families: set[str]) -> dict[str, Any]:
    """family -> the healthy baseline built without that family's healthy logs."""
    from forensics.diagnosis.early_warnings.baseline import BASELINE_PATH, from_data
    from forensics.lab.ew_baseline import assemble, scan_all
    from forensics.lab.ew_heldout import REPO, baseline_groups

    shipped = json.loads(BASELINE_PATH.read_text(encoding="utf-8"))
    groups_of = baseline_groups([REPO / s for s in shipped["sources"] if (REPO / s).is_dir()])
    scans = scan_all(list(groups_of))
    return {f: from_data(assemble([s for s in scans if groups_of[s[0]] != f])) for f in families}


def why_missed(row: dict[str, str], res: dict[str, Any] | None, scored: list[dict[str, Any]]) -> str:
    """Why a labelled warning was not listed, from what linking scored for the failure it diagnosed:
    the log was not called failed; the labelled line came after the failure's first evidence line, or
    in another lifetime than the failed one; it was no candidate (no warning level, no trouble
    wording: an INFO line, a plain print); the failure's own evidence line (it is the failure, not a
    warning of it); a candidate under the listing bar; or over the bar but ranked out by the cap of ~3
    per failure."""
    from forensics.diagnosis.early_warnings.scoring import LIST_THRESHOLD
    from forensics.lab.evaluate import _raw_lines

    if not res or res.get("verdict") != "failed":
        return "not called failed"
    early = (row.get("early_warning_substring") or "").strip()
    at = [i + 1 for i, t in enumerate(_raw_lines(row["_path"])) if early and early in t]
    mine = [w for w in scored if w["line"] in at or early in w["text"]]
    if mine:
        best = max(w["score"] for w in mine)
        return "candidate under the bar" if best < LIST_THRESHOLD else "over the bar, ranked out by the cap"
    if any(e.get("line") in at or early in str(e.get("text", "")) for e in res.get("evidence") or ()):
        return "the failure's own evidence line"
    inc = next((i for i in res.get("incidents") or () if i.get("index") == res.get("incident")), {})
    lo, hi = inc.get("start_line") or 0, inc.get("end_line") or 10 ** 9
    if at and not any(lo <= a <= hi for a in at):
        return "in another lifetime"
    first = min((e["line"] for e in res.get("evidence") or () if isinstance(e.get("line"), int)), default=None)
    if at and first is not None and min(at) > first:
        return "after the failure's first evidence line"
    return "no candidate (no warning level or trouble wording)"


def _row(row: dict[str, str], sset: Any, clf: Any) -> dict[str, Any]:
    from forensics.diagnosis.early_warnings.learned import RECORDER

    rec: list[Any] = []
    token = RECORDER.set(rec)
    try:
        res = _diagnose(row["_path"], sset, clf)
    finally:
        RECORDER.reset(token)
    early = (row.get("early_warning_substring") or "").strip()
    listed = (res or {}).get("early_warnings") or []
    live = _live_warnings(Path(row["_path"]), sset)
    found = int(bool(early) and evidence_names(early, listed, row["_path"]))
    return {"found": found, "live": int(_live_hit(row, live)),
            "why_missed": None if found else why_missed(row, res, rec[-1][1] if rec else []),
            "label": (res or {}).get("root_cause"),
            "listed": [{"line": w["line"], "text": w["text"][:140], "signature": w.get("signature"),
                        "score": w.get("score"), "why": (w.get("why") or "")[:160]} for w in listed],
            "live_lines": [{"line": w["line"], "text": w["text"][:140], "why": w["why"][:160]} for w in live]}


def run(families: set[str] | None, held_baseline: bool) -> dict[str, Any]:
    from forensics.diagnosis.early_warnings.baseline import HELD_OUT
    from forensics.diagnosis.signatures import SignatureSet, signature_set
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    rows = scored_rows(project=REAL_PROJECT)
    matched: dict[str, set[str]] = defaultdict(set)
    hits_of: dict[str, set[str]] = {}
    for row, group in rows:
        hit: set[str] = set()
        undo = _recording(sset, hit)
        try:
            _diagnose(row["_path"], sset, clf)
        finally:
            undo()
        hits_of[row["_path"]] = hit
        for sid in hit:
            matched[sid].add(group)
    own = own_signatures(matched)
    wanted = {g for r, g in rows if r.get("early_warning_substring") and not g.startswith("project:")}
    wanted &= families if families else wanted
    bases = _held_baselines(wanted) if held_baseline else {}
    out: list[dict[str, Any]] = []
    healthy: dict[str, list[int]] = {}
    for fam in sorted(wanted):
        drop = own.get(fam, set())
        reduced = SignatureSet([s for s in sset.signatures if s.id not in drop], f"{sset.digest}-{fam}")
        token = HELD_OUT.set(bases.get(fam))
        try:
            fl = [0, 0]
            for row, group in rows:
                if group != fam:
                    continue
                if not row.get("root_cause"):
                    fl[0] += 1
                    fl[1] += len(_live_warnings(Path(row["_path"]), reduced))
                elif row.get("early_warning_substring"):
                    seen = _row(row, sset, clf) if drop else None
                    held = _row(row, reduced, clf)
                    out.append({"family": fam, "path": row["_path"].split("corpora/")[-1],
                                "root_cause": row["root_cause"], "warning": row["early_warning_substring"],
                                "seen": {k: (seen or held)[k] for k in ("found", "live")}, "held_out": held,
                                "lost": sorted(drop & hits_of[row["_path"]])})
            healthy[fam] = fl
        finally:
            HELD_OUT.reset(token)
    return {"rows": out, "healthy": healthy, "held_baseline": held_baseline}


def render(out: dict[str, Any], summary: bool) -> str:
    lines = []
    by_fam: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for r in out["rows"]:
        f = by_fam[r["family"]]
        f[0] += 1
        f[1] += r["seen"]["found"]
        f[2] += r["seen"]["live"]
        f[3] += r["held_out"]["found"]
        f[4] += r["held_out"]["live"]
        if summary:
            continue
        h = r["held_out"]
        flag = f"found {r['seen']['found']}->{h['found']} live {r['seen']['live']}->{h['live']}"
        if h.get("why_missed"):
            flag += f" ({h['why_missed']})"
        lines.append(f"\n{r['family']} {r['path']} [{r['root_cause']}] {flag} lost={r['lost']}")
        lines.append(f"   warning: {r['warning'][:150]}")
        for w in h["listed"]:
            lines.append(f"   listed {w['line']}: {w['text'][:110]!r} sig={w['signature']} s={w['score']}")
        for w in h["live_lines"][:6]:
            lines.append(f"   live {w['line']}: {w['text'][:100]!r} ({w['why'][:80]})")
    whys: dict[str, int] = defaultdict(int)
    for r in out["rows"]:
        if r["held_out"].get("why_missed"):
            whys[r["held_out"]["why_missed"]] += 1
    ranked = sorted(whys.items(), key=lambda kv: -kv[1])
    lines.append("\nnot found held out, by why: " + ("; ".join(f"{k} {v}" for k, v in ranked) or "-"))
    lines.append(f"{'family':<28}{'n':>4}{'found seen':>12}{'live seen':>11}{'found held':>12}{'live held':>11}"
                 f"{'false live':>12}")
    tot = [0] * 5
    fl_tot = [0, 0]
    for fam, f in sorted(by_fam.items()):
        hl = out["healthy"].get(fam, [0, 0])
        fl_tot = [fl_tot[0] + hl[0], fl_tot[1] + hl[1]]
        tot = [a + b for a, b in zip(tot, f)]
        lines.append(f"{fam:<28}{f[0]:>4}{f[1]:>12}{f[2]:>11}{f[3]:>12}{f[4]:>11}{hl[1]:>7}/{hl[0]}")
    lines.append(f"{'total':<28}{tot[0]:>4}{tot[1]:>12}{tot[2]:>11}{tot[3]:>12}{tot[4]:>11}{fl_tot[1]:>7}/{fl_tot[0]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.ew_misses", description=__doc__.splitlines()[0])
    ap.add_argument("--families", help="comma-separated server families to score (default: every one)")
    ap.add_argument("--summary", action="store_true", help="figures only, no lines (families kept aside)")
    ap.add_argument("--baseline-held-out", action="store_true", help="also hold the family out of the baseline")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args(argv)
    if json_target_refused(args.json):
        return 2
    fams = set(args.families.split(",")) if args.families else None
    out = run(fams, args.baseline_held_out)
    print(render(out, args.summary))
    return write_json(args.json, out) if args.json else 0


if __name__ == "__main__":
    sys.exit(main())
