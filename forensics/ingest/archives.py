"""Archives as logs: how logs are attached to issues and support tickets.

tar (plain, or gzip / xz / bzip2 / zstd compressed: ``.tar.gz``, ``.tgz``,
``.tar.xz``, ``.tar.zst``, ...), zip, and 7-Zip (with ``py7zr``: the
``archives`` extra) are told by their bytes, never by their names. Each member
that is a regular file becomes its own source, named ``archive:path/in/it``
(``logs.tgz:node1/sglang.log``), and is read exactly as a file would be: a
compressed member (``x.log.1.gz``) is decompressed, a journal file is read
through journalctl, UTF-16 is decoded, binary members are refused one by one.

The limits are the decompressors' own: every member streams through in
bounded memory whatever its size (a member that decompresses to 100 GB costs
time, not memory), and no more than ``MAX_MEMBERS`` entries of one archive are
listed (the listing is the only thing kept per member); the rest are named in
one note. Members are never extracted to disk, so names with ``..`` or a
leading ``/`` are only names. An archive inside an archive is a member that
is not a text log (refused with what it looks like), not a second level.

Reading the members of a compressed tar one after another costs one pass:
the decompressed stream is kept between members (``_TarCursor``) and moved
forward, never restarted, as long as they are read in order.
"""
from __future__ import annotations

import io
import os
import queue
import tarfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from forensics.errors import InputError
from forensics.ingest.compression import BLOCK_BYTES, compression_of, decompressor

MAX_MEMBERS = 10_000  # entries listed per archive (directories and links count)
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
SEVEN_ZIP_MAGIC = b"7z\xbc\xaf\x27\x1c"
TAR_MAGIC_AT = 257  # "ustar" (POSIX and GNU) in the first header block
SEVEN_ZIP_HINT = "pip install 'forensics[archives]' (or unpack it: 7z x {name})"


@dataclass(frozen=True)
class Member:
    """Where one member's bytes are: picklable, so ``batch`` workers can open it."""

    archive: Path
    kind: str  # "tar", "zip" or "7z"
    name: str  # its path inside the archive
    compression: str | None = None  # a tar's own compression (gzip, xz, bzip2, zstd)
    offset: int = 0  # tar: where its data starts in the uncompressed tar stream
    size: int = 0


class ArchiveError(InputError):
    pass


def archive_kind(path: Path) -> tuple[str, str | None] | None:
    """``(kind, compression)`` when the regular file at ``path`` is an archive
    we read, else ``None`` (also when it cannot be opened: reading it says why)."""
    try:
        f = open(path, "rb")
    except OSError:
        return None
    with f:
        try:
            head = f.read(16)
        except OSError:
            return None
        if head.startswith(ZIP_MAGIC):
            return "zip", None
        if head.startswith(SEVEN_ZIP_MAGIC):
            return "7z", None
        comp = compression_of(head)
        try:
            if comp is None:
                block = head + f.read(512 - len(head))
            else:
                f.seek(0)
                block = _read_up_to(decompressor(f, comp, str(path)), 512)  # type: ignore[arg-type]
        except Exception:  # a damaged compressed file: not an archive of ours; reading it says why
            return None
    if len(block) >= TAR_MAGIC_AT + 5 and block[TAR_MAGIC_AT:TAR_MAGIC_AT + 5] == b"ustar":
        return "tar", comp
    return None


def _read_up_to(stream: Any, n: int) -> bytes:
    out = b""
    read = getattr(stream, "read1", stream.read)
    while len(out) < n:
        more = read(n - len(out))
        if not more:
            break
        out += more
    return out


def list_members(path: Path, name: str, kind: str, compression: str | None,
                 notes: list[str]) -> list[Member]:
    """The regular-file members of an archive, in archive order; what could
    not be listed is appended to ``notes`` (``"NAME: why"``)."""
    if kind == "zip":
        return _zip_members(path, name, notes)
    if kind == "7z":
        return _7z_members(path, name, notes)
    return _tar_members(path, name, compression, notes)


