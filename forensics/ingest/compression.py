"""Compressed streams, told by their magic bytes (gzip, xz, bzip2, zstd), read
as they stream; a stream cut short raises one of ``truncation_errors()``."""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import Any, BinaryIO

from forensics.errors import InputError

# Bytes read at a time. A block, its decoded text and the lines cut from it
# are alive together, outside the traced Python heap (which stays flat), and
# 1 MB blocks left RSS growing with the log, probably heap fragmentation from
# buffers that size: a 10,000-lifetime crash loop's text report peaked at
# 60.7 MiB with 1 MB blocks, 54.7 with 256 KB, for the same CPU time.
BLOCK_BYTES = 256 << 10
GZIP_MAGIC = b"\x1f\x8b"

# Compressors we read, by magic bytes.
COMPRESSORS: tuple[tuple[bytes, str], ...] = (
    (GZIP_MAGIC, "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


def compression_of(head: bytes) -> str | None:
    for magic, name in COMPRESSORS:
        if head.startswith(magic):
            if name == "bzip2" and not (len(head) >= 10 and head[3:4].isdigit()
                                        and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")):
                continue  # "BZh" at the start of a text line is not bzip2
            return name
    return None


def decompressor(raw: BinaryIO, kind: str, name: str) -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw)  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    try:
        import zstandard
    except ImportError:
        raise InputError(f"{name} is zstd-compressed: reading it needs python-zstandard "
                         "(pip install zstandard)") from None
    return _ZstdStream(raw, zstandard)  # type: ignore[return-value]


class _ZstdStream(io.RawIOBase):
    """zstd frames one after another; a stream cut inside a frame raises
    EOFError at the end (the reader of python-zstandard just stops)."""

    def __init__(self, raw: BinaryIO, zstandard: Any) -> None:
        self._raw = raw
        self._z = zstandard
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._in_frame = False

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        while True:
            if self._pending:
                if n is None or n < 0:
                    n = len(self._pending)
                out, self._pending = self._pending[:n], self._pending[n:]
                return out
            chunk = self._raw.read(BLOCK_BYTES)
            if not chunk:
                if self._in_frame:
                    raise EOFError("zstd stream ends inside a frame")
                return b""
            while chunk:
                self._in_frame = True
                self._pending += self._d.decompress(chunk)
                if self._d.eof:
                    chunk = self._d.unused_data
                    self._d = self._z.ZstdDecompressor().decompressobj()
                    self._in_frame = False
                else:
                    chunk = b""

    read = read1


def truncation_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError]
    try:
        import zstandard

        errs.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errs)


class PeekStream(io.RawIOBase):
    """The bytes already read (a sniffed head), then the rest of the stream."""

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
        # read1: a GzipFile's read(n) drops what it decompressed in that call
        # when the stream turns out cut; read1 hands over each chunk.
        data = self._rest.read1(len(b)) if hasattr(self._rest, "read1") else self._rest.read(len(b))
        n = len(data)
        b[:n] = data
        return n
