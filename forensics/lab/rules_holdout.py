"""``python -m forensics.lab.rules_holdout``: the hand-set rules scored with each
public server family's *own* signatures held out.

The grouped cross-validation (``forensics.lab.crossval``) holds a family out of the
learned parts only. The signatures were written reading every earlier batch, so on
the families they were written from, the rules' top-1 is a figure of logs already
seen, and the ledger's first looks (each batch measured before it changed anything)
sit 10-15 points below it. This is the check that the cross-validation is honest,
made honest for the rules as far as the data allows:

A signature is a family's **own** when every real log it matches at all (as the
answer or as a rival), over every labelled real log the project holds
(``corpora/public``, and the reproduced ``corpora/cpu``, ``gpu``,
``gpu-early-warning``, ``seeds``), belongs to that family: no other server's logs
vouch for it. Each family's logs are diagnosed again with its own signatures taken
out, as they would have been read before anyone wrote rules from them. Signatures
that match no real log at all are kept (written from a program's source or its
catalogue, not from a log). The generated corpus is left out of the vouching: it is
drawn from the signatures' own examples.

The learned parts it reads (label model, prior and ``unknown`` threshold, death detector,
healthy baseline) are the shipped ones, trained on every family: ``forensics.lab.honest_holdout``
refits them per fold of families as well, and sets the ledger's first looks beside both.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from forensics.lab.evaluate import _live_hit, _live_warnings, evidence_names
from forensics.lab.ew_heldout import scored_rows
from forensics.lab.figures_json import json_target_refused, write_json
from forensics.lab.train import held_out_classifiers

REAL_PROJECT = ("corpora/cpu", "corpora/gpu", "corpora/gpu-early-warning", "corpora/seeds")


def _recording(sset: Any, seen: set[str]) -> Callable[[], None]:
    """Record every signature id ``sset`` matches until the returned undo is called."""
    views, event = sset.match_views, sset.match_event

    def match_views(vs: Any, candidates: Any = None) -> Any:
        got = views(vs, candidates)
        seen.update(sig.id for sig, _ in got)
        return got

    def match_event(ev: Any) -> Any:
        got = event(ev)
        seen.update(sig.id for sig, _ in got)
        return got

    sset.match_views, sset.match_event = match_views, match_event

    def undo() -> None:
        del sset.match_views, sset.match_event
    return undo


def _diagnose(path: str, sset: Any, clf: Any) -> dict[str, Any] | None:
    from forensics.errors import InputError
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    try:
        return diagnose_source(Source(path, Path(path)), sset=sset, classifier=clf)
    except InputError:
        return None


def own_signatures(matched: dict[str, set[str]], project_vouches: bool = True) -> dict[str, set[str]]:
    """family -> the signature ids only that family's logs match (``matched``: id -> groups).
    ``project_vouches=False``: the project's own reproductions do not vouch for a signature
    either (the strict check: a wording read off one family's logs and then reproduced on
    the project's machines is still that family's own)."""
    own: dict[str, set[str]] = defaultdict(set)
    for sid, groups in matched.items():
        if not project_vouches:
            groups = {g for g in groups if not g.startswith("project:")}
        if len(groups) == 1:
            (g,) = groups
            if not g.startswith("project:"):
                own[g].add(sid)
    return dict(own)


def _score(row: dict[str, str], res: dict[str, Any] | None, sset: Any,
           detail: dict[str, Any] | None = None) -> dict[str, int]:
    """One labelled failure's hits; its labelled early warning found after the fact and
    printed live (``watch``'s replay with the same signatures) where it has one (``detail``, when
    given, gets the lines listed and printed live: the misses' reading)."""
    early = row.get("early_warning_substring") or ""
    ew = {"ew_n": int(bool(early)), "ew_found": 0, "ew_live": 0, "ew_listed": 0}
    if res is None:
        return {"n": 1, "top1": 0, "phase": 0, "evidence_first": 0, "failed": 0, "conf90": 0, "conf90_right": 0,
                **ew}
    fatal = row.get("fatal_substring") or ""
    ev = res.get("evidence") or []
    ew["ew_listed"] = len(res.get("early_warnings") or [])  # issue 28: <= 3 listed per failure
    if early:
        ew["ew_found"] = int(evidence_names(early, res.get("early_warnings") or [], row["_path"]))
        live = _live_warnings(Path(row["_path"]), sset)
        ew["ew_live"] = int(_live_hit(row, live))
        if detail is not None:
            detail["ew"] = {"warning": early[:200],
                            "listed": [[w["line"], w["text"][:160], w.get("score"), (w.get("why") or "")[:120]]
                                       for w in res.get("early_warnings") or []],
                            "live": [[w["line"], w["text"][:160], w["why"][:120]] for w in live]}
    right = int((res.get("root_cause") or "none") == row["root_cause"])
    # An answer given at >= 0.9 must be right >= 97% of the time (issue 27), here too: without the
    # family's own signatures, the calibration is all that stands between a guess and certainty.
    sure = int(float(res.get("confidence") or 0.0) >= 0.9)
    return {"n": 1, "top1": right, "conf90": sure, "conf90_right": sure * right,
            "phase": int((res.get("phase") or "") == (row.get("phase") or "")),
            "evidence_first": int(bool(fatal and ev) and evidence_names(fatal, ev[:1], row["_path"])),
            "failed": int(res.get("verdict") == "failed"), **ew}


def _case(row: dict[str, str], res: dict[str, Any] | None, scored: dict[str, int]) -> dict[str, Any]:
    """One held-out failure as the misses' grouping reads it (``--json``): its answer, candidates
    and first evidence line beside its label."""
    res = res or {}
    ev = res.get("evidence") or [{}]
    return {"path": row["_path"], "truth": row["root_cause"], "answer": res.get("root_cause") or "none",
            "confidence": res.get("confidence"), "decided_by": res.get("decided_by"),
            "candidates": [c.get("label") for c in res.get("candidates") or []],
            "evidence_first": scored.get("evidence_first", 0), "first_line": str(ev[0].get("text") or "")[:300],
            "first_role": ev[0].get("role"), "fatal": (row.get("fatal_substring") or "")[:300],
            "phase_truth": row.get("phase") or None, "phase": res.get("phase"),
            # The labeller named this answer as the alternative (a convention dispute, not a miss of a kind).
            "named_in_note": res.get("root_cause") not in (None, "unknown") and
            str(res.get("root_cause")) in (row.get("note") or "")}


def miss_kind(case: dict[str, Any]) -> str | None:
    """Why a held-out failure was missed (None: it was not): said ``unknown`` with the label among
    the candidates or not, not called failed, a label the labeller named as the alternative, or
    a wrong label decided by a signature / the classifier / both (the label among the candidates or not)."""
    ans, truth, cands = case["answer"], case["truth"], case["candidates"]
    if ans == truth:
        return None
    if ans == "none":
        return "not called failed"
    if ans == "unknown":
        return "unknown, label among candidates" if truth in cands else "unknown, label not among candidates"
    if case.get("named_in_note"):
        return "the labeller's named alternative"
    return f"wrong, decided by {case['decided_by']}" + (", label among candidates" if truth in cands[1:] else "")


def _score_healthy(row: dict[str, str], res: dict[str, Any] | None, sset: Any) -> dict[str, int]:
    """One labelled healthy log's hits: its phase (the last reached) and its verdict (issue 27 asks
    85% and 90% there too, and none of them called failed), and the warnings ``watch`` prints live
    on it with the same signatures (issue 28: <= 0.1 a healthy log)."""
    res = res or {}
    return {"n": 1, "phase": int((res.get("phase") or "") == (row.get("phase") or "")),
            "verdict": int(res.get("verdict") == (row.get("verdict") or "ready")),
            "called_failed": int(res.get("verdict") == "failed"),
            "false_live": len(_live_warnings(Path(row["_path"]), sset))}


def _healthy_case(row: dict[str, str], res: dict[str, Any] | None) -> dict[str, Any]:
    res = res or {}
    return {"path": row["_path"], "phase_truth": row.get("phase") or None, "phase": res.get("phase"),
            "verdict_truth": row.get("verdict") or "ready", "verdict": res.get("verdict"),
            "answer": res.get("root_cause") or "none"}


def _add(total: dict[str, int], part: dict[str, int]) -> None:
    for k, v in part.items():
        total[k] = total.get(k, 0) + v


def _matched_and_seen(sset: Any, clf: Any, rows: list[tuple[dict[str, str], str]]
                      ) -> tuple[dict[str, set[str]], dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Every signature id -> the groups whose labelled logs it matches; each family's seen
    scores on its failures and on its healthy logs."""
    matched: dict[str, set[str]] = defaultdict(set)
    seen_scores: dict[str, dict[str, int]] = defaultdict(dict)
    seen_healthy: dict[str, dict[str, int]] = defaultdict(dict)
    for row, group in rows:
        hit: set[str] = set()
        undo = _recording(sset, hit)
        try:
            res = _diagnose(row["_path"], sset, clf)
        finally:
            undo()
        for sid in hit:
            matched[sid].add(group)
        if row.get("root_cause") and not group.startswith("project:"):
            _add(seen_scores[group], _score(row, res, sset))
        elif not group.startswith("project:"):
            _add(seen_healthy[group], _score_healthy(row, res, sset))
    return matched, seen_scores, seen_healthy


def reduced_set(sset: Any, own: dict[str, set[str]], fam: str) -> Any:
    """The signature set ``fam``'s logs are read with held out: without its own signatures."""
    from forensics.diagnosis.signatures import SignatureSet

    drop = own.get(fam, set())
    return SignatureSet([s for s in sset.signatures if s.id not in drop], f"{sset.digest}-{fam}")


def held_out_signatures(project_vouches: bool = True) -> Any:
    """group -> the signature set that group's logs are read with held out (a project corpus:
    every signature): what ``decision_train.collect_rows`` reads held-out rows with."""
    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    matched, _, _ = _matched_and_seen(sset, clf, scored_rows(project=REAL_PROJECT))
    own = own_signatures(matched, project_vouches)
    sets: dict[str, Any] = {}

    def of(group: str) -> Any:
        if group.startswith("project:") or group not in own:
            return sset
        if group not in sets:
            sets[group] = reduced_set(sset, own, group)
        return sets[group]
    return of


def run(project_vouches: bool = True) -> dict[str, Any]:
    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    rows = scored_rows(project=REAL_PROJECT)
    matched, seen_scores, seen_healthy = _matched_and_seen(sset, clf, rows)
    own = own_signatures(matched, project_vouches)
    fold_classifier = held_out_classifiers(clf)  # family -> a classifier that never read its logs
    held: dict[str, dict[str, int]] = {}
    held_healthy: dict[str, dict[str, int]] = defaultdict(dict)
    cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
    healthy_cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fam in sorted(set(seen_scores) | set(seen_healthy)):
        fam_clf = fold_classifier(fam)
        reduced = reduced_set(sset, own, fam)
        tot: dict[str, int] = {}
        for row, group in rows:
            if group != fam:
                continue
            res = _diagnose(row["_path"], reduced, fam_clf)
            if row.get("root_cause"):
                detail: dict[str, Any] = {}
                got = _score(row, res, reduced, detail)
                _add(tot, got)
                cases[fam].append({**_case(row, res, got), **detail, "ew_found": got["ew_found"],
                                   "ew_live": got["ew_live"]})
            else:
                _add(held_healthy[fam], _score_healthy(row, res, reduced))
                healthy_cases[fam].append(_healthy_case(row, res))
        if tot:
            held[fam] = tot
    return {"families": {f: {"seen": seen_scores[f], "held_out": held[f], "own": sorted(own.get(f, ())),
                             "cases": cases[f]} for f in sorted(seen_scores)},
            "healthy": {f: {"seen": seen_healthy[f], "held_out": held_healthy[f], "cases": healthy_cases[f]}
                        for f in sorted(seen_healthy)},
            "signatures": len(sset.signatures), "matched_real": len(matched),
            "own": sum(len(v) for v in own.values())}


def _pct(num: int, n: int) -> str:
    return f"{num / n:.1%} ({num}/{n})" if n else "-"


def _line(name: str, own: int, s: dict[str, int], h: dict[str, int]) -> str:
    return (f"{name:<24}{own:>5}{_pct(s['top1'], s['n']):>18}{_pct(h['top1'], h['n']):>18}"
            f"{_pct(h['phase'], h['n']):>18}{_pct(h['evidence_first'], h['n']):>18}"
            f"{_pct(h['ew_found'], h['ew_n']):>14}{_pct(h['ew_live'], h['ew_n']):>14}")


def render(out: dict[str, Any]) -> str:
    lines = [f"{out['signatures']} signatures, {out['matched_real']} match some labelled real log, "
             f"{out['own']} match one public family's logs only (held out from that family)",
             f"{'family':<24}{'own':>5}{'top-1 seen':>18}{'top-1 held out':>18}{'phase held out':>18}"
             f"{'evidence 1st':>18}{'EW found':>14}{'EW live':>14}"]
    seen_t: dict[str, int] = {}
    held_t: dict[str, int] = {}
    for fam, f in out["families"].items():
        s, h = f["seen"], f["held_out"]
        _add(seen_t, s)
        _add(held_t, h)
        lines.append(_line(fam, len(f["own"]), s, h))
    lines.append(_line("overall (public)", out["own"], seen_t, held_t))
    lines.append(f"answers at confidence >= 0.9 right: held out {_pct(held_t['conf90_right'], held_t['conf90'])}, "
                 f"seen {_pct(seen_t['conf90_right'], seen_t['conf90'])}")
    kinds: dict[str, int] = defaultdict(int)
    for f in out["families"].values():
        for case in f.get("cases", ()):
            why = miss_kind(case)
            if why:
                kinds[why] += 1
    ranked = sorted(kinds.items(), key=lambda kv: -kv[1])
    lines.append("held-out misses by why: " + "; ".join(f"{k} {v}" for k, v in ranked))
    hs: dict[str, int] = {}
    hh: dict[str, int] = {}
    for f in (out.get("healthy") or {}).values():
        _add(hs, f["seen"])
        _add(hh, f["held_out"])
    if hh:
        lines.append(f"healthy logs held out: phase {_pct(hh['phase'], hh['n'])}, verdict {_pct(hh['verdict'], hh['n'])}, "
                     f"called failed {hh['called_failed']}; seen: phase {_pct(hs['phase'], hs['n'])}, verdict "
                     f"{_pct(hs['verdict'], hs['n'])}, called failed {hs['called_failed']}")
    if held_t.get("n"):
        lines.append(f"early warnings held out: listed per failure {held_t.get('ew_listed', 0) / held_t['n']:.2f}, "
                     f"false live {hh.get('false_live', 0)} on {hh.get('n', 0)} healthy logs; seen: listed per "
                     f"failure {seen_t.get('ew_listed', 0) / max(seen_t['n'], 1):.2f}, false live {hs.get('false_live', 0)}")
    lines.append(f"{'(seen, for comparison)':<29}{'':>18}{_pct(seen_t['top1'], seen_t['n']):>18}"
                 f"{_pct(seen_t['phase'], seen_t['n']):>18}{_pct(seen_t['evidence_first'], seen_t['n']):>18}"
                 f"{_pct(seen_t['ew_found'], seen_t['ew_n']):>14}{_pct(seen_t['ew_live'], seen_t['ew_n']):>14}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.rules_holdout", description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--strict", action="store_true",
                    help="the project's reproductions do not vouch for a signature (only other public families do)")
    args = ap.parse_args(argv)
    if json_target_refused(args.json):
        return 2
    out = run(project_vouches=not args.strict)
    print(render(out))
    return write_json(args.json, out) if args.json else 0


if __name__ == "__main__":
    sys.exit(main())
