"""A source read twice: the HTML page of a log reads it again for the lines
around the evidence, and stdin can be read only once."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from forensics.ingest.sources import BLOCK_BYTES, Source


@contextmanager
def rereadable(source: Source) -> Iterator[Source]:
    """A source that can be read twice (a page reads the log again for the
    lines around the evidence): stdin is copied to a private temporary file,
    removed afterwards; any other source is itself."""
    if source.path is not None:
        yield source
        return
    fd, name = tempfile.mkstemp(prefix="forensics-stdin-")
    try:
        with os.fdopen(fd, "wb") as tmp:
            shutil.copyfileobj(sys.stdin.buffer, tmp, BLOCK_BYTES)
        yield Source(source.name, Path(name), journal_filter=source.journal_filter)
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass
