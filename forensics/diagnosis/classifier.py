"""The trained classifier: a scikit-learn Pipeline over incident features,
shipped inside the package as a skops file with its training metadata.

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

MODEL_DIR = Path(__file__).resolve().parent / "model"
MODEL_PATH = MODEL_DIR / "classifier.skops"  # the model of record (scikit-learn Pipeline, skops)
SCORER_PATH = MODEL_DIR / "classifier.scorer.json.gz"  # its compiled form, used for inference


class TrainedClassifier:
    """Predictions from a CompactScorer (no scikit-learn needed at run time)."""

    def __init__(self, scorer: Any, meta: dict[str, Any]) -> None:
        self.scorer = scorer
        self.meta = meta
        self.version = meta.get("model_version")
        self.templates = {(t["template"], t["label"]): t for t in meta.get("warning_templates", [])}

    def predict_features(self, feats: list[dict[str, str]]) -> list[dict[str, Any]]:
        classes = self.scorer.classes
        out = []
        for f in feats:
            row = self.scorer.predict_proba(f)
            order = sorted(range(len(classes)), key=lambda i: -row[i])
            cands = [{"label": classes[i], "confidence": round(float(row[i]), 3)} for i in order[:3]]
            out.append({"label": cands[0]["label"], "confidence": cands[0]["confidence"], "candidates": cands})
        return out

    def predict_incident(self, inc: Incident, phase: str | None, fail_line: int | None = None) -> dict[str, Any]:
        from forensics.diagnosis.features import incident_features

        return self.predict_features([incident_features(inc, phase, fail_line)])[0]

    def frame_prior(self, modules: str) -> dict[str, float]:
        """P(label) from the frames alone (``modules`` is the feature field of
        module and function tokens), learned from the training failures; each
        token weighs by how sure it is."""
        priors = self.meta.get("frame_priors") or {}
        acc: dict[str, float] = {}
        total = 0.0
        toks = modules.split()  # outermost first
        seen: set[str] = set()
        for i, tok in enumerate(toks):
            dist = priors.get(tok)
            if not dist or tok in seen:
                continue
            seen.add(tok)
            # A token that points one way counts, a shared one barely; the
            # innermost frames (where it was cut) say the most.
            w = max(dist.values()) ** 2 * (1.0 + i) / len(toks)
            total += w
            for lab, p in dist.items():
                acc[lab] = acc.get(lab, 0.0) + w * p
        return {lab: v / total for lab, v in acc.items()} if total else {}

    def learned_warnings(self, inc: Incident, label: str, fail_line: int) -> list[tuple[Any, dict[str, Any]]]:
        """Warning lines whose masked template preceded ``label`` far more often than chance."""
        if not self.templates:
            return []
        from forensics.diagnosis.features import mask, warning_candidates

        out = []
        seen = set()
        for ev in warning_candidates(inc):
            if ev.line >= fail_line:
                continue
            t = mask(ev.text[:200])
            info = self.templates.get((t, label))
            if info is not None and t not in seen:
                seen.add(t)
                out.append((ev, info))
        return out


class LazyClassifier:
    """Loads the model on first use: the compiled ``.scorer.json.gz`` (plain
    data, checked field by field), or -- only when ``allow_skops`` (an
    explicit ``--model``, ``train``/``eval``) -- a ``.skops`` file through the
    exact type allowlist of ``model_io``."""

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
                from forensics.diagnosis.model_io import load_model

                self._model = load_model(self.path)
            else:
                from forensics.diagnosis.scorer import load_scorer

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
