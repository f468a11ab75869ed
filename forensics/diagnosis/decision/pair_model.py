"""A choice among candidates (labels, phases) learned as shared weights over
(case, candidate) pairs, a softmax over the candidates and a temperature fitted on
out-of-fold answers (one per kind of evidence, where the model names them); exported as plain numbers by ``forensics.lab.decision_train``,
answered without scikit-learn."""
from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

MODEL_DIR = Path(__file__).resolve().parent.parent / "model"


class PairModel:
    """P(candidate | case) for every candidate of ``classes``."""

    def __init__(self, data: dict[str, Any], features: Sequence[str], pair_vector: Callable[[Any, str], list[float]],
                 kind: Callable[[Any], str] | None = None):
        trained = tuple(data["features"])
        # A model trained before features were appended still answers as it did: theirs weigh 0.
        if trained != tuple(features)[:len(trained)]:
            raise ValueError("a decision model was trained on other features; retrain it (forensics train)")
        self.classes: list[str] = list(data["classes"])
        self.weights: list[float] = [float(w) for w in data["weights"]] + [0.0] * (len(features) - len(trained))
        # P(label | proving line) by key (``label_prior``), where the model was trained with one.
        self.prior: dict[str, dict[str, float]] = data.get("prior") or {}
        self.temperature: float = float(data["temperature"])
        # A kind of evidence with its own temperature (a model without them: one for all).
        self.temperatures: dict[str, float] = {k: float(v) for k, v in (data.get("temperatures") or {}).items()}
        self._kind = kind
        # Per kind of answer, knots (probability -> share right held out): ``decision.calibration``.
        self.calibration: dict[str, list[list[float]]] = data.get("calibration") or {}
        self.unknown_below: float = float(data.get("unknown_below", 0.0))
        self.meta: dict[str, Any] = data.get("meta", {})
        self.version: str = str(data.get("version", "?"))
        self._pair = pair_vector

    def temperature_of(self, case: Any) -> float:
        if self._kind is None or not self.temperatures:
            return self.temperature
        return self.temperatures.get(self._kind(case), self.temperature)

    def proba(self, case: Any) -> dict[str, float]:
        w = self.weights
        t = self.temperature_of(case)
        z = [sum(wi * xi for wi, xi in zip(w, self._pair(case, c)) if xi) / t for c in self.classes]
        top = max(z)
        e = [math.exp(v - top) for v in z]
        total = sum(e)
        return {c: v / total for c, v in zip(self.classes, e)}


T = TypeVar("T")


@lru_cache(maxsize=8)
def _read(path: str) -> dict[str, Any] | None:
    p = Path(path)
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


def load(name: str, env: str) -> dict[str, Any] | None:
    """A shipped model's data (``env`` names another file; ``off`` turns it off)."""
    chosen = os.environ.get(env)
    if chosen == "off":
        return None
    data = _read(chosen or str(MODEL_DIR / name))
    # A model the training judged no better than the rules on held-out groups is kept, not used.
    return data if data is not None and data.get("active", True) else None


# (file name, id of its data) -> (that data, what was built from it). The entry holds the data
# itself: an id is reused once its object is freed (``_read`` keeps 8 files), and a model built from
# one file must never answer for another (CI once got a freed file's model for the shipped one).
_SHIPPED: dict[tuple[str, int], tuple[dict[str, Any], Any]] = {}
_SHIPPED_LIMIT = 32


def built(name: str, data: dict[str, Any], make: Callable[[dict[str, Any]], T]) -> T:
    """``make(data)``, once per file read (``data``: what ``load`` returned)."""
    key = (name, id(data))
    hit = _SHIPPED.get(key)
    if hit is None or hit[0] is not data:
        if len(_SHIPPED) >= _SHIPPED_LIMIT:
            _SHIPPED.clear()
        hit = _SHIPPED[key] = (data, make(data))
    return hit[1]  # type: ignore[no-any-return]


def shipped(name: str, env: str, features: Sequence[str], pair_vector: Callable[[Any, str], list[float]],
            kind: Callable[[Any], str] | None = None) -> PairModel | None:
    """The shipped model ``name`` (``env`` names another file; ``off`` turns it off), built once per file read."""
    data = load(name, env)
    if data is None:
        return None
    return built(name, data, lambda d: PairModel(d, features, pair_vector, kind))
