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
import binascii
import gzip
import hashlib
import io
import json
import math
import re
import sys
import zlib
from array import array
from collections import Counter
from operator import itemgetter, mul
from pathlib import Path
from typing import Any, Callable

from forensics.errors import ModelError

FORMAT = "forensics-scorer/1"
_WHITE = re.compile(r"\s\s+")

# A scorer file is data from outside: it is read with every size bounded
# (a gzip bomb stops at the limit instead of filling memory) and checked
# field by field before use, so a crafted one is refused in one line
# instead of crashing, hanging or indexing out of range later.
MAX_COMPRESSED = 64 << 20  # the shipped file is ~1 MB
MAX_DECOMPRESSED = 128 << 20  # ... and ~2 MB of JSON
MAX_CLASSES = 1000
MAX_FEATURES = 5_000_000
MAX_NGRAM = 16
# Token patterns are compiled and run over log text: only these known linear
# ones (what ``train`` uses, and scikit-learn's default) are accepted, so a
# scorer file cannot smuggle in a catastrophic regex.
SAFE_TOKEN_PATTERNS = frozenset({r"[A-Za-z_][A-Za-z0-9_]+", r"\S+", r"(?u)\b\w\w+\b"})
WORD_MEMO = 4096  # char_wb words remembered per vectoriser (cleared when full)
WORD_MEMO_LEN = 64  # longer words are split every time


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
        # char_wb: a word -> its n-grams in the vocabulary, in order (the failing
        # lifetimes of a crash loop repeat their words; bounded, cleared when full)
        self._word_terms: dict[str, tuple[str, ...]] = {}

    def _known_terms(self, doc: str) -> Any:
        """The terms of ``doc`` that are in the vocabulary, in ``_terms``' order."""
        if self.analyzer != "char_wb":
            return filter(self.vocab.__contains__, self._terms(doc))
        if self.lowercase:
            doc = doc.lower()
        memo = self._word_terms
        out: list[str] = []
        for w in _WHITE.sub(" ", doc).split():
            got = memo.get(w)
            if got is None:
                got = tuple(filter(self.vocab.__contains__, self._word_grams(w)))
                if len(w) <= WORD_MEMO_LEN:
                    if len(memo) >= WORD_MEMO:
                        memo.clear()
                    memo[w] = got
            out.extend(got)
        return out

    def _word_grams(self, w: str) -> list[str]:
        """char_wb's n-grams of one word (sklearn's loop)."""
        out: list[str] = []
        w = " " + w + " "
        wl = len(w)
        for n in range(self.min_n, self.max_n + 1):
            if n >= wl:  # the whole padded word, once, and no longer n-grams
                out.append(w)
                break
            out.extend([w[i:i + n] for i in range(wl - n + 1)])
        return out

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
                    if n >= wl:  # the whole padded word, once, and no longer n-grams (sklearn's loop)
                        out.append(w)
                        break
                    out.extend([w[i:i + n] for i in range(wl - n + 1)])
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
        counts = Counter(self._known_terms(doc))
        vec: dict[int, float] = {}
        for term, c in counts.items():
            j = self.vocab[term]
            tf = 1.0 + math.log(c) if self.sublinear else float(c)
            vec[j] = tf * self.idf[j]
        if self.norm == "l2" and vec:
            vals = list(vec.values())
            s = math.sqrt(sum(map(mul, vals, vals)))  # (the same squares, summed in the same order)
            if s > 0:
                vec = {j: v / s for j, v in vec.items()}
        return {self.offset + j: v for j, v in vec.items()}


