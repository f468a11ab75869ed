"""A cache of the parsed signature files, so every start does not pay for
YAML parsing and for compiling and checking ~350 patterns (~0.1 s of a
short classify).

What is kept: the YAML documents of the files (JSON), and each pattern's
required literals. It is keyed by the digest of every file's name and bytes
and by the versions that shape parsing (forensics, Python, regex, RE2,
PyYAML, the engine): an entry exists only for files that loaded cleanly, so
a hit may skip the checks, and patterns compile on first use.

A cache never changes an answer: an entry is used only if it is the user's
own file in the user's own directory (not writable by others), its payload
hashes to the digest it carries, it names the same key, and it decodes to
the same number of documents as there are files; anything else (a missing,
cut, corrupt, foreign or unreadable file, a full disk) is a miss, and the
signatures are parsed as without a cache. ``FORENSICS_CACHE_DIR`` moves it;
``FORENSICS_CACHE_DIR=off`` (or empty) turns it off.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

FORMAT = 1
MAX_ENTRIES = 8  # signature sets kept (each test's or user's custom set makes one): the oldest go
PREFIX = b"forensics-signature-cache 1\n"


def cache_dir() -> Path | None:
    env = os.environ.get("FORENSICS_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off", "0") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "forensics"


def cache_key(files_digest: str, engine: str) -> str:
    """The key: the files' full digest and every version that shapes parsing."""
    from forensics.versions import __version__

    versions = [str(FORMAT), files_digest, engine, __version__, sys.version]
    for mod in ("regex", "re2", "yaml"):
        m = sys.modules.get(mod)
        versions.append(f"{mod}={getattr(m, '__version__', '?') if m is not None else '-'}")
    return hashlib.sha256("\0".join(versions).encode()).hexdigest()[:32]


def _private(p: Path, st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return owner_ok and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read(key: str, n_files: int) -> dict[str, Any] | None:
    """The cached payload for ``key``, or None (every doubt is a miss)."""
    d = cache_dir()
    if d is None:
        return None
    path = d / f"signatures-{key}.json"
    try:
        if not _private(d, d.stat()):
            return None
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or not _private(path, st) or st.st_size > 64 << 20:
                return None
            raw = f.read()
        if not raw.startswith(PREFIX):
            return None
        digest, _, body = raw[len(PREFIX):].partition(b"\n")
        if hashlib.sha256(body).hexdigest().encode() != digest:
            return None
        obj = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("key") != key:
        return None
    docs, lits = obj.get("docs"), obj.get("literals")
    if not isinstance(docs, list) or len(docs) != n_files or not isinstance(lits, dict):
        return None
    return obj


def write(key: str, docs: list[Any], literals: dict[str, list[str] | None]) -> None:
    """Best effort: documents JSON cannot carry exactly (a date, a number as
    a key) are not cached; a failure to write is ignored."""
    d = cache_dir()
    if d is None:
        return
    obj = {"key": key, "docs": docs, "literals": literals}
    try:
        body = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
        if json.loads(body) != obj:
            return  # not carried exactly: a hit would parse something else
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = PREFIX + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        tmp = d / f".signatures-{key}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, d / f"signatures-{key}.json")
        _prune(d, key)
    except (OSError, ValueError, TypeError, RecursionError):
        try:
            tmp.unlink()  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


def _prune(d: Path, keep: str) -> None:
    entries = []
    for p in d.glob("signatures-*.json"):
        try:
            entries.append((p.stat().st_mtime, p.name, p))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _, name, p in entries[MAX_ENTRIES:]:
        if name != f"signatures-{keep}.json":
            try:
                p.unlink()
            except OSError:
                pass


class LazyPattern:
    """A signature pattern: its text now, its ``regex`` object on first use
    (matching needs only the text: the engines compile their own sets)."""

    __slots__ = ("pattern", "_rx")

    def __init__(self, pattern: str, compiled: Any = None) -> None:
        self.pattern = pattern
        self._rx = compiled

    def compiled(self) -> Any:
        if self._rx is None:
            from forensics.diagnosis.matcher import compile_regex

            self._rx = compile_regex(self.pattern)
        return self._rx

    def __getattr__(self, name: str) -> Any:  # search, match, flags, ...: the regex object's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyPattern) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (LazyPattern, (self.pattern,))

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"
