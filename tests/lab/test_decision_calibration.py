"""The label model's calibration (``forensics.lab.decision_train``): one softmax temperature
per kind of evidence, fitted on the same out-of-fold answers as the shared one."""
from __future__ import annotations

import pytest

pytest.importorskip("sklearn")

from forensics.diagnosis.decision.label_features import DecisionInputs  # noqa: E402
from forensics.lab import decision_train as dt  # noqa: E402


def _cases() -> tuple[list[DecisionInputs], list[str]]:
    cases, truths = [], []
    for i in range(60):  # strong signatures, always right
        label = ("dist.nccl", "hang.timeout")[i % 2]
        cases.append(DecisionInputs(rule_label=label, rule_strength="strong"))
        truths.append(label)
    for i in range(60):  # the classifier alone, as sure each time and right two times in three
        cases.append(DecisionInputs(clf={"dist.nccl": 0.9, "hang.timeout": 0.1}))
        truths.append("dist.nccl" if i % 3 else "hang.timeout")
    for i in range(5):  # too few weak signatures for a temperature of their own
        cases.append(DecisionInputs(rule_label="dist.nccl", rule_strength="weak"))
        truths.append("dist.nccl")
    return cases, truths


def test_each_kind_of_evidence_with_enough_answers_gets_its_own_temperature():
    cases, truths = _cases()
    model = dt.fit_choice(cases, truths, dt.LABEL_CHOICE, seed=0)
    assert set(model.temperatures_ or {}) == {"strong", "classifier"}  # "weak": 5 < KIND_TEMPERATURE_MIN
    data = dt.export(model, [], {})
    assert set(data["temperatures"]) == {"strong", "classifier"}
    pm = dt.label_pair_model(data)
    # The classifier alone is not made as sure as it is often right (two in three), a strong signature is.
    assert pm.proba(cases[60])["dist.nccl"] < 0.85
    assert pm.proba(cases[0])["dist.nccl"] > 0.9


def test_a_choice_without_kinds_keeps_one_temperature():
    cases, truths = _cases()
    choice = dt.Choice(dt.LABEL_CHOICE.classes, dt.LABEL_CHOICE.features, dt.LABEL_CHOICE.pair)
    assert dt.fit_choice(cases, truths, choice, seed=0).temperatures_ is None
