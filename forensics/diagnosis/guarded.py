"""Regexes that skip texts they cannot match.

The subject extractor of the early-warning linker runs ~25 patterns over
every candidate line of a failed lifetime; most lines match none of them, and
Python's ``re`` scans a pattern that opens with a lookbehind or a long
alternation at every position (~15 µs a line each). A ``Guarded`` pattern
names plain substrings (``needles``) of which every match contains at least
one; when the text holds none of them the scan is skipped. On ASCII text that
is exact: with ``fold`` (a case-insensitive pattern) the needles are sought in
the lower-cased text, and ASCII letters fold only onto ASCII letters. Other
text is always scanned (``re.I`` folds e.g. U+017F onto ``s``).
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from forensics.events.longtext import LONG_TEXT, ascii_copy

_LOWER: list[Any] = [None, ""]  # the last text lower-cased (the patterns of one text share it)


def _lower(text: str) -> str:
    if _LOWER[0] is not text:
        _LOWER[1] = text.lower()
        _LOWER[0] = text
    return _LOWER[1]  # type: ignore[no-any-return]


class Guarded:
    """A regex compiled on first use whose ``finditer``/``search``/``findall``
    return nothing at once when no needle is in the text."""

    __slots__ = ("_args", "_rx", "needles", "fold", "_gate", "_slot")

    def __init__(self, pattern: str, needles: tuple[str, ...], flags: int = 0, fold: bool = False) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None
        self.needles = tuple(n.lower() for n in needles) if fold else tuple(needles)
        self.fold = fold
        self._gate: GuardGate | None = None  # set by a GuardGate that answers for this pattern
        self._slot = -1

    @property
    def rx(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(*self._args)
        return rx

    def warm(self) -> None:
        """Compile now (``forensics.diagnosis.warm``)."""
        self.rx  # noqa: B018

    def cannot_match(self, text: str) -> bool:
        gate = self._gate
        if gate is not None and gate.text is text and self._slot not in gate.live:
            return True
        if not text.isascii():
            return False
        hay = _lower(text) if self.fold else text
        for n in self.needles:
            if n in hay:
                return False
        return True

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        gate = self._gate
        if gate is not None and gate.text is text:  # the gate has answered for this text
            return self.rx.finditer(text) if self._slot in gate.live else iter(())
        return iter(()) if self.cannot_match(text) else self.rx.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return None if self.cannot_match(text) else self.rx.search(text)

    def findall(self, text: str) -> list[Any]:
        return [] if self.cannot_match(text) else self.rx.findall(text)

    def __getattr__(self, name: str) -> Any:  # sub, match, pattern ...: unguarded
        return getattr(self.rx, name)



# ASCII characters that ``re`` counts as whitespace and RE2 does not (\v and
# the information separators): a text with one is searched by ``re``.
_RE_ONLY_SPACE = re.compile("[\x0b\x1c-\x1f]")
_INLINE = ((re.I, "(?i)"), (re.M, "(?m)"))
# Each set's program and DFA cache live in this much memory (the cache is
# reset when full: a many-match DFA never gives up for being slow, and these
# small programs' states fit many times over), so memory stays flat however
# varied the lines.
RE2_MEMORY = 1 << 20


# The subject patterns' gate (GuardGate, ~20 patterns with their lookarounds
# dropped) builds many DFA states: in 1 MB its cache was reset so often that
# it cost 0.08 s over the crash loop's 4,089 candidate texts, 0.03 s in 2 MB
# (the AsciiSets gain nothing from more).
GATE_MEMORY = 2 << 20


def _re2_options(max_mem: int | None = None) -> Any:
    import re2

    o = re2.Options()
    o.log_errors = False
    o.max_mem = RE2_MEMORY if max_mem is None else max_mem
    return o


class AsciiSet:
    """Which of several regexes find a match in a text, as their indexes in
    order. On ASCII text one pass of an RE2 set answers for all of them: there
    ``\\b``, ``\\w``, ``\\s``, ``^``/``$`` (multi-line) and case folding mean
    the same in RE2 as in ``re``, so the answer is the same. Other text (and
    a platform without RE2, or ``FORENSICS_MATCHER=regex``) is searched with
    each regex. The patterns must be RE2 syntax too (no lookarounds, no
    backreferences); re.I and re.M are the only flags."""

    __slots__ = ("_specs", "_rxs", "_match")

    def __init__(self, specs: list[tuple[str, int]]) -> None:
        self._specs = specs  # (pattern, flags) of each regex
        self._rxs: list[re.Pattern[str]] | None = None
        self._match: Any = None

    def warm(self) -> None:
        """Compile now (``forensics.diagnosis.warm``)."""
        if self._rxs is None:
            self._compile()

    def _compile(self) -> None:
        from forensics.diagnosis.matcher import engine_name

        self._rxs = [re.compile(p, f) for p, f in self._specs]
        if engine_name() != "re2":
            self._match = False
            return
        import re2

        o = _re2_options()
        s = re2.Set.SearchSet(o)
        for p, f in self._specs:
            inline = "".join(tok for flag, tok in _INLINE if f & flag)
            end_differs = not f & re.M and "$" in p.replace("\\$", "")  # re's $ also matches before a final \n
            if f & ~(re.I | re.M) or end_differs or s.Add(inline + p) < 0:
                raise ValueError(f"AsciiSet: {p!r} is not RE2 syntax with re.I/re.M only")
        s.Compile()
        self._match = s._set.Match  # the raw binding: bytes in, list of indexes out

    def which(self, text: str) -> list[int]:
        if self._rxs is None:
            self._compile()
        if self._match and text.isascii() and _RE_ONLY_SPACE.search(text) is None:
            return sorted(self._match(text.encode("ascii")))
        return [i for i, rx in enumerate(self._rxs) if rx.search(text)]  # type: ignore[arg-type]

    def first(self, text: str) -> int | None:
        """The index of the first regex that finds a match, or None."""
        found = self.which(text)
        return found[0] if found else None


_LOOKAROUND = ("(?<!", "(?<=", "(?!", "(?=")


def _group_end(pattern: str, i: int) -> int:
    """The index just past the group that opens at ``pattern[i]``."""
    depth, in_class, n = 0, False, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern.startswith("^", i + 1):
                i += 1
            if pattern.startswith("]", i + 1):
                i += 1  # a "]" first in a class is a literal
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced group in {pattern!r}")


def strip_lookarounds(pattern: str) -> str:
    """``pattern`` without its lookaround assertions: it matches wherever
    ``pattern`` matches (an assertion only ever rules a match out), and RE2,
    which has none, can run it."""
    out, i, in_class, n = [], 0, False, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if not in_class and pattern.startswith(_LOOKAROUND, i):
            i = _group_end(pattern, i)
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            j = i + 1 + pattern.startswith("^", i + 1)
            if pattern.startswith("]", j):
                out.append(pattern[i:j + 1])
                i = j + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


class GuardGate:
    """One RE2 set pass over a text that rules out, at once, the Guarded
    patterns that cannot match it: each pattern's lookarounds are dropped (a
    superset; RE2 has none), and on ASCII text RE2 and ``re`` agree (see
    AsciiSet). ``open(text)`` answers for that very text object until the
    next ``open``; any other text is left to each pattern's needles."""

    __slots__ = ("_guards", "_match", "text", "live")

    def __init__(self, guards: list[Guarded]) -> None:
        self._guards = [g for g in guards if g._gate is None]
        self._match: Any = None
        self.text: str | None = None
        self.live: frozenset[int] | set[int] = frozenset()

    def warm(self) -> None:
        """Compile now (``forensics.diagnosis.warm``)."""
        if self._match is None:
            self._compile()

    def _compile(self) -> None:
        from forensics.diagnosis.matcher import engine_name

        self._match = False
        if engine_name() != "re2":
            return
        import re2

        o = _re2_options(GATE_MEMORY)
        s = re2.Set.SearchSet(o)
        kept = []
        for g in self._guards:
            pattern, flags = g._args
            if flags & ~re.I or "$" in pattern.replace("\\$", ""):
                continue  # not translated: that pattern keeps its needles only
            if s.Add(("(?i)" if flags & re.I else "") + strip_lookarounds(pattern)) < 0:
                raise ValueError(f"GuardGate: RE2 refuses {pattern!r} without its lookarounds")
            kept.append(g)
        s.Compile()
        for k, g in enumerate(kept):
            g._gate, g._slot = self, k
        self._match = s._set.Match

    def open(self, text: str) -> None:
        if self._match is None:
            self._compile()
        if self._match and text.isascii() and _RE_ONLY_SPACE.search(text) is None:
            self.live = set(self._match(text.encode("ascii")))
            self.text = text
        else:
            self.text = None


