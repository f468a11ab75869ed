"""Values taken from a log, bounded and checked at the edge.

A log is input from outside: one odd value must never abort the run. Numbers
are read only from ASCII digits and within limits (``str.isdigit`` accepts
``'²'``, which ``int`` rejects; ``int`` refuses more than 4,300 digits; a
table column holds at most 2**63 - 1), and strings decoded from JSON escapes
lose their lone surrogates, which no encoder can write.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone

INT64_MAX = 2 ** 63 - 1
PID_MAX = 2 ** 31 - 1  # larger than any kernel's pid_max
MAX_DIGITS = 19

# Datetimes a table (pandas nanoseconds, parquet timestamp[ns]) can hold.
TABLE_TS_MIN = datetime(1677, 9, 22, tzinfo=timezone.utc)
TABLE_TS_MAX = datetime(2262, 4, 11, tzinfo=timezone.utc)

_SURROGATE = re.compile("[\ud800-\udfff]")


def bounded_int(text: str | None, hi: int = INT64_MAX, max_digits: int = MAX_DIGITS) -> int | None:
    """``int(text)`` for 1..max_digits ASCII digits with a value <= ``hi``; else None."""
    if not text or len(text) > max_digits or not text.isascii() or not text.isdigit():
        return None
    v = int(text)
    return v if v <= hi else None


def pid_value(text: str | None) -> int | None:
    return bounded_int(text, PID_MAX, 10)


def no_surrogates(text: str) -> str:
    """``text`` with lone surrogates (from a JSON ``\\ud800`` escape) replaced by U+FFFD."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def json_nesting_exceeds(text: str, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` brackets at once
    (strings skipped). Cheap for ordinary lines: only a line with more than
    ``limit`` brackets in all is scanned."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_str = False
    esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "[" or ch == "{":
            depth += 1
            if depth > limit:
                return True
        elif ch == "]" or ch == "}":
            depth -= 1
    return False


def table_datetime(ts: datetime | None) -> datetime | None:
    """``ts`` when a table can hold it, else None (the caller keeps the text)."""
    if ts is None:
        return None
    aware = ts if ts.tzinfo is not None else ts.replace(tzinfo=timezone.utc)
    return ts if TABLE_TS_MIN <= aware <= TABLE_TS_MAX else None
