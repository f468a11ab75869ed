"""The literal gate in front of a field's RE2 set (``matcher.RE2Field``).

Most lines of a log match no signature, and the few that hold a pattern's
words are the ones that make the whole set's DFA build new states: over the
crash loop's 18k text values the set spent 0.04 s on the 84% that match
nothing and 0.23 s on the rest. The gate is one small RE2 set of the literals
the patterns require (lower-cased, found in the lower-cased text): a value
with none of them matches no pattern; otherwise only the patterns whose
literals it holds are searched, each in a set of its own (one pattern's DFA
is small and stays warm). Together ~6x faster than the whole set's pass.

Exact: every match of a pattern holds one of its literals (ASCII, as
written or, under ``(?i)``, case-folded), so the text lower-cased holds that
literal lower-cased -- once the two characters outside ASCII that RE2 folds
onto ASCII letters (U+017F, U+212A) are mapped onto them; and a one-pattern
set answers "found anywhere" as the whole set does for that pattern. So the
whole set is compiled only for a field with a pattern that requires no
literal (the shipped sets have none: ~20 ms less at every start).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

GATE_MIN = 3  # a literal at least this long (shorter ones would let most lines through)
# The literal set's program and DFA cache: the shipped text literals need more
# than 2 MB to compile, and in 2 MB the cache is reset so often that the gate
# costs 3x what it does in 4 MB.
GATE_BUDGETS = (4 << 20, 8 << 20)
# One pattern's set: program and DFA cache (the first budget it compiles in),
# and how many are kept compiled at a time (the least recently used dropped
# when full, compiled again when asked, ~60-130 µs each). The JSON report of
# the 1,000-lifetime crash loop asks for 261 of the 454 text patterns: with 64
# kept it compiled 1,535 sets (~0.19 s), with 256 kept 269. Each in 32 KB first
# (428 of 454 compile there; the rest in 256 KB): 256 sets are bounded by
# 8 MB, half what 64 in 256 KB were, and peak RSS at 10x the crash loop moved
# by ~1 MB. A smaller budget never costs an answer, only speed: RE2 compiles a
# set only when its DFA has room for 20 of its largest states (and the
# compile's own trial search passes), so a search can always reset the cache
# and go on; a set that does not fit is compiled in the next budget.
ONE_BUDGETS = (32 << 10, 256 << 10, 1 << 20, 8 << 20)
ONE_KEPT = 256
# The characters outside ASCII that RE2's case folding relates to an ASCII
# letter and that ``str.lower`` leaves outside ASCII (U+212A KELVIN SIGN
# lower-cases to "k" already): a test searches every code point for others.
FOLDS_ONTO_ASCII = str.maketrans({"\u017f": "s"})


# pattern -> its gate literals: filled from the signature cache (sigcache), so
# a start does not parse ~400 patterns again (~20 ms); read back to write it
KNOWN: dict[str, list[str] | None] = {}


def known_literals(pattern: str) -> list[str] | None:
    if pattern not in KNOWN:
        KNOWN[pattern] = gate_literals(pattern)
    return KNOWN[pattern]


def gate_literals(pattern: str) -> list[str] | None:
    """Lower-cased ASCII literals of which at least one occurs in every text
    ``pattern`` matches, or None when that can't be worked out. Unlike
    ``matcher.required_literals`` (whose answer the early-warning linker
    reads), a group of alternatives inside a sequence counts too
    (``^(?:Aborted|Bus error)``), and literals of ``GATE_MIN`` characters do."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
        from re._constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - older Pythons
        return None
    try:
        tree = sre_parse.parse(pattern)
    except Exception:
        return None

    def alternatives(op: Any, av: Any) -> list[str] | None:
        if op is SUBPATTERN:  # a group is matched once: what it requires, the pattern requires
            return seq(list(av[3]))
        if op is BRANCH:  # one of the branches: one of their literals
            out: list[str] = []
            for b in av[1]:
                sub = seq(list(b))
                if sub is None:
                    return None
                out += sub
            return out
        return None  # (a repeat may match nothing; a class is no literal)

    def seq(items: list) -> list[str] | None:
        options: list[list[str]] = []
        cur = ""
        for op, av in items + [(None, None)]:
            if op is LITERAL:
                cur += chr(av)
                continue
            if len(cur) >= GATE_MIN:
                options.append([cur])
            cur = ""
            sub = alternatives(op, av) if op is not None else None
            if sub:
                options.append(sub)
        # the option whose shortest literal is longest: the most selective
        best = max(options, key=lambda o: (min(map(len, o)), -len(o)), default=None)
        if best is None or not all(x.isascii() for x in best):
            return None  # (a non-ASCII literal may case-fold onto ASCII text)
        return [x.lower() for x in best]

    return seq(list(tree))


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(value: str) -> str:
    """``value`` with lone surrogates as U+FFFD (what UTF-8 can carry)."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value)


def re2_options(max_mem: int) -> Any:
    import re2

    o = re2.Options()
    o.log_errors = False  # errors come back as one exception, not on stderr
    o.max_mem = max_mem
    return o


def _set_match(patterns: Sequence[str], budgets: tuple[int, ...]) -> Any:
    """The raw ``Match`` of an RE2 set of ``patterns`` in the first budget it
    compiles in, or None."""
    import re2

    for budget in budgets:
        s = re2.Set.SearchSet(re2_options(budget))
        if any(s.Add(p) < 0 for p in patterns):
            return None
        try:
            s.Compile()
        except re2.error:
            continue
        return s._set.Match  # bytes in, list of indexes out
    return None


class LiteralGate:
    """``scan(ascii_text)``: indexes of the patterns found, as the field's set finds them."""

    __slots__ = ("_lits", "_one", "_pats_of", "patterns")

    def __init__(self, patterns: Sequence[str], lits: list[str], pats_of: list[tuple[int, ...]], lits_match: Any):
        self.patterns = list(patterns)
        self._lits = lits_match
        self._pats_of = pats_of  # literal index -> the patterns that require it (among others)
        # pattern index -> its own set, compiled on first use; least recently used first
        self._one: OrderedDict[int, Any] = OrderedDict()

    @classmethod
    def of(cls, patterns: Sequence[str]) -> LiteralGate | None:
        """The gate of ``patterns``, or None when one of them requires no literal."""
        index: dict[str, int] = {}
        pats_of: list[list[int]] = []
        for i, p in enumerate(patterns):
            lits = known_literals(p)
            if not lits:
                return None
            for x in dict.fromkeys(lits):
                if x not in index:
                    index[x] = len(index)
                    pats_of.append([])
                pats_of[index[x]].append(i)
        match = _set_match([re.escape(x) for x in index], GATE_BUDGETS) if index else None
        if match is None:
            return None
        return cls(patterns, list(index), [tuple(v) for v in pats_of], match)

    def scan(self, text: str) -> list[int]:
        low = text.lower()
        ascii_text = text.isascii()
        if not ascii_text:
            low = low.translate(FOLDS_ONTO_ASCII)
        hits = self._lits(low.encode("utf-8", "replace"))  # (a lone surrogate: "?", one more hit at most)
        if not hits:
            return []
        pats_of = self._pats_of
        cands = {i for h in hits for i in pats_of[h]}
        data = text.encode("ascii") if ascii_text else encodable(text).encode("utf-8")
        return [i for i in sorted(cands) if self._one_match(i)(data)]

    def _one_match(self, i: int) -> Any:
        one = self._one
        got = one.get(i)
        if got is not None:
            one.move_to_end(i)
            return got
        if len(one) >= ONE_KEPT:  # bounded memory: the least recently used, compiled again when asked
            one.popitem(last=False)
        got = _set_match([self.patterns[i]], ONE_BUDGETS)
        if got is None:  # pragma: no cover - it compiled in the field's set, so alone it fits
            raise RuntimeError(f"RE2 cannot compile {self.patterns[i]!r} alone")
        one[i] = got
        return got