# A pax or GNU long-name header is read whole by tarfile: a hostile one could
# claim gigabytes (zeros that compress to nothing). Real ones are a few hundred bytes.
MAX_TAR_HEADER = 1 << 20


class _BoundedTarInfo(tarfile.TarInfo):
    def _proc_gnulong(self, tarfile: Any) -> Any:
        self._bounded()
        return super()._proc_gnulong(tarfile)  # type: ignore[misc]

    def _proc_pax(self, tarfile: Any) -> Any:
        self._bounded()
        return super()._proc_pax(tarfile)  # type: ignore[misc]

    def _bounded(self) -> None:
        if self.size > MAX_TAR_HEADER:
            raise tarfile.HeaderError(f"an extended header of {self.size:,} bytes")


def _tar_members(path: Path, name: str, compression: str | None, notes: list[str]) -> list[Member]:
    members: list[Member] = []
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise ArchiveError(f"cannot read {name}: {e.strerror or e}") from None
    try:
        stream: Any = decompressor(raw, compression, name) if compression else raw  # type: ignore[arg-type]
        entries = 0
        try:
            # "r|": one pass, never seeking back (a compressed stream cannot)
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_BoundedTarInfo) as tf:
                for info in tf:
                    entries += 1
                    if entries > MAX_MEMBERS:
                        notes.append(f"{name}: more than {MAX_MEMBERS:,} entries; the rest were not read")
                        break
                    if info.isreg() and not info.issparse():
                        members.append(Member(path, "tar", info.name, compression, info.offset_data, info.size))
                    elif info.issparse():
                        notes.append(f"{name}:{shown_name(info.name)}: a sparse file, not read")
        except Exception as e:  # tarfile and the decompressors on hostile bytes: TarError, EOFError, ValueError ...
            if not members:
                raise ArchiveError(f"cannot read {name}: not a readable tar archive ({_why(e)})") from None
            notes.append(f"{name}: the archive ends early or is damaged after {len(members)} members ({_why(e)})")
    finally:
        raw.close()
    return members


def _zip_members(path: Path, name: str, notes: list[str]) -> list[Member]:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except Exception as e:  # BadZipFile, and on hostile bytes struct.error, ValueError, IndexError ...
        raise ArchiveError(f"cannot read {name}: not a readable zip archive ({_why(e)}; "
                           "a zip cut short loses its table of contents)") from None
    if len(infos) > MAX_MEMBERS:
        notes.append(f"{name}: more than {MAX_MEMBERS:,} entries; the rest were not read")
        infos = infos[:MAX_MEMBERS]
    members = []
    for info in infos:
        if not info.filename or info.filename.endswith("/"):  # a folder (or a nameless entry)
            continue
        if info.flag_bits & 0x1:
            notes.append(f"{name}:{shown_name(info.filename)}: encrypted, not read")
            continue
        members.append(Member(path, "zip", info.filename, None, 0, info.file_size))
    return members


def _py7zr(name: str) -> Any:
    try:
        import py7zr
    except ImportError:
        raise ArchiveError(f"{name} is a 7-Zip archive: reading it needs py7zr: "
                           + SEVEN_ZIP_HINT.format(name=name)) from None
    return py7zr


def _7z_members(path: Path, name: str, notes: list[str]) -> list[Member]:
    py7zr = _py7zr(name)
    try:
        with py7zr.SevenZipFile(path, mode="r") as zf:
            if zf.needs_password():
                raise ArchiveError(f"cannot read {name}: the 7-Zip archive is encrypted")
            infos = zf.list()
    except ArchiveError:
        raise
    except Exception as e:  # py7zr's own errors (Bad7zFile, CRC, unsupported filters) and OSError
        raise ArchiveError(f"cannot read {name}: not a readable 7-Zip archive ({_why(e)})") from None
    if len(infos) > MAX_MEMBERS:
        notes.append(f"{name}: more than {MAX_MEMBERS:,} entries; the rest were not read")
        infos = infos[:MAX_MEMBERS]
    return [Member(path, "7z", i.filename, None, 0, int(i.uncompressed or 0))
            for i in infos if not i.is_directory and not getattr(i, "is_symlink", False)]


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0))}


def shown_name(name: str) -> str:
    """A member's name as a source name: control characters (a newline in a
    name from a hostile archive) written as ``\\xNN``, so every message about
    it stays one line."""
    return name.translate(_CONTROL)


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:120]


# --------------------------------------------------------------------------- reading one member


def open_member(member: Member, name: str) -> BinaryIO:
    """A buffered binary stream of one member's bytes. Damage found while
    reading (a cut or corrupt archive) raises ``EOFError``: the reader
    counts it as a stream cut short, as for a ``.gz``."""
    if member.kind == "zip":
        raw: io.RawIOBase = _ZipMemberStream(member, name)
    elif member.kind == "7z":
        raw = _SevenZipMemberStream(member, name)
    elif member.compression is None:
        raw = _PlainTarMemberStream(member, name)
    else:
        raw = _CompressedTarMemberStream(member, name)
    return io.BufferedReader(raw, buffer_size=BLOCK_BYTES)  # type: ignore[return-value]


class _MemberStream(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.read_some(len(b))
        n = len(data)
        b[:n] = data
        return n

    def read_some(self, n: int) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError


class _PlainTarMemberStream(_MemberStream):
    def __init__(self, member: Member, name: str) -> None:
        try:
            self.f = open(member.archive, "rb")
            self.f.seek(member.offset)
        except OSError as e:
            raise InputError(f"cannot read {name}: {e.strerror or e}") from None
        self.left = member.size

    def read_some(self, n: int) -> bytes:
        if self.left <= 0:
            return b""
        data = self.f.read(min(n, self.left))
        if not data:
            raise EOFError("the tar archive ends inside this member")
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()
        super().close()


class _TarCursor:
    """One decompressed pass over a compressed tar, moved forward only."""

    def __init__(self, member: Member, name: str) -> None:
        self.key = _archive_key(member)
        try:
            self.raw = open(member.archive, "rb")
        except OSError as e:
            raise InputError(f"cannot read {name}: {e.strerror or e}") from None
        self.stream: Any = decompressor(self.raw, member.compression or "", name)  # type: ignore[arg-type]
        self.pos = 0
        self.broken = False

    def read(self, n: int) -> bytes:
        try:
            data = self.stream.read1(n)
        except BaseException:
            self.broken = True
            raise
        self.pos += len(data)
        return data

    def skip_to(self, offset: int) -> None:
        while self.pos < offset:
            if not self.read(min(BLOCK_BYTES, offset - self.pos)):
                self.broken = True
                raise EOFError("the compressed tar ends before this member")

    def close(self) -> None:
        self.raw.close()


def _archive_key(member: Member) -> tuple[Any, ...]:
    try:
        st = os.stat(member.archive)
        return (str(member.archive), member.compression, st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        return (str(member.archive), member.compression)


# The cursor kept between members (per process: batch workers keep their own).
_KEPT: list[_TarCursor] = []


def _cursor_at(member: Member, name: str) -> _TarCursor:
    kept = _KEPT.pop() if _KEPT else None
    if kept is not None and (kept.key != _archive_key(member) or kept.pos > member.offset or kept.broken):
        kept.close()
        kept = None
    cursor = kept or _TarCursor(member, name)
    cursor.skip_to(member.offset)
    return cursor


class _CompressedTarMemberStream(_MemberStream):
    def __init__(self, member: Member, name: str) -> None:
        self.cursor: _TarCursor | None = _cursor_at(member, name)
        self.left = member.size

    def read_some(self, n: int) -> bytes:
        if self.left <= 0 or self.cursor is None:
            return b""
        data = self.cursor.read(min(n, self.left))
        if not data:
            raise EOFError("the compressed tar ends inside this member")
        self.left -= len(data)
        return data

    def close(self) -> None:
        cursor, self.cursor = self.cursor, None
        if cursor is not None:
            if cursor.broken:
                cursor.close()
            else:
                while _KEPT:
                    _KEPT.pop().close()
                _KEPT.append(cursor)  # the next member, if later in the archive, goes on from here
        super().close()


class _ZipMemberStream(_MemberStream):
    def __init__(self, member: Member, name: str) -> None:
        try:
            self.zf = zipfile.ZipFile(member.archive)
        except Exception as e:  # listed a moment ago: changed or damaged since
            raise InputError(f"cannot read {name}: {_why(e)}") from None
        try:
            self.f = self.zf.open(member.name)
        except Exception as e:  # NotImplementedError, RuntimeError, BadZipFile, KeyError, OSError ...
            self.zf.close()
            # an unsupported method (deflate64, ...), a password, a damaged header
            raise InputError(f"cannot read {name}: {_why(e)}") from None

    def read_some(self, n: int) -> bytes:
        try:
            return self.f.read(n)
        except Exception as e:  # BadZipFile (a CRC), zlib.error, EOFError, ... on a damaged member
            raise EOFError(f"damaged zip member ({_why(e)})") from None

    def close(self) -> None:
        self.f.close()
        self.zf.close()
        super().close()


class _Stop(Exception):
    """The reader went away: end the extraction thread."""


class _SevenZipMemberStream(_MemberStream):
    """py7zr pushes a member's bytes into a writer; a thread runs the
    extraction and a small queue hands the chunks over, so memory stays
    bounded by the queue, not the member."""

    def __init__(self, member: Member, name: str) -> None:
        py7zr = _py7zr(name)
        self.chunks: queue.Queue[Any] = queue.Queue(maxsize=16)
        self.stop = threading.Event()
        self.buf = b""
        self.done = False
        chunks, stop = self.chunks, self.stop

        class Writer(py7zr.io.Py7zIO):  # type: ignore[name-defined, misc]
            def __init__(self) -> None:
                self.n = 0

            def write(self, s: bytes | bytearray) -> int:
                while True:
                    if stop.is_set():
                        raise _Stop
                    try:
                        chunks.put(bytes(s), timeout=0.2)
                        break
                    except queue.Full:
                        continue
                self.n += len(s)
                return len(s)

            def read(self, size: int | None = None) -> bytes:
                return b""

            def seek(self, offset: int, whence: int = 0) -> int:
                return offset

            def flush(self) -> None:
                pass

            def size(self) -> int:
                return self.n

        class Factory(py7zr.io.WriterFactory):  # type: ignore[name-defined, misc]
            def create(self, filename: str) -> Any:
                return Writer() if filename == member.name else py7zr.io.NullIO()

        def run() -> None:
            try:
                with py7zr.SevenZipFile(member.archive, mode="r") as zf:
                    zf.extract(targets=[member.name], factory=Factory())
                end: Any = None
            except _Stop:
                return
            except BaseException as e:  # noqa: BLE001 - handed to the reader
                end = e
            while not stop.is_set():
                try:
                    chunks.put(end if end is not None else b"", timeout=0.2)
                    return
                except queue.Full:
                    continue

        self.thread = threading.Thread(target=run, name="forensics-7z", daemon=True)
        self.thread.start()

    def read_some(self, n: int) -> bytes:
        while not self.buf:
            if self.done:
                return b""
            item = self.chunks.get()
            if isinstance(item, BaseException):
                self.done = True
                raise EOFError(f"damaged 7-Zip member ({_why(item)})")
            if item == b"":
                self.done = True
                return b""
            self.buf = item
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def close(self) -> None:
        self.stop.set()
        super().close()

