"""Atheris target: the readers of files that configure a run -- signature
YAML, the plain-data scorer (.scorer.json.gz) and the .skops schema check.

The first byte picks the reader. Each may refuse its input, but only with its
own one-line error (``SignatureError`` / ``ModelError``); nothing else may
escape, and no input may take more than the reader's bounds.

    python fuzz/fuzz_files.py /tmp/fz-files fuzz/corpus-files -max_total_time=120
"""
from __future__ import annotations

import contextlib
import gzip
import sys
import tempfile
from pathlib import Path

try:
    import atheris
except ImportError:
    atheris = None

# Instrument forensics only when run as a fuzzer (tests import these targets plainly).
_instrumented = (atheris.instrument_imports(include=["forensics"]) if atheris is not None and __name__ == "__main__"
                 else contextlib.nullcontext())
with _instrumented:
    from forensics.diagnosis.classifier.files import check_model_file
    from forensics.diagnosis.classifier.scorer import load_scorer
    from forensics.diagnosis.signatures import load_signatures
    from forensics.errors import ModelError, SignatureError

_DIR = Path(tempfile.mkdtemp(prefix="forensics-fuzz-files-"))


def check_one(data: bytes) -> None:
    if not data:
        return
    kind = data[0] % 4
    body = data[1:]
    if kind == 0:
        p = _DIR / "s.yaml"
        p.write_bytes(body)
        try:
            load_signatures([p])
        except SignatureError as e:
            assert "\n" not in str(e)
    elif kind in (1, 2):
        p = _DIR / "m.scorer.json.gz"
        p.write_bytes(gzip.compress(body, 1) if kind == 1 else body)  # JSON inside, or raw bytes
        try:
            load_scorer(p)
        except ModelError as e:
            assert "\n" not in str(e)
    else:
        p = _DIR / "m.skops"
        p.write_bytes(body)
        try:
            check_model_file(p)
        except ModelError as e:
            assert "\n" not in str(e)


def main() -> None:
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    atheris.Setup(sys.argv, check_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
