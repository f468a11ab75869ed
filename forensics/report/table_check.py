"""Is this one of our tables? Reading an incidents table back strictly, and
its schema check (``forensics report``, ``frames.read_table``): the one place
that decides.

A table ``forensics batch`` wrote always passes; one it could not have
written (a foreign table, a hand edit gone wrong, a CSV with ragged rows)
is refused with one line naming the column, the row and the value, rather
than summarised from values silently turned into NA. What a table of ours
may hold, column by column (``frames.INCIDENT_COLUMNS``):

* numbers (``Int64``, ``float64``): finite, integers where the column holds
  integers, or empty (NA);
* booleans: ``True`` / ``False`` (any case), or empty;
* times: ISO 8601 text (a time past what pandas holds is kept in
  ``*_ts_text``), or empty;
* ``verdict`` and ``decided_by``: their fixed values (a ``root_cause`` or
  ``phase`` outside today's lists is a newer label, kept);
* ``early_warnings``: a JSON list of objects, each ``lead_seconds`` a finite
  number or null;
* ``source_bytes``: hex.

Columns of an older version of the table may be missing (they read back as
NA), but never ``REQUIRED``; columns we do not know are ignored.
"""
from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

from forensics.errors import InputError
from forensics.ingest.values import no_surrogates

REQUIRED = ("source", "verdict", "root_cause", "error")
# The fixed values of the closed categories (frames.VERDICTS, frames.DECIDERS).
CLOSED: dict[str, tuple[str, ...]] = {
    "verdict": ("failed", "ready", "starting", "stalled", "no-failure"),
    "decided_by": ("signature", "classifier", "both"),
}
INT64_MAX = 2 ** 63 - 1


class TableError(InputError):
    """A table that is not one forensics wrote: what, where."""


def _is_na(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and v == "") \
        or type(v).__name__ in ("NAType", "NaTType")


def _number(v: Any, integer: bool, text_na: bool) -> str | None:
    if isinstance(v, bool):
        return "is a boolean, not a number"
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return "is not a number"
        if math.isnan(f) and not text_na:
            return "is not a number"
    elif isinstance(v, (int, float)) or hasattr(v, "dtype"):
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            return "is not a number"
    else:
        return "is not a number"
    if math.isinf(f):
        return "is not a finite number"
    if math.isnan(f):
        return None  # NaN in a binary float column: pandas' NA
    if integer and (f != int(f) or abs(f) > INT64_MAX):
        return "is not an integer" if f == f and f != int(f) else "is out of range"
    return None


def _boolean(v: Any) -> str | None:
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return None
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return None
    return "is not True or False"


def _time(v: Any) -> str | None:
    if isinstance(v, datetime):  # pandas Timestamps too
        return None
    if isinstance(v, str):
        try:
            datetime.fromisoformat(v.strip())
            return None
        except ValueError:
            pass
    return "is not an ISO 8601 time"


def _string(v: Any) -> str | None:
    return None if isinstance(v, str) else f"is a {type(v).__name__}, not text"


def _hex(v: Any) -> str | None:
    if isinstance(v, bytes):
        return None
    if isinstance(v, str):
        try:
            bytes.fromhex(v)
            return None
        except ValueError:
            pass
    return "is not hex bytes"


def early_warnings_problem(v: Any) -> str | None:
    """Why an ``early_warnings`` cell is not what ``batch`` writes (None: it is)."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except (ValueError, RecursionError):
            return "is not JSON"
    if not isinstance(v, list):
        return "is not a JSON list"
    for w in v:
        if not isinstance(w, dict):
            return "holds an entry that is not an object"
        lead = w.get("lead_seconds")
        if lead is not None and (isinstance(lead, bool) or not isinstance(lead, (int, float))
                                 or not math.isfinite(lead)):
            return f"holds a lead_seconds ({lead!r}) that is not a finite number"
    return None


def _checker(column: str, dtype: str, text_cells: bool) -> Callable[[Any], str | None]:
    if column == "early_warnings":
        return early_warnings_problem
    if column in CLOSED:
        allowed = CLOSED[column]
        return lambda v: None if isinstance(v, str) and v in allowed else f"is not one of {', '.join(allowed)}"
    if dtype == "Int64":
        return lambda v: _number(v, True, False)
    if dtype == "float64":
        return lambda v: _number(v, False, not text_cells)
    if dtype == "boolean":
        return _boolean
    if dtype.startswith("datetime64"):
        return _time
    if dtype == "object":
        return _hex
    return _string


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def check_columns(name: str, columns: Iterable[str]) -> None:
    missing = [c for c in REQUIRED if c not in set(columns)]
    if missing:
        raise TableError(f"{name}: not an incidents table written by forensics batch: no "
                         f"{', '.join(repr(c) for c in missing)} column{'s' if len(missing) > 1 else ''}")


def check_table(name: str, columns: Mapping[str, list[Any]], schema: Mapping[str, str],
                text_cells: bool) -> None:
    """Raise ``TableError`` at the first cell a table of ours could not hold.
    ``columns``: column name -> its values (plain Python objects, NA as None
    or NaN); ``text_cells``: the values were read as text (csv, jsonl)."""
    check_columns(name, columns)
    for column, dtype in schema.items():
        values = columns.get(column)
        if values is None:
            continue
        check = _checker(column, dtype, text_cells)
        for row, v in enumerate(values, 1):
            if _is_na(v):
                continue
            why = check(v)
            if why is not None:
                raise TableError(f"{name}: column {column!r}, row {row}: {_show(v)} {why} "
                                 "(not a table forensics batch wrote)")


# --------------------------------------------------------------------------- reading, strictly


def read_csv(path: Path) -> pd.DataFrame:
    """Every cell as text (empty: NA); a row whose field count differs from the header's is refused."""
    import csv

    old = csv.field_size_limit()
    csv.field_size_limit(1 << 30)  # a long evidence line is a cell, not an error
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:  # (a spreadsheet saves CSV with a mark)
            rows = csv.reader(f, strict=True)
            header = next(rows, None)
            if header is None:
                raise InputError(f"cannot read {path}: an empty file, not a csv table")
            body = []
            for n, row in enumerate(rows, 1):
                if len(row) != len(header):
                    if not row:
                        continue  # a blank line
                    raise InputError(f"{path}: row {n} has {len(row)} fields, the header {len(header)} "
                                     "(not a table forensics batch wrote)")
                body.append([v if v != "" else None for v in row])
    except csv.Error as e:
        raise InputError(f"cannot read {path}: not a csv table ({e})") from None
    finally:
        csv.field_size_limit(old)
    if len(set(header)) != len(header):
        raise InputError(f"{path}: a column is named twice in the header (not a table forensics batch wrote)")
    return pd.DataFrame(body, columns=header, dtype=object)


def read_jsonl(path: Path, schema: Mapping[str, str]) -> pd.DataFrame:
    records = []
    with open(path, encoding="utf-8-sig") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except (ValueError, RecursionError):
                raise InputError(f"{path}: line {n} is not JSON (not a table forensics batch wrote)") from None
            if not isinstance(r, dict):
                raise InputError(f"{path}: line {n} is not a JSON object (not a table forensics batch wrote)")
            records.append({k: no_surrogates(v) if isinstance(v, str) else v for k, v in r.items()})
    if not records:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in schema})
    return pd.DataFrame.from_records(records)


def cells_of(df: pd.DataFrame, fmt: str, schema: Mapping[str, str]) -> dict[str, list[Any]]:
    """The values ``check_table`` looks at; a parquet column that already has
    its schema's dtype is trusted (only its floats are looked at for Infinity)."""
    import numpy as np

    out: dict[str, list[Any]] = {}
    for name in df.columns:
        s = df[name]
        want = schema.get(str(name))
        if fmt == "parquet" and want is not None and str(s.dtype) == want and want not in ("object", "category"):
            out[str(name)] = [float(x) for x in s[np.isinf(s)]] if want == "float64" else []
            continue
        out[str(name)] = s.astype(object).tolist()
    return out
