"""Native journald files (``*.journal``, ``*.journal~``, a journal directory).

They are binary (hash tables, compressed fields, rotating files), so we do
not parse them ourselves: ``journalctl --file F -o export`` (or ``-D DIR``)
turns them into the export format the envelope stage already reads. Where
``journalctl`` is missing, the systemd Python bindings (``systemd.journal``)
do the same job in-process. Where neither is there, the error names what to
install. ``--since``/``--until``/``--unit`` are passed on as journalctl
spells them.
"""
from __future__ import annotations

import io
import os
import shutil
import struct
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from forensics.errors import InputError

JOURNAL_MAGIC = b"LPKSHHRH"  # the first 8 bytes of every journal file (systemd's journal-def.h)
INSTALL_HINT = ("reading journal files needs journalctl (apt-get install systemd) or the systemd "
                "Python bindings (pip install systemd-python)")


@dataclass(frozen=True)
class JournalFilter:
    """journalctl's own filters, in its own spelling (``--since "2026-03-14 09:00"``,
    ``--since -1h``, ``--unit sglang``)."""

    since: str | None = None
    until: str | None = None
    units: tuple[str, ...] = ()

    def args(self) -> list[str]:
        out: list[str] = []
        if self.since:
            out += ["--since", self.since]
        if self.until:
            out += ["--until", self.until]
        for u in self.units:
            out += ["--unit", u]
        return out

    def __bool__(self) -> bool:
        return bool(self.since or self.until or self.units)


def is_journal_name(name: str) -> bool:
    return name.endswith((".journal", ".journal~"))


def _journalctl() -> str:
    # FORENSICS_JOURNALCTL: another journalctl binary (or an absent one, for tests).
    return os.environ.get("FORENSICS_JOURNALCTL", "journalctl")


def journal_backend() -> str | None:
    """``journalctl``, ``python`` (systemd.journal), or ``None``."""
    if shutil.which(_journalctl()):
        return "journalctl"
    try:
        from systemd import journal  # noqa: F401
    except ImportError:
        return None
    return "python"


def open_journal(path: Path, name: str, cleanup: Path | None, filt: JournalFilter | None) -> BinaryIO:
    """The journal at ``path`` (a file or a directory) as an export-format byte
    stream; ``cleanup``: a temporary file to delete once read."""
    backend = journal_backend()
    if backend is None:
        if cleanup is not None:
            cleanup.unlink(missing_ok=True)
        raise InputError(f"{name} is a journald file: {INSTALL_HINT}")
    if backend == "journalctl":
        return _JournalctlStream(path, name, filt or JournalFilter(), cleanup)  # type: ignore[return-value]
    chunks = export_from_bindings(path, filt or JournalFilter())
    if cleanup is not None:
        chunks = _then_delete(chunks, cleanup)
    return io.BufferedReader(ChunkStream(chunks), buffer_size=1 << 20)  # type: ignore[arg-type]


def _then_delete(chunks: Iterator[bytes], path: Path) -> Iterator[bytes]:
    try:
        yield from chunks
    finally:
        path.unlink(missing_ok=True)


class _JournalctlStream(io.RawIOBase):
    """journalctl's stdout; closing it reaps the process, and a journalctl that
    failed before writing anything becomes one-line ``InputError``."""

    def __init__(self, path: Path, name: str, filt: JournalFilter, cleanup: Path | None = None) -> None:
        self._cleanup = cleanup
        exe = shutil.which(_journalctl()) or "journalctl"
        where = ["-D", str(path)] if path.is_dir() else ["--file", str(path)]
        self._err = tempfile.TemporaryFile()
        self._name = name
        self._wrote = False
        env = dict(os.environ, SYSTEMD_COLORS="0", SYSTEMD_PAGER="", SYSTEMD_LESS="")
        import subprocess  # only for a binary journal (every start would pay ~3 ms)

        self._proc = subprocess.Popen([exe, *where, "-o", "export", "--no-pager", *filt.args()],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._err, env=env)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        assert self._proc.stdout is not None
        data = self._proc.stdout.read1(len(b))  # type: ignore[attr-defined]
        n = len(data)
        b[:n] = data
        if n:
            self._wrote = True
            return n
        rc = self._proc.wait()
        if rc != 0 and not self._wrote:
            self._err.seek(0)
            msg = self._err.read().decode("utf-8", "replace").strip().splitlines()
            raise InputError(f"cannot read {self._name}: journalctl: {msg[-1] if msg else f'exit status {rc}'}")
        return 0

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._err.close()
        if self._cleanup is not None:
            self._cleanup.unlink(missing_ok=True)
        super().close()


class ChunkStream(io.RawIOBase):
    """A raw binary stream over an iterator of byte chunks (a subprocess's
    output, a Python file object read in pieces, an iterable of lines)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def _since_until(value: str | None, opt: str) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{opt} {value!r}: without journalctl only 'YYYY-MM-DD[ HH:MM[:SS]]' is understood "
                         "(install journalctl for its relative times)") from None


def export_from_bindings(path: Path, filt: JournalFilter) -> Iterator[bytes]:
    """Entries read with ``systemd.journal.Reader``, written in journalctl's
    export format (text fields as ``NAME=value``, binary ones length-prefixed)."""
    from systemd import journal

    reader = journal.Reader(path=str(path)) if path.is_dir() else journal.Reader(files=[str(path)])
    for unit in filt.units:
        full = unit if "." in unit else unit + ".service"
        reader.add_match(_SYSTEMD_UNIT=full)
        reader.add_disjunction()
        reader.add_match(UNIT=full)
        reader.add_disjunction()
    since = _since_until(filt.since, "--since")
    until = _since_until(filt.until, "--until")
    if since is not None:
        reader.seek_realtime(since)
    for entry in reader:
        ts = entry.get("__REALTIME_TIMESTAMP")
        if until is not None and isinstance(ts, datetime) and ts.replace(tzinfo=None) > until.replace(tzinfo=None):
            break
        yield export_entry(entry)


def export_entry(entry: dict[str, Any]) -> bytes:
    """One journal entry (as the bindings give it: converted values) in export format."""
    out = bytearray()
    for key, value in entry.items():
        if key == "__REALTIME_TIMESTAMP" and isinstance(value, datetime):
            value = str(int(value.timestamp() * 1_000_000))
        elif key == "__MONOTONIC_TIMESTAMP":
            mono = value[0] if isinstance(value, tuple) else value
            value = str(int(mono.total_seconds() * 1_000_000)) if hasattr(mono, "total_seconds") else str(mono)
        elif isinstance(value, uuid.UUID):
            value = value.hex
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")
        k = key.encode()
        if b"\n" in raw or any(c < 32 and c not in (9,) for c in raw):
            out += k + b"\n" + struct.pack("<Q", len(raw)) + raw + b"\n"
        else:
            out += k + b"=" + raw + b"\n"
    out += b"\n"
    return bytes(out)
