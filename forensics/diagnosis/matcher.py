"""The engines that search signature patterns: every pattern of a field in
one pass over a value, in time linear in its length whatever the pattern.

* ``re2`` (default): RE2's set matcher (``google-re2``, ``re2.Set``). One
  automaton per field holds every pattern; one ``Match`` call per value says
  which patterns occur. Linear time, no backtracking: no pattern can make a
  line slow (ReDoS cannot happen), so no timer is needed and no answer
  depends on how loaded the machine is.
* ``regex``: the fallback for platforms without an RE2 wheel (or
  ``FORENSICS_MATCHER=regex``): each pattern is searched on its own with the
  ``regex`` module, after a literal prefilter. It gives the same answers
  (the tests compare both on every corpus) but is a backtracking engine: a
  catastrophic custom pattern can be slow with it.

Both engines see exactly the same text: every value is cut to its first
``MATCH_CHARS`` characters, trailing newlines are dropped (so ``$`` means
the same in both), and lone surrogates become U+FFFD. Both use the same
syntax: what RE2 accepts, less nothing (``\\w \\d \\s \\b`` are ASCII,
counted repeats at most 1000, no look-around, back-references, atomic
groups or possessive quantifiers); ``check_portable`` enforces it even when
RE2 is not installed, so a signature file is valid on every platform or on
none. Why RE2 and not Hyperscan: ``bench/README.md``.
"""
from __future__ import annotations

import os
import re
from typing import Any, Sequence

import regex

from forensics.diagnosis.literal_gate import LiteralGate, re2_options
from forensics.diagnosis.literal_gate import encodable as _encodable

MATCH_CHARS = 16384  # characters of each value that patterns see (the same in every engine)
ENGINES = ("re2", "regex")
_MAX_REPEAT = 1000  # RE2's limit on {n,m}


class PatternError(ValueError):
    """A pattern the matching engine cannot compile (message: why, one line)."""


def prepare(value: str) -> str:
    """The text every engine searches for one value."""
    if len(value) > MATCH_CHARS:
        value = value[:MATCH_CHARS]
    if value.endswith("\n"):
        value = value.rstrip("\n")
    return value




def engine_name() -> str:
    """``FORENSICS_MATCHER`` (``re2`` | ``regex``), else re2 when it imports."""
    want = (os.environ.get("FORENSICS_MATCHER") or "").strip().lower()
    if want == "regex":
        return "regex"
    try:
        import re2  # noqa: F401
    except ImportError:
        if want == "re2":
            from forensics.errors import SignatureError

            raise SignatureError("FORENSICS_MATCHER=re2 but google-re2 is not installed "
                                 "(pip install google-re2, or FORENSICS_MATCHER=regex)") from None
        return "regex"
    return "re2"


# ---------------------------------------------------------------- syntax
def check_portable(pattern: str) -> None:
    """Reject what RE2 would reject, without RE2: so the rules for a valid
    signature do not depend on which engine a platform has."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
        from re import _constants as C  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - older Pythons
        import sre_parse  # type: ignore[no-redef]
        import sre_constants as C  # type: ignore[no-redef]
    try:
        tree = sre_parse.parse(pattern)
    except Exception:
        return  # the regex module's own compile reports syntax errors
    banned = {C.ASSERT: "look-around", C.ASSERT_NOT: "look-around", C.GROUPREF: "back-reference",
              C.GROUPREF_EXISTS: "conditional group"}
    for name, what in (("ATOMIC_GROUP", "atomic group"), ("POSSESSIVE_REPEAT", "possessive quantifier")):
        if hasattr(C, name):
            banned[getattr(C, name)] = what

    def walk(items: Any) -> None:
        for op, av in items:
            if op in banned:
                raise PatternError(f"{banned[op]} is not supported (patterns must run in linear time; "
                                   f"use an 'unless:' condition instead of a negative look-ahead)")
            if op in (C.MAX_REPEAT, C.MIN_REPEAT) or getattr(C, "POSSESSIVE_REPEAT", None) == op:
                lo, hi, sub = av
                if lo > _MAX_REPEAT or (hi != C.MAXREPEAT and hi > _MAX_REPEAT):
                    raise PatternError(f"counted repeat over {_MAX_REPEAT} is not supported")
                walk(sub)
            elif op is C.SUBPATTERN:
                walk(av[-1])
            elif op is C.BRANCH:
                for b in av[1]:
                    walk(b)
            elif op is C.AT and av is C.AT_END_STRING:
                raise PatternError("\\Z is not supported (RE2 has no such escape): use $")

    walk(tree)


# Memory for one field's whole set and its DFA cache. A set's DFA (many-match)
# never gives up for being slow, only when one state cannot fit; the cache is
# reset when full, so this also bounds the memory matching takes. The DFA cache
# fills with the variety of the lines, so the budget is what a long log costs:
# the shipped text set needs ~2 MB compiled; in 8 MB its scan of a crash loop
# costs ~1.8x what it does in 16 MB (4 MB: ~4x) and RSS ~5 MB less. In 6 MB a
# text report of 10,000 crash-loop lifetimes peaks ~2 MB lower than in 8 MB
# (+7% over 1,000 lifetimes instead of +11%: the cache stops growing sooner),
# for the same CPU time (it matches only the lifetimes it shows); --format json,
# which matches every lifetime, costs ~2% more instructions (callgrind, 300
# lifetimes). A larger custom set gets the bigger budget.
SET_BUDGETS = (6 << 20, 16 << 20)


def _re2_options(max_mem: int = 16 << 20) -> Any:
    return re2_options(max_mem)


def compile_check(pattern: str, engine: str) -> None:
    """Raise PatternError when ``engine`` (or the portable syntax) refuses ``pattern``."""
    check_portable(pattern)
    if engine == "re2":
        import re2

        try:
            re2.compile(pattern, _re2_options())
        except re2.error as e:
            msg = e.args[0] if e.args else str(e)
            if isinstance(msg, bytes):
                msg = msg.decode("utf-8", "replace")
            raise PatternError(f"RE2 cannot compile it: {msg}") from None


def compile_regex(pattern: str) -> Any:
    """The ``regex`` object of a pattern, with the engines' shared semantics."""
    return regex.compile(pattern, regex.V0 | regex.ASCII)


