"""Atheris target: the table readers of ``forensics report`` (.csv, .jsonl,
.parquet) and the ``labels.csv`` reader of ``forensics eval``.

The first byte picks the reader. A malformed file may be refused, but only
with a one-line ``InputError``; a file that is read must summarise
(``render_summary``) without an exception.

    python fuzz/fuzz_tables.py /tmp/fz-tab fuzz/corpus-tables -max_total_time=120
"""
from __future__ import annotations

import contextlib
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
    from forensics.lab.evaluate import read_labels
    from forensics.errors import InputError
    from forensics.report.frames import read_table
    from forensics.report.summary import render_summary

SUFFIXES = (".csv", ".jsonl", ".parquet", "labels")
_DIR = Path(tempfile.mkdtemp(prefix="forensics-fuzz-tables-"))


def check_one(data: bytes) -> None:
    if not data:
        return
    kind = SUFFIXES[data[0] % len(SUFFIXES)]
    body = data[1:]
    if kind == "labels":
        (_DIR / "labels.csv").write_bytes(body)
        try:
            read_labels(_DIR)
        except InputError as e:
            assert "\n" not in str(e)
        return
    path = _DIR / f"t{kind}"
    path.write_bytes(body)
    try:
        df = read_table(path)
    except InputError as e:
        assert "\n" not in str(e)
        return
    render_summary(df).encode("utf-8", "surrogateescape")


def main() -> None:
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    atheris.Setup(sys.argv, check_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
