"""Every file forensics writes appears whole or not at all.

A writer gets a fresh temporary file in the target's own directory (a unique,
private name from ``mkstemp``: two runs writing the same ``--out`` never share
one), writes it, flushes it to disk (fsync), then renames it over the target
in one step. Whatever goes wrong -- an exception, Ctrl-C, SIGTERM or SIGHUP
(which the command line turns into an exception), a full disk -- the
temporary file is removed; the target is either the old file or the new one,
never a mix. Two concurrent writers: the last rename wins, whole.
"""
from __future__ import annotations

import atexit
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

_LIVE: set[str] = set()  # temp files not yet renamed (removed at exit if a crash skipped cleanup)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()  # the mode a plain open() would have given the result


def _fsync_dir(d: str) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(target: str | os.PathLike[str], fsync: bool = True) -> Iterator[Path]:
    """Yield a private temporary path beside ``target``; on success it is
    fsynced and renamed to ``target``, on any exit by exception it is removed."""
    target = Path(target)
    d = str(target.parent) or "."
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + target.suffix, dir=d)
    os.close(fd)
    _LIVE.add(tmp)
    try:
        yield Path(tmp)
        if fsync:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, target)
        if fsync:
            _fsync_dir(d)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        _LIVE.discard(tmp)


@contextmanager
def atomic_open(target: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8",
                fsync: bool = True) -> Iterator[IO]:
    """``open()`` for writing, through ``atomic_path``."""
    binary = "b" in mode
    with atomic_path(target, fsync) as tmp:
        with open(tmp, mode, encoding=None if binary else encoding) as f:
            yield f


def atomic_write_bytes(target: str | os.PathLike[str], data: bytes, fsync: bool = True) -> None:
    with atomic_open(target, "wb", fsync=fsync) as f:
        f.write(data)


def atomic_write_text(target: str | os.PathLike[str], text: str, fsync: bool = True) -> None:
    with atomic_open(target, "w", fsync=fsync) as f:
        f.write(text)


@atexit.register
def _cleanup() -> None:
    for tmp in list(_LIVE):
        try:
            os.unlink(tmp)
        except OSError:
            pass
