"""The listing bar and floor chosen on family-held-out folds (forensics.lab.ew_bar): the choice is
made without the family it is scored on, within the lines-a-failure budget."""
import pytest

from forensics.lab import ew_bar


@pytest.fixture(autouse=True)
def _no_few_rule(monkeypatch):
    """These rows hold one or two candidates each: the linker lists such a failure's few lines whatever
    they score (linking.FEW), which no bar decides. The bars are what these tests are about."""
    from forensics.diagnosis.early_warnings import linking

    monkeypatch.setattr(linking, "FEW", 0)


def _row(family: str, warning_score: float | None, other_scores: tuple[float, ...] = (),
         level: str | None = None, other_level: str | None = None) -> ew_bar.Row:
    """A failure whose labelled warning scores ``warning_score`` (None: no labelled warning), printed
    at ``level``; its other candidates at ``other_level``."""
    scored = [{"line": 10 + i, "text": f"noise number {chr(97 + i)} here", "score": s, "count": 1, "why": "",
               "_level": other_level} for i, s in enumerate(other_scores)]
    if warning_score is not None:
        scored.append({"line": 5, "text": "the labelled warning", "score": warning_score, "count": 1, "why": "",
                       "_level": level})
    row = ew_bar.Row(family, "", "the labelled warning" if warning_score is not None else "", scored)
    for pair in ew_bar.GRID:
        listed = ew_bar.list_row(row, *pair)
        row.by_pair[pair] = (len(listed), int(any(w["text"] == "the labelled warning" for w in listed)))
    return row


def test_the_choice_finds_more_within_the_budget_and_not_beyond() -> None:
    rows = [_row("a", 1.2), _row("b", 1.1), _row("c", None, (0.3,)), _row("d", None, (0.2,))]
    bar, floor, warned = ew_bar.choose(rows, budget=1.0)
    assert ew_bar.figures(rows, (bar, floor, warned))[0] == 2  # a floor at or under 1.1 lists both warnings
    assert floor > 0.3  # ... and not the other failures' noise: the same found with fewer lines
    assert ew_bar.choose(rows, budget=0.0) == (1.7, 99.0, 1.7)  # nothing may be listed: the shipped bar, no floor


def test_a_family_is_scored_by_a_choice_made_without_it() -> None:
    # family "x" alone has a warning under 1.0; the others' warnings sit at 1.2 and their noise at 0.9:
    # held out, x is read with the others' choice (a floor above 0.9) and its warning is missed
    rows = [_row("x", 0.8), _row("y", 1.2), _row("z", 1.2), _row("w", None, (0.9,)), _row("v", None, (0.9,))]
    cv = ew_bar.crossval(rows, budget=0.5)
    assert cv["held_out"]["found"] == 2
    aside = ew_bar.crossval(rows, budget=0.5, aside=frozenset({"x"}))
    assert aside["parts"]["aside"]["labelled"] == 1 and aside["parts"]["studied"]["labelled"] == 2


def test_a_line_printed_as_a_warning_may_be_listed_from_a_lower_bar() -> None:
    # the labelled warnings were printed at WARNING level under the bar; the other failures' lines
    # scoring as much are INFO progress lines: a warned bar lists the first and not the second
    rows = [_row("a", 0.9, level="WARNING"), _row("b", 0.9, level="ERROR"),
            _row("c", None, (0.9, 0.9), other_level=None), _row("d", None, (0.9,), other_level="INFO")]
    bar, floor, warned = ew_bar.choose(rows, budget=0.6)
    assert ew_bar.figures(rows, (bar, floor, warned)) == (2, 0.5)
    assert warned <= 0.9 < floor
