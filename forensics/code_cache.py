"""The code of the methods ``dataclasses`` writes, kept in the start-up
cache (issue 29, start-up).

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``
... as Python source and compiles it with ``exec``: the ~35 dataclasses a
``forensics classify`` imports cost ~20-30 ms of a ~0.3 s start in
``compile`` alone. This module gives the ``dataclasses`` module an ``exec``
of its own (a module global, found before the builtin) that compiles a
source text once and keeps its code object in the cache directory
(``forensics.cache``: private, digest-checked, keyed by the interpreter's
version, bytecode magic number and optimisation level, so another Python
never reads them). The code is the one ``exec`` would compile: the same
text, file name (``<string>``), mode, and flags (``dataclasses`` has no
``__future__`` imports, so none are inherited). Only the forensics command
installs it (``re_cache.wanted``): a library's host keeps its
``dataclasses`` untouched. New code is written at exit (atomically, at most
``MAX_CODES`` texts).
"""
from __future__ import annotations

import atexit
import builtins
import hashlib
import sys
from types import CodeType
from typing import Any

KIND = "dataclass-code"
MAX_CODES = 2048
_codes: dict[str, CodeType] = {}  # source text -> its code object
_new = 0


def _key() -> str:
    from importlib.util import MAGIC_NUMBER

    ident = f"{sys.version}|{MAGIC_NUMBER.hex()}|{sys.flags.optimize}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def install() -> None:
    """Route ``dataclasses``' ``exec`` of source text through the table
    (once a process; not when caching is off)."""
    import dataclasses

    from forensics.cache import cache_dir, read_table

    if getattr(vars(dataclasses).get("exec"), "_forensics", False) or cache_dir() is None:
        return
    table = read_table(KIND, _key(), max_bytes=8 << 20)
    if table is not None and all(type(k) is str and type(v) is CodeType for k, v in table.items()):
        _codes.update(table)

    def exec_(source: Any, globals: Any = None, locals: Any = None) -> None:  # (exec's own names)
        if type(source) is str:
            source = _code(source)
        builtins.exec(source, globals, locals)  # noqa: S102 - the code dataclasses asked for

    exec_._forensics = True  # type: ignore[attr-defined]
    dataclasses.exec = exec_  # type: ignore[attr-defined]
    atexit.register(_save)


def _code(source: str) -> CodeType:
    """What ``exec(source)`` compiles inside ``dataclasses`` (no inherited flags)."""
    global _new
    code = _codes.get(source)
    if code is None:
        code = compile(source, "<string>", "exec", dont_inherit=True)
        if len(_codes) < MAX_CODES:
            _codes[source] = code
            _new += 1
    return code


def _save() -> None:
    if _new:
        from forensics.cache import write_table

        write_table(KIND, _key(), _codes)
