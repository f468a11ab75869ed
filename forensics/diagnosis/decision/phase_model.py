"""The phase model at run time (``pair_model``): shared weights over (failure,
candidate phase) pairs (``phase_features.pair_vector``)."""
from __future__ import annotations

from forensics.diagnosis.decision.pair_model import MODEL_DIR, PairModel, shipped
from forensics.diagnosis.decision.phase_features import FEATURES, pair_vector

MODEL_PATH = MODEL_DIR / "phase.json"


def phase_model() -> PairModel | None:
    """The shipped phase model (``FORENSICS_PHASE_MODEL`` names another; ``off`` turns it off)."""
    return shipped("phase.json", "FORENSICS_PHASE_MODEL", FEATURES, pair_vector)
