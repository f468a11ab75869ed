"""The page of a batch table (``forensics report TABLE --html OUT.html``).

The counts at the top are ``report.summary``'s, the same numbers the text
report prints. Then the charts (failures over time by root cause, the phase
they died in, the lead time of the warnings, the top signatures, by host and
unit, crash loops), and a table of every incident: sortable, filterable, a
page of rows at a time, each row linking to the incident's detail (its
evidence lines and early warnings, from the table). The table's data is
packed (columns, repeated strings stored once, gzip, base64), so 100,000
incidents make a page of a few MB that opens in well under a second.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from forensics.report.html import batch_charts as bc
from forensics.report.html.charts import chart_block, table
from forensics.report.html.page import document, esc, packed_script, static
from forensics.report.summary import summary_counts

MAX_UNREADABLE = 200  # unreadable sources listed by name (the incident table has every one)
# (key in the packed data, column of the table, kind): "s" strings stored once each, "n" numbers, "t" times.
PACKED_COLUMNS = (
    ("source", "source", "s"), ("incident", "incident", "n"), ("start", "start_ts", "t"),
    ("verdict", "verdict", "s"), ("root_cause", "root_cause", "s"), ("phase", "phase", "s"),
    ("signature", "signature", "s"), ("confidence", "confidence", "n"), ("decided_by", "decided_by", "s"),
    ("ttf", "time_to_failure_s", "n"), ("duration", "duration_s", "n"), ("warnings", "early_warning_count", "n"),
    ("first_lead", "first_lead_s", "n"), ("host", "host", "s"), ("unit", "unit", "s"), ("server", "server", "s"),
    ("evidence", "evidence", "s"), ("early_warnings", "early_warnings", "s"), ("evidence_line", "evidence_line", "n"),
    ("evidence_text", "evidence_text", "s"), ("error", "error", "s"), ("lines", "lines", "n"),
)


def render_batch_page(df: pd.DataFrame, name: str, top: int = 10, files: int | None = None) -> str:
    """The self-contained page of an incidents table (``report.frames.INCIDENT_COLUMNS``)."""
    counts = summary_counts(df, top, files)
    body = [f'<header class="verdict" id="summary"><h1>{esc(name)}</h1><p class="summary" id="headline">'
            f'{esc(counts["head"])}</p></header>',
            _counts_section(counts, top),
            '<section id="charts"><h2>Failures</h2>',
            _chart("chart-over-time", "Failures over time", bc.failures_over_time(df)),
            _chart("chart-by-phase", "Where in start-up they died", bc.failures_by_phase(df)),
            _chart("chart-leads", "Lead time of the early warnings", bc.warning_leads(df)),
            _chart("chart-signatures", f"Top {top} signatures", bc.top_signatures(counts["signatures"])),
            _chart("chart-by-host", "By host", bc.by_group(df, "host")),
            _chart("chart-by-unit", "By unit", bc.by_group(df, "unit")),
            _chart("chart-crash-loops", "Crash loops", bc.crash_loops(df)),
            "</section>",
            _incident_table(df),
            '<footer><p>Made by <code>forensics report --html</code> from the table written by '
            "<code>forensics batch</code>. Times are UTC.</p></footer>"]
    return document(f"forensics report: {name}", "".join(body), static("batch.js"), "batch")


def _chart(chart_id: str, title: str, chart: bc.Chart) -> str:
    svg, caption, headers, rows = chart
    if svg is None:
        extra = table(headers, rows) if rows else ""
        return (f'<section class="chart-block" id="{chart_id}"><h3>{esc(title)}</h3><p class="muted">{esc(caption)}'
                f"</p>{extra}</section>")
    return chart_block(chart_id, title, svg, caption, table(headers, rows))


def _counts_section(counts: dict[str, Any], top: int) -> str:
    """The text report's blocks as tables (``data-block`` names which, for scripts and tests)."""
    def block(key: str, title: str, headers: list[str], rows: list[list[Any]]) -> str:
        inner = table(headers, rows) if rows else '<p class="muted">(none)</p>'
        return f'<div data-block="{key}"><h3>{esc(title)}</h3>{inner}</div>'

    warn_rows = [[k, None if med is None else round(med, 1), n] for med, n, k in counts["warnings"]]
    parts = [block("verdicts", "Verdicts", ["verdict", "incidents"], [[k, int(v)] for k, v in counts["verdicts"]]),
             block("root_causes", "Failures by root cause", ["root cause", "failures"],
                   [[k, int(v)] for k, v in counts["root_causes"]]),
             block("phases", "Failures by phase", ["phase", "failures"], [[k, int(v)] for k, v in counts["phases"]]),
             block("signatures", f"Most frequent signatures (top {top})", ["signature", "failures"],
                   [[k, int(v)] for k, v in counts["signatures"]]),
             block("warnings", f"Early warnings by median lead time (top {top})",
                   ["warning (signature or text)", "median lead (s)", "n"], warn_rows)]
    bad = counts["unreadable"]
    if bad:
        more = f" (the first {MAX_UNREADABLE} of {len(bad):,})" if len(bad) > MAX_UNREADABLE else ""
        parts.append(block("unreadable", f"Unreadable{more}", ["source", "why"],
                           [[s, e] for s, e in bad[:MAX_UNREADABLE]]))
    return f'<section id="counts"><h2>Counts</h2><div class="grid2">{"".join(parts)}</div></section>'


def packed_incidents(df: pd.DataFrame) -> dict[str, Any]:
    """The table for the page's script: one array per column; string columns
    as ``{"v": distinct values, "c": codes}`` (-1: empty), times as epoch seconds."""
    out: dict[str, Any] = {"n": len(df)}
    for key, col, kind in PACKED_COLUMNS:
        s = df[col] if col in df.columns else pd.Series([None] * len(df), dtype=object)
        if kind == "s":
            codes, uniques = pd.factorize(s.astype("string"), use_na_sentinel=True)
            out[key] = {"v": [str(u) for u in uniques], "c": codes.tolist()}
        elif kind == "t":
            secs = (s - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
            out[key] = [None if math.isnan(v) else int(v) for v in secs.tolist()]
        else:
            vals = pd.to_numeric(s, errors="coerce").astype("float64").tolist()
            out[key] = [None if math.isnan(v) else (int(v) if v.is_integer() else round(v, 2)) for v in vals]
    return out


def _incident_table(df: pd.DataFrame) -> str:
    headers = [("source", "source"), ("incident", "#"), ("start", "start (UTC)"), ("verdict", "verdict"),
               ("root_cause", "root cause"), ("phase", "phase"), ("signature", "signature"),
               ("first_lead", "first warning lead (s)"), ("duration", "ran (s)"), ("host", "host"), ("unit", "unit")]
    th = "".join(f'<th scope="col" data-key="{k}" tabindex="0">{esc(t)}</th>' for k, t in headers)
    return (f'<section id="incidents-section"><h2>Incidents</h2><div class="toolbar"><input type="search" '
            f'id="filter" placeholder="Filter: source, root cause, phase, signature, host, unit, verdict" '
            f'aria-label="Filter the incidents"><span id="shown" class="muted" aria-live="polite"></span></div>'
            f'<noscript><p>The incident table needs JavaScript; the counts and charts above do not.</p></noscript>'
            f'<div id="detail" hidden tabindex="-1" aria-live="polite"></div>'
            f'<div class="scroll"><table class="data" id="incidents"><thead><tr>{th}</tr></thead><tbody></tbody>'
            f"</table></div>"
            f'<div class="toolbar pager"><button type="button" id="first">first</button><button type="button" '
            f'id="back">previous page</button><button type="button" id="fwd">next page</button><button '
            f'type="button" id="last">last</button></div>{packed_script("incident-data", packed_incidents(df))}'
            f"</section>")
