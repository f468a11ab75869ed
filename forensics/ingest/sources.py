"""Stage 1: bytes -> numbered text lines, from stdin, files, directories,
compressed files (gzip, xz, bzip2, zstd: the magic bytes decide, not the
name; ``compression``), archives (tar, zip, 7-Zip: each member a source,
``archives``), native journald files (through ``journalctl`` or the systemd
Python bindings), in UTF-8, UTF-16 or UTF-32 (``encoding``).

Reads in fixed-size blocks and splits on ``\\n`` itself so memory stays
bounded whatever the input (a 10 GB log, a 50 MB single line): a physical
line longer than ``MAX_LINE_BYTES`` is clipped, not buffered whole, and the
clip is counted in the source's stats. Input that is not text (an archive,
an executable, an image, random bytes) is refused with one line, never
analysed as an empty log.
"""
from __future__ import annotations

import io
import os
import stat
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from forensics.errors import InputError
from forensics.ingest.archives import Member, archive_kind, list_members, open_member, shown_name
from forensics.ingest.compression import BLOCK_BYTES, compression_of, decompressor, truncation_errors
from forensics.ingest.encoding import StreamDecoder
from forensics.ingest.journal import JOURNAL_MAGIC, JournalFilter, is_journal_name, open_journal
from forensics.ingest.live import MAX_LINE_BYTES, LineCutter, decode

SNIFF_BYTES = 64 << 10  # how much of the (decompressed) head decides "is this text?"

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
    except truncation_errors():
        pass  # journalctl reads what a cut file holds
    finally:
        stream.close()
    return Path(tmp.name), name, Path(tmp.name)


STDIN_CLOSED = "stdin is closed: there is nothing to read (name a log file, or pipe a log in)"


def stdin_binary() -> BinaryIO:
    """stdin's bytes; a closed stdin (``<&-``: Python then has no ``sys.stdin``)
    is a one-line ``InputError``, not an AttributeError."""
    stream = sys.stdin
    if stream is None or getattr(stream, "buffer", None) is None:
        raise InputError(STDIN_CLOSED)
    return stream.buffer


def stdin_fd() -> int:
    """stdin's file descriptor, for readers that poll it (``watch``)."""
    try:
        return stdin_binary().fileno()
    except (ValueError, OSError):  # detached or closed under us
        raise InputError(STDIN_CLOSED) from None


def looks_like(head: bytes) -> str | None:
    """What a head that is not a text log looks like (``None``: text)."""
    for magic, what in BINARY_MAGIC:
        if head.startswith(magic):
            return what
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "a tar archive"
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
    odd, even = sample[1::2].count(b"\x00"), sample[0::2].count(b"\x00")
    if max(odd, even) > len(sample) // 3 and min(odd, even) < len(sample) // 40:
        # (UTF-16 text with a mark, or mostly ASCII without one, is decoded before this test)
        return "UTF-16 text of an unknown byte order; convert it with iconv -f UTF-16LE -t UTF-8"
    return "binary data"


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
    # The text encoding when it was not plain UTF-8 (``encoding.sniff_encoding``):
    # "utf-16-le", ..., or "utf-8-sig" for UTF-8 behind a byte-order mark.
    encoding: str | None = None


