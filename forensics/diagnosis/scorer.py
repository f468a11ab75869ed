"""A compiled, dependency-free form of the trained pipeline for inference.

Importing scikit-learn costs about a second and ~190 MB of memory; a log
that needs the classifier should not pay that. At train time the fitted
Pipeline (TF-IDF vectorisers -> logistic regression -> sigmoid calibration)
is exported to plain data: vocabularies, idf weights, coefficients (float32),
calibration constants. This module re-implements exactly the arithmetic
sklearn does on them (a test checks the probabilities agree). The file is
data only, so a tampered one cannot run code.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import re
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

from forensics.errors import ModelError

FORMAT = "forensics-scorer/1"
_WHITE = re.compile(r"\s\s+")


class _Vectorizer:
    def __init__(self, d: dict[str, Any], offset: int) -> None:
        self.column = d["column"]
        self.analyzer = d["analyzer"]
        self.min_n, self.max_n = d["ngram_range"]
        self.lowercase = d["lowercase"]
        self.pattern = re.compile(d["token_pattern"]) if d.get("token_pattern") else None
        self.sublinear = d["sublinear_tf"]
        self.norm = d["norm"]
        self.vocab: dict[str, int] = d["vocab"]
        self.idf = d["idf"]
        self.offset = offset

    def _terms(self, doc: str) -> list[str]:
        if self.lowercase:
            doc = doc.lower()
        if self.analyzer == "char_wb":
            out: list[str] = []
            doc = _WHITE.sub(" ", doc)
            for w in doc.split():
                w = " " + w + " "
                wl = len(w)
                for n in range(self.min_n, self.max_n + 1):
                    offset = 0
                    out.append(w[offset:offset + n])
                    while offset + n < wl:
                        offset += 1
                        out.append(w[offset:offset + n])
                    if offset == 0:
                        break
            return out
        assert self.pattern is not None
        tokens = self.pattern.findall(doc)
        if self.max_n == 1:
            return tokens
        out = list(tokens) if self.min_n == 1 else []
        n_tok = len(tokens)
        for n in range(max(self.min_n, 2), min(self.max_n, n_tok) + 1):
            for i in range(n_tok - n + 1):
                out.append(" ".join(tokens[i:i + n]))
        return out

    def transform(self, doc: str) -> dict[int, float]:
        counts = Counter(t for t in self._terms(doc) if t in self.vocab)
        vec: dict[int, float] = {}
        for term, c in counts.items():
            j = self.vocab[term]
            tf = 1.0 + math.log(c) if self.sublinear else float(c)
            vec[j] = tf * self.idf[j]
        if self.norm == "l2" and vec:
            s = math.sqrt(sum(v * v for v in vec.values()))
            if s > 0:
                vec = {j: v / s for j, v in vec.items()}
        return {self.offset + j: v for j, v in vec.items()}


class CompactScorer:
    def __init__(self, data: dict[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise ModelError(f"unknown scorer format {data.get('format')!r}")
        self.classes: list[str] = data["classes"]
        self.fields: list[str] = data["fields"]
        self.n_features = data["n_features"]
        self.vectorizers: list[_Vectorizer] = []
        offset = 0
        for v in data["vectorizers"]:
            self.vectorizers.append(_Vectorizer(v, offset))
            offset += len(v["idf"])
        if offset != self.n_features:
            raise ModelError("scorer file is inconsistent (feature count)")
        coef = array("f")
        coef.frombytes(base64.b64decode(data["coef"]))
        if len(coef) != self.n_features * len(self.classes):
            raise ModelError("scorer file is inconsistent (coefficients)")
        self.coef = coef
        self.intercept = data["intercept"]
        self.calib = data["calibration"]  # [[a, b] per class]
        self.meta = data.get("meta", {})

    def decision(self, feats: dict[str, str]) -> list[float]:
        x: dict[int, float] = {}
        for vec in self.vectorizers:
            x.update(vec.transform(feats[self.fields[vec.column]]))
        nf = self.n_features
        coef = self.coef
        out = []
        for k in range(len(self.classes)):
            base = k * nf
            out.append(self.intercept[k] + sum(v * coef[base + j] for j, v in x.items()))
        return out

    def predict_proba(self, feats: dict[str, str]) -> list[float]:
        dec = self.decision(feats)
        proba = []
        for (a, b), f in zip(self.calib, dec):
            z = -(a * f + b)
            proba.append(1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0)
        s = sum(proba)
        if s == 0:
            return [1.0 / len(proba)] * len(proba)
        return [min(1.0, p / s) for p in proba]


def export_pipeline(pipe: Any, fields: tuple[str, ...], meta: dict[str, Any]) -> dict[str, Any]:
    """Plain-data export of a fitted Pipeline(features=ColumnTransformer, model=CalibratedClassifierCV)."""
    import numpy as np

    ct = pipe.named_steps["features"]
    vecs = []
    for name, vec, column in ct.transformers_:
        if name == "remainder":
            continue
        vocab = {str(k): int(v) for k, v in vec.vocabulary_.items()}
        vecs.append({"name": name, "column": int(column), "analyzer": vec.analyzer,
                     "ngram_range": list(vec.ngram_range), "lowercase": bool(vec.lowercase),
                     "token_pattern": vec.token_pattern if vec.analyzer == "word" else None,
                     "sublinear_tf": bool(vec.sublinear_tf), "norm": vec.norm,
                     "vocab": vocab, "idf": [float(x) for x in vec.idf_]})
    cal = pipe.named_steps["model"]
    if len(cal.calibrated_classifiers_) != 1:
        raise ValueError("export needs CalibratedClassifierCV(ensemble=False)")
    cc = cal.calibrated_classifiers_[0]
    lr = cc.estimator
    if list(lr.classes_) != list(cal.classes_):
        raise ValueError("class order mismatch")
    coef = np.asarray(lr.coef_, dtype=np.float32)
    calib = [[float(c.a_), float(c.b_)] for c in cc.calibrators]
    return {"format": FORMAT, "classes": [str(c) for c in cal.classes_], "fields": list(fields),
            "n_features": int(coef.shape[1]), "vectorizers": vecs,
            "coef": base64.b64encode(coef.tobytes()).decode(), "intercept": [float(x) for x in lr.intercept_],
            "calibration": calib, "meta": meta}


def save_scorer(data: dict[str, Any], path: Path) -> None:
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime=0: byte-identical rebuilds
        f.write(raw)


def load_scorer(path: Path) -> CompactScorer:
    try:
        with gzip.open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, EOFError, ValueError) as e:
        raise ModelError(f"{path}: not a valid forensics scorer file ({e})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: not a valid forensics scorer file")
    try:
        return CompactScorer(data)
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"{path}: not a valid forensics scorer file ({type(e).__name__}: {e})") from None


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
