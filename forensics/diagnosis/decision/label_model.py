"""The label model at run time (``pair_model``): shared weights over (failure,
candidate label) pairs (``label_features.pair_vector``)."""
from __future__ import annotations

from contextvars import ContextVar

from forensics.diagnosis.decision.label_features import FEATURES, evidence_kind, pair_vector
from forensics.diagnosis.decision.pair_model import MODEL_DIR, PairModel, shipped

MODEL_PATH = MODEL_DIR / "decision.json"

# The lab's training run collects each diagnosis's inputs through this (None: nobody listens).
RECORDER: ContextVar[list | None] = ContextVar("forensics_decision_recorder", default=None)


def label_model() -> PairModel | None:
    """The shipped label model (``FORENSICS_DECISION_MODEL`` names another; ``off`` turns it off)."""
    return shipped("decision.json", "FORENSICS_DECISION_MODEL", FEATURES, pair_vector, evidence_kind)
