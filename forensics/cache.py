"""Where forensics keeps what it rebuilds from its own files (parsed
signatures, the checked scorer, rule tables, Lark's tables), so that every
start does not pay for it again.

One directory: ``$FORENSICS_CACHE_DIR``, else ``$XDG_CACHE_HOME/forensics``,
else ``~/.cache/forensics``; ``FORENSICS_CACHE_DIR=off`` (or empty) turns
caching off. It is used only while it is this user's own and writable by no
one else. An entry carries the digest of its body and is read back only when
it is a private regular file that hashes to it: anything else (missing, cut,
corrupt, foreign, a full disk) is a miss, and the caller rebuilds what it
needs as if there were no cache. A cache never changes an answer.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import stat
from pathlib import Path

MAX_ENTRIES = 8  # entries of a kind kept, e.g. signature sets (each test's or user's custom set makes one): the oldest go
PREFIX = b"forensics-cache 1\n"
DIGEST_LINE = 65  # the digest's line: SHA-256 in 64 hex digits, and a newline


def cache_dir(create: bool = False) -> Path | None:
    """The cache directory, or None when caching is off (or, with ``create``,
    when it cannot be made or is not private)."""
    env = os.environ.get("FORENSICS_CACHE_DIR")
    if env is not None:
        if env.strip() in ("", "off", "0"):
            return None
        d = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = Path(base) / "forensics"
    if not create:
        return d
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        return d if _private(d, d.stat()) else None
    except OSError:
        return None


def _private(p: Path, st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return owner_ok and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_entry(kind: str, key: str, max_bytes: int = 64 << 20) -> bytes | None:
    """The body of the entry ``kind``/``key``, or None: missing, not a private
    regular file in a private directory, too big, or not hashing to its digest."""
    d = cache_dir()
    if d is None:
        return None
    path = d / f"{kind}-{key}.json"
    try:
        if not _private(d, d.stat()):
            return None
        # unbuffered: the body is read into one buffer of its size (a large entry is held once, not copied)
        with open(path, "rb", buffering=0) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or not _private(path, st) or st.st_size > max_bytes:
                return None
            head = f.read(len(PREFIX) + DIGEST_LINE)
            body = f.readall()
    except OSError:
        return None
    if len(head) != len(PREFIX) + DIGEST_LINE or not head.startswith(PREFIX) or not head.endswith(b"\n"):
        return None
    if hashlib.sha256(body).hexdigest().encode() != head[len(PREFIX):-1]:
        return None
    return body


def write_entry(kind: str, key: str, body: bytes) -> None:
    """Best effort (atomic: a reader sees the old entry, the new one or none)."""
    d = cache_dir()
    if d is None:
        return
    tmp = None
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = d / f".{kind}-{key}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(PREFIX + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, d / f"{kind}-{key}.json")
        _prune(d, kind, key)
    except OSError:
        if tmp is not None:
            try:
                tmp.unlink()
            except OSError:
                pass


def read_table(kind: str, key: str, max_bytes: int) -> dict | None:
    """A dict kept as marshal data (the start-up tables of ``re_cache`` and ``code_cache``),
    or None when there is none or it does not read as one."""
    body = read_entry(kind, key, max_bytes=max_bytes)
    if body is None:
        return None
    try:
        table = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    return table if type(table) is dict else None


def write_table(kind: str, key: str, table: dict) -> None:
    """Keep ``table`` as marshal data (best effort: a value marshal cannot write keeps nothing)."""
    try:
        body = marshal.dumps(table)
    except ValueError:
        return
    write_entry(kind, key, body)


def _prune(d: Path, kind: str, keep: str) -> None:
    entries = []
    for p in d.glob(f"{kind}-*.json"):
        try:
            entries.append((p.stat().st_mtime, p.name, p))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _, name, p in entries[MAX_ENTRIES:]:
        if name != f"{kind}-{keep}.json":
            try:
                p.unlink()
            except OSError:
                pass


