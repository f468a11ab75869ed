"""The trained classifier's predictions, from a compiled scorer (plain data,
no scikit-learn at run time) and its training metadata."""
from __future__ import annotations

from typing import Any

from forensics.incidents.lifetimes import Incident


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
