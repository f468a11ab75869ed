"""The death detector's training rows: a healthy label its labeller doubted, naming a failure as
the other reading, neither teaches the detector 'healthy' nor sets its bar (ncf16)."""
from __future__ import annotations

import pytest

from forensics.lab.decision_train import unsure_healthy


@pytest.mark.parametrize("note", [
    "Healthy excerpt. UNSURE: thread says it failed later: the first request ran out of memory.",
    "UNSURE verdict starting; alternative failed with env.driver-too-old",
    "Loads fine. UNSURE: the run may have failed (the reporter's title)",
    "UNSURE: failed, if the 500s count",
])
def test_a_doubted_healthy_row_is_left_out(note):
    assert unsure_healthy({"root_cause": "", "verdict": "starting", "note": note})


@pytest.mark.parametrize("row", [
    {"root_cause": "", "verdict": "ready", "note": "UNSURE phase: serving or ready (a probe only)"},
    {"root_cause": "", "verdict": "ready", "note": "Healthy start-up; the warning did not lead to a failure"},
    {"root_cause": "gpu.out-of-memory", "verdict": "failed", "note": "UNSURE: alternative failed earlier"},
])
def test_other_rows_stay(row):
    assert not unsure_healthy(row)
