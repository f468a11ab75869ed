"""Which scored candidates are listed as a failure's early warnings, learned.

The linker scores every candidate line by hand-set weights (shared subjects,
topic, how unusual, arithmetic, precursor priors) and lists those above a fixed
bar. ``forensics train`` (``forensics/lab/ew_train.py``) fits a logistic
regression over what each scored candidate *is* (that score and its parts, the
level, a precursor's prediction, the lead time, how many candidates there are)
against the warnings people labelled in real and generated logs, with one server
family held out at a time. The model decides the listing only where it did at
least as well as the bar held out (``meta.ships``); it is answered here with
plain arithmetic, without scikit-learn.
"""
from __future__ import annotations

import json
import math
from contextvars import ContextVar
from pathlib import Path
from typing import Any

MODEL_PATH = Path(__file__).resolve().parents[1] / "model" / "early_warning.json"
# The lab sets this to a list: every failure's scored candidates are appended to it.
RECORDER: ContextVar[list | None] = ContextVar("forensics_ew_recorder", default=None)
LEVELS = ("WARNING", "ERROR", "TRACEBACK", "INFO")
FEATURES = ("score", "signature", "predicts_label", "predicts_other", *(f"level_{lv}" for lv in LEVELS), "level_none",
            "count", "lead_none", "lead_short", "lead_long", "why_shared", "why_topic", "why_unusual", "why_numbers",
            "why_few", "nearest", "candidates")
_NUMBER_WORDS = ("GiB", "budget", "x of one", "index", "KV-cache", "memory left")


def features(rec: dict[str, Any], label: str | None, rank_from_end: int, n: int) -> list[float]:
    """One scored candidate as numbers (``FEATURES`` order)."""
    why = str(rec.get("why", ""))
    level = rec.get("_level")
    lead = rec.get("lead_seconds")
    predicts = rec.get("predicts") or ()
    f = [max(-3.0, min(10.0, float(rec.get("score", 0.0)))), float(rec.get("signature") is not None),
         float(label in predicts), float(bool(predicts) and label not in predicts)]
    f += [float(level == lv) for lv in LEVELS] + [float(level is None)]
    f += [math.log1p(float(rec.get("count", 1))), float(lead is None), float(lead is not None and lead < 5),
          float(lead is not None and lead > 300)]
    f += [float("same " in why or "shares" in why), float("about the topic" in why),
          float("not printed by healthy" in why), float(any(w in why for w in _NUMBER_WORDS)),
          float("few warnings" in why), 1.0 / (1 + rank_from_end), math.log1p(n)]
    return f


def candidate_rows(scored: dict[int, dict[str, Any]], label: str | None) -> list[tuple[dict[str, Any], list[float]]]:
    """Each scored candidate with its features, nearest to the failure last."""
    recs = sorted(scored.values(), key=lambda w: w["line"])
    n = len(recs)
    return [(w, features(w, label, n - 1 - i, n)) for i, w in enumerate(recs)]


class ListingModel:
    """Logistic weights over ``FEATURES`` and the probability above which a candidate is listed."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.weights = [float(w) for w in data["weights"]]
        self.bias = float(data["bias"])
        self.threshold = float(data["threshold"])

    def probability(self, f: list[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, f))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


_CACHE: dict[str, Any] = {}


def load_shipped(cache: dict[str, Any], key: str, path: Path, env: str, features: Any, make: Any) -> Any:
    """``make(data)`` of the model file at ``path`` where it ships and names ``features`` (kept in
    ``cache[key]``); None where ``env`` is "off", the file is missing or unreadable, or it does not ship."""
    import os

    if os.environ.get(env) == "off":
        return None
    if key not in cache:
        model = None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("meta", {}).get("ships") and list(data.get("features", ())) == list(features):
                model = make(data)
        except (OSError, ValueError, KeyError):
            model = None
        cache[key] = model
    return cache[key]


def listing_model() -> ListingModel | None:
    """The shipped model, or None (no file, not better than the bar held out, or turned off)."""
    model: ListingModel | None = load_shipped(_CACHE, "model", MODEL_PATH, "FORENSICS_EW_MODEL", FEATURES, ListingModel)
    return model


def record(scored: dict[int, dict[str, Any]], label: str | None) -> None:
    """Hand the lab this failure's scored candidates (only while it records)."""
    rec = RECORDER.get()
    if rec is not None:
        rec.append((label, [dict(w) for w in scored.values()]))


def learned_scores(scored: dict[int, dict[str, Any]], label: str | None, model: ListingModel) -> None:
    """Each candidate's probability of being listed under the model (``learned_p``);
    the hand-set score stays what the output shows."""
    for w, f in candidate_rows(scored, label):
        w["learned_p"] = round(model.probability(f), 4)
