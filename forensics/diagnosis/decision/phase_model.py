"""The phase model at run time (``pair_model``): shared weights over (failure,
candidate phase) pairs (``phase_features.pair_vector``)."""
from __future__ import annotations

from functools import lru_cache

from forensics.diagnosis.decision.pair_model import MODEL_DIR, PairModel, load
from forensics.diagnosis.decision.phase_features import FEATURES, pair_vector

MODEL_PATH = MODEL_DIR / "phase.json"


@lru_cache(maxsize=4)
def _model(key: int) -> PairModel | None:
    data = load("phase.json", "FORENSICS_PHASE_MODEL")
    return PairModel(data, FEATURES, pair_vector) if data is not None else None


def phase_model() -> PairModel | None:
    """The shipped phase model (``FORENSICS_PHASE_MODEL`` names another; ``off`` turns it off)."""
    data = load("phase.json", "FORENSICS_PHASE_MODEL")
    return _model(id(data)) if data is not None else None
