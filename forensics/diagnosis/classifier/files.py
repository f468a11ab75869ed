"""The classifier's model files: saving and loading them with skops (never pickle): loading
refuses any type outside an explicit allowlist, so a tampered model file
cannot run code."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from forensics.errors import ModelError
from forensics.diagnosis.classifier.scorer import size_within

# The exact types (module.name) a forensics classifier pipeline is made of,
# and the skops node loaders they may come through. Nothing else is accepted:
# no wildcards (``numpy.*`` holds helpers that call ``exec``), and none of the
# loaders that call a named function (reduce / constructor / function /
# method / partial nodes). The whole schema is checked by us before skops
# builds anything, and skops is then given only the types we checked.
TRUSTED_TYPES = frozenset({
    "builtins.dict", "builtins.list", "builtins.tuple", "builtins.str", "builtins.slice",
    "builtins.int", "builtins.float", "builtins.bool", "builtins.NoneType",
    "numpy.ndarray", "numpy.float64", "numpy.float32", "numpy.int64", "numpy.int32", "numpy.bool_",
    "sklearn.pipeline.Pipeline",
    "sklearn.compose._column_transformer.ColumnTransformer",
    "sklearn.feature_extraction.text.TfidfVectorizer",
    "sklearn.feature_extraction.text.TfidfTransformer",
    "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.calibration.CalibratedClassifierCV",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.model_selection._split.StratifiedKFold",
})
TRUSTED_LOADERS = frozenset({"DictNode", "ListNode", "TupleNode", "JsonNode", "SliceNode", "TypeNode",
                             "NdArrayNode", "ObjectNode"})
MAX_MODEL_BYTES = 256 << 20  # the shipped file is ~5 MB
MAX_SCHEMA_BYTES = 64 << 20
MAX_MEMBERS = 500_000  # one .npy member per array: the shipped file has ~19k


def _schema_refusals(schema: Any) -> list[str]:
    """Every type or loader in a skops schema outside the exact allowlist."""
    bad: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if "__loader__" in node or "__module__" in node or "__class__" in node:
                name = f"{node.get('__module__')}.{node.get('__class__')}"
                loader = node.get("__loader__")
                if loader not in TRUSTED_LOADERS:
                    bad.add(f"{name} (via {loader})")
                elif name not in TRUSTED_TYPES:
                    bad.add(name)
            stack.extend(node.values())
    return sorted(bad)


def check_model_file(path: Path) -> list[str]:
    """Read and check a .skops file's schema without building anything;
    returns the trusted types skops must be told about. ``ModelError`` when
    the file is not a plain forensics pipeline."""
    import zipfile

    size_within(path, MAX_MODEL_BYTES, lambda err: f"cannot read {path}: {err}",
                lambda size: f"{path}: model file too large ({size:,} bytes)")
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > 2 * MAX_MODEL_BYTES:
                raise ModelError(f"{path}: refused to load: the model archive expands too far")
            info = z.getinfo("schema.json")
            if info.file_size > MAX_SCHEMA_BYTES:
                raise ModelError(f"{path}: refused to load: schema too large")
            with z.open(info) as f:
                raw = f.read(MAX_SCHEMA_BYTES + 1)
    except ModelError:
        raise
    except (OSError, KeyError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError) as e:
        raise ModelError(f"{path}: not a valid skops model file ({type(e).__name__})") from None
    if len(raw) > MAX_SCHEMA_BYTES:
        raise ModelError(f"{path}: refused to load: schema too large")
    try:
        schema = json.loads(raw)
    except (ValueError, RecursionError):
        raise ModelError(f"{path}: not a valid skops model file (schema is not JSON)") from None
    bad = _schema_refusals(schema)
    if bad:
        raise ModelError(f"{path}: refused to load: the model file asks for untrusted types "
                         f"({', '.join(bad[:5])}{', ...' if len(bad) > 5 else ''})")
    return sorted(TRUSTED_TYPES)


def save_model(obj: Any, meta: dict[str, Any], path: Path) -> None:
    import skops.io as sio

    path.parent.mkdir(parents=True, exist_ok=True)
    import zipfile

    from forensics.atomic import atomic_path, atomic_write_text

    with atomic_path(path) as tmp:
        sio.dump(obj, tmp, compression=zipfile.ZIP_DEFLATED, compresslevel=9)
    atomic_write_text(path.with_suffix(".json"), json.dumps(meta, indent=2, sort_keys=True) + "\n")


def load_model(path: Path) -> Any:
    trusted = check_model_file(path)  # before skops is even imported
    try:
        import skops.io as sio
    except ImportError as e:  # pragma: no cover - a dependency
        raise ModelError(f"cannot load {path}: skops is not installed ({e})") from None
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as e:
        raise ModelError(f"{path}: not a valid skops model file ({type(e).__name__}: {str(e)[:200]})") from None
    bad = [t for t in untrusted if t not in TRUSTED_TYPES]
    if bad:  # skops sees a type our walk did not: refuse rather than guess
        raise ModelError(f"{path}: refused to load: the model file asks for untrusted types ({', '.join(sorted(bad)[:5])})")
    try:
        obj = sio.load(path, trusted=trusted)
    except Exception as e:
        raise ModelError(f"{path}: cannot load model ({type(e).__name__}: {str(e)[:200]})") from None
    meta_path = path.with_suffix(".json")
    meta: dict[str, Any] = {}
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            meta = {}
    try:
        import sklearn

        trained = (meta.get("versions") or {}).get("scikit-learn")
        if trained and trained != sklearn.__version__:
            warnings.warn(f"forensics: model {path.name} was trained with scikit-learn {trained}, "
                          f"running {sklearn.__version__}; retrain with `forensics train` if answers look off",
                          stacklevel=2)
    except ImportError:  # pragma: no cover
        pass
    from forensics.diagnosis.classifier.trained import TrainedClassifier
    from forensics.diagnosis.features import TEXT_FIELDS
    from forensics.diagnosis.classifier.scorer import CompactScorer, export_pipeline

    try:
        scorer = CompactScorer(export_pipeline(obj, TEXT_FIELDS, meta))
    except (AttributeError, KeyError, ValueError) as e:
        raise ModelError(f"{path}: not a forensics classifier pipeline ({e})") from None
    return TrainedClassifier(scorer, meta)
