"""The trained classifier (skops model shipped in the package). Until a
model file exists, diagnosis runs on signatures alone."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

MODEL_PATH = Path(__file__).resolve().parent / "model" / "classifier.skops"


@lru_cache(maxsize=1)
def default_model() -> Any:
    if not MODEL_PATH.exists():
        return None
    from forensics.diagnosis.model_io import load_model

    return load_model(MODEL_PATH)
