"""Table cells: values converted into what a table column can hold (aware
UTC datetimes, text without lone surrogates, a file name's raw bytes), and
read back tolerantly from a table someone may have edited."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from forensics.ingest.values import no_surrogates, table_datetime

UTC_NS = "datetime64[ns, UTC]"


def table_ts(v: Any) -> Any:
    """A datetime / ISO string -> an aware datetime a table can hold, else None."""
    if v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, str):
        try:
            v = datetime.fromisoformat(v)
        except ValueError:
            return None
    if isinstance(v, pd.Timestamp):
        return v if v is not pd.NaT else None
    if isinstance(v, datetime):
        return table_datetime(v if v.tzinfo is not None else v.replace(tzinfo=timezone.utc))
    return None


def utc_series(values: list[Any]) -> pd.Series:
    """datetimes / ISO strings / None -> datetime64[ns, UTC] (naive taken as UTC);
    a time outside what nanoseconds can hold (past 2262) becomes NaT."""
    s = pd.to_datetime(pd.Series([table_ts(v) for v in values], dtype=object), utc=True, errors="coerce")
    return s.astype(UTC_NS)


def unheld_ts_text(v: Any) -> str | None:
    """The logged text of a timestamp that a table cannot hold (else None)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or table_ts(v) is not None:
        return None
    return no_surrogates(v if isinstance(v, str) else str(v))


def source_names(name: Any) -> tuple[Any, bytes | None]:
    """(text for the ``source`` column, its bytes when the name is not UTF-8)."""
    if not isinstance(name, str):
        return name, None
    try:
        name.encode("utf-8")
        return name, None
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape") if only_escapes(name) else None
        if raw is None:
            return no_surrogates(name), None
        return raw.decode("utf-8", "backslashreplace"), raw


def only_escapes(s: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in s)


# A table read back may have been edited, or be someone else's: one odd
# value becomes NA, it does not end the report.
def to_float(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan if v is None else float(v)
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def to_int(v: Any) -> int | None:
    f = to_float(v)
    if math.isnan(f) or math.isinf(f) or abs(f) > 2 ** 62:
        return None
    return int(f)


def from_hex(v: Any) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    try:
        return bytes.fromhex(str(v))
    except ValueError:
        return None


def truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)
