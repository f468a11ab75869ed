"""Answers remembered by text, for pure functions of one line.

A crash loop prints the same start-up and failure lines in every lifetime,
and the diagnosis asks the same questions of them each time (is this line a
consequence of another failure? which phase do these frames name?). These
memos keep a bounded number of answers (cleared when full: no growth with
the number of lifetimes) and never keep very long texts.
"""
from __future__ import annotations

import re
from functools import wraps
from typing import Any, Callable, TypeVar

T = TypeVar("T")
_MISS = object()
LIMIT = 1024  # answers kept per memo
MAX_LEN = 2000  # longer texts are answered every time, not kept


def remember(memo: dict, key: Any, value: T, limit: int) -> T:
    """Keep ``value`` under ``key``, clearing ``memo`` first when it holds
    ``limit`` answers (bounded: no growth with the number of lifetimes)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def memo_by_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn(text)`` remembered by ``text`` (``fn`` must depend on nothing else)."""
    memo: dict[str, Any] = {}

    @wraps(fn)
    def cached(text: str) -> T:
        got = memo.get(text, _MISS)
        if got is _MISS:
            got = fn(text)
            if len(text) <= MAX_LEN:
                remember(memo, text, got, LIMIT)
        return got  # type: ignore[no-any-return]

    cached.cache_clear = memo.clear  # type: ignore[attr-defined]
    return cached


class MemoSearch:
    """A compiled regex whose ``search`` is remembered by text; every other
    attribute is the regex's own."""

    __slots__ = ("rx", "search")

    def __init__(self, rx: re.Pattern[str]) -> None:
        self.rx = rx
        self.search = memo_by_text(rx.search)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rx, name)
