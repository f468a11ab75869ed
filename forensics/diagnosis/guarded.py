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

_LOWER: list[Any] = [None, ""]  # the last text lower-cased (the patterns of one text share it)


def _lower(text: str) -> str:
    if _LOWER[0] is not text:
        _LOWER[1] = text.lower()
        _LOWER[0] = text
    return _LOWER[1]  # type: ignore[no-any-return]


class Guarded:
    """A regex compiled on first use whose ``finditer``/``search``/``findall``
    return nothing at once when no needle is in the text."""

    __slots__ = ("_args", "_rx", "needles", "fold")

    def __init__(self, pattern: str, needles: tuple[str, ...], flags: int = 0, fold: bool = False) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None
        self.needles = tuple(n.lower() for n in needles) if fold else tuple(needles)
        self.fold = fold

    @property
    def rx(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(*self._args)
        return rx

    def cannot_match(self, text: str) -> bool:
        if not text.isascii():
            return False
        hay = _lower(text) if self.fold else text
        for n in self.needles:
            if n in hay:
                return False
        return True

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return iter(()) if self.cannot_match(text) else self.rx.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return None if self.cannot_match(text) else self.rx.search(text)

    def findall(self, text: str) -> list[Any]:
        return [] if self.cannot_match(text) else self.rx.findall(text)

    def __getattr__(self, name: str) -> Any:  # sub, match, pattern ...: unguarded
        return getattr(self.rx, name)
