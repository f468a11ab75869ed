"""The learned live gate (``early_warnings/live_gate.py``, trained by ``forensics/lab/ew_live_train.py``):
a precursor line the rules keep quiet is weighed in its context; without a shipped gate the rules
decide alone, and the lab's recorder sees every quiet line."""
from __future__ import annotations

from types import SimpleNamespace

from forensics.diagnosis.early_warnings import live_gate as G
from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.live import live_decision
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.lab import ew_live_train as T

EMPTY = Baseline(frozenset(), {}, {}, 0)
LINE = "0.00.747.142 W common_fit_params: failed to fit params to free device memory: n_gpu_layers already set"


def _hit(strength: str = "weak", live_when: tuple[str, ...] = ()) -> SimpleNamespace:
    sig = SimpleNamespace(id="test.weak-precursor", strength=strength, live_when=live_when, quiet_when=(),
                          predicts=("gpu.out-of-memory",), root_cause="gpu.out-of-memory")
    return SimpleNamespace(signature=sig)


def _gate(weak_weight: float, threshold: float) -> G.LiveGate:
    weights = [0.0] * len(G.FEATURES)
    weights[G.FEATURES.index("weak")] = weak_weight
    return G.LiveGate({"weights": weights, "bias": 0.0, "threshold": threshold})


def test_features_follow_the_names() -> None:
    f = G.features(_hit().signature, "WARNING", frozenset({"arch:blackwell", "backend:fa4"}),
                   {"familiar": False, "usual": False, "quiet_context": False, "after_ready": True,
                    "wording_class": True, "live_cue": False, "degraded": False})
    assert len(f) == len(G.FEATURES)
    named = dict(zip(G.FEATURES, f))
    assert named["weak"] == named["arch_blackwell"] == named["backend_any"] == named["after_ready"] == 1.0
    assert named["predicts_gpu"] == named["wording_class"] == 1.0 and named["arch_hopper"] == 0.0


def test_without_a_gate_a_weak_precursor_stays_quiet(monkeypatch) -> None:
    monkeypatch.setenv("FORENSICS_EW_LIVE_GATE", "off")
    G._CACHE.clear()
    try:
        assert live_decision(Event(kinds.LOG, 3, LINE), _hit(), {}, base=EMPTY) is None
    finally:
        G._CACHE.clear()


def test_a_gate_announces_what_it_weighs_above_its_bar() -> None:
    token = G.HELD_OUT.set(_gate(3.0, 0.9))
    try:
        d = live_decision(Event(kinds.LOG, 3, LINE), _hit(), {}, base=EMPTY)
        assert d is not None and "learned" in d["why"] and d["predicts"] == ["gpu.out-of-memory"]
    finally:
        G.HELD_OUT.reset(token)
    token = G.HELD_OUT.set(_gate(3.0, 0.99))
    try:
        assert live_decision(Event(kinds.LOG, 3, LINE), _hit(), {}, base=EMPTY) is None
    finally:
        G.HELD_OUT.reset(token)


def test_the_recorder_sees_each_quiet_precursor_line(monkeypatch) -> None:
    monkeypatch.setenv("FORENSICS_EW_LIVE_GATE", "off")
    G._CACHE.clear()
    rec: list = []
    token = G.RECORDER.set(rec)
    try:
        live_decision(Event(kinds.LOG, 3, LINE), _hit(), {"context": frozenset({"arch:hopper"})}, base=EMPTY)
    finally:
        G.RECORDER.reset(token)
        G._CACHE.clear()
    assert [r["line"] for r in rec] == [3] and rec[0]["signature"] == "test.weak-precursor"
    assert rec[0]["features"][G.FEATURES.index("arch_hopper")] == 1.0


def test_the_lab_scores_what_the_gate_adds_and_keeps_its_budget() -> None:
    on = [0.0] * len(G.FEATURES)
    on[G.FEATURES.index("weak")] = 1.0
    off = [0.0] * len(G.FEATURES)
    logs = [T.Log("f1", "a", False, True, False, 0, [(on, True)]),
            T.Log("f2", "a", False, True, True, 0, [(on, True)]),  # already live by the rules: nothing added
            T.Log("h1", "b", True, False, False, 1, [(on, False)]),
            *[T.Log(f"h{i}", "b", True, False, False, 0, [(off, False)]) for i in range(2, 10)]]
    weights = [0.0] * len(G.FEATURES)
    weights[G.FEATURES.index("weak")] = 4.0
    s = T.score(logs, weights, -2.0, 0.5)
    assert (s["labelled"], s["rules_live"], s["added_live"]) == (2, 1, 1)
    assert (s["healthy"], s["rules_false"], s["added_false"]) == (9, 1, 1)
    # one line added on 9 healthy logs is over the 2% budget: the bar chosen adds nothing
    bar = T.choose_threshold(logs, weights, -2.0)
    assert T.score(logs, weights, -2.0, bar)["added_false"] == T.score(logs, weights, -2.0, bar)["added_live"] == 0


