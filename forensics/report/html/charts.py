"""Charts as inline SVG, drawn by matplotlib (the ``html`` extra).

Why matplotlib's SVG and not a JavaScript plotting runtime: measured for a
page of 100,000 incidents, the charts of a batch are aggregates (a few hundred
bars), so their SVG is tens of kB whatever the archive's size, while Plotly's
offline runtime alone is 4.8 MB (``plotly.min.js`` of plotly 7.1) and Vega-Lite's
runtime inlined about 1 MB, parsed on every open. An SVG needs no script, so a
mail viewer that blocks scripts still shows the charts, and it prints as
vectors.

Every chart follows the page's colours: text, axes and grid are drawn in
sentinel colours that become ``currentColor`` and CSS variables, so one SVG
reads in light and dark mode. Text stays text (``svg.fonttype: none``): the
page's search and a screen reader see it. Element ids are prefixed per chart
(two charts never share an id), and artists given a ``gid`` keep it (prefixed
the same way) so tests and links can find a band or a marker.
"""
from __future__ import annotations

import html
import io
import re
from contextlib import contextmanager
from typing import Any, Iterator

# Sentinels matplotlib draws with, swapped for the page's colours afterwards.
_FG = "#010203"
_GRID = "#040506"
_SWAPS = ((_FG, "currentColor"), (_GRID, "var(--grid)"))

# Colour-blind-safe categorical palette (Okabe-Ito, then Tableau's muted tones):
# each reads on a white and on a near-black background.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#8C6BB1",
           "#4E9A8A", "#B07AA1", "#9C755F", "#7F9FBF")
OTHER = "#8C8C8C"
VERDICT_COLORS = {"failed": "#D55E00", "ready": "#009E73", "no-failure": "#009E73", "starting": "#E69F00",
                  "stalled": "#CC79A7"}

_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "forensics",
    "font.family": "sans-serif",
    "font.size": 9.0,
    "text.color": _FG,
    "axes.labelcolor": _FG,
    "axes.edgecolor": _FG,
    "xtick.color": _FG,
    "ytick.color": _FG,
    "grid.color": _GRID,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
}

_ID = re.compile(r'\bid="([^"]+)"')


def color_for(key: str, order: list[str]) -> str:
    """A stable colour per category: by its place in ``order``; grey past the palette."""
    try:
        i = order.index(key)
    except ValueError:
        return OTHER
    return PALETTE[i] if i < len(PALETTE) else OTHER


@contextmanager
def figure(width: float = 7.5, height: float = 2.6) -> Iterator[Any]:
    """A matplotlib Figure (no pyplot, so no global state or GUI backend) under the page's style."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), layout="constrained")
        yield fig


def to_svg(fig: Any, chart_id: str, label: str) -> str:
    """The figure as an inline ``<svg>``: no XML prologue, no fixed size (it
    scales with the page), ids prefixed with ``chart_id``, colours swapped for
    the page's, and ``role="img"`` with ``label`` as its accessible name."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    for old, new in _SWAPS:
        svg = svg.replace(old, new)
    ids = set(_ID.findall(svg))
    for old_id in sorted(ids, key=len, reverse=True):
        new_id = f"{chart_id}-{old_id}"
        svg = svg.replace(f'id="{old_id}"', f'id="{new_id}"').replace(f"#{old_id})", f"#{new_id})") \
            .replace(f'href="#{old_id}"', f'href="#{new_id}"')
    svg = re.sub(r'<svg([^>]*?)\swidth="[^"]*"\sheight="[^"]*"', r"<svg\1", svg, count=1)
    return svg.replace("<svg", f'<svg role="img" aria-label="{html.escape(label)}" class="chart"', 1)


def chart_block(chart_id: str, title: str, svg: str, caption: str, table_html: str) -> str:
    """A chart with its title, a one-sentence caption, and the numbers behind
    it as a table (the accessible text; folded on screen, shown in print)."""
    return (f'<figure class="chart-block" id="{chart_id}" aria-labelledby="{chart_id}-title">'
            f'<figcaption><h3 id="{chart_id}-title">{html.escape(title)}</h3>'
            f'<p>{html.escape(caption)}</p></figcaption>{svg}'
            f'<details class="chart-data"><summary>The numbers behind this chart</summary>{table_html}</details>'
            f"</figure>")


def table(headers: list[str], rows: list[list[Any]], cls: str = "data") -> str:
    """A plain HTML table; every cell escaped. Numbers are right-aligned by the stylesheet."""
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in headers)
    body = []
    for r in rows:
        cells = "".join(f'<td class="num">{_cell(v)}</td>' if isinstance(v, (int, float)) else f"<td>{_cell(v)}</td>"
                        for v in r)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))
