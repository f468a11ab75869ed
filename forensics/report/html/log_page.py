"""The page of one log (``forensics classify --format html``).

Top: the verdict, label, how it was decided, the remedy and the signature.
Then the lifetime's timeline (phases with durations, early warnings with
their lead time, the failure), the lifetimes of the log when it restarted,
the evidence and the warnings among their neighbouring lines, the whole log
folded around them with a search box, and what produced the answer (the
versions the log printed, forensics' own versions, the input's name).
"""
from __future__ import annotations

import re
from typing import Any

from forensics.report.html.charts import chart_block, table
from forensics.report.html.log_lines import CONTEXT, LogExcerpt
from forensics.report.html.page import document, esc, json_script, static
from forensics.report.html.timeline import Timeline, lifetime_timeline, lifetimes_svg, timeline_svg
from forensics.report.text import confidence_text, human_duration

MAX_LIFETIME_ROWS = 200  # lifetimes listed in the table (a crash loop may leave thousands)


def main_incident(result: dict[str, Any]) -> dict[str, Any]:
    """The lifetime the top level describes (the JSON contract's ``incident``)."""
    incs = list(result.get("incidents") or [])
    idx = result.get("incident")
    for inc in incs:
        if inc.get("index") == idx:
            return inc
    return incs[-1] if incs else dict(result)


def lines_of_interest(result: dict[str, Any]) -> list[int]:
    """The lines the page shows in context: evidence, early warnings, consequences, phase starts, exit."""
    inc = main_incident(result)
    out = [int(e["line"]) for e in (result.get("evidence") or []) if e.get("line")]
    out += [int(w["line"]) for w in (result.get("early_warnings") or []) if w.get("line")]
    out += [int(c["line"]) for c in (result.get("consequences") or []) if c.get("line")]
    out += [int(p["first_line"]) for p in inc.get("phases") or [] if p.get("first_line")]
    if (inc.get("exit") or {}).get("line"):
        out.append(int(inc["exit"]["line"]))
    return out


def render_log_page(result: dict[str, Any], excerpt: LogExcerpt) -> str:
    """The self-contained page for one ``classify`` result and the lines read back from its source."""
    inc = main_incident(result)
    tl = lifetime_timeline(inc)
    body = [_verdict(result, inc, tl), _timeline(tl), _lifetimes(result), _evidence(result, excerpt),
            _log(excerpt, result), _footer(result, excerpt)]
    title = f"{result.get('source')}: {result.get('verdict')} {result.get('root_cause') or ''}".strip()
    return document(title, "".join(b for b in body if b), static("log.js"), "log")


def _verdict(result: dict[str, Any], inc: dict[str, Any], tl: Timeline) -> str:
    verdict = str(result.get("verdict") or "?")
    rows = []
    if result.get("root_cause"):
        rows.append(("root cause", f"<strong>{esc(result['root_cause'])}</strong> "
                                   f"<span class=muted>({esc(confidence_text(result))}, "
                                   f"confidence {result.get('confidence') or 0:.2f})</span>"))
    if result.get("phase"):
        rows.append(("phase", esc(result["phase"])))
    if tl.failure_s is not None:
        rows.append(("failed", f"{esc(human_duration(tl.failure_s))} after the lifetime's first line"))
    elif result.get("duration_s") is not None:
        rows.append(("ran", esc(human_duration(result.get("duration_s")))))
    if result.get("remediation"):
        rows.append(("try", _ticks(esc(result["remediation"]))))
    if result.get("signature"):
        rows.append(("signature", f"<code>{esc(result['signature'])}</code>"))
    clf = result.get("classifier") or {}
    if clf and clf.get("label") != result.get("root_cause"):
        rows.append(("classifier", f"{esc(clf.get('label'))} ({(clf.get('confidence') or 0):.0%})"))
    n = len(result.get("incidents") or [])
    if n > 1:
        rows.append(("lifetime", f"{(inc.get('index') or 0) + 1} of {n} in this log"))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (f'<header class="verdict" id="verdict"><h1><span class="badge v-{esc(verdict)}">{esc(verdict.upper())}'
            f"</span> {esc(result.get('root_cause') or '')}</h1>"
            f'<p class="summary">{_ticks(esc(result.get("summary") or ""))}</p>'
            f'<p class="muted">input: <code>{esc(result.get("source"))}</code></p><dl>{dl}</dl></header>')


def _ticks(escaped: str) -> str:
    """`code` in advice (already escaped) as <code>."""
    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escaped)


def _timeline(tl: Timeline) -> str:
    if not tl.bands and tl.failure_s is None:
        return ('<section id="timeline"><h2>Timeline</h2><p class="muted">The log gives no timestamps or no '
                "start-up phases for this lifetime, so there is no timeline to draw.</p></section>")
    rows: list[list[Any]] = [[b.phase, f"line {b.first_line}" if b.first_line else "", human_duration(b.start_s),
                              human_duration(b.duration_s)] for b in tl.bands]
    for w in tl.warnings:
        when = f"{human_duration(w.lead_s)} before the failure" if w.lead_s is not None else "time unknown"
        rows.append([f"early warning: {w.text[:120]}", f"line {w.line}",
                     human_duration(w.at_s) if w.at_s is not None else "", when])
    band = tl.band_at(tl.failure_s)
    if tl.failure_s is not None:
        rows.append(["failure", f"line {tl.failure_line}" if tl.failure_line else "", human_duration(tl.failure_s),
                     f"in the {band.phase} band" if band else ""])
    caption = ("Phases as bands with their durations; early warnings (▼) with their lead time; the failure in red"
               + (f", inside the {band.phase} phase." if band else "."))
    data = table(["what", "where", "at (from the first line)", "duration / lead"], rows)
    return ('<section id="timeline"><h2>Timeline</h2>' + chart_block("timeline-chart", "The lifetime",
                                                                     timeline_svg(tl, "tl"), caption, data)
            + "</section>")


def _lifetimes(result: dict[str, Any]) -> str:
    incs = list(result.get("incidents") or [])
    if len(incs) < 2:
        return ""
    svg = lifetimes_svg(incs, result.get("incident"), "lt") or ""
    rows = [[i.get("index", 0) + 1, i.get("start_ts") or "", i.get("verdict") or "", i.get("root_cause") or "",
             i.get("phase") or "", human_duration(i.get("duration_s")),
             f"{i.get('start_line')}–{i.get('end_line')}"] for i in incs[:MAX_LIFETIME_ROWS]]
    more = f" (the first {MAX_LIFETIME_ROWS} listed)" if len(incs) > MAX_LIFETIME_ROWS else ""
    data = table(["#", "start (UTC)", "verdict", "root cause", "phase", "ran", "lines"], rows)
    failed = sum(1 for i in incs if i.get("verdict") == "failed")
    caption = f"{len(incs)} process lifetimes (restarts), {failed} failed{more}."
    return '<section id="lifetimes"><h2>Restarts</h2>' + chart_block("lifetimes-chart", "Lifetimes in this log",
                                                                      svg, caption, data) + "</section>"


def _context_lines(excerpt: LogExcerpt, line: int, end_line: int | None = None) -> str:
    lo, hi = max(1, line - CONTEXT), (end_line or line) + CONTEXT
    out = []
    for n in range(lo, hi + 1):
        text = excerpt.lines.get(n)
        if text is None:
            continue
        cls = "ln mark" if n == line else "ln"
        out.append(f'<span class="{cls}" data-n="{n}">{esc(text)}</span>')
    return f'<div class="log">{"".join(out)}</div>'


def _evidence(result: dict[str, Any], excerpt: LogExcerpt) -> str:
    parts = ['<section id="evidence"><h2>Evidence and early warnings in context</h2>']
    for e in result.get("evidence") or []:
        parts.append(f'<article class="context"><h3>{esc(e.get("role") or "evidence")}: '
                     f'<a href="#L{e["line"]}">line {e["line"]}</a></h3>{_context_lines(excerpt, int(e["line"]))}'
                     f"</article>")
    for w in result.get("early_warnings") or []:
        lead = (f"{human_duration(w['lead_seconds'])} before the failure" if w.get("lead_seconds") is not None
                else "before the failure")
        why = f'<p class="why">{esc(w.get("why"))}</p>' if w.get("why") else ""
        parts.append(f'<article class="context warning"><h3>early warning, {esc(lead)}: '
                     f'<a href="#L{w["line"]}">line {w["line"]}</a></h3>{why}'
                     f'{_context_lines(excerpt, int(w["line"]))}</article>')
    if len(parts) == 1:
        parts.append('<p class="muted">No evidence lines: nothing failed, or nothing proved it.</p>')
    return "".join(parts) + "</section>"


def _log(excerpt: LogExcerpt, result: dict[str, Any]) -> str:
    """The log with the lines of interest open and the rest folded."""
    shown = set()
    for n in lines_of_interest(result):
        shown.update(range(max(1, n - CONTEXT), n + CONTEXT + 1))
    marks = {int(e["line"]) for e in (result.get("evidence") or [])} | \
        {int(w["line"]) for w in (result.get("early_warnings") or [])}
    out, fold, prev = [], [], 0
    for n in sorted(excerpt.lines):
        if n != prev + 1 and prev:
            _flush(out, fold)
            out.append(f'<div class="gap muted">lines {prev + 1}–{n - 1} are not in this page</div>')
        cls = "ln mark" if n in marks else "ln"
        span = f'<span class="{cls}" id="L{n}" data-n="{n}">{esc(excerpt.lines[n])}</span>'
        if n in shown:
            _flush(out, fold)
            out.append(span)
        else:
            fold.append((n, span))
        prev = n
    _flush(out, fold)
    note = "" if excerpt.complete else (
        f'<p class="note">The log has {excerpt.total:,} lines, too many for one page: only the lines around '
        f"the evidence, the warnings and the phase changes are here.</p>")
    return (f'<section id="log"><h2>The log</h2>{note}<div class="toolbar"><input type="search" id="search" '
            f'placeholder="Search the log (all lines, folded ones too)" aria-label="Search the log">'
            f'<button id="prev" type="button">previous</button><button id="next" type="button">next</button>'
            f'<span id="hits" class="muted" aria-live="polite"></span></div>'
            f'<div class="log" id="logtext">{"".join(out)}</div></section>')


def _flush(out: list[str], fold: list[tuple[int, str]]) -> None:
    if not fold:
        return
    a, b = fold[0][0], fold[-1][0]
    out.append(f'<details class="fold"><summary>lines {a}–{b} ({b - a + 1} lines)</summary>'
               f'{"".join(s for _, s in fold)}</details>')
    fold.clear()


def _footer(result: dict[str, Any], excerpt: LogExcerpt) -> str:
    seen = [[k, v, f"line {n}"] for k, v, n in excerpt.versions]
    found = table(["what", "value", "where"], seen) if seen else '<p class="muted">The log prints no versions.</p>'
    ours = table(["part", "version"], [[k, v] for k, v in (result.get("versions") or {}).items()])
    st = result.get("stats") or {}
    stats = (f"{st.get('lines', 0):,} lines ({st.get('format') or '?'} format"
             f"{', ' + st['compression'] if st.get('compression') else ''}), {st.get('events', 0):,} events, "
             f"{st.get('tracebacks', 0):,} tracebacks")
    meta = json_script("result-meta", {k: result.get(k) for k in ("source", "verdict", "root_cause", "phase")})
    return (f'<footer id="versions"><h2>Versions recorded</h2><div class="grid2"><div><h3>In the log</h3>{found}'
            f"</div><div><h3>Of this diagnosis</h3>{ours}</div></div><p>Input: <code>{esc(result.get('source'))}"
            f"</code>, {esc(stats)}. Made by <code>forensics classify --format html</code>.</p>{meta}</footer>")


def page_for_source(result: dict[str, Any], source: Any) -> str:
    """Read the lines the page shows back from ``source`` (an ``ingest`` Source
    that can be read again) and render the page."""
    from forensics.report.html.log_lines import read_excerpt

    inc = main_incident(result)
    span = (int(inc.get("start_line") or 1), int(inc.get("end_line") or 0))
    return render_log_page(result, read_excerpt(source, lines_of_interest(result), span))
