"""The `unknown` bar of the label decision: a higher bar (more `unknown`) is taken only where it wins by
more than the noise every learned part must beat (1% of the held-out rows)."""
from __future__ import annotations

from forensics.lab.decision_train import BAR_NOISE, bar_of


def _curve(points):
    return [{"unknown_below": t, "correct": c, "n": 989, "unknown": 0, "conf90": {}} for t, c in points]


def test_a_flat_curve_keeps_the_lowest_bar():
    # the thirteenth session's retrain: 732 right at 0.15 and 0.2, 739 at 0.3 (7 of 989: under 1%)
    flat = _curve([(0.15, 732), (0.2, 732), (0.25, 733), (0.3, 739), (0.35, 735), (0.4, 736), (0.45, 730)])
    assert bar_of(flat) == 0.15


def test_a_higher_bar_that_wins_by_more_than_the_noise_is_taken():
    gain = int(BAR_NOISE * 989) + 3
    curve = _curve([(0.15, 700), (0.2, 701), (0.3, 700 + gain), (0.4, 700 + gain), (0.5, 690)])
    assert bar_of(curve) == 0.3  # the best of those over the noise; ties: the lower


def test_a_curve_that_falls_keeps_the_lowest_bar():
    assert bar_of(_curve([(0.15, 740), (0.3, 720), (0.5, 700)])) == 0.15
