"""Atheris target: archives and wide encodings as inputs (tar, compressed tar,
zip, 7-Zip; UTF-16/32 with and without a byte-order mark).

The bytes are written to a file and read as ``classify FILE`` reads it: the
archive listed, each member diagnosed. Damaged input may be refused, but only
with a one-line ``InputError`` (per member or for the archive); any other
exception is a bug.

    python fuzz/fuzz_archives.py /tmp/fz-arch fuzz/corpus-archives -max_total_time=120 -max_len=8192
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

_instrumented = (atheris.instrument_imports(include=["forensics"]) if atheris is not None and __name__ == "__main__"
                 else contextlib.nullcontext())
with _instrumented:
    from forensics.errors import InputError
    from forensics.ingest.sources import expand_paths
    from forensics.pipeline import diagnose_source

_DIR = Path(tempfile.mkdtemp(prefix="forensics-fuzz-archives-"))


def check_one(data: bytes) -> None:
    path = _DIR / "attached.bin"
    path.write_bytes(data)
    skipped: list[str] = []
    try:
        sources = list(expand_paths([str(path)], skipped))
    except InputError as e:
        assert "\n" not in str(e)
        return
    assert all("\n" not in s for s in skipped), skipped
    for src in sources:
        try:
            res = diagnose_source(src, use_classifier=False)
        except InputError as e:
            assert "\n" not in str(e)
            continue
        st = res["stats"]
        assert st["lines"] == st["parsed"] + st["unparsed"], st


def main() -> None:
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    atheris.Setup(sys.argv, check_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