class AsciiRegex:
    """A regex whose ``groups_all(text)`` (the groups of every match, as
    ``finditer`` finds them) runs in RE2 on ASCII text: RE2 extracts the
    same leftmost-first submatches as ``re`` for a pattern without
    lookarounds or backreferences, in linear time (a long case-folded
    alternation costs ``re`` a try at every position). Other text, and a
    platform without RE2, use ``re``."""

    __slots__ = ("_spec", "_rx", "_re2")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._spec = (pattern, flags)
        self._rx: re.Pattern[str] | None = None
        self._re2: Any = None

    def warm(self) -> None:
        """Compile now (``forensics.diagnosis.warm``)."""
        if self._rx is None:
            self._compile()

    def _compile(self) -> None:
        from forensics.diagnosis.matcher import engine_name

        pattern, flags = self._spec
        self._rx = re.compile(pattern, flags)
        self._re2 = False
        if engine_name() == "re2":
            import re2

            if flags & ~(re.I | re.M) or not flags & re.M and "$" in pattern.replace("\\$", ""):
                raise ValueError(f"AsciiRegex: {pattern!r} needs flags re.I/re.M only and no $")
            o = _re2_options()
            inline = "".join(tok for flag, tok in _INLINE if flags & flag)
            self._re2 = re2.compile(inline + pattern, o)

    def groups_all(self, text: str) -> tuple[tuple[str | None, ...], ...]:
        if self._rx is None:
            self._compile()
        if self._re2 and _RE_ONLY_SPACE.search(text) is None:
            if text.isascii():
                return tuple(m.groups() for m in self._re2.finditer(text))
            if len(text) > LONG_TEXT:
                # a long line outside ASCII (a request dump): RE2 over its ASCII
                # copy (forensics.events.longtext), the groups cut from the text
                # itself at the same positions
                copy = ascii_copy(self._rx, text)  # type: ignore[arg-type]
                if copy is not None:
                    n = self._rx.groups  # type: ignore[union-attr]
                    return tuple(tuple(text[a:b] if a >= 0 else None for a, b in map(m.span, range(1, n + 1)))
                                 for m in self._re2.finditer(copy))
        return tuple(m.groups() for m in self._rx.finditer(text))  # type: ignore[union-attr]