class CompactScorer:
    def __init__(self, data: dict[str, Any], checked: bool = False) -> None:
        """``checked``: ``data`` is a cached copy of a file that passed ``validate``."""
        if data.get("format") != FORMAT:
            raise ModelError(f"unknown scorer format {str(data.get('format'))[:60]!r}")
        if not checked:
            validate(data)
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
        coef.frombytes(base64.b64decode(data["coef"], validate=True))
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
        return self._dot(x)

    def _dot(self, x: dict[int, float]) -> list[float]:
        """intercept + x . coef for each class, summed in x's order (as
        ``sum(v * coef[j] ...)`` would), with the loops in C: map over each
        class's row of coefficients (a memoryview slice, not a copy), its
        coefficients gathered by one itemgetter call."""
        nf = self.n_features
        rows = memoryview(self.coef)
        cols = list(x)
        vals = list(x.values())
        gather: Callable[[Any], Any] = itemgetter(*cols) if len(cols) > 1 else (
            lambda row: [row[j] for j in cols])  # (itemgetter of one column gives no tuple)
        out = []
        for k in range(len(self.classes)):
            row = rows[k * nf:(k + 1) * nf]
            out.append(self.intercept[k] + sum(map(mul, vals, gather(row))))
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
        if vec.analyzer == "word" and vec.token_pattern not in SAFE_TOKEN_PATTERNS:
            raise ValueError(f"token pattern {vec.token_pattern!r} is not in scorer.SAFE_TOKEN_PATTERNS")
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
    from forensics.atomic import atomic_open

    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with atomic_open(path, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename=str(path)) as f:
        f.write(raw)  # mtime=0: byte-identical rebuilds


def _fail(what: str) -> None:
    raise ModelError(f"scorer file is invalid ({what})")


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _validate_vectorizer(v: Any, n_fields: int) -> None:
    """One vectorizer entry of a scorer dict: its type, options and index ranges."""
    if not isinstance(v, dict):
        _fail("vectorizer")
    if not _is_int(v.get("column"), 0, n_fields - 1):
        _fail("vectorizer column")
    if v.get("analyzer") not in ("word", "char_wb"):
        _fail("vectorizer analyzer")
    ng = v.get("ngram_range")
    if not (isinstance(ng, list) and len(ng) == 2 and _is_int(ng[0], 1, MAX_NGRAM)
            and _is_int(ng[1], ng[0], MAX_NGRAM)):
        _fail("vectorizer ngram_range")
    if v["analyzer"] == "word" and v.get("token_pattern") not in SAFE_TOKEN_PATTERNS:
        _fail("vectorizer token_pattern is not one of the known safe patterns")
    if not isinstance(v.get("lowercase"), bool) or not isinstance(v.get("sublinear_tf"), bool):
        _fail("vectorizer flags")
    if v.get("norm") not in ("l2", None):
        _fail("vectorizer norm")
    idf = v.get("idf")
    if not isinstance(idf, list) or not all(_is_num(x) for x in idf):
        _fail("vectorizer idf")
    vocab = v.get("vocab")
    n = len(idf)
    if not isinstance(vocab, dict) or len(vocab) > n or \
            not all(isinstance(t, str) and _is_int(j, 0, n - 1) for t, j in vocab.items()):
        _fail("vectorizer vocabulary (an index out of range)")


