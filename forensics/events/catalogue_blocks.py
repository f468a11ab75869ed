"""Random access into a catalogue package file without holding it in memory.

A package file (``<package>.jsonl.gz``, one JSON entry a line) is written as
a run of gzip members of ``BLOCK_LINES`` lines each: still one valid gzip
file for every ordinary reader (``gzip.open`` reads the members as one
stream), but a line can be read by decompressing only its member. The lookup
index stores each package's member offsets and file size; ``BlockedLines``
reads a member when one of its lines is asked for. Decompressing a whole
package instead cost ~50 ms and kept up to 34 MB of lines for the rest of
the run (every ``classify`` of a failure log looks entries up).
"""
from __future__ import annotations

import gzip
import itertools
import zlib
from pathlib import Path

BLOCK_LINES = 128  # ~55 KB of JSON a member: ~0.2 ms to read one; the file grows ~11%
# Decoded members kept, over all package files together (neighbouring entries
# are looked up together; each package keeping its own grew with the number of
# packages a long log touched, to ~5 MB).
RECENT = 8
_recent: dict[tuple[int, int], list[bytes]] = {}  # (file's serial, member) -> its lines
_serials = itertools.count()


def gzip_blocks(lines: list[bytes]) -> tuple[bytes, list[int]]:
    """``lines`` (without newlines) as gzip members of ``BLOCK_LINES`` lines,
    and the byte offset where each member starts. Same input, same bytes."""
    parts: list[bytes] = []
    starts: list[int] = []
    pos = 0
    for i in range(0, len(lines), BLOCK_LINES):
        member = gzip.compress(b"".join(ln + b"\n" for ln in lines[i:i + BLOCK_LINES]), 9, mtime=0)
        starts.append(pos)
        parts.append(member)
        pos += len(member)
    return b"".join(parts), starts


def block_info(path: Path, lines: int) -> dict[str, object]:
    """What the lookup index records of a package file written by ``gzip_blocks``."""
    data = path.read_bytes()
    return {"size": len(data), "lines": lines, "block": BLOCK_LINES, "starts": member_starts(data)}


def member_starts(data: bytes) -> list[int]:
    """Where each gzip member of ``data`` starts."""
    starts: list[int] = []
    pos = 0
    while pos < len(data):
        starts.append(pos)
        d = zlib.decompressobj(31)
        d.decompress(data[pos:])
        if not d.eof:
            break
        pos = len(data) - len(d.unused_data)
    return starts


class BlockedLines:
    """The non-blank lines of a blocked package file, read one member at a
    time (a sequence: ``len`` and indexing, like the list it replaces)."""

    def __init__(self, path: Path, starts: list[int], count: int, block: int = BLOCK_LINES) -> None:
        self.path = path
        self.starts = starts
        self.count = count
        self.block = block
        self._serial = next(_serials)  # its members' key in _recent

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> bytes:
        if not 0 <= i < self.count:
            raise IndexError(i)
        b = i // self.block
        key = (self._serial, b)
        lines = _recent.get(key)
        if lines is None:
            lines = self._read(b)
            while len(_recent) >= RECENT:
                _recent.pop(next(iter(_recent)), None)  # the oldest
            _recent[key] = lines
        return lines[i - b * self.block]

    def _read(self, b: int) -> list[bytes]:
        lo = self.starts[b]
        hi = self.starts[b + 1] if b + 1 < len(self.starts) else None
        with open(self.path, "rb") as fh:
            fh.seek(lo)
            raw = fh.read(-1 if hi is None else hi - lo)
        d = zlib.decompressobj(31)
        lines = [ln for ln in d.decompress(raw).split(b"\n") if ln.strip()]
        want = min(self.block, self.count - b * self.block)
        if not d.eof or len(lines) != want:
            raise ValueError(f"{self.path.name}: catalogue block {b} does not match the lookup index")
        return lines


def blocked_lines(path: Path, info: object) -> BlockedLines | None:
    """A ``BlockedLines`` for ``path`` when the index's ``info`` (``{"size":
    bytes, "lines": n, "block": lines a member, "starts": [...]}``) still
    describes the file; None when the file was rewritten since the index was
    built, or is one gzip stream (read it whole then)."""
    if not isinstance(info, dict):
        return None
    starts, size, count, block = info.get("starts"), info.get("size"), info.get("lines"), info.get("block")
    if not isinstance(starts, list) or not all(isinstance(x, int) for x in (size, count, block)) or block < 1:
        return None
    try:
        if path.stat().st_size != size:
            return None
    except OSError:
        return None
    if len(starts) != -(-count // block) or starts != sorted(starts) or (starts and starts[0] != 0):
        return None
    return BlockedLines(path, starts, count, block)


