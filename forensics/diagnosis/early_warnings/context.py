"""The context a warning is printed in, read from the start-up lines: the GPU's
architecture, the backends the configuration selects, the kind of model.

A warning is a prediction in a context (taxonomy.md's early warnings; issue 28):
the CuTe DSL package-walk warning matters where the server takes the CuTe DSL
FlashAttention path (Blackwell, FA4 or TRT-LLM backends, vision towers) and is
noise on an RTX 4090 that never does. Tokens such as ``arch:blackwell`` or
``backend:trtllm_mla`` are what precursor signatures name in ``live_when`` and what
the learned live-warning gate reads. The rules are data (``context.yaml``); a rule with
``exceeds`` states a token only where its first figure is over its second (what a start-up
projects to need against what it found free)."""
from __future__ import annotations

import fnmatch
import re
from functools import lru_cache
from typing import Any

from forensics.diagnosis.guarded import AsciiSet
from forensics.events.tables import load_table

MEMO = 4096
_MEMO: dict[str, frozenset[str]] = {}


@lru_cache(maxsize=1)
def _rules() -> tuple[tuple[str, tuple[str, ...], re.Pattern[str], bool], ...]:
    raw = load_table(__file__, "context.yaml")
    return tuple((r["token"], tuple(r.get("hint") or ()), re.compile(r["regex"]), bool(r.get("exceeds")))
                 for r in raw["rules"])


@lru_cache(maxsize=1)
def _hints() -> tuple[str, ...]:
    return tuple(sorted({h for _, hints, _, _ in _rules() for h in hints}))


@lru_cache(maxsize=1)
def _any_hint() -> Any:
    """One search for "holds any hint" (an alternation of the escaped hints:
    the same answer as testing each, in about half the time on most lines)."""
    return re.compile("|".join(map(re.escape, _hints()))).search


@lru_cache(maxsize=1)
def _which() -> AsciiSet | None:
    """Which rules' regexes find a match, in one pass (RE2 on ASCII text):
    ``re`` backtracks on ``\\w+(?:ForConditionalGeneration|...)`` at every
    position of a long word run, and most lines that hold a hint match no rule.
    None when a rule is not RE2 syntax: then each rule runs as it is."""
    rules = AsciiSet([(rx.pattern, rx.flags & ~re.U) for _t, _h, rx, _x in _rules()])
    try:
        rules.which("")
    except ValueError:
        return None
    return rules


def context_tokens(text: str) -> frozenset[str]:
    """The context tokens one line states (most lines: none, after one substring scan)."""
    head = text[:20000]  # server_args lines run to kilobytes; nothing we read sits further out
    if _any_hint()(head) is None:
        return frozenset()
    got = _MEMO.get(head)
    if got is not None:
        return got
    out: set[str] = set()
    which = _which()
    live = which.which(head) if which is not None else range(len(_rules()))  # a rule that finds nothing adds nothing
    for i, (token, hints, rx, exceeds) in enumerate(_rules()):
        if i not in live or hints and not any(map(head.__contains__, hints)):
            continue
        if exceeds:
            if any(_over(m) for m in rx.finditer(head)):
                out.add(token)
            continue
        for m in rx.finditer(head):
            value = m.group(1) if rx.groups else None
            if value is not None and value.lower() in ("none", "null", "auto"):
                continue  # an argument left at its default selects nothing
            out.add(token.format(value.lower()) if value is not None else token)
    got = frozenset(out)
    if len(_MEMO) >= MEMO:
        _MEMO.clear()
    _MEMO[head] = got
    return got


def _over(m: re.Match[str]) -> bool:
    """An ``exceeds`` rule's match: its first figure over its second."""
    try:
        return float(m.group(1)) > float(m.group(2))
    except (IndexError, TypeError, ValueError):
        return False


def add_context(facts: dict[str, Any], text: str) -> None:
    """Fold one line's context tokens into an incident's facts (``facts['context']``)."""
    toks = context_tokens(text)
    if toks:
        facts["context"] = facts.get("context", frozenset()) | toks


def matching(wanted: tuple[str, ...], have: frozenset[str]) -> list[str]:
    """The tokens of ``have`` that ``wanted`` names (``backend:fa4`` exactly, ``backend:*trtllm*`` as a
    shell pattern)."""
    out = []
    for w in wanted:
        if "*" in w:
            out.extend(t for t in sorted(have) if fnmatch.fnmatchcase(t, w))
        elif w in have:
            out.append(w)
    return out
