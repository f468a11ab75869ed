"""``python -m forensics.lab.ew_bar``: the hand-set listing bar, the floor under it and the bar for
lines printed at a warning level, chosen on family-held-out folds of the public corpus (issue 28
allows 3 listed lines a failure).

Every labelled public failure is diagnosed as ``rules_holdout`` reads it (its family's own
signatures held out, a text classifier that never read the family) with the linker's recorder on;
each failure's scored candidates are then listed under every (bar, floor, warned) triple of a grid, as
``linking._rank`` lists them. One family at a time is held out: the triple that finds the most
labelled warnings of the other families while listing no more than ``--budget`` lines a failure
(ties: fewer lines) is scored on it. ``--aside FILE`` (one family a line after a first line that
says how they were drawn) keeps families out of every choice and reports them apart. What ships
(``scoring.LIST_THRESHOLD``, ``scoring.BEST_FLOOR``, ``scoring.WARNED_BAR``) stays a decision in
code; this says where it came from.
"""
from __future__ import annotations

import argparse
import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BARS = (1.7, 1.6, 1.5, 1.4, 1.3, 1.2, 1.0, 0.8, 0.5, 0.0, -99.0)
FLOORS = (99.0, 1.5, 1.2, 1.0, 0.8, 0.5, 0.0, -99.0)  # 99: no floor
# the bar for a line its program printed at a warning or error level (a traceback it went on after):
# at most the bar itself (the bar alone: every line from the same bar)
WARNEDS = (1.7, 1.5, 1.2, 1.0, 0.8, 0.5, 0.0, -0.5, -99.0)
GRID = tuple((b, f, w) for b in BARS for f in FLOORS if f >= 99.0 or f < b for w in WARNEDS if w <= b)


@dataclass
class Row:
    """One labelled failure as the linker scored it held out, and how each grid pair lists it."""
    family: str
    path: str
    warning: str
    scored: list[dict[str, Any]]
    by_pair: dict[tuple[float, float, float], tuple[int, int]] = field(default_factory=dict)  # (lines listed, found)


def record() -> list[Row]:
    """Every labelled public failure's scored candidates (the last failure linked in its log)."""
    from forensics.diagnosis.early_warnings.learned import RECORDER
    from forensics.lab.ew_heldout import scored_rows
    from forensics.lab.rules_holdout import REAL_PROJECT, _diagnose, held_out_signatures
    from forensics.lab.train import held_out_classifiers
    from forensics.pipeline import load_classifier

    of, fold = held_out_signatures(), held_out_classifiers(load_classifier(True))
    rows = []
    for row, group in scored_rows(project=REAL_PROJECT):
        if group.startswith("project:") or not row.get("root_cause"):
            continue
        got: list = []
        token = RECORDER.set(got)
        try:
            _diagnose(row["_path"], of(group), fold(group))
        finally:
            RECORDER.reset(token)
        rows.append(Row(group, row["_path"], row.get("early_warning_substring") or "", got[-1][1] if got else []))
    return rows


def list_row(row: Row, bar: float, floor: float, warned: float | None = None) -> list[dict[str, Any]]:
    from forensics.diagnosis.early_warnings.linking import _rank

    return _rank({w["line"]: copy.copy(w) for w in row.scored}, None, bar, floor, bar if warned is None else warned)


def tabulate(rows: list[Row]) -> None:
    """Each row's lines listed and whether the labelled warning is among them, per grid pair."""
    from forensics.lab.evaluate import evidence_names

    for row in rows:
        for pair in GRID:
            listed = list_row(row, *pair)
            hit = bool(row.warning) and evidence_names(row.warning, listed, row.path)
            row.by_pair[pair] = (len(listed), int(hit))


def figures(rows: list[Row], pair: tuple[float, float, float]) -> tuple[int, float]:
    """(labelled warnings found, lines listed a failure) under ``pair``."""
    return sum(r.by_pair[pair][1] for r in rows), sum(r.by_pair[pair][0] for r in rows) / max(len(rows), 1)


def choose(rows: list[Row], budget: float) -> tuple[float, float, float]:
    """The pair that finds the most within ``budget`` lines a failure (ties: fewer lines)."""
    within = [(figures(rows, p)[0], -figures(rows, p)[1], p) for p in GRID if figures(rows, p)[1] <= budget]
    return max(within, key=lambda x: (x[0], x[1]))[2] if within else GRID[0]


def crossval(rows: list[Row], budget: float, aside: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Family-held-out figures of the choice on the families not aside; the choice on all of them,
    and what it and the shipped pair give on each part."""
    from forensics.diagnosis.early_warnings.scoring import BEST_FLOOR, LIST_THRESHOLD, WARNED_BAR

    studied = [r for r in rows if r.family not in aside]
    kept = [r for r in rows if r.family in aside]
    found = lines = 0
    for fam in sorted({r.family for r in studied}):
        pair = choose([r for r in studied if r.family != fam], budget)
        test = [r for r in studied if r.family == fam]
        found += figures(test, pair)[0]
        lines += sum(r.by_pair[pair][0] for r in test)
    chosen = choose(studied, budget)
    shipped = (LIST_THRESHOLD, BEST_FLOOR, WARNED_BAR) if (LIST_THRESHOLD, BEST_FLOOR, WARNED_BAR) in GRID else GRID[0]
    labelled = lambda part: sum(bool(r.warning) for r in part)  # noqa: E731
    return {"budget": budget, "labelled": labelled(studied), "held_out": {"found": found, "per_failure":
            round(lines / max(len(studied), 1), 3)}, "chosen": list(chosen),
            "parts": {name: {"labelled": labelled(part), **{k: _fig(part, p) for k, p in
                                                             (("chosen", chosen), ("shipped", shipped),
                                                              ("no_floor", (LIST_THRESHOLD, 99.0, LIST_THRESHOLD)))}}
                      for name, part in (("studied", studied), ("aside", kept))}}


def _fig(rows: list[Row], pair: tuple[float, float, float]) -> dict[str, Any]:
    f, per = figures(rows, pair)
    return {"found": f, "per_failure": round(per, 3)}


def _aside(path: str | None) -> frozenset[str]:
    if not path:
        return frozenset()
    return frozenset(x.strip() for x in Path(path).read_text(encoding="utf-8").splitlines()[1:] if x.strip())


def main() -> None:
    import json

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=0.6, help="lines listed a failure, at most, on average")
    ap.add_argument("--aside", help="families kept out of the choice (first line: how they were drawn)")
    args = ap.parse_args()
    rows = record()
    tabulate(rows)
    print(json.dumps(crossval(rows, args.budget, _aside(args.aside)), indent=1))


if __name__ == "__main__":
    main()
