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


def _grouped(n: int, label_of, clf: dict[str, float] | None = None) -> tuple[list[DecisionInputs], list[str], list[str]]:
    cases, truths, groups = [], [], []
    for i in range(n):
        cases.append(DecisionInputs(clf=dict(clf)) if clf else DecisionInputs(rule_label="dist.nccl", rule_strength="strong"))
        truths.append(label_of(i))
        groups.append(f"family-{i % 6}")
    return cases, truths, groups


def test_folds_hold_whole_groups_out_and_answer_calibration_rows_in_their_groups_fold():
    groups = [f"g{i % 7}" for i in range(70)]
    extra = [f"g{i % 3}" for i in range(9)] + ["never-fitted"]
    seen_answered: list[int] = []
    for fit_rows, answered in dt._folds(70, 5, 0, groups, extra):
        fitted = {groups[i] for i in fit_rows}
        every = groups + extra
        assert not fitted & {every[i] for i in answered}  # a group is never answered by weights that read it
        seen_answered += answered
    assert sorted(seen_answered) == list(range(79))  # every row but the group no fold holds


def test_held_out_readings_make_the_classifier_alone_less_sure_where_it_was_wrong_on_them():
    # Read with its own signatures, a family's classifier-only rows are right; read as a family never
    # met (the held-out readings), the same classifier answer is right one time in two.
    cases, truths, groups = _grouped(60, lambda i: "dist.nccl", {"dist.nccl": 0.9, "hang.timeout": 0.1})
    strong = _grouped(60, lambda i: "dist.nccl")
    cases, truths, groups = cases + strong[0], truths + strong[1], groups + strong[2]
    calib = _grouped(60, lambda i: ("dist.nccl", "hang.timeout")[i % 2], {"dist.nccl": 0.9, "hang.timeout": 0.1})
    alone = dt.label_pair_model(dt.export(dt.fit_choice(cases, truths, dt.LABEL_CHOICE, 0, groups=groups), [], {}))
    held = dt.label_pair_model(dt.export(dt.fit_choice(cases, truths, dt.LABEL_CHOICE, 0, groups=groups,
                                                       calib=calib), [], {}))
    probe = DecisionInputs(clf={"dist.nccl": 0.9, "hang.timeout": 0.1})
    assert held.proba(probe)["dist.nccl"] < alone.proba(probe)["dist.nccl"] - 0.05
    assert held.proba(probe)["dist.nccl"] < 0.85
