"""A cache of the parsed signature files, so every start does not pay for
YAML parsing and for compiling and checking ~350 patterns (~0.1 s of a
short classify); ``read_entry``/``write_entry`` also keep the classifier's
scorer decompressed and checked (``classifier.scorer``).

What is kept: the YAML documents of the files (JSON), and each pattern's
required literals and gate literals (``literal_gate``). It is keyed by the digest of every file's name and bytes
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
import sys
from pathlib import Path
from typing import Any

from forensics.cache import read_entry, write_entry
from forensics.diagnosis import literal_gate

FORMAT = 1


def _origin(name: str) -> str | None:
    """The file a module is (or would be) loaded from, whether or not it is imported yet: a key
    read before and after an import must be the same key (it was not: a test process that had not
    yet imported the literal gate or the YAML parser wrote an entry it never found again)."""
    m = sys.modules.get(name)
    f = getattr(m, "__file__", None) if m is not None else None
    if f:
        return str(f)
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def code_digest(*modules: str) -> str:
    """The digest of the code that parses and checks what is cached: an
    entry made by other code (a newer check) is another key."""
    h = hashlib.sha256()
    for name in modules:
        f = _origin(name)
        try:
            h.update(Path(f).read_bytes() if f else name.encode())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()


def cache_key(files_digest: str, engine: str) -> str:
    """The key: the files' full digest and every version that shapes parsing."""
    from forensics.versions import __version__

    versions = [str(FORMAT), files_digest, engine, __version__, sys.version,
                code_digest(__name__, "forensics.diagnosis.signatures", "forensics.diagnosis.matcher",
                            "forensics.diagnosis.literal_gate")]
    for mod in ("regex", "re2", "yaml"):  # the installed library, by its file (no import needed)
        f = _origin(mod)
        try:
            st = os.stat(f) if f else None
        except OSError:
            st = None
        versions.append(f"{mod}={f}:{st.st_size}:{st.st_mtime_ns}" if st is not None else f"{mod}=-")
    return hashlib.sha256("\0".join(versions).encode()).hexdigest()[:32]


def read(key: str, n_files: int) -> dict[str, Any] | None:
    """The cached signature payload for ``key``, or None (every doubt is a miss)."""
    body = read_entry("signatures", key)
    if body is None:
        return None
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("key") != key:
        return None
    docs, lits, gate = obj.get("docs"), obj.get("literals"), obj.get("gate")
    if not isinstance(docs, list) or len(docs) != n_files or not isinstance(lits, dict) or not _literal_map(gate):
        return None
    literal_gate.KNOWN.update(gate)  # the matchers' gate literals, not worked out again
    return obj


def _literal_map(obj: Any) -> bool:
    """pattern -> a list of strings or None (the matcher's gate literals)."""
    return isinstance(obj, dict) and all(
        v is None or isinstance(v, list) and all(isinstance(x, str) for x in v) for v in obj.values())


def write(key: str, docs: list[Any], literals: dict[str, list[str] | None],
          gate: dict[str, list[str] | None] | None = None) -> None:
    """Best effort: documents JSON cannot carry exactly (a date, a number as
    a key) are not cached."""
    obj = {"key": key, "docs": docs, "literals": literals, "gate": gate or {}}
    try:
        body = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
        if json.loads(body) != obj:
            return  # not carried exactly: a hit would parse something else
    except (ValueError, TypeError, RecursionError):
        return
    write_entry("signatures", key, body)


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
