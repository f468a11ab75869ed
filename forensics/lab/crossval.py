"""``python -m forensics.lab.crossval``: every learned part scored with one group
held out at a time (fitted without it, scored on it): each public server family,
and each of the project's own corpora.

- the label decision and the phase (``decision_train``), with the hand-set rules'
  answers on the same rows beside them;
- the evidence ranker (the labelled proving line listed first);
- the text classifier: trained on the project's corpora only, never on
  ``corpora/public``, so every public family is held out from it already;
- the hand-set rules with each family's own signatures held out
  (``rules_holdout``): the signatures were written reading the public batches, so
  this, not the rules' seen figure, is what the ledger's first looks are checked against.

``--json FILE`` writes the figures; ``--max-seconds`` bounds the run (CI).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from forensics.lab.figures_json import json_target_refused, write_json


# What ``rules_holdout.run()`` took on a 2-core machine with 2,126 public logs (December 2026).
RULES_HOLDOUT_SECONDS = 420.0


def run(max_seconds: float | None = None, folds: int | None = None) -> dict[str, Any]:
    """Each stage starts only while the time box has time left (a stage is not cut
    midway: one that starts runs to its end); those left out are named in ``skipped``."""
    from forensics.lab import decision_train as dt

    t0 = time.monotonic()

    def left() -> bool:
        return max_seconds is None or time.monotonic() - t0 < max_seconds

    rows = dt.collect_rows()
    if not left():
        return {"rows": len(rows), "timed_out": True}
    out: dict[str, Any] = {"rows": len(rows), "label_phase": dt.crossval(rows, folds=folds),
                           "folds": folds, "skipped": []}
    if left():
        out["evidence"] = dt.evidence_crossval(rows, folds=folds)
    else:
        out["skipped"].append("evidence")
    # The rules with each family's signatures held out re-diagnose every public log once per
    # family's reduced set (minutes on two cores): in a short time box it is named, not run.
    if max_seconds is None or (left() and max_seconds - (time.monotonic() - t0) > RULES_HOLDOUT_SECONDS):
        from forensics.lab import rules_holdout

        out["rules_held_out"] = rules_holdout.run()
    else:
        out["skipped"].append("rules_held_out")
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out


def _cell(num: int, n: int) -> str:
    return f"{num / n:.1%} ({num}/{n})" if n else "-"


def render(cv: dict[str, Any]) -> str:
    if cv.get("timed_out"):
        return f"cross-validation not run: collecting {cv['rows']} rows spent the time box"
    lp, ev = cv["label_phase"], cv.get("evidence", {"families": {}, "overall_public": {"n": 0}, "overall": {"n": 0}})
    head = (f"{'held out':<26}{'label learned':>16}{'hand-set':>16}{'text clf':>16}{'ECE':>7}{'>=0.9 right':>13}"
            f"{'phase learned':>16}{'hand-set':>16}{'evidence 1st':>16}{'rules order':>16}")
    unit = f"{cv['folds']} grouped folds of families" if cv.get("folds") else "one group"
    lines = [f"{unit} held out at a time ({cv['rows']} labelled failures)", head]
    rows = list(lp["families"].items()) + [("overall (public)", lp["overall_public"]), ("overall", lp["overall"])]
    evs = dict(ev["families"], **{"overall (public)": ev["overall_public"], "overall": ev["overall"]})
    for fam, s in rows:
        le, ru, cl, ph, e = s["learned"], s["rules"], s["classifier"], s["phase"], evs.get(fam, {"n": 0})
        c9 = le["conf90"]
        ece = f"{le['ece']:.3f}" if le["ece"] is not None else "-"
        lines.append(f"{fam:<26}{_cell(le['correct'], le['n']):>16}{_cell(ru['correct'], ru['n']):>16}"
                     f"{_cell(cl['correct'], cl['n']):>16}{ece:>7}{c9['right']:>6}/{c9['n']:<6}"
                     f"{_cell(ph['learned'], ph['n']):>16}{_cell(ph['rules'], ph['n']):>16}"
                     f"{_cell(e.get('learned', 0), e['n']):>16}{_cell(e.get('rules', 0), e['n']):>16}")
    if cv.get("rules_held_out"):
        from forensics.lab import rules_holdout

        table = rules_holdout.render(cv["rules_held_out"]).splitlines()
        lines += ["", "the hand-set rules, each public family's own signatures held out from it:",
                  table[0], table[1], table[-2], table[-1]]
    if cv.get("skipped"):
        lines += ["", f"not run in the time box: {', '.join(cv['skipped'])} (run without --max-seconds for them)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.crossval", description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--max-seconds", type=float, default=None, help="time box")
    ap.add_argument("--folds", type=int, default=None,
                    help="hold out the public families in this many grouped folds, not one at a time (quicker)")
    args = ap.parse_args(argv)
    if json_target_refused(args.json):
        return 2
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("forensics: the cross-validation needs forensics[train] (pip install 'forensics[train]')", file=sys.stderr)
        return 2
    cv = run(args.max_seconds, args.folds)
    print(render(cv))
    return write_json(args.json, cv) if args.json else 0


if __name__ == "__main__":
    sys.exit(main())
