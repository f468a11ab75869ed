r"""Whether a regex finds a match in a long line, in linear time.

Real logs hold lines of hundreds of kilobytes (SGLang's request dumps,
``Finish: obj=GenerateReqInput(...)``: 130-230 KB each in the real archive).
Python's ``re`` tries every branch of a long alternation at every position:
one search of such a line costs 20-90 ms, and the per-event judgements ask
several. RE2 answers the same question in well under a millisecond.

``found(rx, text)`` is ``rx.search(text) is not None``. On a long text that is
ASCII and holds none of the whitespace that only Python's ``\s`` knows
(``\v``, ``\x1c``-``\x1f``) it asks RE2, which on such text agrees with
``re`` for the patterns this accepts: no lookarounds, backreferences or
``$`` (Python's ``$`` also matches before a final newline; ``dollar_ok``
says a pattern's ``$`` only ends a branch that ``\s`` could end there, as in
``(?:\s|:|$)``, where RE2's ``$`` finds the same lines), flags at most
``re.I``, given inline as ``(?i)`` or as the flag. ``\b``, ``\w``, ``\d``,
``\s``, ``.`` and case folding mean the same on ASCII text in both. A pattern
RE2 refuses, and every other text, use ``re``. The RE2 programs are compiled
on first use (one per pattern) and bounded in memory.

A long text that is not ASCII is asked in an ASCII copy: each character
outside ASCII becomes one ASCII character of its kind to ``re`` -- a word
character (``\w``: letters, non-decimal digits) a letter, any other a
control character -- chosen among those the pattern never names (no literal,
no class range holds them, in either case), so that every part of the
pattern matches the copy exactly where it matched the text, at the same
positions. Where that cannot be promised the text goes to ``re``: a
character ``re`` reads as whitespace or as a decimal digit, one that case
folding relates to an ASCII letter (``ſ``, the Kelvin sign) under ``re.I``, a
pattern that names characters outside ASCII.
"""
from __future__ import annotations

import re
from typing import Any

LONG_TEXT = 4096  # shorter texts cost re little, and most lines are shorter
_ODD_SPACE = re.compile("[\x0b\x1c-\x1f]")  # whitespace to Python's \s, not to RE2's
_REFUSED = re.compile(r"\(\?[=!<(]|\\[1-9]|\(\?P=")  # lookarounds, backreferences, conditionals
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WORD_STANDINS = "qzjxvkwyfgphbmcudtlnrsoaie"
_OTHER_STANDINS = "".join(map(chr, range(1, 9))) + "".join(map(chr, range(14, 28)))  # neither \s nor \w
_RE2: dict[tuple[str, int, bool], Any] = {}  # (pattern, flags, dollar_ok) -> RE2 program, or None: re answers
RE2_MEMORY = 1 << 20  # per program and its DFA cache (when a long line fills it RE2 runs its NFA: still linear)


def _program(rx: re.Pattern[str], dollar_ok: bool) -> Any:
    key = (rx.pattern, rx.flags, dollar_ok)
    if key in _RE2:
        return _RE2[key]
    prog = None
    flags = rx.flags & ~re.UNICODE
    if not flags & ~re.I and _REFUSED.search(rx.pattern) is None and (dollar_ok or "$" not in rx.pattern):
        try:
            import re2

            o = re2.Options()
            o.log_errors = False
            o.max_mem = RE2_MEMORY
            prog = re2.compile(("(?i)" if flags & re.I else "") + rx.pattern, o)
        except Exception:  # noqa: BLE001 - no RE2, or a pattern it cannot take: re answers
            prog = None
    _RE2[key] = prog
    return prog


_STANDINS: dict[tuple[str, int], tuple[str, str] | None] = {}  # (pattern, flags) -> (word, other) stand-ins


def found(rx: re.Pattern[str], text: str, dollar_ok: bool = False) -> bool:
    """``rx.search(text) is not None``, in linear time on long text."""
    if len(text) > LONG_TEXT and _ODD_SPACE.search(text) is None:
        prog = _program(rx, dollar_ok)
        if prog is not None:
            ascii_text = text if text.isascii() else ascii_copy(rx, text)
            if ascii_text is not None:
                return prog.search(ascii_text) is not None
    return rx.search(text) is not None


def ascii_copy(rx: re.Pattern[str], text: str) -> str | None:
    """``text`` with each non-ASCII character replaced by its stand-in (module
    docstring), or None where that would not keep ``rx``'s answer."""
    key = (rx.pattern, rx.flags)
    if key not in _STANDINS:
        _STANDINS[key] = _standins(rx)
    standins = _STANDINS[key]
    if standins is None:
        return None
    word, other = standins
    fold = bool(rx.flags & re.I)
    chars = set(_NON_ASCII.findall(text))
    for c in chars:
        if c.isspace() or c.isdecimal() or fold and any(x < "\x80" for x in c.lower() + c.upper() + c.casefold()):
            return None
    for c in chars:  # a few distinct characters: one C scan each (translate would look up every character)
        text = text.replace(c, word if c.isalnum() else other)
    return text


def _standins(rx: re.Pattern[str]) -> tuple[str, str] | None:
    """A letter and a control character that no literal or class range of
    ``rx`` holds (either case under ``re.I``); None when none is free or the
    pattern names characters outside ASCII."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        lits: set[int] = set()
        ranges: list[tuple[int, int]] = []
        _named(_parser.parse(rx.pattern, rx.flags), lits, ranges)
    except Exception:  # noqa: BLE001 - a parser this does not know: re answers
        return None
    if any(c > 127 for c in lits) or any(hi > 127 for _lo, hi in ranges):
        return None

    def free(c: str) -> bool:
        codes = {ord(c.lower()), ord(c.upper())} if rx.flags & re.I else {ord(c)}
        return not codes & lits and not any(lo <= x <= hi for x in codes for lo, hi in ranges)

    word = next((c for c in _WORD_STANDINS if free(c)), None)
    other = next((c for c in _OTHER_STANDINS if free(c)), None)
    return (word, other) if word is not None and other is not None else None


def _named(node: Any, lits: set[int], ranges: list[tuple[int, int]]) -> None:
    """Every character code a parsed pattern names: literals (also negated
    ones) and class ranges, at any depth."""
    from re import _constants  # type: ignore[attr-defined]

    data = getattr(node, "data", node)  # a SubPattern holds its items in .data
    if not isinstance(data, (list, tuple)):
        return
    if len(data) == 2 and data[0] in (_constants.LITERAL, _constants.NOT_LITERAL) and isinstance(data[1], int):
        lits.add(data[1])
        return
    if len(data) == 2 and data[0] == _constants.RANGE:
        ranges.append(data[1])
        return
    for item in data:
        _named(item, lits, ranges)
