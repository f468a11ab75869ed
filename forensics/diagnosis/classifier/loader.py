"""Which classifier a run uses, loaded lazily: a scikit-learn Pipeline over
incident features, shipped inside the package (``diagnosis/model/``) as a
skops file with its training metadata, and its compiled scorer.

It is loaded lazily (only when a diagnosis needs it), so classifying a log
that a strong signature explains never imports scikit-learn.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensics.errors import ModelError
from forensics.incidents.lifetimes import Incident
from forensics.diagnosis.classifier.trained import TrainedClassifier

MODEL_DIR = Path(__file__).resolve().parent.parent / "model"  # data files, apart from this code
MODEL_PATH = MODEL_DIR / "classifier.skops"  # the model of record (scikit-learn Pipeline, skops)
SCORER_PATH = MODEL_DIR / "classifier.scorer.json.gz"  # its compiled form, used for inference


class LazyClassifier:
    """Loads the model on first use: the compiled ``.scorer.json.gz`` (plain
    data, checked field by field), or -- only when ``allow_skops`` (an
    explicit ``--model``, ``train``/``eval``) -- a ``.skops`` file through the
    exact type allowlist of ``classifier.files``."""

    def __init__(self, path: Path, allow_skops: bool = False) -> None:
        self.path = path
        self.allow_skops = allow_skops
        self._model: TrainedClassifier | None = None

    @property
    def model(self) -> TrainedClassifier:
        if self._model is None:
            if self.path.name.endswith(".skops"):
                if not self.allow_skops:
                    raise ModelError(f"{self.path}: the run-time classifier is read only from a plain-data "
                                     "scorer (.scorer.json.gz); pass a .skops model with --model")
                from forensics.diagnosis.classifier.files import load_model

                self._model = load_model(self.path)
            else:
                from forensics.diagnosis.classifier.scorer import load_scorer

                scorer = load_scorer(self.path)
                self._model = TrainedClassifier(scorer, scorer.meta)
        return self._model

    @property
    def version(self) -> str | None:
        if self._model is not None:
            return self._model.version
        # Not loaded (signatures decided): the metadata sidecar still names it, cheaply.
        meta = self.path.parent / "classifier.json"
        try:
            import json

            return json.loads(meta.read_text()).get("model_version")
        except (OSError, ValueError):
            return None

    def predict_incident(self, inc: Incident, phase: str | None, fail_line: int | None = None) -> dict[str, Any]:
        return self.model.predict_incident(inc, phase, fail_line)

    def learned_warnings(self, inc: Incident, label: str, fail_line: int) -> list[tuple[Any, dict[str, Any]]]:
        return self.model.learned_warnings(inc, label, fail_line)

    def frame_prior(self, modules: str) -> dict[str, float]:
        return self.model.frame_prior(modules)


@lru_cache(maxsize=4)
def model_at(path: str, allow_skops: bool = False) -> LazyClassifier:
    """A model named by the user (``--model``, ``FORENSICS_MODEL``): it must exist."""
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"model file {path}: {'not a file' if p.exists() else 'no such file'}")
    if p.name.endswith(".skops") and not allow_skops:
        raise ModelError(f"{path}: FORENSICS_MODEL must name a plain-data scorer (.scorer.json.gz); "
                         "a .skops model is read only with --model")
    return LazyClassifier(p, allow_skops)


_warned_missing = False


def default_model() -> LazyClassifier | None:
    """The model for a run: ``FORENSICS_MODEL`` (a scorer file), else the
    shipped scorer. Without the shipped file the run goes on with signatures
    only, and says so once on stderr."""
    global _warned_missing
    env = os.environ.get("FORENSICS_MODEL")
    if env:
        return model_at(env)
    if not SCORER_PATH.is_file():
        if not _warned_missing:
            _warned_missing = True
            sys.stderr.write(f"forensics: warning: no classifier model at {SCORER_PATH}; using signatures only\n")
        return None
    return model_at(str(SCORER_PATH))
