"""The failure builders' vocabulary: module, library, symbol and version names
and the usage texts the programs print (one table per use). The tables are
data, in vocab.json next to this module; they are read once, at import."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _load() -> dict[str, Any]:
    # JSON has no tuples: rows written as arrays come back as the tuples the builders unpack.
    raw = json.loads(Path(__file__).with_name("vocab.json").read_text(encoding="utf-8"))
    return {name: [tuple(e) if isinstance(e, list) else e for e in v] if isinstance(v, list) else v
            for name, v in raw.items()}


_VOCAB = _load()
(MISSING_MODULES, IMPORT_NAMES, IMPORT_SITES, LIBS, LIB_SITES, SYMBOLS, ABI_SOS, NCCL_VERSIONS, NEW_ARCHS,
 SGLANG_USAGE, VLLM_USAGE) = (_VOCAB[name] for name in (
     "MISSING_MODULES", "IMPORT_NAMES", "IMPORT_SITES", "LIBS", "LIB_SITES", "SYMBOLS", "ABI_SOS", "NCCL_VERSIONS",
     "NEW_ARCHS", "SGLANG_USAGE", "VLLM_USAGE"))
