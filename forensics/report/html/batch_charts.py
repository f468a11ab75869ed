"""The charts of a batch page, each from the incidents table (``report.frames``).

Each function returns ``(svg or None, caption, headers, rows)``: the chart,
one sentence saying what it shows, and the numbers behind it (the chart's
accessible text). Charts draw aggregates (bins, phases, the top few
categories), so their size does not grow with the number of incidents.
"""
from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from forensics.report.html.charts import OTHER, PALETTE, VERDICT_COLORS, color_for, figure, to_svg

Chart = tuple[str | None, str, list[str], list[list[Any]]]
TOP_LABELS = 8  # labels drawn in their own colour; the rest are "other"
TOP_GROUPS = 15  # hosts / units drawn
# Bins of the failures-over-time chart, finest first: the first that needs at most MAX_BINS bins over the
# span is used (a few days: hours; months: days; an archive whose clocks stray over decades: years).
BINS = (("h", "hour", pd.Timedelta(hours=1)), ("D", "day", pd.Timedelta(days=1)),
        ("W", "week", pd.Timedelta(days=7)), ("MS", "month", pd.Timedelta(days=31)),
        ("YS", "year", pd.Timedelta(days=366)))
MAX_BINS = 400
MAX_LOOP_ROWS = 200  # crash loops listed in the table
CRASH_LOOP_PER_HOUR = 3  # a source that starts this many lifetimes within one clock hour is restarting in a loop


def failed_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["error"].isna() & (df["verdict"] == "failed").fillna(False)]


def _labels(failed: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """Each failure's label, the rarer ones folded into "other", and the labels in drawing order."""
    lab = failed["root_cause"].astype("string").fillna("(none)")
    top = list(lab.value_counts().index[:TOP_LABELS])
    return lab.where(lab.isin(top), "other"), top + (["other"] if (~lab.isin(top)).any() else [])


def failure_times(failed: pd.DataFrame) -> pd.Series:
    """When each failure happened: the lifetime's start plus its time to failure (else its start)."""
    ttf = pd.to_timedelta(failed["time_to_failure_s"].fillna(0.0), unit="s")
    return failed["start_ts"] + ttf


def failures_over_time(df: pd.DataFrame) -> Chart:
    failed = failed_rows(df)
    t = failure_times(failed)
    ok = t.notna()
    if failed.empty:
        return None, "No failures.", [], []
    if not ok.any():
        return None, "No failure has a timestamp, so there is nothing to put on a time axis.", [], []
    ok, strays = _bulk(t)
    span = t[ok].max() - t[ok].min()
    freq, per, step = next((b for b in BINS if span / b[2] <= MAX_BINS), BINS[-1])
    lab, order = _labels(failed[ok])
    naive = t[ok].dt.tz_localize(None)
    bins = naive.dt.floor(freq) if freq in ("h", "D") else naive.dt.to_period(freq[0]).dt.start_time
    counts = pd.crosstab(bins, lab).reindex(columns=order, fill_value=0)
    full = pd.date_range(counts.index.min(), counts.index.max(), freq=freq if freq != "W" else "7D")
    counts = counts.reindex(full.union(counts.index), fill_value=0)
    svg = _stacked_stairs(counts, order, step, f"failures per {per}",
                          f"Failures per {per} by root cause")
    rows = [[ts.strftime("%Y-%m-%d %H:00" if freq == "h" else "%Y-%m-%d"), *[int(v) for v in r], int(sum(r))]
            for ts, r in zip(counts.index, counts.to_numpy().tolist()) if sum(r)]
    caption = (f"{int(ok.sum()):,} failures with a timestamp, per {per} (the span is {_span_text(span)}), "
               f"stacked by root cause." + (f" {int(t.isna().sum()):,} without a timestamp are not drawn."
                                            if t.isna().any() else "") + strays)
    return svg, caption, [per + " (UTC)", *order, "all"], rows


def _bulk(t: pd.Series) -> tuple[pd.Series, str]:
    """The failures to draw: all with a time, unless a few (at most 5%) lie so far
    from the rest that they would squeeze it into one bar (a clock that was not
    set, a log dated 1970): those are left out and said so."""
    ok = t.notna()
    if ok.sum() < 20:
        return ok, ""
    lo, hi = t[ok].quantile(0.05), t[ok].quantile(0.95)
    margin = max(hi - lo, pd.Timedelta(days=1))
    inner = ok & (t >= lo - margin) & (t <= hi + margin)
    out = t[ok & ~inner]
    if out.empty:
        return ok, ""
    return inner, (f" {len(out):,} failures dated far from the rest ({out.min():%Y-%m-%d} to {out.max():%Y-%m-%d})"
                   " are not drawn.")


def date_axis(ax: Any) -> None:
    """An x axis of matplotlib date numbers, ticked and labelled as dates."""
    import matplotlib.dates as mdates

    loc = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))


def _span_text(span: pd.Timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours:.1f} hours" if hours < 72 else f"{hours / 24:.0f} days"


def _stacked_stairs(counts: pd.DataFrame, order: list[str], step: pd.Timedelta, ylabel: str, label: str) -> str:
    import matplotlib.dates as mdates

    edges = [mdates.date2num(x) for x in list(counts.index) + [counts.index[-1] + step]]
    base = [0.0] * len(counts)
    with figure(7.8, 2.8) as fig:
        ax = fig.add_subplot()
        for name in order:
            top = [b + v for b, v in zip(base, counts[name].tolist())]
            ax.stairs(top, edges, baseline=base, fill=True, color=color_for(name, order) if name != "other" else OTHER,
                      label=name)
            base = top
        date_axis(ax)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        return to_svg(fig, "over-time", label)


def failures_by_phase(df: pd.DataFrame) -> Chart:
    from forensics.diagnosis.taxonomy import PHASES

    failed = failed_rows(df)
    if failed.empty:
        return None, "No failures.", [], []
    lab, order = _labels(failed)
    phase = failed["phase"].astype("string").fillna("(unknown)")
    counts = pd.crosstab(phase, lab).reindex(columns=order, fill_value=0)
    known = [p for p in PHASES if p in counts.index]
    counts = counts.reindex(known + sorted(p for p in counts.index if p not in known))
    svg = _stacked_barh(counts, order, "failures", "Failures by the phase they died in, by root cause", "by-phase")
    rows = [[p, *[int(v) for v in r], int(sum(r))] for p, r in zip(counts.index, counts.to_numpy().tolist())]
    caption = "Where in start-up the failures happened (phases in start-up order), stacked by root cause."
    return svg, caption, ["phase", *order, "all"], rows


def _stacked_barh(counts: pd.DataFrame, order: list[str], xlabel: str, label: str, chart_id: str,
                  colors: dict[str, str] | None = None) -> str:
    names = [str(x) for x in counts.index]
    with figure(7.8, 0.32 * len(names) + 1.0) as fig:
        ax = fig.add_subplot()
        left = [0.0] * len(names)
        ys = list(range(len(names)))[::-1]
        for name in order:
            vals = counts[name].tolist() if name in counts.columns else [0] * len(names)
            color = (colors or {}).get(name) or (color_for(name, order) if name != "other" else OTHER)
            ax.barh(ys, vals, left=left, color=color, label=name, height=0.7)
            left = [a + b for a, b in zip(left, vals)]
        ax.set_yticks(ys, names)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x")
        if len(order) > 1:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        return to_svg(fig, chart_id, label)


def warning_leads(df: pd.DataFrame) -> Chart:
    leads: list[float] = []
    untimed = 0
    for raw in df.loc[df["error"].isna(), "early_warnings"].dropna():
        try:
            items = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        for w in items if isinstance(items, list) else ():
            v = w.get("lead_seconds") if isinstance(w, dict) else None
            if isinstance(v, (int, float)) and math.isfinite(v) and v >= 0:
                leads.append(float(v))
            else:
                untimed += 1
    if not leads:
        return None, "No early warning with a lead time.", [], []
    edges = [0.0, 1, 10, 30, 60, 300, 600, 1800, 3600, 6 * 3600, 86400, math.inf]
    names = ["< 1 s", "1–10 s", "10–30 s", "30 s–1 min", "1–5 min", "5–10 min", "10–30 min", "30 min–1 h",
             "1–6 h", "6–24 h", "> 1 d"]
    counts = [sum(1 for v in leads if lo <= v < hi) for lo, hi in zip(edges, edges[1:])]
    with figure(7.8, 2.4) as fig:
        ax = fig.add_subplot()
        ax.bar(range(len(names)), counts, color=PALETTE[1])
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_ylabel("early warnings")
        ax.grid(axis="y")
        svg = to_svg(fig, "leads", "How long before the failure the early warnings were printed")
    med = sorted(leads)[len(leads) // 2]
    caption = (f"{len(leads):,} early warnings with a lead time (median {med:,.0f} s) by how long before the "
               f"failure they were printed" + (f"; {untimed:,} without a time." if untimed else "."))
    return svg, caption, ["lead time", "early warnings"], [[n, c] for n, c in zip(names, counts)]


def top_signatures(items: list[tuple[str, int]]) -> Chart:
    if not items:
        return None, "No failure was decided by a signature.", [], []
    counts = pd.DataFrame({"failures": [int(v) for _, v in items]}, index=[str(k) for k, _ in items])
    svg = _stacked_barh(counts, ["failures"], "failures", "The most frequent signatures", "signatures")
    return svg, "The signatures that decided the most failures.", ["signature", "failures"], \
        [[k, int(v)] for k, v in items]


def by_group(df: pd.DataFrame, column: str) -> Chart:
    ok = df[df["error"].isna() & df["incident"].notna()]  # not an empty log's row (no lifetime)
    key = ok[column].astype("string")
    if key.notna().sum() == 0:
        return None, f"No incident names a {column}.", [], []
    verdict = ok["verdict"].astype("string").fillna("?").where(lambda v: v == "failed", "did not fail")
    counts = pd.crosstab(key.fillna(f"(no {column})"), verdict)
    for c in ("failed", "did not fail"):
        if c not in counts.columns:
            counts[c] = 0
    counts = counts[["failed", "did not fail"]]
    counts = counts.assign(_n=counts.sum(axis=1)).sort_values(["failed", "_n"], ascending=False).drop(columns="_n")
    shown = counts.head(TOP_GROUPS)
    svg = _stacked_barh(shown, ["failed", "did not fail"], "incidents", f"Incidents by {column}", f"by-{column}",
                        {"failed": VERDICT_COLORS["failed"], "did not fail": VERDICT_COLORS["ready"]})
    more = f" (the {TOP_GROUPS} with the most failures of {len(counts):,})" if len(counts) > TOP_GROUPS else ""
    rows = [[k, int(f), int(o), int(f + o)] for k, (f, o) in zip(counts.index, counts.to_numpy().tolist())]
    return svg, f"Incidents by {column}, failed and not{more}.", [column, "failed", "did not fail", "all"], rows


def crash_loops(df: pd.DataFrame) -> Chart:
    """Lifetimes started per clock hour by each source (and unit): a service
    that systemd restarts over and over leaves a run of short lifetimes."""
    ok = df[df["error"].isna() & df["start_ts"].notna()]
    if ok.empty:
        return None, "No lifetime has a timestamp.", [], []
    group = ok["source"].astype("string") + ok["unit"].astype("string").map(lambda u: f" ({u})", na_action="ignore") \
        .fillna("")
    hour = ok["start_ts"].dt.floor("h").dt.tz_localize(None)
    per_group_hour = pd.DataFrame({"g": group, "h": hour}).groupby(["g", "h"], observed=True).size()
    peak = per_group_hour.groupby(level=0).max().sort_values(ascending=False, kind="stable")
    loops = peak[peak >= CRASH_LOOP_PER_HOUR]
    in_loop = ok[group.isin(loops.index[:MAX_LOOP_ROWS])]
    g_loop = group[in_loop.index]
    lifetimes = g_loop.value_counts()
    failed = (in_loop["verdict"] == "failed").fillna(False).groupby(g_loop).sum()
    causes = in_loop["root_cause"].astype("string").groupby(g_loop).agg(
        lambda s: s.value_counts().index[0] if s.notna().any() else "")
    rows = [[g, int(lifetimes[g]), int(peak[g]), int(failed.get(g, 0)), str(causes.get(g, "") or "")]
            for g in loops.index[:MAX_LOOP_ROWS]]
    headers = ["source (unit)", "lifetimes", "most in one hour", "failed", "most frequent root cause"]
    if loops.empty:
        return None, (f"No source started {CRASH_LOOP_PER_HOUR} or more lifetimes within one hour: no crash loop."), \
            headers, rows
    drawn = per_group_hour[per_group_hour.index.get_level_values(0).isin(loops.index[:5])]
    svg = _loop_lines(drawn.unstack(level=0, fill_value=0)[list(loops.index[:5])])
    caption = (f"{len(loops):,} sources started {CRASH_LOOP_PER_HOUR} or more process lifetimes within one clock "
               f"hour; the {min(5, len(loops))} worst are drawn (lifetimes started per hour, at most "
               f"{MAX_BINS} hours around the busiest)" + (f"; the table lists the {MAX_LOOP_ROWS} worst."
                                                          if len(loops) > MAX_LOOP_ROWS else "."))
    return svg, caption, headers, rows


def _loop_lines(per_hour: pd.DataFrame) -> str:
    import matplotlib.dates as mdates

    # At most MAX_BINS hours, centred on the busiest one (an archive may span years).
    peak = per_hour.sum(axis=1).idxmax()
    half = pd.Timedelta(hours=MAX_BINS // 2)
    lo, hi = max(per_hour.index.min(), peak - half), min(per_hour.index.max(), peak + half)
    full = pd.date_range(lo, hi, freq="h")
    per_hour = per_hour.reindex(full, fill_value=0)
    edges = [mdates.date2num(x) for x in list(full) + [full[-1] + pd.Timedelta(hours=1)]]
    with figure(7.8, 2.6) as fig:
        ax = fig.add_subplot()
        for i, name in enumerate(per_hour.columns):
            short = name if len(name) <= 48 else "…" + name[-47:]
            ax.stairs(per_hour[name].tolist(), edges, color=PALETTE[i % len(PALETTE)], linewidth=1.6, label=short)
        date_axis(ax)
        ax.set_ylabel("lifetimes started per hour")
        ax.grid(axis="y")
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.2), fontsize=8)
        return to_svg(fig, "crash-loops", "Lifetimes started per hour by the sources that restarted the most")
