"""Saving and loading the classifier with skops (never pickle): loading
refuses any type outside an explicit allowlist, so a tampered model file
cannot run code."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from forensics.errors import ModelError

# Types our pipeline is made of (checked against skops' untrusted list).
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.sparse.", "builtins.", "collections.", "re.", "forensics.diagnosis.")
TRUSTED_EXACT = frozenset({"numpy.dtype", "scipy.sparse._csr.csr_matrix", "builtins.slice", "builtins.tuple",
                           "builtins.dict", "builtins.list", "builtins.str", "builtins.float", "builtins.int",
                           "builtins.bool", "builtins.NoneType", "builtins.set", "builtins.frozenset"})
_DANGEROUS = ("builtins.eval", "builtins.exec", "builtins.open", "builtins.getattr", "builtins.__import__",
              "builtins.compile", "os.", "subprocess.", "posix.", "nt.", "sys.", "pickle.", "shutil.", "importlib.")


def _is_trusted(t: str) -> bool:
    if any(t == d or t.startswith(d) for d in _DANGEROUS):
        return False
    return t in TRUSTED_EXACT or t.startswith(TRUSTED_PREFIXES)


def save_model(obj: Any, meta: dict[str, Any], path: Path) -> None:
    import skops.io as sio

    path.parent.mkdir(parents=True, exist_ok=True)
    import zipfile

    sio.dump(obj, path, compression=zipfile.ZIP_DEFLATED, compresslevel=9)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def load_model(path: Path) -> Any:
    try:
        import skops.io as sio
    except ImportError as e:  # pragma: no cover - a dependency
        raise ModelError(f"cannot load {path}: skops is not installed ({e})") from None
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as e:
        raise ModelError(f"{path}: not a valid skops model file ({type(e).__name__}: {e})") from None
    bad = [t for t in untrusted if not _is_trusted(t)]
    if bad:
        raise ModelError(f"{path}: refused to load: the model file asks for untrusted types ({', '.join(sorted(bad)[:5])})")
    try:
        obj = sio.load(path, trusted=list(untrusted))
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
    from forensics.diagnosis.classifier import TrainedClassifier
    from forensics.diagnosis.features import TEXT_FIELDS
    from forensics.diagnosis.scorer import CompactScorer, export_pipeline

    try:
        scorer = CompactScorer(export_pipeline(obj, TEXT_FIELDS, meta))
    except (AttributeError, KeyError, ValueError) as e:
        raise ModelError(f"{path}: not a forensics classifier pipeline ({e})") from None
    return TrainedClassifier(scorer, meta)
