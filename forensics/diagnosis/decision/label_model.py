"""The label model at run time (``pair_model``): shared weights over (failure,
candidate label) pairs (``label_features.pair_vector``)."""
from __future__ import annotations

from contextvars import ContextVar
from functools import lru_cache

from forensics.diagnosis.decision.label_features import FEATURES, pair_vector
from forensics.diagnosis.decision.pair_model import MODEL_DIR, PairModel, load

MODEL_PATH = MODEL_DIR / "decision.json"

# The lab's training run collects each diagnosis's inputs through this (None: nobody listens).
RECORDER: ContextVar[list | None] = ContextVar("forensics_decision_recorder", default=None)


@lru_cache(maxsize=4)
def _model(key: int) -> PairModel | None:
    data = load("decision.json", "FORENSICS_DECISION_MODEL")
    return PairModel(data, FEATURES, pair_vector) if data is not None else None


def label_model() -> PairModel | None:
    """The shipped label model (``FORENSICS_DECISION_MODEL`` names another; ``off`` turns it off)."""
    data = load("decision.json", "FORENSICS_DECISION_MODEL")
    return _model(id(data)) if data is not None else None
