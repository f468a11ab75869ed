"""Stage 1: bytes -> numbered text lines, from stdin, files, directories, .gz.

Reads in fixed-size blocks and splits on ``\\n`` itself so memory stays
bounded whatever the input (a 10 GB log, a 50 MB single line, a binary file):
a physical line longer than ``MAX_LINE_BYTES`` is clipped, not buffered
whole, and the clip is counted in the source's stats.
"""
from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from forensics.errors import InputError

BLOCK_BYTES = 1 << 20
MAX_LINE_BYTES = 8 << 20  # longer physical lines are clipped (the rest is counted, not kept)
GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class SourceStats:
    lines: int = 0
    clipped_lines: int = 0
    bytes: int = 0
    truncated_gzip: bool = False
    incomplete_last_line: bool = False


@dataclass
class Source:
    """One input: a path, or ``-`` for stdin."""

    name: str
    path: Path | None = None
    stats: SourceStats = field(default_factory=SourceStats)

    def open_binary(self) -> BinaryIO:
        if self.path is None:
            return sys.stdin.buffer
        try:
            f: BinaryIO = open(self.path, "rb")
        except OSError as e:
            raise InputError(f"cannot read {self.name}: {e.strerror or e}") from None
        head = f.peek(2)[:2] if hasattr(f, "peek") else b""
        if head == GZIP_MAGIC:
            return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
        return f

    def blocks(self, line_mode: bool = False) -> Iterator[str]:
        """Yield decoded text blocks made of whole lines (each ends with ``\\n``
        except possibly the very last). ``line_mode`` yields one line per block
        as soon as it arrives (for live streams)."""
        f = self.open_binary()
        if self.path is None and f is sys.stdin.buffer and not line_mode:
            f = _maybe_gzip_stream(f)
        st = self.stats
        try:
            if line_mode:
                yield from self._line_blocks(f)
                return
            carry = b""
            clipping = False  # inside a monster line whose middle we drop
            # GzipFile.read(n) drops everything it decompressed in that call
            # when the stream turns out truncated; read1 hands each chunk
            # over as it comes, so a cut .gz loses only its unfinished tail.
            read = f.read1 if isinstance(f, gzip.GzipFile) else f.read
            while True:
                try:
                    buf = read(BLOCK_BYTES)
                except (EOFError, zlib.error, gzip.BadGzipFile):
                    st.truncated_gzip = True
                    buf = b""
                except OSError as e:
                    raise InputError(f"cannot read {self.name}: {e.strerror or e}") from None
                if not buf:
                    break
                st.bytes += len(buf)
                if clipping:
                    nl = buf.find(b"\n")
                    if nl < 0:
                        continue
                    buf = buf[nl:]
                    clipping = False
                if carry:
                    buf = carry + buf
                    carry = b""
                cut = buf.rfind(b"\n")
                if cut < 0:
                    carry = buf
                else:
                    complete, carry = buf[: cut + 1], buf[cut + 1:]
                    text = complete.decode("utf-8", "replace")
                    st.lines += text.count("\n")
                    yield text
                if len(carry) > MAX_LINE_BYTES:
                    carry = carry[:MAX_LINE_BYTES] + _CLIP_MARK
                    st.clipped_lines += 1
                    clipping = True
            if carry:
                st.lines += 1
                st.incomplete_last_line = not clipping
                yield carry.decode("utf-8", "replace")
        finally:
            if f is not sys.stdin.buffer:
                try:
                    f.close()
                except Exception:
                    pass

    def _line_blocks(self, f: BinaryIO) -> Iterator[str]:
        st = self.stats
        readline = f.readline
        while True:
            raw = readline(MAX_LINE_BYTES)
            if not raw:
                return
            st.bytes += len(raw)
            if not raw.endswith(b"\n"):
                rest = raw
                # clipped monster line or last line without newline
                if len(raw) >= MAX_LINE_BYTES:
                    st.clipped_lines += 1
                    while rest and not rest.endswith(b"\n"):
                        rest = readline(MAX_LINE_BYTES)
                    raw = raw + b"\n"
                else:
                    st.incomplete_last_line = True
            st.lines += 1
            yield raw.decode("utf-8", "replace")


_CLIP_MARK = b" [...clipped by forensics]"


class _PeekStream(io.RawIOBase):
    def __init__(self, head: bytes, rest: BinaryIO):
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def _maybe_gzip_stream(f: BinaryIO) -> BinaryIO:
    head = f.read(2)
    stream = io.BufferedReader(_PeekStream(head, f), buffer_size=BLOCK_BYTES)
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream  # type: ignore[return-value]


LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".jsonl", ".gz", ".journal-export", ".export")


def expand_paths(paths: list[str] | tuple[str, ...], skipped: list[str] | None = None) -> Iterator[Source]:
    """Sources for command-line arguments: ``-`` is stdin, a directory is walked
    (sorted, symlink loops ignored), anything else is a file."""
    if not paths:
        yield Source("-")
        return
    for p in paths:
        if p == "-":
            yield Source("-")
            continue
        path = Path(p)
        try:
            st = path.stat()
        except OSError as e:
            raise InputError(f"cannot read {p}: {e.strerror or e}") from None
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(path, skipped)
        else:
            yield Source(str(path), path)


def _walk(root: Path, skipped: list[str] | None) -> Iterator[Source]:
    seen: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=lambda e: skipped.append(f"{e.filename}: {e.strerror}") if skipped is not None else None):
        try:
            st = os.stat(dirpath)
        except OSError:
            dirnames[:] = []
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:  # symlink loop
            dirnames[:] = []
            continue
        seen.add(key)
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith((".csv", ".md", ".py", ".sh", ".parquet")):
                continue
            fp = Path(dirpath) / name
            # Only regular files: a dangling symlink, a symlink loop, a FIFO
            # (would block forever) or a socket inside a walked directory is
            # skipped, not fatal. A file named on the command line still is.
            try:
                fst = fp.stat()
            except OSError as e:
                if skipped is not None:
                    skipped.append(f"{fp}: {e.strerror or e}")
                continue
            if not stat.S_ISREG(fst.st_mode):
                if skipped is not None:
                    skipped.append(f"{fp}: not a regular file")
                continue
            yield Source(str(fp), fp)
