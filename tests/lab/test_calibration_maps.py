"""The label model's confidence maps (``decision.calibration``, fitted by
``forensics.lab.decision_train.fit_calibration``): per kind of answer, the model's probability
-> how often such answers were right on families held out."""
from __future__ import annotations

import pytest

from forensics.diagnosis.decision.calibration import POOLED, answer_kind, calibrated, confidence
from forensics.diagnosis.decision.label_features import DecisionInputs

pytest.importorskip("sklearn")

from forensics.lab import decision_train as dt  # noqa: E402


def test_each_answer_has_the_kind_of_evidence_it_rests_on():
    # A vLLM start-up that died on "ImportError: libcudart.so.12: cannot open shared object file".
    specific = DecisionInputs(rule_label="env.library-missing", rule_strength="strong", rule_priority=70,
                              rule_level="ERROR", traceback=True)
    assert answer_kind(specific, "env.library-missing") == "strong"
    # The same wording logged as a warning by a server that went on ("Failed to import from vllm._C").
    warned = DecisionInputs(rule_label="env.library-missing", rule_strength="strong", rule_priority=70,
                            rule_level="WARNING")
    assert answer_kind(warned, "env.library-missing") == "strong-broad"
    bare_name = DecisionInputs(rule_label="hang.timeout", rule_strength="strong", rule_priority=40, rule_level="ERROR")
    assert answer_kind(bare_name, "hang.timeout") == "strong-broad"
    # A carrier of the middle band: Triton's "CompilationError" whose message says the GPU lacks fp8,
    # CANN's "ACL stream synchronize failed" whose EI9999 line says an HCCL collective timed out.
    carrier = DecisionInputs(rule_label="toolchain.compile-failed", rule_strength="strong", rule_priority=65,
                             rule_level="ERROR", traceback=True)
    assert answer_kind(carrier, "toolchain.compile-failed") == "strong-mid"
    beside = DecisionInputs(rule_label="toolchain.compile-failed", rule_strength="strong", rule_priority=65,
                            clf={"toolchain.compile-failed": 0.7}, truncated=True)
    assert answer_kind(beside, "toolchain.compile-failed") == "strong-mid"
    # A broad signature stays broad when the classifier was consulted beside it (vLLM's pydantic
    # "validation error for ModelConfig", whatever the value error says).
    broad_beside = DecisionInputs(rule_label="config.invalid-argument", rule_strength="strong", rule_priority=35,
                                  rule_level="ERROR", clf={"config.invalid-argument": 0.6})
    assert answer_kind(broad_beside, "config.invalid-argument") == "strong-broad"
    consulted = DecisionInputs(rule_label="dist.nccl", rule_strength="strong", rule_priority=80,
                               clf={"dist.nccl": 0.6, "hang.timeout": 0.4}, truncated=True)
    assert answer_kind(consulted, "dist.nccl") == "signature"
    assert answer_kind(consulted, "hang.timeout") == "overruled"
    named = DecisionInputs(clf={"gpu.out-of-memory": 0.5}, says=("gpu.out-of-memory",), traceback=True)
    assert answer_kind(named, "gpu.out-of-memory") == "named"
    died = DecisionInputs(clf={"config.model-load": 0.5}, ends_in_error=True)
    assert answer_kind(died, "config.model-load") == "death"
    wrapped = DecisionInputs(clf={"config.model-load": 0.5}, wrapper=True, exit_failed=True)
    assert answer_kind(wrapped, "config.model-load") == "wrapper"
    assert answer_kind(DecisionInputs(clf={"dist.nccl": 0.5}, traceback=True), "dist.nccl") == "learned"
    assert answer_kind(named, "unknown") == "unknown"


def test_a_kind_right_half_the_time_at_high_probability_is_read_as_half_sure():
    answers = [("strong", 0.97, True)] * 200 + [("strong-broad", 0.96, i % 2 == 0) for i in range(80)]
    table = dt.fit_calibration(answers)
    assert calibrated(table, "strong", 0.97) > 0.97
    assert 0.45 < calibrated(table, "strong-broad", 0.96) < 0.6
    # Never certain: every bin is shrunk toward its kind's share right.
    assert calibrated(table, "strong", 0.97) < 1.0


def test_the_maps_never_fall_as_the_probability_rises_and_pool_what_disagrees():
    # The classifier alone: right 30% at 0.3, 80% at 0.6, but (noise) 60% at 0.9.
    answers = ([("learned", 0.3, i % 10 < 3) for i in range(60)] + [("learned", 0.6, i % 10 < 8) for i in range(60)]
               + [("learned", 0.9, i % 10 < 6) for i in range(60)])
    knots = dt.fit_calibration(answers)["learned"]
    ys = [y for _, y in knots]
    assert ys == sorted(ys)
    assert len(knots) == 2  # the last two bins pooled
    assert calibrated({"learned": knots}, "learned", 0.1) == ys[0]  # flat beyond the ends


def test_a_kind_with_few_answers_is_mostly_the_pooled_share():
    answers = [("strong", 0.95, True)] * 300 + [("wrapper", 0.9, False)] * 3
    table = dt.fit_calibration(answers)
    assert len(table["wrapper"]) == 1  # one bin: fewer than CALIBRATION_BIN answers
    assert 0.5 < table["wrapper"][0][1] < 0.9  # three wrong answers do not make it certainly wrong
    assert calibrated(table, "named", 0.9) == calibrated(table, POOLED, 0.9)  # a kind never seen: the pooled map


def test_a_model_without_maps_keeps_its_probability():
    class Old:
        calibration: dict = {}

    assert confidence(Old(), DecisionInputs(clf={"dist.nccl": 0.8}), "dist.nccl", 0.8123) == 0.812
    assert confidence(Old(), DecisionInputs(), "dist.nccl", 0.99999) == 0.999