@dataclass
class Source:
    """One input: a path, ``-`` for stdin, or a journald file/directory."""

    name: str
    path: Path | None = None
    stats: SourceStats = field(default_factory=SourceStats)
    journal: bool = False  # a native journal file or directory: read through journalctl
    journal_filter: JournalFilter | None = None
    member: Member | None = None  # a member of the archive at ``path`` (``archives``)
    error: str | None = None  # known unreadable before it is opened (a damaged archive): why

    def open_binary(self) -> BinaryIO:
        if self.error is not None:
            raise InputError(self.error)
        if self.path is None:
            return stdin_binary()
        if self.member is None and self.path.is_dir():  # a journal directory (the walk yields no other directory)
            self.journal = True
            return open_journal(self.path, self.name, None, self.journal_filter)
        try:
            f: BinaryIO = open(self.path, "rb") if self.member is None else open_member(self.member, self.name)
        except OSError as e:
            raise InputError(f"cannot read {self.name}: {e.strerror or e}") from None
        try:
            head = f.peek(16)[:16] if hasattr(f, "peek") else b""
        except truncation_errors():  # a damaged archive member: reading it says so
            head = b""
        if head.startswith(JOURNAL_MAGIC):
            self.journal = True
            if self.member is not None:  # journalctl reads files: unpack the member to a temporary one
                return open_journal(*_spool(b"", f, self.name), self.journal_filter)
            f.close()
            return open_journal(self.path, self.name, None, self.journal_filter)
        kind = compression_of(head)
        if kind is not None:
            self.stats.compression = kind
            dec = decompressor(f, kind, self.name)
            try:
                inner = dec.read(len(JOURNAL_MAGIC))
            except truncation_errors():
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
        from_stdin = self.path is None and sys.stdin is not None and f is sys.stdin.buffer
        if from_stdin and not line_mode:
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
            if not from_stdin:
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
        # (an archive member's stream raises EOFError where the archive is cut or damaged)
        cut_errors = truncation_errors() if st.compression or self.member is not None else ()

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
                raise InputError(f"cannot read {self.name}: its {st.compression or 'archived'} data is corrupt "
                                 "or cut before the first line")
            return
        # Decide on a real sample, not on the few bytes a peek or a pipe handed over.
        ended = False
        while len(buf) < SNIFF_BYTES:
            more = read_block()
            if not more:
                ended = True
                break
            buf += more
        # The encoding first (a UTF-16 log is text), then "is this text?" on the UTF-8 it gives.
        decoder = StreamDecoder()
        head = decoder.feed(buf, final=ended)
        if decoder.transcodes or decoder.bom:
            st.encoding = "utf-8-sig" if decoder.encoding == "utf-8" else decoder.encoding
        what = looks_like(head[:SNIFF_BYTES])
        if what is not None:
            packed = f", {st.compression}-compressed" if st.compression else ""
            # archives are listed from a file (zip and 7-Zip keep their table of contents at the end)
            hint = "; pass an archive as a path" if self.path is None and "archive" in what else ""
            raise InputError(f"{self.name}: not a text log (looks like {what}{packed}){hint}")
        if head:
            yield head  # the sample (less a UTF-8 byte-order mark), or the UTF-8 it decoded to
        if not decoder.transcodes:
            # UTF-8 (the usual case): the bytes go through untouched, without a copy.
            while buf := read_block():
                yield buf
            return
        while more := read_block():
            if text := decoder.feed(more):
                yield text
        if tail := decoder.finish():
            yield tail

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
        return decompressor(stream, kind, src.name)  # type: ignore[arg-type]
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
            inside = _member_address(p, skipped, journal_filter)
            if inside is not None:
                yield from inside
                continue
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
            # x.journal is read as text): open_binary decides. Only a regular
            # file is sniffed for an archive (a pipe, <(cmd), is read once).
            if stat.S_ISREG(st.st_mode):
                yield from file_sources(path, str(path), skipped, journal_filter)
            else:
                yield Source(str(path), path, journal_filter=journal_filter)


def is_log_name(name: str) -> bool:
    """Whether a file met in a walked directory (or an archive) is read: not a
    hidden file (nor macOS's ``._x`` resource forks), not a table, a document
    or a script beside the logs."""
    base = name.rsplit("/", 1)[-1]
    return bool(base) and not base.startswith(".") and not base.endswith((".csv", ".md", ".py", ".sh", ".parquet"))


def file_sources(path: Path, name: str, skipped: list[str] | None = None,
                 journal_filter: JournalFilter | None = None) -> Iterator[Source]:
    """The sources of one regular file: itself, or each member of an archive
    (``name:path/in/it``; ``archives``). An archive that cannot be listed, or
    holds no log, is one source whose reading raises why (as a binary file's
    does); what could not be read inside one (an encrypted member, the rest of
    an archive cut short) is appended to ``skipped``."""
    kind = archive_kind(path)
    if kind is None:
        yield Source(name, path, journal_filter=journal_filter)
        return
    notes: list[str] = []
    try:
        members = list_members(path, name, kind[0], kind[1], notes)
    except InputError as e:
        yield Source(name, path, journal_filter=journal_filter, error=str(e))
        return
    logs = [m for m in members if is_log_name(m.name)]
    if skipped is not None:
        skipped.extend(notes)
    if not logs:
        why = f"no log files in this {kind[0]} archive" + (f" ({notes[0]})" if notes else "")
        yield Source(name, path, journal_filter=journal_filter, error=f"{name}: {why}")
        return
    for m in logs:
        yield Source(f"{name}:{shown_name(m.name)}", path, journal_filter=journal_filter, member=m)


def _member_address(arg: str, skipped: list[str] | None,
                    journal_filter: JournalFilter | None) -> list[Source] | None:
    """``archive.tgz:path/in/it`` (a name ``classify`` printed) as the sources
    it names: that member, or the members under that folder; ``None`` when
    ``arg`` is not such an address."""
    at = arg.find(":")
    while at > 0:
        archive, inner = Path(arg[:at]), arg[at + 1:]
        if archive.is_file() and archive_kind(archive) is not None:
            found = [s for s in file_sources(archive, arg[:at], [], journal_filter)
                     if s.member is not None and (shown_name(s.member.name) == inner
                                                  or shown_name(s.member.name).startswith(inner.rstrip("/") + "/"))]
            if not found:
                raise InputError(f"{arg}: no such member in {arg[:at]}")
            return found
        at = arg.find(":", at + 1)
    return None


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
            if not is_log_name(name) or is_journal_name(name):
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
            yield from file_sources(fp, str(fp), skipped)

