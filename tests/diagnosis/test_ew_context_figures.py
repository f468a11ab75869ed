"""Context a start-up states in figures (``context.yaml``'s ``exceeds`` rules): llama.cpp's fit
projects what the model needs against the free device memory, and the user's hand-set layers
abort the fit. Over the free memory, that abort is news (``llamacpp.fit-params-failed``'s
``live_when``); under it, or with no projection, healthy runs print it too."""
from __future__ import annotations

from types import SimpleNamespace

from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.context import context_tokens
from forensics.diagnosis.early_warnings.live import live_decision
from forensics.diagnosis.signatures import signature_set
from forensics.events import types as kinds
from forensics.events.types import Event

EMPTY = Baseline(frozenset(), {}, {}, 0)
OVER = "llama_params_fit_impl: projected to use 76386 MiB of device memory vs. 68311 MiB of free device memory"
UNDER = "llama_params_fit_impl: projected to use 14554 MiB of device memory vs. 14807 MiB of free device memory"
ABORT = "llama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user to 999, abort"


def test_the_projection_states_its_context_only_over_the_free_memory() -> None:
    assert context_tokens(OVER) == {"memory:projected-over-free"}
    assert context_tokens(UNDER) == frozenset()
    assert context_tokens("llama_params_fit_impl: projected to use 7704 MiB of device memory") == frozenset()


def _fit_hit() -> SimpleNamespace:
    sig = next(s for s in signature_set().signatures if s.id == "llamacpp.fit-params-failed")
    return SimpleNamespace(signature=sig)


def test_the_users_abort_is_news_after_a_projection_over_the_free_memory() -> None:
    hit = _fit_hit()
    d = live_decision(Event(kinds.LOG, 9, ABORT), hit, {"context": context_tokens(OVER)}, base=EMPTY)
    assert d is not None and d["predicts"] == ["gpu.out-of-memory"] and d["signature"] == "llamacpp.fit-params-failed"


def test_the_users_abort_alone_or_under_the_free_memory_is_no_news(monkeypatch) -> None:
    monkeypatch.setenv("FORENSICS_EW_LIVE_GATE", "off")
    from forensics.diagnosis.early_warnings import live_gate as G
    G._CACHE.clear()
    try:
        hit = _fit_hit()
        assert live_decision(Event(kinds.LOG, 9, ABORT), hit, {"context": context_tokens(UNDER)}, base=EMPTY) is None
        assert live_decision(Event(kinds.LOG, 9, ABORT), hit, {}, base=EMPTY) is None
    finally:
        G._CACHE.clear()
