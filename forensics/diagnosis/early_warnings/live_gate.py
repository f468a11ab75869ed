"""Whether a precursor line the rules keep quiet is printed live after all, learned from context.

A precursor that healthy start-ups print too (``strength: weak``, or familiar against the healthy
baseline) is kept quiet by the rules unless its signature names the context (``live_when``) it
matters in. Those contexts were written by hand from a few logs. ``forensics train``
(``forensics/lab/ew_live_train.py``) fits a logistic regression over what ``watch`` knows when such
a line arrives -- how the rules judged it (weak, familiar, its quiet context), its level and wording
class, what it predicts, the context the start-up stated so far (GPU generation and memory, backends,
a vision model, a platform plugin, the memory budget set, more than one GPU, the server already ready) -- against the labelled warnings of the public
corpus (positives) and the same lines in healthy logs (negatives), one server family held out at a
time, each scored with a healthy baseline that never saw its healthy logs. The bar on the
probability is chosen on the training families. It decides only where it gained live warnings held
out without adding false ones beyond the budget (``meta.ships``); answered here with plain
arithmetic, without scikit-learn.
"""
from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any

from forensics.diagnosis.early_warnings.learned import ListingModel, load_shipped

MODEL_PATH = Path(__file__).resolve().parents[1] / "model" / "early_warning_live.json"
# The lab sets this to a list: every precursor line the rules judged live or quiet is appended.
RECORDER: ContextVar[list | None] = ContextVar("forensics_ew_live_recorder", default=None)
TOPICS = ("gpu.", "host.", "env.", "toolchain.", "config.", "dist.", "hang.")
FEATURES = ("weak", "familiar", "usual", "has_live_when", "has_quiet_when", "quiet_context", "level_warning",
            "level_error", "level_none", "wording_class", "live_cue", "degraded", "after_ready", "context_any",
            "arch_blackwell", "arch_hopper", "backend_any", "model_multimodal", "plugin_platform",
            "gpu_memory_over_150gb", "budget_set", "budget_high", "multi_gpu",
            *(f"predicts_{t.rstrip('.')}" for t in TOPICS))


def features(sig: Any, level: str | None, have: frozenset[str], judged: dict[str, bool]) -> list[float]:
    """One precursor line as numbers (``FEATURES`` order); ``judged``: what the rules said of it
    (familiar, usual, in its quiet context; its wording: a class of ``wording.yaml``, a live cue,
    a degraded start), whether the server was ready when the line arrived, and the resources the
    start-up stated so far (a memory budget set, at 0.9 or more of the GPU; more than one GPU) --
    a warning about memory or a collective matters against them (issue 28)."""
    predicts = tuple(sig.predicts) or (sig.root_cause,)
    f = [float(sig.strength == "weak"), float(judged["familiar"]), float(judged["usual"]),
         float(bool(sig.live_when)), float(bool(sig.quiet_when)), float(judged["quiet_context"]),
         float(level == "WARNING"), float(level == "ERROR"), float(level is None),
         float(judged["wording_class"]), float(judged["live_cue"]), float(judged["degraded"]),
         float(judged["after_ready"]), float(bool(have)),
         float("arch:blackwell" in have), float("arch:hopper" in have),
         float(any(t.startswith("backend:") for t in have)), float("model:multimodal" in have),
         float("plugin:platform" in have), float("gpu:memory-over-150gb" in have),
         float(judged.get("budget_set", False)), float(judged.get("budget_high", False)),
         float(judged.get("multi_gpu", False))]
    f += [float(any(p.startswith(t) for p in predicts)) for t in TOPICS]
    return f


class LiveGate(ListingModel):
    """Logistic weights over ``FEATURES`` and the probability from which a quiet line is printed
    (the listing model's form: weights, bias, threshold, one logistic)."""


_CACHE: dict[str, Any] = {}
# The lab sets this to a gate fitted without one server family, to score that family held out.
HELD_OUT: ContextVar[LiveGate | None] = ContextVar("forensics_ew_live_gate", default=None)


def live_gate() -> LiveGate | None:
    """The shipped gate, or None (no file, not better held out, or turned off)."""
    held = HELD_OUT.get()
    if held is not None:
        return held
    gate: LiveGate | None = load_shipped(_CACHE, "gate", MODEL_PATH, "FORENSICS_EW_LIVE_GATE", FEATURES, LiveGate)
    return gate