def validate(data: dict[str, Any]) -> None:
    """Check the schema, the types and every index range of a scorer dict;
    ``ModelError`` on the first thing wrong."""
    classes = data.get("classes")
    if not isinstance(classes, list) or not 1 <= len(classes) <= MAX_CLASSES or \
            not all(isinstance(c, str) and 0 < len(c) <= 200 for c in classes):
        _fail("classes")
    fields = data.get("fields")
    if not isinstance(fields, list) or not 1 <= len(fields) <= 64 or not all(isinstance(f, str) for f in fields):
        _fail("fields")
    nf = data.get("n_features")
    if not _is_int(nf, 0, MAX_FEATURES):
        _fail("n_features")
    vecs = data.get("vectorizers")
    if not isinstance(vecs, list) or not 1 <= len(vecs) <= 64:
        _fail("vectorizers")
    for v in vecs:
        _validate_vectorizer(v, len(fields))
    if sum(len(v["idf"]) for v in vecs) != nf:
        _fail("feature count")
    coef = data.get("coef")
    if not isinstance(coef, str) or len(coef) != 4 * ((4 * nf * len(classes) + 2) // 3):
        _fail("coefficients")
    for key in ("intercept", "calibration"):
        val = data.get(key)
        if not isinstance(val, list) or len(val) != len(classes):
            _fail(key)
    if not all(_is_num(x) for x in data["intercept"]):
        _fail("intercept")
    if not all(isinstance(ab, list) and len(ab) == 2 and all(_is_num(x) for x in ab) for ab in data["calibration"]):
        _fail("calibration")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        _fail("meta")
    tmpl = meta.get("warning_templates", [])
    if not isinstance(tmpl, list) or not all(
            isinstance(t, dict) and isinstance(t.get("template"), str) and isinstance(t.get("label"), str)
            for t in tmpl):
        _fail("meta.warning_templates")
    if meta.get("model_version") is not None and not isinstance(meta["model_version"], str):
        _fail("meta.model_version")


def size_within(path: Path, limit: int, unreadable: Callable[[Any], str], too_large: Callable[[int], str]) -> int:
    """The size of a model file, checked before a byte of it is read:
    ``ModelError`` (with the caller's wording) when it cannot be read or is
    larger than ``limit``."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise ModelError(unreadable(e.strerror or e)) from None
    if size > limit:
        raise ModelError(too_large(size))
    return size


def read_bounded_gzip(path: Path, limit: int | None = None, max_compressed: int | None = None,
                      data: bytes | None = None) -> bytes:
    """The decompressed bytes of ``path`` (of ``data``, its bytes, when
    given); ``ModelError`` past ``limit`` (a gzip bomb costs at most ``limit``
    bytes, never the whole expansion)."""
    limit = MAX_DECOMPRESSED if limit is None else limit
    max_compressed = MAX_COMPRESSED if max_compressed is None else max_compressed
    size_within(path, max_compressed, lambda err: f"{path}: cannot read the scorer file ({err})",
                lambda size: f"{path}: scorer file too large ({size:,} bytes; at most {max_compressed:,})")
    try:
        # In 1 MiB steps: one read(limit + 1) lets gzip's own buffers grow to
        # several times the limit before the check can refuse the file.
        buf = bytearray()
        with gzip.open(io.BytesIO(data) if data is not None else path, "rb") as f:
            while len(buf) <= limit:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                buf += chunk
        raw = bytes(buf) if len(buf) <= limit else b""
        if len(buf) > limit:
            del buf
            raise ModelError(f"{path}: scorer file expands past {limit:,} bytes (refused)")
    except (OSError, EOFError, zlib.error) as e:
        raise ModelError(f"{path}: not a valid forensics scorer file ({type(e).__name__}: {str(e)[:120]})") from None
    if len(raw) > limit:
        raise ModelError(f"{path}: scorer file expands past {limit:,} bytes (refused)")
    return raw


def _scorer_key(packed: bytes) -> str:
    from forensics.diagnosis import sigcache
    from forensics.versions import __version__

    parts = [hashlib.sha256(packed).hexdigest(), __version__, sys.version, sigcache.code_digest(__name__)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def load_scorer(path: Path) -> CompactScorer:
    """The scorer of a file; its decompressed, checked JSON is cached by the
    file's digest (``forensics.cache``: a doubtful entry is a miss)."""
    import forensics.cache as cache

    packed = None
    try:
        if path.stat().st_size <= MAX_COMPRESSED:
            packed = path.read_bytes()
    except OSError:
        pass  # read_bounded_gzip says why, in its words
    key = _scorer_key(packed) if packed is not None else None
    data = _cached_data(key)
    cached = data is not None
    if data is None:
        raw = read_bounded_gzip(path, data=packed)
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as e:
            raise ModelError(f"{path}: not a valid forensics scorer file ({type(e).__name__})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: not a valid forensics scorer file")
    try:
        scorer = CompactScorer(data, checked=cached)
    except ModelError as e:
        raise ModelError(f"{path}: {e}") from None
    except (KeyError, TypeError, ValueError, binascii.Error) as e:
        raise ModelError(f"{path}: not a valid forensics scorer file ({type(e).__name__}: {str(e)[:120]})") from None
    if key is not None and not cached:
        cache.write_table(CACHE_KIND, key, data)
    return scorer


# The checked scorer is cached as marshal data, not JSON: the same values (dicts, lists,
# str, int, float, bool), loaded ~4x faster (~20 ms instead of ~85 for 4 MB).
CACHE_KIND = "scorer-marshal"


def _cached_data(key: str | None) -> dict[str, Any] | None:
    import forensics.cache as cache

    return cache.read_table(CACHE_KIND, key, MAX_DECOMPRESSED) if key is not None else None


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
