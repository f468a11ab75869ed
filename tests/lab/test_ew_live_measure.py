"""``forensics.lab.ew_live_measure``: rules_holdout's live figures from its JSON, without diagnosing."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.signatures import signature_set
from forensics.lab.ew_live_measure import measure

ROOT = Path(__file__).resolve().parents[2]


def test_a_labelled_warning_printed_live_now_is_gained_and_healthy_lines_are_counted() -> None:
    # batch-60/001: the nightly harness's 'GPU may still be busy' before an out-of-memory (live since
    # device-still-held); batch-60/002: its healthy twin, which prints the same line.
    log = str(ROOT / "corpora/public/batch-60/001.log")
    twin = str(ROOT / "corpora/public/batch-60/002.log")
    data = {"families": {"sglang": {"own": [], "cases": [{"path": log, "ew": {}, "ew_live": 0}]}},
            "healthy": {"sglang": {"cases": [{"path": twin}]}}}
    got = measure(data, signature_set(), set())
    assert (got["n"], got["live"], got["healthy"]) == (1, 1, 1)
    assert got["gained"] == ["corpora/public/batch-60/001.log"] and got["lost"] == []
    assert got["false_live"] == len(got["false"]) >= 1
