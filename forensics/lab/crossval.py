"""``python -m forensics.lab.crossval``: every learned part scored with one public
server family held out at a time (trained without it, scored on it).

- the label decision (``decision_train``): refitted per held-out family on the rest
  of ``corpora/public`` plus the project's rows; the hand-set rules' answer on the
  same rows beside it;
- the text classifier: trained on the project's corpora only, never on
  ``corpora/public``, so every public family is held out from it already: its
  figure is its answer there.

``--json FILE`` writes the figures; ``--max-seconds`` stops adding families when the
budget is spent (CI runs it time-boxed) and says so.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def run(max_seconds: float | None = None) -> dict[str, Any]:
    from forensics.lab import decision_train as dt

    t0 = time.monotonic()
    rows = dt.collect_rows()
    fams = sorted({r.group for r in rows if not r.group.startswith("project:")})
    out: dict[str, Any] = {"rows": len(rows), "families": {}, "skipped": []}
    learned_all: list = []
    rules_all: list = []
    clf_all: list = []
    for fam in fams:
        if max_seconds is not None and time.monotonic() - t0 > max_seconds:
            out["skipped"].append(fam)
            continue
        train = [r for r in rows if r.group != fam]
        test = [r for r in rows if r.group == fam]
        data = dt.export(dt.fit(train), train, {"version": f"cv-{fam}"})
        got = [(r, *dt.answer(data, r)) for r in test]
        rules = [(r, r.rules_label or "none", float(r.rules_conf or 0.0)) for r in test]
        clf = [(r, *_classifier_answer(r)) for r in test]
        learned_all += got
        rules_all += rules
        clf_all += clf
        out["families"][fam] = {"learned": dt.score(got), "rules": dt.score(rules), "classifier": dt.score(clf)}
    out["overall"] = {"learned": dt.score(learned_all), "rules": dt.score(rules_all),
                      "classifier": dt.score(clf_all)}
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out


def _classifier_answer(r: Any) -> tuple[str, float]:
    clf = r.inputs.clf
    if not clf:
        return "none", 0.0  # not consulted: a conclusive signature answered
    lab = max(sorted(clf), key=lambda k: clf[k])
    return lab, clf[lab]


def render(cv: dict[str, Any]) -> str:
    def cell(s: dict[str, Any]) -> str:
        return f"{s['top1']:.1%} ({s['correct']}/{s['n']})" if s["n"] else "-"

    head = f"{'held-out family':<20}{'learned':>16}{'hand-set':>16}{'ECE':>7}{'conf>=0.9 right':>17}"
    lines = [f"label decision, one public server family held out at a time ({cv['rows']} rows)", head]
    for fam, s in list(cv["families"].items()) + [("overall", cv["overall"])]:
        c9 = s["learned"]["conf90"]
        ece = s["learned"]["ece"]
        lines.append(f"{fam:<20}{cell(s['learned']):>16}{cell(s['rules']):>16}"
                     f"{(f'{ece:.3f}' if ece is not None else '-'):>7}{c9['right']:>10}/{c9['n']:<6}")
    if cv["skipped"]:
        lines.append(f"not run (time box): {', '.join(cv['skipped'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.crossval", description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--max-seconds", type=float, default=None, help="time box (families left out are named)")
    args = ap.parse_args(argv)
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("forensics: the cross-validation needs forensics[train] (pip install 'forensics[train]')", file=sys.stderr)
        return 2
    cv = run(args.max_seconds)
    print(render(cv))
    if args.json:
        args.json.write_text(json.dumps(cv, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
