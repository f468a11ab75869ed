"""Stage 1: bytes -> numbered text lines, from stdin, files, directories,
compressed files (gzip, xz, bzip2, zstd: the magic bytes decide, not the
name) and native journald files (through ``journalctl`` or the systemd
Python bindings).

Reads in fixed-size blocks and splits on ``\\n`` itself so memory stays
bounded whatever the input (a 10 GB log, a 50 MB single line): a physical
line longer than ``MAX_LINE_BYTES`` is clipped, not buffered whole, and the
clip is counted in the source's stats. Input that is not text (an archive,
an executable, an image, random bytes) is refused with one line, never
analysed as an empty log.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import sys
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from forensics.errors import InputError
from forensics.ingest.journal import JOURNAL_MAGIC, JournalFilter, is_journal_name, open_journal
from forensics.ingest.live import MAX_LINE_BYTES, LineCutter, decode

# Bytes read at a time. A block, its decoded text and the lines cut from it
# are alive together, outside the traced Python heap (which stays flat), and
# 1 MB blocks left RSS growing with the log, probably heap fragmentation from
# buffers that size: a 10,000-lifetime crash loop's text report peaked at
# 60.7 MiB with 1 MB blocks, 54.7 with 256 KB, for the same CPU time.
BLOCK_BYTES = 256 << 10
GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 64 << 10  # how much of the (decompressed) head decides "is this text?"

# Compressors we read, by magic bytes.
COMPRESSORS: tuple[tuple[bytes, str], ...] = (
    (GZIP_MAGIC, "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
# Files people hand us by mistake: refused with what they look like.
BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a zip archive"), (b"PK\x05\x06", "an empty zip archive"),
    (b"\x7fELF", "an ELF executable"), (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"), (b"GIF89a", "a GIF image"),
    (b"SQLite format 3\x00", "an SQLite database"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"), (b"PAR1", "a Parquet file"), (b"\x93NUMPY", "a NumPy array"),
    (b"\xca\xfe\xba\xbe", "a Mach-O or Java class file"), (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"MZ\x90\x00", "a Windows executable"), (b"\x00asm", "a WebAssembly module"),
    (b"!<arch>\n", "an ar archive (.deb, .a)"), (b"\x80\x04\x95", "a Python pickle"),
    (JOURNAL_MAGIC, "a journald file"),
)
# Control characters that do occur in real logs (tab, newline, CR, ESC of
# colour codes, form feed, backspace, bell); any other C0 byte, and every
# undecodable byte, counts against "text".
_TEXT_CONTROLS = frozenset("\t\n\r\x1b\x0c\x08\x07")
_BAD = frozenset(chr(c) for c in range(32) if chr(c) not in _TEXT_CONTROLS) | {"\ufffd"}
BINARY_SHARE = 0.30  # share of non-text characters in the head above which input is binary


def _spool(head: bytes, stream: BinaryIO, name: str) -> tuple[Path, str, Path]:
    import shutil
    import tempfile

    tmp = tempfile.NamedTemporaryFile(prefix="forensics-", suffix=".journal", delete=False)
    try:
        with tmp:
            tmp.write(head)
            shutil.copyfileobj(stream, tmp, BLOCK_BYTES)
    except _truncation_errors():
        pass  # journalctl reads what a cut file holds
    finally:
        stream.close()
    return Path(tmp.name), name, Path(tmp.name)


def compression_of(head: bytes) -> str | None:
    for magic, name in COMPRESSORS:
        if head.startswith(magic):
            if name == "bzip2" and not (len(head) >= 10 and head[3:4].isdigit()
                                        and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")):
                continue  # "BZh" at the start of a text line is not bzip2
            return name
    return None


def looks_like(head: bytes) -> str | None:
    """What a head that is not a text log looks like (``None``: text)."""
    for magic, what in BINARY_MAGIC:
        if head.startswith(magic):
            return what
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "a tar archive"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16 text; convert it with iconv -f UTF-16 -t UTF-8"
    sample = head[:SNIFF_BYTES]
    if not sample:
        return None
    text = sample.decode("utf-8", "replace")
    if len(sample) == SNIFF_BYTES:
        text = text[:-2]  # the cut may split a character
    if not text:
        return None
    bad = sum(1 for ch in text if ch in _BAD)
    if bad <= BINARY_SHARE * len(text):
        return None
    nul = sample.count(b"\x00")
    if nul == len(sample):
        return "NUL bytes only"
    if nul > len(sample) // 3 and (sample[1::2].count(b"\x00") > len(sample) // 3
                                   or sample[0::2].count(b"\x00") > len(sample) // 3):
        return "UTF-16 text; convert it with iconv -f UTF-16 -t UTF-8"
    return "binary data"


def _decompressor(raw: BinaryIO, kind: str, name: str) -> BinaryIO:
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


def _truncation_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError]
    try:
        import zstandard

        errs.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errs)


@dataclass
class SourceStats:
    lines: int = 0
    clipped_lines: int = 0
    bytes: int = 0
    # The compressed stream (gzip, xz, bzip2 or zstd: the name is historical)
    # ended early; what came before the cut was read.
    truncated_gzip: bool = False
    incomplete_last_line: bool = False
    compression: str | None = None


@dataclass
class Source:
    """One input: a path, ``-`` for stdin, or a journald file/directory."""

    name: str
    path: Path | None = None
    stats: SourceStats = field(default_factory=SourceStats)
    journal: bool = False  # a native journal file or directory: read through journalctl
    journal_filter: JournalFilter | None = None

    def open_binary(self) -> BinaryIO:
        if self.path is None:
            return sys.stdin.buffer
        if self.path.is_dir():  # a journal directory (the walk yields no other directory)
            self.journal = True
            return open_journal(self.path, self.name, None, self.journal_filter)
        try:
            f: BinaryIO = open(self.path, "rb")
        except OSError as e:
            raise InputError(f"cannot read {self.name}: {e.strerror or e}") from None
        head = f.peek(16)[:16] if hasattr(f, "peek") else b""
        if head.startswith(JOURNAL_MAGIC):
            f.close()
            self.journal = True
            return open_journal(self.path, self.name, None, self.journal_filter)
        kind = compression_of(head)
        if kind is not None:
            self.stats.compression = kind
            dec = _decompressor(f, kind, self.name)
            try:
                inner = dec.read(len(JOURNAL_MAGIC))
            except _truncation_errors():
                inner = b""
                self.stats.truncated_gzip = True
            if inner == JOURNAL_MAGIC:
                # A compressed journal file (an archived system@...journal~.xz):
                # journalctl needs it whole and seekable, so unpack it to a temporary file.
                self.journal = True
                return open_journal(*_spool(inner, dec, self.name), self.journal_filter)
            return io.BufferedReader(_PeekStream(inner, dec), buffer_size=BLOCK_BYTES)  # type: ignore[return-value]
        return f

    def blocks(self, line_mode: bool = False, raw: bool = False) -> Iterator[Any]:
        """Yield decoded text blocks made of whole lines (each ends with ``\\n``
        except possibly the very last). ``line_mode`` yields one line per block
        as soon as it arrives (for live streams). ``raw`` (not with
        ``line_mode``): the same blocks as UTF-8 bytes, undecoded
        (``live.decode`` of each gives the text blocks)."""
        f = self.open_binary()
        if self.path is None and f is sys.stdin.buffer and not line_mode:
            f = _maybe_compressed_stream(f, self)
        st = self.stats
        try:
            if line_mode:
                yield from self._line_blocks(f)
                return
            cutter = LineCutter()
            take = cutter.take_raw if raw else cutter.take
            nl: Any = b"\n" if raw else "\n"
            for buf in self._raw_blocks(f):
                st.bytes += len(buf)
                text, clipped = take(buf)
                if text:
                    st.lines += text.count(nl)
                    yield text
                if clipped:
                    st.clipped_lines += 1
            last, cut_short = cutter.finish_raw() if raw else cutter.finish()
            if last is not None:
                st.lines += 1
                st.incomplete_last_line = cut_short
                yield last
        finally:
            if f is not sys.stdin.buffer:
                try:
                    f.close()
                except Exception:
                    pass

    def _raw_blocks(self, f: BinaryIO) -> Iterator[bytes]:
        """The input's bytes in blocks of about ``BLOCK_BYTES``; the first block is
        a real sample (``SNIFF_BYTES``) and is refused when it is not text."""
        st = self.stats
        # GzipFile.read(n) drops everything it decompressed in that call
        # when the stream turns out truncated; read1 hands each chunk
        # over as it comes, so a cut .gz loses only its unfinished tail.
        read = f.read1 if st.compression and hasattr(f, "read1") else f.read
        cut_errors = _truncation_errors() if st.compression else ()

        def read_block() -> bytes:
            # A cut compressed stream ends the input (and is reported); other read errors are the user's news.
            try:
                return read(BLOCK_BYTES)
            except cut_errors:
                st.truncated_gzip = True
                return b""
            except OSError as e:
                raise InputError(f"cannot read {self.name}: {e.strerror or e}") from None

        buf = read_block()
        if not buf:
            if st.truncated_gzip:
                raise InputError(f"cannot read {self.name}: its {st.compression} data is corrupt "
                                 "or cut before the first line")
            return
        # Decide on a real sample, not on the few bytes a peek or a pipe handed over.
        while len(buf) < SNIFF_BYTES:
            more = read_block()
            if not more:
                break
            buf += more
        what = looks_like(buf[:SNIFF_BYTES])
        if what is not None:
            packed = f", {st.compression}-compressed" if st.compression else ""
            raise InputError(f"{self.name}: not a text log (looks like {what}{packed})")
        while buf:
            yield buf
            buf = read_block()

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
            yield decode(raw)


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
        # read1: a GzipFile's read(n) drops what it decompressed in that call
        # when the stream turns out cut; read1 hands over each chunk.
        data = self._rest.read1(len(b)) if hasattr(self._rest, "read1") else self._rest.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def _maybe_compressed_stream(f: BinaryIO, src: Source) -> BinaryIO:
    head = b""
    while len(head) < 16:
        more = f.read(16 - len(head))
        if not more:
            break
        head += more
    stream = io.BufferedReader(_PeekStream(head, f), buffer_size=BLOCK_BYTES)
    if head.startswith(JOURNAL_MAGIC):
        raise InputError("stdin is a journald file: pass it as a path (forensics classify FILE.journal)")
    kind = compression_of(head)
    if kind is not None:
        src.stats.compression = kind
        return _decompressor(stream, kind, src.name)  # type: ignore[arg-type]
    return stream  # type: ignore[return-value]


LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".jsonl", ".gz", ".journal-export", ".export")


def expand_paths(paths: list[str] | tuple[str, ...], skipped: list[str] | None = None,
                 journal_filter: JournalFilter | None = None) -> Iterator[Source]:
    """Sources for command-line arguments: ``-`` is stdin, a directory is walked
    (sorted, symlink loops ignored; the ``*.journal`` files of one directory
    are read together, as ``journalctl -D`` does), anything else is a file.
    A missing path, or a directory with no file to read, is an ``InputError``."""
    if not paths:
        yield Source("-", journal_filter=journal_filter)
        return
    for p in paths:
        if p == "-":
            yield Source("-", journal_filter=journal_filter)
            continue
        path = Path(p)
        try:
            st = path.stat()
        except OSError as e:
            raise InputError(f"cannot read {p}: {e.strerror or e}") from None
        if stat.S_ISDIR(st.st_mode):
            n = 0
            before = len(skipped) if skipped is not None else 0
            for src in _walk(path, skipped):
                src.journal_filter = journal_filter
                n += 1
                yield src
            if n == 0 and (skipped is None or len(skipped) == before):
                # (files that could not be read are the caller's to report)
                raise InputError(f"{p}: no log files in this directory")
        else:
            # A file is a journal file by its magic bytes (a text export named
            # x.journal is read as text): open_binary decides.
            yield Source(str(path), path, journal_filter=journal_filter)


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
        if any(is_journal_name(n) for n in filenames):
            # /var/log/journal/<machine-id>/: system.journal, user-1000.journal and
            # their rotated system@...journal~ are one interleaved history.
            yield Source(dirpath, Path(dirpath), journal=True)
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith((".csv", ".md", ".py", ".sh", ".parquet")) \
                    or is_journal_name(name):
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


@contextmanager
def rereadable(source: Source) -> Iterator[Source]:
    """A source that can be read twice (a page reads the log again for the
    lines around the evidence): stdin is copied to a private temporary file,
    removed afterwards; any other source is itself."""
    if source.path is not None:
        yield source
        return
    import shutil
    import tempfile

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
