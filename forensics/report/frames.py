"""pandas DataFrames of events and incidents (Python API, ``forensics batch``, notebooks).

Two tables, each with a fixed schema so that scripts and notebooks can rely on
column names and dtypes whatever the input (an empty log still gives every
column):

``events_frame(events)`` -- one row per event (``forensics.read_events``):

=============  =====================  ==========================================
column         dtype                  meaning
=============  =====================  ==========================================
source         string                 input name (path, ``-`` for stdin)
line           Int64                  first input line of the event
end_line       Int64                  last input line (tracebacks span several)
kind           category               event kind (see ``forensics parse``)
ts             datetime64[ns, UTC]    timestamp (naive times are taken as UTC)
host           string                 journald host
ident          string                 syslog identifier (``python3``, ``systemd``)
pid            Int64                  process id
rank           string                 SGLang/vLLM rank prefix (``TP0``, ``DP1 TP3``)
level          category               log level (``INFO``, ``WARNING``, ...)
logger         string                 logger / source file of the line
text           string                 the message (first line of a traceback)
exc_type       string                 traceback: type of the last exception
exc_message    string                 traceback: its message
truncated      boolean                traceback: cut short
count          Int64                  cuda_graph_registration: graph address count
package        string                 package_walk_warning: the package
phase          category               phase_marker: the phase it starts
marker         string                 phase_marker / journal_marker: which marker
unit           string                 unit_lifecycle: the systemd unit
unit_event     string                 unit_lifecycle: started, stopped, failed ...
=============  =====================  ==========================================

``incidents_frame(results)`` -- one row per incident (process lifetime) of the
diagnosis results of many sources (``forensics.batch``, ``forensics batch``):

===================  ===================  ====================================
column               dtype                meaning
===================  ===================  ====================================
source               string               input file
incident             Int64                index of the incident in its source
start_ts             datetime64[ns, UTC]  first timestamp of the incident
end_ts               datetime64[ns, UTC]  last timestamp of the incident
duration_s           float64              end_ts - start_ts in seconds
time_to_failure_s    float64              start to the failure line, seconds
verdict              category             failed, ready, starting, stalled, no-failure
root_cause           category             taxonomy label (NA when no failure)
confidence           float64              calibrated confidence of root_cause
decided_by           category             signature, classifier or both
signature            string               id of the deciding signature
phase                category             phase in which it failed / ended
main                 boolean              the incident ``classify`` reports on top
truncated            boolean              the deciding traceback was cut short
early_warning_count  Int64                distinct early warnings before the failure
first_lead_s         float64              lead time of the earliest early warning
early_warnings       string               the early warnings as a JSON list
evidence_line        Int64                line of the first evidence entry
evidence_text        string               its text
evidence             string               every evidence entry (line, text, role) as a JSON list
host                 string               the host the lifetime's lines name (journald, syslog)
unit                 string               the systemd unit
server               string               the server (sglang, vllm, ...) when the log says
lines                Int64                lines read from the source
error                string               why the source could not be read (else NA)
start_ts_text        string               start_ts as logged, when a table cannot hold it
end_ts_text          string               end_ts as logged, when a table cannot hold it
source_bytes         object (bytes)       the file name's bytes, when it is not UTF-8
===================  ===================  ====================================

Timestamps a table cannot hold (pandas and parquet count nanoseconds: years
1677 to 2262) are NA in ``start_ts``/``end_ts``, their text kept in the
``*_text`` column. A file name that is not UTF-8 shows its odd bytes as
``\\xNN`` in ``source`` and keeps them exactly in ``source_bytes`` (hex in csv
and jsonl). Every string is made encodable before it is written.

A source that could not be read gives exactly one row, with ``error`` set and
the diagnosis columns empty; a source with no lifetime (an empty log) gives
one row with ``incident`` and the diagnosis columns empty. Tables written by ``forensics batch`` come back
with the same dtypes through ``read_table`` (parquet keeps them; csv and jsonl
are coerced). Cell values: ``report.cells``; the summary of a table:
``report.summary``.
"""
from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from forensics.errors import InputError
from forensics.ingest.values import no_surrogates
from forensics.report.cells import (UTC_NS, from_hex, source_names, to_float, to_int, truthy, unheld_ts_text,
                                    utc_series)


EVENT_COLUMNS: dict[str, str] = {
    "source": "string",
    "line": "Int64",
    "end_line": "Int64",
    "kind": "category",
    "ts": UTC_NS,
    "host": "string",
    "ident": "string",
    "pid": "Int64",
    "rank": "string",
    "level": "category",
    "logger": "string",
    "text": "string",
    "exc_type": "string",
    "exc_message": "string",
    "truncated": "boolean",
    "count": "Int64",
    "package": "string",
    "phase": "category",
    "marker": "string",
    "unit": "string",
    "unit_event": "string",
}

INCIDENT_COLUMNS: dict[str, str] = {
    "source": "string",
    "incident": "Int64",
    "start_ts": UTC_NS,
    "end_ts": UTC_NS,
    "duration_s": "float64",
    "time_to_failure_s": "float64",
    "verdict": "category",
    "root_cause": "category",
    "confidence": "float64",
    "decided_by": "category",
    "signature": "string",
    "phase": "category",
    "main": "boolean",
    "truncated": "boolean",
    "early_warning_count": "Int64",
    "first_lead_s": "float64",
    "early_warnings": "string",
    "evidence_line": "Int64",
    "evidence_text": "string",
    "evidence": "string",
    "host": "string",
    "unit": "string",
    "server": "string",
    "lines": "Int64",
    "error": "string",
    "start_ts_text": "string",
    "end_ts_text": "string",
    "source_bytes": "object",
}

# Category columns list their known values first (in a meaningful order: phases
# in startup order), so tables from different runs share categories; a value
# outside the list (a newer label) is appended, never lost.
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
VERDICTS = ("failed", "ready", "starting", "stalled", "no-failure")
DECIDERS = ("signature", "classifier", "both")


def _known_categories() -> dict[tuple[str, str], tuple[str, ...]]:
    from forensics.diagnosis.taxonomy import LABELS, PHASES
    from forensics.events.types import KINDS

    return {
        ("event", "kind"): tuple(KINDS), ("event", "level"): _LEVELS, ("event", "phase"): tuple(PHASES),
        ("incident", "verdict"): VERDICTS, ("incident", "root_cause"): tuple(LABELS),
        ("incident", "decided_by"): DECIDERS, ("incident", "phase"): tuple(PHASES),
    }


def _categorical(values: list[Any], known: tuple[str, ...]) -> pd.Series:
    strings = pd.array([None if v is None else str(v) for v in values], dtype="string")
    extra = sorted({v for v in strings.dropna() if v not in known}) if len(strings) else []
    cats = pd.Index(list(known) + extra, dtype="string")
    return pd.Series(pd.Categorical(strings, categories=cats))


# Event.data keys that become columns (column name -> data key).
_EVENT_DATA_COLUMNS = {
    "exc_type": "exc_type",
    "exc_message": "exc_message",
    "truncated": "truncated",
    "count": "count",
    "package": "package",
    "phase": "phase",
    "marker": "marker",
    "unit": "unit",
    "unit_event": "event",
}


# --------------------------------------------------------------------------
# building frames
# --------------------------------------------------------------------------


def _frame(columns: dict[str, list[Any]], schema: Mapping[str, str], table: str) -> pd.DataFrame:
    known = _known_categories()
    data: dict[str, pd.Series] = {}
    for name, dtype in schema.items():
        values = columns.get(name, [])
        if dtype == UTC_NS:
            data[name] = utc_series(values)
        elif dtype == "category":
            data[name] = _categorical(values, known.get((table, name), ()))
        elif dtype == "float64":
            data[name] = pd.Series([math.nan if v is None else float(v) for v in values], dtype="float64")
        elif dtype == "object":
            data[name] = pd.Series(list(values), dtype=object)
        elif dtype == "string":
            data[name] = pd.Series(pd.array([v if v is None else no_surrogates(v) for v in values], dtype=dtype))
        else:
            data[name] = pd.Series(pd.array(values, dtype=dtype))
    return pd.DataFrame(data)


def events_frame(events: Iterable[Any]) -> pd.DataFrame:
    """One row per event; columns and dtypes are ``EVENT_COLUMNS``.

    Accepts ``Event`` objects (``forensics.parse``) or their ``to_dict()`` form
    (``forensics parse`` output read back)."""
    cols: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for ev in events:
        d = ev if isinstance(ev, Mapping) else None
        if d is None:
            get_data = ev.data.get
            cols["source"].append(ev.source)
            cols["line"].append(ev.line)
            cols["end_line"].append(ev.end_line if ev.end_line is not None else ev.line)
            cols["kind"].append(ev.kind)
            cols["ts"].append(ev.ts)
            cols["host"].append(ev.host)
            cols["ident"].append(ev.ident)
            cols["pid"].append(ev.pid)
            cols["rank"].append(ev.rank)
            cols["level"].append(ev.level)
            cols["logger"].append(ev.logger)
            cols["text"].append(ev.text)
        else:
            get_data = d.get
            for name in ("source", "line", "kind", "ts", "host", "ident", "pid", "rank", "level", "logger",
                         "text"):
                cols[name].append(d.get(name))
            cols["end_line"].append(d.get("end_line", d.get("line")))
        for col, key in _EVENT_DATA_COLUMNS.items():
            v = get_data(key)
            if col == "count" and not isinstance(v, int):
                v = None
            elif col == "truncated" and v is not None:
                v = bool(v)
            elif v is not None and not isinstance(v, (str, int, bool)):
                v = str(v)
            cols[col].append(v)
    for col in ("rank", "host", "ident", "logger", "package", "marker", "unit", "unit_event",
                "exc_type", "exc_message", "level", "kind", "phase", "text", "source"):
        cols[col] = [None if v is None else str(v) for v in cols[col]]
    return _frame(cols, EVENT_COLUMNS, "event")


def _first_lead(warnings: list[Mapping[str, Any]]) -> float | None:
    leads = [w.get("lead_seconds") for w in warnings if w.get("lead_seconds") is not None]
    return max(float(x) for x in leads) if leads else None


def incident_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Plain-dict rows (one per incident) for one ``diagnose_source`` result.

    A result with an ``error`` (the source could not be read) gives one row
    carrying the error."""
    source = result.get("source")
    lines = (result.get("stats") or {}).get("lines")
    if result.get("error"):
        return [{"source": source, "lines": lines, "error": str(result["error"])}]
    main = result.get("incident")
    rows = []
    for inc in result.get("incidents") or []:
        warnings = list(inc.get("early_warnings") or [])
        evidence = list(inc.get("evidence") or [])
        ev0 = evidence[0] if evidence else {}
        rows.append({
            "source": source,
            "incident": inc.get("index"),
            "start_ts": inc.get("start_ts"),
            "end_ts": inc.get("end_ts"),
            "duration_s": inc.get("duration_s"),
            "time_to_failure_s": inc.get("time_to_failure_s"),
            "verdict": inc.get("verdict"),
            "root_cause": inc.get("root_cause"),
            "confidence": inc.get("confidence"),
            "decided_by": inc.get("decided_by"),
            "signature": inc.get("signature"),
            "phase": inc.get("phase"),
            "main": inc.get("index") == main if main is not None else None,
            "truncated": bool(inc.get("truncated")) if inc.get("truncated") is not None else None,
            "early_warning_count": len(warnings),
            "first_lead_s": _first_lead(warnings),
            "early_warnings": json.dumps([{k: w.get(k) for k in ("signature", "template", "line", "lead_seconds",
                                                                  "count", "text") if k in w}
                                          for w in warnings], ensure_ascii=False, default=str),
            "evidence_line": ev0.get("line"),
            "evidence_text": ev0.get("text"),
            "evidence": json.dumps([{k: e.get(k) for k in ("line", "text", "role")} for e in evidence],
                                   ensure_ascii=False, default=str),
            "host": inc.get("host"),
            "unit": inc.get("unit"),
            "server": inc.get("server"),
            "lines": lines,
            "error": None,
        })
    if not rows:  # an empty log has no lifetime; its row keeps the file in the table (report's file count)
        rows.append({"source": source, "lines": lines, "error": None})
    return rows


def rows_frame(rows: Iterable[Mapping[str, Any]], sort: bool = True) -> pd.DataFrame:
    """Incident rows (``incident_rows``) -> DataFrame with ``INCIDENT_COLUMNS``,
    sorted by source then incident (a stable order whatever finished first)."""
    rows = list(rows)
    if sort:
        rows.sort(key=lambda r: (str(r.get("source")), r.get("incident") is None, r.get("incident") or 0))
    cols = {name: [r.get(name) for r in rows] for name in INCIDENT_COLUMNS}
    for name in ("start_ts", "end_ts"):
        cols[f"{name}_text"] = [unheld_ts_text(v) for v in cols[name]]
    names = [source_names(v) for v in cols["source"]]
    cols["source"] = [n for n, _ in names]
    cols["source_bytes"] = [b for _, b in names]
    for name, dtype in INCIDENT_COLUMNS.items():
        if dtype in ("string", "category"):
            cols[name] = [None if v is None else str(v) for v in cols[name]]
    return _frame(cols, INCIDENT_COLUMNS, "incident")


def incidents_frame(results: Any) -> pd.DataFrame:
    """One row per incident; columns and dtypes are ``INCIDENT_COLUMNS``.

    ``results``: one ``forensics.classify`` result, a list of them, or the
    ``{"results": [...]}`` form ``classify`` returns for several sources."""
    if isinstance(results, Mapping):
        results = results["results"] if "results" in results and "incidents" not in results else [results]
    rows: list[dict[str, Any]] = []
    for res in results:
        rows.extend(incident_rows(res))
    return rows_frame(rows)


def coerce_incidents(df: pd.DataFrame) -> pd.DataFrame:
    """Bring a table read back from csv / jsonl (or an older parquet) to ``INCIDENT_COLUMNS``."""
    out: dict[str, pd.Series] = {}
    known = _known_categories()
    n = len(df)
    for name, dtype in INCIDENT_COLUMNS.items():
        s = df[name] if name in df.columns else pd.Series([None] * n, dtype=object)
        if str(s.dtype) == dtype and dtype not in ("category", "object"):
            out[name] = s.reset_index(drop=True)
            continue
        vals = [None if (v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))) else v
                for v in s.astype(object).tolist()]
        if dtype == UTC_NS:
            out[name] = utc_series([None if v is None else (v if isinstance(v, datetime) else str(v)) for v in vals])
        elif dtype == "float64":
            out[name] = pd.Series([to_float(v) for v in vals], dtype="float64")
        elif dtype == "Int64":
            out[name] = pd.Series(pd.array([to_int(v) for v in vals], dtype="Int64"))
        elif dtype == "boolean":
            out[name] = pd.Series(pd.array([None if v is None else truthy(v) for v in vals], dtype="boolean"))
        elif dtype == "category":
            out[name] = _categorical(vals, known.get(("incident", name), ()))
        elif dtype == "object":
            out[name] = pd.Series([from_hex(v) for v in vals], dtype=object)
        else:
            out[name] = pd.Series(pd.array([None if v is None else str(v) for v in vals], dtype="string"))
    return pd.DataFrame(out)


# --------------------------------------------------------------------------
# writing and reading tables
# --------------------------------------------------------------------------

TABLE_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def table_format(path: str | Path) -> str:
    """``parquet`` / ``csv`` / ``jsonl`` from a file name; ``InputError`` otherwise."""
    suffix = Path(path).suffix.lower()
    fmt = TABLE_SUFFIXES.get(suffix)
    if fmt is None:
        raise InputError(f"{path}: unknown table format {suffix or '(no suffix)'!r}; "
                         "use .parquet, .csv or .jsonl")
    return fmt


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write an incidents table; the format follows the suffix. Written to a
    private temporary file, fsynced and renamed (``report.atomic``), so a
    crash, a signal or a concurrent run never leaves half a table behind."""
    from forensics.atomic import atomic_path

    path = Path(path)
    fmt = table_format(path)
    try:
        with atomic_path(path) as tmp:
            if fmt == "parquet":
                df.to_parquet(tmp, engine="pyarrow", index=False)
            elif fmt == "csv":
                hexed = {c: df[c].map(lambda b: b.hex() if isinstance(b, bytes) else b)
                         for c in df.columns if df[c].dtype == object}
                # "\r\n": the csv writer then quotes a field holding a lone \r too (a file name)
                df.assign(**hexed).to_csv(tmp, index=False, lineterminator="\r\n",
                                          date_format="%Y-%m-%dT%H:%M:%S.%f%z", encoding="utf-8")
            else:
                _write_jsonl(df, tmp)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None


def _json_value(v: Any) -> Any:
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    if isinstance(v, bytes):
        return v.hex()
    return v


def _write_jsonl(df: pd.DataFrame, path: Path) -> None:
    names = list(df.columns)
    columns = [df[c].astype(object).tolist() for c in names]
    with open(path, "w", encoding="utf-8") as f:  # path: the temp file of write_table (atomic)
        for values in zip(*columns):
            f.write(json.dumps({k: _json_value(v) for k, v in zip(names, values)}, ensure_ascii=False))
            f.write("\n")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a table written by ``forensics batch`` back with ``INCIDENT_COLUMNS``
    dtypes. A table it could not have written (a foreign one, a ragged CSV,
    Infinity or text in a number column) is an ``InputError`` naming the
    column and row (``report.table_check``), never summarised from NAs."""
    from forensics.report.table_check import cells_of, check_table, read_csv, read_jsonl

    path = Path(path)
    fmt = table_format(path)
    try:
        if fmt == "parquet":
            df = pd.read_parquet(path)
        elif fmt == "csv":
            df = read_csv(path)
        else:
            df = read_jsonl(path, INCIDENT_COLUMNS)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise InputError(f"cannot read {path}: not a {fmt} table (not UTF-8 text)") from None
    except Exception as e:  # pyarrow / parser errors: the file is not a table
        raise InputError(f"cannot read {path}: not a {fmt} table ({type(e).__name__})") from None
    check_table(str(path), cells_of(df, fmt, INCIDENT_COLUMNS), INCIDENT_COLUMNS, text_cells=fmt != "parquet")
    out = coerce_incidents(df)
    out.attrs.update({k: v for k, v in df.attrs.items() if isinstance(v, (int, float, str))})
    return out
