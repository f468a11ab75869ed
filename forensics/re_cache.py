"""Compiled ``re`` programs kept in the start-up cache (issue 29, start-up).

Python's ``re`` parses and compiles each pattern in Python (``re._parser``,
``re._compiler``): the ~200 patterns a ``forensics classify`` compiles cost
60-120 ms of a ~0.3 s start, and the message catalogue compiles hundreds
more on a long log. The last step, ``_sre.compile``, takes the compiled
program (a list of integers) and is fast. This module keeps, per pattern
and flags, the arguments that step was given, in the cache directory
(``forensics.cache``: private, digest-checked, keyed by the interpreter's
version and the ``re`` engine's magic number, so another Python never reads
them); a start that finds a pattern there calls ``_sre.compile`` directly.

Only patterns that forensics' own code, the libraries it runs (Lark, click,
PyYAML) and the standard library ask for are recorded, and not those of
``tokenize``: every pattern recorded is read back at every start, and
``tokenize`` joins a set of string prefixes in hash order, so each process
that tokenized added a new ~9 KB program. One shared cache directory had
filled to 3,722 patterns, 8.5 MB, 6 MB of them tokenize's and other
programs' (a ``forensics`` process that imports a training library records
its patterns too), and every start read all of it (~9 MiB more peak RSS
for a 57-line log) and every process that added one wrote it all again at
exit. (The table's key names this rule, so a table filled before it is not
read.)

The pattern object is the one ``re`` would build: when a pattern is recorded,
the object built from the recorded arguments is compared with the one ``re``
built (a ``Pattern`` compares equal only to one of the same pattern, flags
and program); one that differs is not recorded. Debug-flag compiles and
non-string patterns go to ``re`` as always. New programs are written at exit
(atomically, at most ``MAX_PATTERNS``).
"""
from __future__ import annotations

import atexit
import hashlib
import sys
from array import array
from typing import Any

KIND = "re"
MAX_PATTERNS = 4096
_table: dict[tuple, tuple] = {}
_new = 0


def _key() -> str:
    import _sre
    from re import _constants

    ident = f"{sys.version}|{_sre.MAGIC}|{_constants.MAGIC}|{sys.maxunicode}|{array('I').itemsize}|own"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def wanted() -> bool:
    """Only a forensics process routes ``re`` through the table: the ``forensics`` command, or
    ``python -m forensics`` (while ``-m`` locates its module, ``sys.argv[0]`` is ``"-m"``).
    A program that imports forensics as a library keeps its ``re`` untouched and its patterns
    out of our cache, unless it asks (``FORENSICS_RE_CACHE=on``)."""
    import os

    flag = os.environ.get("FORENSICS_RE_CACHE", "")
    if flag in ("on", "off"):
        return flag == "on"
    arg0 = sys.argv[0] if sys.argv else ""
    return arg0 == "-m" or os.path.basename(arg0) in ("forensics", "forensics.exe")


def install() -> None:
    """Route ``re``'s compile step through the table (once a process; not
    when caching is off or the interpreter's ``re`` is not the shape known here)."""
    from re import _compiler

    from forensics.cache import cache_dir, read_table

    if getattr(_compiler.compile, "_forensics", False) or cache_dir() is None:
        return
    if not all(hasattr(_compiler, n) for n in ("_code", "_parser", "_sre", "isstring", "SRE_FLAG_DEBUG")):
        return
    table = read_table(KIND, _key(), max_bytes=16 << 20)
    if table is not None:
        _table.update(table)
    original = _compiler.compile

    def compile(p: Any, flags: int = 0) -> Any:
        if type(p) is not str or flags & _compiler.SRE_FLAG_DEBUG:
            return original(p, flags)
        got = _table.get((p, flags))
        if got is not None:
            final, code, groups, groupindex, indexgroup = got
            return _compiler._sre.compile(p, final, array("I", code).tolist(), groups, groupindex, indexgroup)
        return _record(original, p, flags)

    compile._forensics = True  # type: ignore[attr-defined]
    _compiler.compile = compile
    atexit.register(_save)


def _record(original: Any, p: str, flags: int) -> Any:
    """``re``'s own compile, and the arguments of its last step kept when
    building from them gives the same pattern object."""
    global _new
    from re import _compiler

    want = original(p, flags)
    if len(_table) >= MAX_PATTERNS or not _asked_by_us():
        return want
    parsed = _compiler._parser.parse(p, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    args = (flags | parsed.state.flags, array("I", code).tobytes(), parsed.state.groups - 1, groupindex,
            tuple(indexgroup))
    try:
        same = _compiler._sre.compile(p, args[0], list(code), args[2], args[3], args[4]) == want
    except (TypeError, ValueError, OverflowError, RuntimeError):
        same = False
    if same and want.groupindex == groupindex:
        _table[(p, flags)] = args
        _new += 1
    return want


# The frames between the code that asks for a pattern and this module's compile.
_PASSING = frozenset({"re", __name__})
_PASSING_PREFIXES = ("re.", "importlib", "_frozen_importlib")
# Whose patterns are recorded: forensics', the libraries it runs (Lark, click, PyYAML) and the
# standard library's -- but not tokenize's, whose pattern differs in every process.
_OURS = frozenset({"forensics", "lark", "click", "yaml"} | set(getattr(sys, "stdlib_module_names", ()))) - {"tokenize"}


def _asked_by_us() -> bool:
    """Is the first frame outside ``re``, the import machinery and this
    module one of ``_OURS``? (Compiled modules have no frames of their own:
    their caller, or the module importing them, answers.)"""
    f: Any = sys._getframe(1)
    while f is not None:
        name = f.f_globals.get("__name__") or ""
        if name not in _PASSING and not name.startswith(_PASSING_PREFIXES):
            return name.split(".", 1)[0] in _OURS
        f = f.f_back
    return False


def _save() -> None:
    if _new:
        from forensics.cache import write_table

        write_table(KIND, _key(), _table)