def test_the_fitted_model_carries_its_maps_and_gives_them_to_the_run_time():
    cases = []
    for i in range(60):  # strong signatures, always right
        label = ("dist.nccl", "hang.timeout")[i % 2]
        cases.append(dt.Row(f"s{i}", f"family-{i % 6}", label, DecisionInputs(
            rule_label=label, rule_strength="strong", rule_priority=80, rule_level="ERROR"), label, 0.95))
    for i in range(60):  # the classifier alone, as sure each time and right two times in three
        cases.append(dt.Row(f"c{i}", f"family-{i % 6}", "dist.nccl" if i % 3 else "hang.timeout",
                            DecisionInputs(clf={"dist.nccl": 0.9, "hang.timeout": 0.1}, traceback=True), None, None))
    model = dt.fit(cases, 0)
    assert {"strong", "learned", POOLED} <= set(model.calibration_ or {})
    pm = dt.label_pair_model(dt.export(model, cases, {}))
    probe = cases[60].inputs
    sure = confidence(pm, probe, "dist.nccl", pm.proba(probe)["dist.nccl"])
    assert 0.5 < sure < 0.8  # right two times in three out of fold


def test_an_unknown_is_read_by_how_far_it_leads_the_label_after_it():
    from forensics.diagnosis.decision.calibration import UNKNOWN_LEAD, unknown_lead, unknown_reading

    # Seed 2's cut traceback: ``unknown`` 0.150, a toolchain label 0.148 (a near tie), against an
    # ``unknown`` far ahead of everything else.
    tie = {"unknown": 0.150, "toolchain.compiler-missing": 0.148, "gpu.cuda-graph-capture": 0.1}
    clear = {"unknown": 0.6, "config.model-load": 0.1}
    assert unknown_lead(tie) < 0.02 and unknown_lead(clear) == pytest.approx(5 / 6)
    assert unknown_lead({"unknown": 0.1, "dist.nccl": 0.12}) == 0.0  # a label leads: under the bar
    # Near ties right two times in five, clear leads three in five: the answers' map reads the lead.
    answers = [dt.oof_answer(dt.Row("t", "g", "unknown" if i % 5 < 2 else "dist.nccl", DecisionInputs(), None, None),
                             dict(tie, **{"dist.nccl": 0.149}), 0.15) for i in range(60)]
    answers += [dt.oof_answer(dt.Row("c", "g", "unknown" if i % 5 < 3 else "dist.nccl", DecisionInputs(), None, None),
                              clear, 0.15) for i in range(60)]
    assert {k for k, _, _ in answers} == {UNKNOWN_LEAD}
    table = dt.fit_calibration(answers)
    assert unknown_reading(table, tie)[0] == UNKNOWN_LEAD
    assert calibrated(table, *unknown_reading(table, tie)) < 0.5 < calibrated(table, *unknown_reading(table, clear))
    # A model trained before reads the probability of ``unknown`` through its ``unknown`` map.
    assert unknown_reading({"unknown": [[0.3, 0.48]]}, clear) == ("unknown", 0.6)


def test_only_bins_right_97_percent_of_the_time_read_0_9_or_more():
    # Issue 27: answers at >= 0.9 are right >= 97% of the time. A wording's label right 95% of the time
    # at 0.98 would read about 0.94 calibrated; it reads just under 0.9. A conclusive specific
    # signature right 99% of the time keeps its reading.
    answers = [("named", 0.98, i % 20 != 0) for i in range(200)] + [("strong", 0.97, i % 100 != 0) for i in range(200)]
    table = dt.fit_calibration(answers)
    assert calibrated(table, "named", 0.98) == dt.UNDER_SURE < 0.9
    assert calibrated(table, "strong", 0.97) >= 0.95
    # Below the tier a map is as fitted, and it never falls as the probability rises.
    low = [("learned", 0.5, i % 2 == 0) for i in range(60)] + [("learned", 0.95, i % 100 < 93) for i in range(120)]
    knots = dt.fit_calibration(low)["learned"]
    ys = [y for _, y in knots]
    assert ys == sorted(ys) and max(ys) < 0.9 and ys[0] < 0.6


def test_the_holdout_refit_reads_an_untold_unknown_through_its_own_map():
    """``calibration_holdout``: an ``unknown`` that ``learned.untold`` gave is read by the model's
    probability of the label it set aside (``calibration.UNTOLD``), not by how far ``unknown`` leads,
    so the refit gives such answers a map of their own."""
    from forensics.diagnosis.decision.calibration import UNKNOWN_LEAD, UNTOLD
    from forensics.lab.calibration_holdout import map_reading, set_aside_label

    class Model:
        unknown_below = 0.15

    pointer = ("Exception: WorkerProc initialization failed due to an exception in a background process. "
               "See stack trace for root cause.")
    guess = {"config.model-load": 0.62, "config.invalid-argument": 0.2}
    probs = {"config.model-load": 0.6, "unknown": 0.25, "gpu.out-of-memory": 0.15}
    assert set_aside_label(Model(), DecisionInputs(clf=guess, proof=pointer), probs) == "config.model-load"
    told = DecisionInputs(clf=guess, proof="ValueError: Unrecognized model in /models/llama")
    assert set_aside_label(Model(), told, probs) is None
    assert set_aside_label(Model(), DecisionInputs(clf=guess, proof=pointer), {"unknown": 0.7, "x": 0.3}) is None
    assert map_reading({"kind": UNTOLD, "x": 0.6, "answer": "unknown", "lead": 0.1}) == (UNTOLD, 0.6)
    assert map_reading({"kind": "unknown", "x": 0.2, "answer": "unknown", "lead": 0.4}) == (UNKNOWN_LEAD, 0.4)
