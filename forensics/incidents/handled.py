"""Failures their program handles by design (``handled.yaml``): a line its program goes on after
(ggml falling back from pinned host memory to an ordinary buffer), or a traceback Python printed
for an exception it ignored ("Exception ignored in: ..."). The verdicts ask these before such a
line or traceback may end a lifetime; what the program says it handles is no death, whatever its
words."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from forensics.events import types as kinds
from forensics.events.tables import load_table
from forensics.events.types import Event


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(handled lines, lines that say the traceback after them was ignored, deaths a traceback's
    message may run into), each one regex."""
    table = load_table(__file__, "handled.yaml")
    return tuple(re.compile("|".join(f"(?:{e['regex']})" for e in table[part]))  # type: ignore[return-value]
                 for part in ("lines", "ignored_tracebacks", "deaths_after"))


def handled_line(ev: Event) -> bool:
    """The line is a failure its program goes on after by design (``handled.yaml`` lines)."""
    return ev.kind != kinds.TRACEBACK and _patterns()[0].search(ev.text[:400]) is not None


def ignored_traceback(lines_before: Any, tb: Event) -> bool:
    """The traceback follows, on the line right before it, Python's word that the exception was
    ignored (``lines_before``: the lifetime's events that may hold that line)."""
    if tb.kind != kinds.TRACEBACK or _died_in(tb):
        return False
    rx = _patterns()[1]
    return any(e.line == tb.line - 1 and rx.search(e.text.lstrip()[:200]) for seen in lines_before for e in seen)


def _died_in(tb: Event) -> bool:
    """The traceback's message runs into its process's death (``handled.yaml`` deaths_after): the
    lines after its exception line, which the parser kept with the message."""
    rx = _patterns()[2]
    after = str(tb.data.get("exc_message") or "").split("\n")[1:]
    return any(rx.search(line.strip()) for line in after[:20])
