"""A proving line that names no cause (``decision/label_silent.yaml``): every class's examples, and
the label decision's ``untold`` rule: a label only the text classifier names, on such a line, is
answered ``unknown`` (issue 27, item 2), and a line anywhere in the log that names it keeps it."""
from __future__ import annotations

import pytest

import forensics.diagnosis.decision.label_silent as silent
from forensics.diagnosis.arbitrate import Decision
from forensics.diagnosis.decision import learned
from forensics.diagnosis.decision.label_features import DecisionInputs
from forensics.events.tables import load_table

CLASSES = load_table(silent.__file__, "label_silent.yaml")["classes"]
CASES = [(c["id"], t, True) for c in CLASSES for t in c["examples"]["match"]] + \
        [(c["id"], t, False) for c in CLASSES for t in c["examples"]["no_match"]]

# vLLM V1's EngineCore wrapper when the worker's own traceback is outside the excerpt
POINTER = ("Exception: WorkerProc initialization failed due to an exception in a background process. "
           "See stack trace for root cause.")
# the classifier's guess from a vLLM family's usual start-up failures
GUESS = {"config.model-load": 0.62, "config.invalid-argument": 0.2, "gpu.out-of-memory": 0.1}


@pytest.mark.parametrize("cid,text,hit", CASES)
def test_every_example(cid: str, text: str, hit: bool) -> None:
    assert (cid in silent.silent_classes(text)) is hit, (cid, text)


def test_classes_are_unique_with_lowercase_hints_and_examples_both_ways() -> None:
    ids = [c["id"] for c in CLASSES]
    assert len(ids) == len(set(ids))
    for c in CLASSES:
        assert c["hints"] and all(isinstance(h, str) and h == h.lower() for h in c["hints"]), c["id"]
        assert c["examples"]["match"] and c["examples"]["no_match"], c["id"]