# ---------------------------------------------------------------- engines
class FieldMatcher:
    """All patterns of one field. ``scan(value)`` -> ids of the patterns found
    in ``prepare(value)`` (the caller prepares)."""

    def __init__(self, patterns: Sequence[str], ids: Sequence[int]) -> None:
        self.ids = list(ids)

    def scan(self, value: str) -> Sequence[int]:  # pragma: no cover - interface
        raise NotImplementedError


class RE2Field(FieldMatcher):
    """The field's patterns behind a literal gate (``literal_gate``: a value
    that holds none of a pattern's literals is not searched for it), or, when
    a pattern requires no literal, in one RE2 set searched on every value."""

    def __init__(self, patterns: Sequence[str], ids: Sequence[int]) -> None:
        super().__init__(patterns, ids)
        self._gate = LiteralGate.of(patterns)
        # the raw binding of the whole set (bytes in, list of indexes out), only without a gate
        self._match = _compiled_set(patterns)._set.Match if self._gate is None else None

    def scan(self, value: str) -> Sequence[int]:
        gate = self._gate
        if gate is not None:
            ids = self.ids
            return [ids[i] for i in gate.scan(value)]
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            data = _encodable(value).encode("utf-8")
        found = self._match(data)
        if not found:
            return ()
        ids = self.ids
        return [ids[i] for i in found]


def required_literals(pattern: str) -> list[str] | None:
    """Lower-cased literals of which at least one must occur in any text the
    pattern matches (one per top-level alternative), or None when that can't
    be worked out. A cheap ``in`` test on them skips the regex."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
        from re._constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - older Pythons
        import sre_parse  # type: ignore[no-redef]
        from sre_constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[no-redef]
    try:
        tree = sre_parse.parse(pattern)
    except Exception:
        return None

    def lits(items: list) -> list[str] | None:
        if len(items) == 1 and items[0][0] is SUBPATTERN:
            return lits(list(items[0][1][3]))
        if len(items) == 1 and items[0][0] is BRANCH:
            out: list[str] = []
            for b in items[0][1][1]:
                sub = lits(list(b))
                if sub is None:
                    return None
                out += sub
            return out
        best = cur = ""
        for op, av in items:
            if op is LITERAL:
                cur += chr(av)
            else:
                best, cur = max(best, cur, key=len), ""
        best = max(best, cur, key=len)
        return [best.lower()] if len(best) >= 4 else None

    return lits(list(tree))


def _compiled_set(patterns: Sequence[str]) -> Any:
    """The RE2 set of ``patterns``, in the smallest of SET_BUDGETS it fits."""
    import re2

    for budget in SET_BUDGETS:
        s = re2.Set.SearchSet(_re2_options(budget))
        for p in patterns:
            if s.Add(p) < 0:  # compile_check has passed every pattern; this is a bug
                raise PatternError(f"RE2 set refused {p!r}")
        try:
            s.Compile()
            return s
        except re2.error:
            continue
    raise PatternError(f"RE2 cannot compile the set of {len(patterns)} patterns together "
                       f"(over its memory budget): split or simplify them")


class RegexField(FieldMatcher):
    """The fallback: one ``regex`` search per pattern, skipped when none of the
    literals the pattern requires occurs (lower-cased ``in`` tests)."""

    def __init__(self, patterns: Sequence[str], ids: Sequence[int]) -> None:
        super().__init__(patterns, ids)
        self._items: list[tuple[int, Any, tuple[str, ...] | None]] = []
        always, literals = [], set()
        for p, i in zip(patterns, ids):
            lits = required_literals(p)
            self._items.append((i, compile_regex(p), tuple(lits) if lits else None))
            if lits:
                literals.update(lits)
            else:
                always.append(i)
        ordered = sorted(literals, key=lambda x: (-len(x), x))
        self._any = re.compile("|".join(re.escape(x) for x in ordered)) if ordered else None
        self._only_always = [it for it in self._items if it[2] is None]

    def scan(self, value: str) -> Sequence[int]:
        value = _encodable(value)
        low = value.lower()
        items = self._items if self._any is None or self._any.search(low) else self._only_always
        out = []
        for i, rx, lits in items:
            if lits is not None and not any(lit in low for lit in lits):
                continue
            if rx.search(value) is not None:
                out.append(i)
        return out


def field_matcher(engine: str, patterns: Sequence[str], ids: Sequence[int]) -> FieldMatcher:
    return RE2Field(patterns, ids) if engine == "re2" else RegexField(patterns, ids)