def test_the_shipped_bar_is_chosen_on_held_out_groups() -> None:
    # Held out, the low bar adds 3 labelled warnings but 4 lines on 100 healthy logs (over the 2%
    # budget); the middle bar adds 2 and 1 false: it is the shipped bar, whatever the training
    # groups (seen by the gate) would have allowed.
    cv = {"by_bar": {"0.2": {"added_live": 3, "added_false": 4, "healthy": 100},
                     "0.5": {"added_live": 2, "added_false": 1, "healthy": 100},
                     "0.8": {"added_live": 1, "added_false": 0, "healthy": 100}}}
    assert T.held_out_bar(cv) == 0.5
    # no bar adds a labelled warning held out within the budget: never (the gate does not ship)
    cv = {"by_bar": {"0.2": {"added_live": 3, "added_false": 9, "healthy": 100},
                     "0.8": {"added_live": 0, "added_false": 0, "healthy": 100}}}
    assert T.held_out_bar(cv) == 1.01


def test_the_gate_reads_the_resources_the_start_up_stated(monkeypatch) -> None:
    # SGLang's server_args "mem_fraction_static=0.95, tp_size=2" as collect folds them into the facts
    monkeypatch.setenv("FORENSICS_EW_LIVE_GATE", "off")
    G._CACHE.clear()
    rec: list = []
    token = G.RECORDER.set(rec)
    try:
        live_decision(Event(kinds.LOG, 3, LINE), _hit(), {"mem_fraction": 0.95, "tp": 2}, base=EMPTY)
        live_decision(Event(kinds.LOG, 4, LINE), _hit(), {}, base=EMPTY)
    finally:
        G.RECORDER.reset(token)
        G._CACHE.clear()
    set_, none = (dict(zip(G.FEATURES, r["features"])) for r in rec)
    assert set_["budget_set"] == set_["budget_high"] == set_["multi_gpu"] == 1.0
    assert none["budget_set"] == none["budget_high"] == none["multi_gpu"] == 0.0


def test_the_aside_families_stay_out_of_the_fit_and_are_scored_apart() -> None:
    # Two studied groups teach the gate that a weak precursor line precedes a failure; the aside group's
    # healthy log prints the same line: it is scored by the gate fitted without it (one false line),
    # and its quiet line is not among what the gate was fitted on (the studied folds add no false line).
    on = [0.0] * len(G.FEATURES)
    on[G.FEATURES.index("weak")] = 1.0
    off = [0.0] * len(G.FEATURES)
    studied = [T.Log(f"{g}{i}", g, False, True, False, 0, [(on, True)]) for g in ("a", "b") for i in range(3)]
    studied += [T.Log(f"h{g}{i}", g, True, False, False, 0, [(off, False)]) for g in ("a", "b") for i in range(60)]
    aside = [T.Log("x1", "x", True, False, False, 0, [(on, False)]), T.Log("x2", "x", False, True, False, 0, [(on, True)])]
    got = T.aside_report(studied + aside, frozenset({"x"}))
    assert got["bar"] <= 1.0 and got["studied_public_folds"]["added_live"] == 6
    assert got["studied_public_folds"]["added_false"] == 0
    assert (got["aside"]["added_live"], got["aside"]["added_false"], got["aside"]["healthy"]) == (1, 1, 1)


def test_the_recorder_sees_where_a_line_arrives_and_the_quiet_warning_lines_no_precursor_names(monkeypatch) -> None:
    # where_now: what watch knows of the lifetime when a line arrives (its phase, how long it has run,
    # the errors and tracebacks so far); a warning line no precursor names that the general rules keep
    # quiet reaches the recorder as pool "unusual" (what a gate over such lines would read).
    from datetime import datetime, timedelta

    from forensics.diagnosis.early_warnings.live import where_now

    t0 = datetime(2026, 1, 1, 12, 0, 0)
    inc = SimpleNamespace(phase="load-weights", start_ts=t0, start_line=1, error_lines=[1, 2], warning_lines=[],
                          tracebacks=[], precursor_hits=[])
    got = where_now(inc, Event(kinds.LOG, 41, "x", t0 + timedelta(seconds=30)))
    assert got == {"phase": "load-weights", "since_s": 30.0, "since_lines": 40, "errors": 2, "warnings": 0,
                   "tracebacks": 0, "precursors": 0}
    assert where_now(SimpleNamespace(), Event(kinds.LOG, 3, "x"))["since_s"] is None
    monkeypatch.setenv("FORENSICS_EW_LIVE_GATE", "off")
    G._CACHE.clear()
    rec: list = []
    token = G.RECORDER.set(rec)
    try:
        quiet = "2026-01-01 12:00:31 WARNING the frobnicator is slow today"
        assert live_decision(Event(kinds.LOG, 5, quiet), None, {}, base=EMPTY, where=got) is None
    finally:
        G.RECORDER.reset(token)
        G._CACHE.clear()
    assert [(r["pool"], r["line"], r["level"], r["where"]["phase"]) for r in rec] == [("unusual", 5, "WARNING", "load-weights")]
