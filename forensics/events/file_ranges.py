"""A regular file cut into byte ranges at line starts, and read range by
range as it was when the run began (for ``--jobs``: ``events.parallel``)."""
from __future__ import annotations

import mmap
from pathlib import Path

from forensics.ingest.sources import Source


class BoundedReader:
    """A binary file read from ``offset`` up to ``limit`` bytes from the start
    (the size the file had when the run began), whatever happens to it since."""

    def __init__(self, path: Path, offset: int, limit: int) -> None:
        self.f = open(path, "rb")
        self.f.seek(offset)
        self.left = max(0, limit - offset)
        self.short = False

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.f.read(self.left if n < 0 else min(n, self.left))
        if not data:
            self.short = True
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()


class RangeSource(Source):
    def __init__(self, path: Path, offset: int, limit: int) -> None:
        super().__init__(str(path), path)
        self.offset = offset
        self.limit = limit
        self.reader: BoundedReader | None = None

    def open_binary(self):  # type: ignore[override]
        self.reader = BoundedReader(self.path, self.offset, self.limit)  # type: ignore[arg-type]
        return self.reader


def plan_cuts(path: Path, size: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``chunk_bytes``, cut at line starts (no data copied)."""
    cuts = [0]
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = chunk_bytes
        while pos < size:
            nl = mm.find(b"\n", pos)
            if nl < 0 or nl + 1 >= size:
                break
            cuts.append(nl + 1)
            pos = nl + 1 + chunk_bytes
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def count_newlines(args: tuple[str, int, int]) -> tuple[int, bool, bool]:
    path, a, b = args
    with open(path, "rb") as f:
        f.seek(a)
        data = f.read(b - a)
    return data.count(b"\n"), data.endswith(b"\n"), len(data) != b - a


def number_chunks(ranges: list[tuple[int, int]], counts: list[tuple]) -> tuple[list[tuple[int, int, int]], int]:
    """(start, end, first line) per range, and the file's line count."""
    chunks = []
    line = 1
    for (a, b), (n, *_) in zip(ranges, counts):
        chunks.append((a, b, line))
        line += n
    ends_nl = counts[-1][1] if counts else True
    return chunks, line - 1 + (0 if ends_nl else 1)


def warm_start(path: Path, start: int, warm_bytes: int) -> tuple[int, int]:
    """(offset, newlines between it and ``start``) of the warm-up start."""
    if not start:
        return 0, 0
    with open(path, "rb") as f:
        lo = max(0, start - warm_bytes)
        f.seek(lo)
        data = f.read(start - lo)  # read, not mmap: a file cut meanwhile cannot SIGBUS us
    if lo == 0:
        return 0, data.count(b"\n")
    nl = data.find(b"\n")
    if nl < 0 or nl + 1 >= len(data):  # no whole line in the warm-up window
        return start, 0
    return lo + nl + 1, data.count(b"\n", nl + 1)


def offset_of_line(path: Path, offset: int, line: int, target: int, limit: int) -> int | None:
    """Byte offset where line ``target`` starts, counting from ``offset`` (the
    start of ``line``); None when the file ends first."""
    need = target - line
    with open(path, "rb") as f:
        f.seek(offset)
        pos = offset
        while need > 0 and pos < limit:
            buf = f.read(min(1 << 20, limit - pos))
            if not buf:
                return None
            i = -1
            while need > 0:
                i = buf.find(b"\n", i + 1)
                if i < 0:
                    break
                need -= 1
            if need == 0:
                return pos + i + 1
            pos += len(buf)
    return offset if need == 0 else None


def file_id(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev
