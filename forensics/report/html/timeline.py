"""One lifetime on a time axis: its phases as bands, early warnings as markers
with their lead time, the failure; and the lifetimes of a log (restarts).

``lifetime_timeline`` turns an incident of the JSON contract into seconds from
the lifetime's first timestamp; the charts draw that. A phase's band runs from
its first line's time to the next phase's, the last one to the lifetime's end
(the process lives on in that phase until it dies), so the phase the failure
sits in is the band under the failure's mark.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from forensics.report.html.charts import OTHER, VERDICT_COLORS, figure, to_svg
from forensics.report.text import human_duration


@dataclass
class Band:
    phase: str
    start_s: float
    end_s: float
    first_line: int | None

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass
class Marker:
    line: int
    at_s: float | None  # None: the log gives no time for it
    lead_s: float | None
    text: str
    signature: str | None


@dataclass
class Timeline:
    start: datetime | None
    end_s: float
    bands: list[Band] = field(default_factory=list)
    warnings: list[Marker] = field(default_factory=list)
    failure_s: float | None = None
    failure_line: int | None = None

    def band_at(self, t: float | None) -> Band | None:
        """The band a moment falls in (the last one that started at or before it)."""
        if t is None:
            return None
        hit = None
        for b in self.bands:
            if b.start_s <= t <= b.end_s + 1e-9:
                hit = b
        return hit


def _ts(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def lifetime_timeline(inc: dict[str, Any]) -> Timeline:
    """Seconds from the lifetime's first timestamp to each phase, warning and the failure."""
    start = _ts(inc.get("start_ts"))
    end = _ts(inc.get("end_ts"))
    ttf = inc.get("time_to_failure_s")
    end_s = (end - start).total_seconds() if start and end else 0.0
    tl = Timeline(start=start, end_s=max(end_s, ttf or 0.0))
    if inc.get("verdict") == "failed":
        tl.failure_s = ttf
        ev = inc.get("evidence") or []
        tl.failure_line = ev[0]["line"] if ev else None
    spans = [(p, _ts(p.get("first_ts"))) for p in inc.get("phases") or []]
    spans = sorted(((p, t) for p, t in spans if t is not None and start is not None), key=lambda pt: pt[1])
    for i, (p, t) in enumerate(spans):
        s = (t - start).total_seconds() if start else 0.0
        nxt = (spans[i + 1][1] - start).total_seconds() if i + 1 < len(spans) and start else tl.end_s
        tl.bands.append(Band(p["phase"], s, max(s, nxt), p.get("first_line")))
    for w in inc.get("early_warnings") or []:
        lead = w.get("lead_seconds")
        at = ttf - lead if (lead is not None and ttf is not None) else None
        tl.warnings.append(Marker(int(w.get("line") or 0), at, lead, str(w.get("text") or ""), w.get("signature")))
    return tl


def _unit(span_s: float) -> tuple[float, str]:
    if span_s > 2 * 3600:
        return 3600.0, "hours"
    if span_s > 180:
        return 60.0, "minutes"
    return 1.0, "seconds"


def timeline_svg(tl: Timeline, chart_id: str) -> str:
    """Phases as bands (one row each, with their durations), early warnings as
    triangles on their own row with their lead time, the failure as a red line."""
    div, unit = _unit(tl.end_s)
    rows = [b.phase for b in tl.bands]
    has_warn = any(w.at_s is not None for w in tl.warnings)
    labels = (["early warnings"] if has_warn else []) + rows
    with figure(7.8, 0.42 * len(labels) + 1.1) as fig:
        ax = fig.add_subplot()
        y_of = {name: len(labels) - 1 - i for i, name in enumerate(labels)}
        for b in tl.bands:
            bar = ax.barh(y_of[b.phase], b.duration_s / div, left=b.start_s / div, height=0.6, color="#0072B2",
                          alpha=0.85)
            bar.patches[0].set_gid(f"band-{b.phase}")
            ax.text(b.end_s / div, y_of[b.phase], f"  {human_duration(b.duration_s)}", va="center", fontsize=8)
        if has_warn:
            _warning_marks(ax, tl, y_of["early warnings"], div)
        if tl.failure_s is not None:
            line = ax.axvline(tl.failure_s / div, color="#D55E00", linewidth=2)
            line.set_gid("failure")
            where = f" (line {tl.failure_line})" if tl.failure_line else ""
            ax.text(tl.failure_s / div, -0.55, f"failure{where} ", color="#D55E00", ha="right", va="bottom",
                    fontsize=8, fontweight="bold")
        ax.set_yticks(range(len(labels)), list(reversed(labels)))
        ax.set_ylim(-0.6, len(labels) - 0.1)
        # A warning may come before the lifetime's first timestamp (its lead is longer than the time to failure).
        earliest = min([0.0] + [w.at_s for w in tl.warnings if w.at_s is not None])
        ax.set_xlim(earliest / div, max(tl.end_s, 1.0) / div * 1.08)
        start = tl.start.strftime("%Y-%m-%d %H:%M:%S UTC") if tl.start else "?"
        ax.set_xlabel(f"{unit} since the lifetime's first line ({start})")
        ax.grid(axis="x")
        return to_svg(fig, chart_id, "Timeline of the lifetime: phases, early warnings and the failure")


def _warning_marks(ax: Any, tl: Timeline, y: float, div: float) -> None:
    """Each early warning as a triangle, and a bracket from it to the failure labelled with the lead time."""
    for w in tl.warnings:
        if w.at_s is None:
            continue
        (pt,) = ax.plot([w.at_s / div], [y], marker="v", markersize=9, color="#E69F00", linestyle="none")
        pt.set_gid(f"warning-{w.line}")
        if tl.failure_s is not None and w.lead_s is not None:
            ax.annotate("", xy=(tl.failure_s / div, y), xytext=(w.at_s / div, y),
                        arrowprops={"arrowstyle": "-|>", "color": "#E69F00", "linewidth": 1.2})
        lead = f": {human_duration(w.lead_s)} before the failure" if w.lead_s is not None else ""
        ax.text(w.at_s / div, y + 0.32, f"line {w.line}{lead} ", fontsize=8, ha="right", va="bottom")


def lifetimes_svg(incidents: list[dict[str, Any]], main: int | None, chart_id: str) -> str | None:
    """The lifetimes of the log on a wall-clock axis, one bar each coloured by
    verdict (a crash loop is a comb of red bars); None without timestamps."""
    import matplotlib.dates as mdates

    spans: dict[str, list[tuple[float, float]]] = {}
    for inc in incidents:
        s, e = _ts(inc.get("start_ts")), _ts(inc.get("end_ts"))
        if s is None or e is None:
            continue
        x0 = mdates.date2num(s)
        spans.setdefault(inc.get("verdict") or "?", []).append((x0, max(mdates.date2num(e) - x0, 1e-6)))
    if not spans:
        return None
    with figure(7.8, 1.5) as fig:
        ax = fig.add_subplot()
        for verdict, xs in sorted(spans.items()):
            coll = ax.broken_barh(xs, (0, 1), color=VERDICT_COLORS.get(verdict, OTHER), label=verdict)
            coll.set_gid(f"lifetimes-{verdict}")
        ax.set_yticks([])
        loc = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.35), ncols=5, fontsize=8)
        ax.set_xlabel("UTC")
        return to_svg(fig, chart_id, "The process lifetimes in this log, coloured by verdict")