def test_a_line_that_names_its_cause_is_not_silent() -> None:
    assert not silent.names_no_cause(None) and not silent.names_no_cause("")
    assert not silent.names_no_cause("ModuleNotFoundError: No module named 'vllm._C'")
    assert not silent.names_no_cause("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert silent.names_no_cause(POINTER)


def test_a_label_only_the_classifier_names_on_a_pointer_line_is_untold() -> None:
    assert learned.untold(DecisionInputs(clf=GUESS, proof=POINTER), "config.model-load")
    # the same guess where the log names no cause on a crash report
    assert learned.untold(DecisionInputs(clf={"env.library-missing": 0.8}, proof=(
        "[57889.986583] koboldcpp[96830]: segfault at 215003fcc ip 00007f78774f9c97 sp 00007f69217f67f0 "
        "error 4 in libcuda.so.570.86.15")), "env.library-missing")


def test_a_label_something_in_the_log_names_is_told() -> None:
    base = {"clf": GUESS, "proof": POINTER}
    label = "config.model-load"
    # a signature names it, as the answer or as a rival
    assert not learned.untold(DecisionInputs(rule_label=label, rule_strength="weak", **base), label)
    assert not learned.untold(DecisionInputs(rule_label="gpu.out-of-memory", rivals=(label,), **base), label)
    # a strong warning predicted it
    assert not learned.untold(DecisionInputs(precursor=label, **base), label)
    # the proving line's wording or catalogue label, or its kind's most frequent label
    assert not learned.untold(DecisionInputs(says=(label,), **base), label)
    assert not learned.untold(DecisionInputs(cat_says=(label,), **base), label)
    assert not learned.untold(DecisionInputs(prior={label: 0.5, "unknown": 0.3}, **base), label)
    # another evidence line says it: the worker's own error is in the excerpt
    worker = "OSError: /models/llama does not appear to have a file named config.json."
    assert not learned.untold(DecisionInputs(others=(POINTER, worker), **base), label)
    # a line that names its cause is not silent, whoever named the label
    assert not learned.untold(DecisionInputs(clf=GUESS, proof="ValueError: Unrecognized model in /models/x"), label)
    # nothing to cap
    assert not learned.untold(DecisionInputs(**base), "unknown")


def test_the_decision_answers_unknown_with_the_guess_first_and_keeps_its_place() -> None:
    rules = Decision("config.model-load", 0.6, "classifier", [])
    told = learned.decide(DecisionInputs(clf=GUESS, proof="ValueError: Unrecognized model in /models/llama"),
                          rules, rules_not_conclusive=True)
    got = learned.decide(DecisionInputs(clf=GUESS, proof=POINTER), rules, rules_not_conclusive=True)
    assert told.label == "config.model-load"
    assert got.label == "unknown" and got.candidates[0]["label"] == "config.model-load"
    # where nothing says where, the guessed label still places the failure
    assert got.phase_label == "config.model-load" and told.phase_label is None
    assert 0.0 < got.confidence < 0.9


def test_an_untold_unknown_reads_its_own_map_or_its_measured_share() -> None:
    from forensics.diagnosis.decision.calibration import UNTOLD, UNTOLD_SHARE, untold_confidence

    assert untold_confidence({}, 0.6) == UNTOLD_SHARE
    assert untold_confidence({"unknown": [[0.35, 0.48]]}, 0.6) == UNTOLD_SHARE
    assert untold_confidence({UNTOLD: [[0.3, 0.6], [0.7, 0.8]]}, 0.5) == pytest.approx(0.7)


def test_training_reads_the_decision_as_the_run_time_makes_it() -> None:
    """``decision_train.answer_of`` (held-out figures, the ``unknown`` bar, the calibration maps)
    answers ``unknown`` where ``learned.decide`` does, and its calibration reads such an answer
    as its own kind."""
    from forensics.lab.decision_train import Row, oof_answer, set_aside
    from forensics.lab.decision_train import answer_of as trained_answer

    probs = {"config.model-load": 0.6, "unknown": 0.25, "gpu.out-of-memory": 0.15}
    silent_row = Row("x.log", "vllm", "unknown", DecisionInputs(clf=GUESS, proof=POINTER), None, None)
    told_row = Row("y.log", "vllm", "config.model-load",
                   DecisionInputs(clf=GUESS, proof="ValueError: Unrecognized model in /models/llama"), None, None)
    assert trained_answer(probs, silent_row, 0.15)[0] == "unknown"
    assert set_aside(probs, silent_row, 0.15) == "config.model-load"
    assert oof_answer(silent_row, probs, 0.15) == ("untold", 0.6, True)
    assert trained_answer(probs, told_row, 0.15)[0] == "config.model-load"
    assert set_aside(probs, told_row, 0.15) is None
    # under the bar the answer is the bar's unknown, read as every unknown is
    assert set_aside({"config.model-load": 0.1, "unknown": 0.09}, silent_row, 0.15) is None


def test_a_signature_labelled_unknown_names_no_label() -> None:
    """A wrapper or bare report whose signature's label is ``unknown`` is a line that names no cause
    for ``untold``, and it leaves the line's wording, the catalogue and the classifier their
    no-signature weights (twenty-fourth session: SGLang's KV transfer timeout was answered ``unknown``)."""
    from forensics.diagnosis.decision.label_features import INDEX, pair_vector

    proof = "Decode transfer failed for request rank=2 with exception KVTransferError(bootstrap_room=7): timed out"
    wrapped = DecisionInputs(rule_label="unknown", rule_strength="strong", rule_priority=25, clf=GUESS, proof=proof)
    assert learned.untold(wrapped, "config.model-load")
    # its wording names the label: it stands
    said = DecisionInputs(rule_label="unknown", rule_strength="strong", clf={"hang.timeout": 0.9}, proof=proof,
                          says=("hang.timeout",), cat_says=("hang.timeout",))
    assert not learned.untold(said, "hang.timeout")
    x = pair_vector(said, "hang.timeout")
    for name in ("clf_without_rule", "says_without_rule", "cat_says_without_rule"):
        assert x[INDEX[name]] > 0, name
    named = DecisionInputs(rule_label="gpu.out-of-memory", rule_strength="strong", clf={"hang.timeout": 0.9},
                           says=("hang.timeout",))
    assert pair_vector(named, "hang.timeout")[INDEX["clf_without_rule"]] == 0.0
    # the signature's own vote for unknown is still read
    assert pair_vector(said, "unknown")[INDEX["rule_strong"]] == 1.0
