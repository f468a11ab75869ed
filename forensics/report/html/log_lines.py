"""The lines of a log that a page shows, read a second time from its source.

A diagnosis keeps line numbers, not text; a page shows the evidence and the
early warnings among their neighbours, and the rest of the log folded. The
source is read again through ``ingest`` (same decoding, decompression and line
numbering, so line N here is line N of the diagnosis). A log up to
``WHOLE_LOG_BYTES`` is kept whole; past that only windows around the lines the
page points at are kept, so memory and the page stay bounded for a 10 GB log.
Versions and the GPU the log prints are read on the way (``RunFacts``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from forensics.incidents.facts import _TRIGGER as FACT_TRIGGER
from forensics.incidents.facts import RunFacts
from forensics.ingest.sources import Source

WHOLE_LOG_BYTES = 4 << 20  # a log this size or smaller goes into the page whole
MAX_LINE_CHARS = 2000  # a longer line is clipped on the page (marked)
CONTEXT = 4  # lines shown before and after each line of interest
# Versions are printed at start-up, so only a lifetime's first lines are searched for them: the
# version rules cost ~0.2 ms a line on journald lines (whose envelope trips the cheap pre-check),
# 12 s for 50,000 lines of a serving log, 0.6 s for these.
FACT_LINES = 3_000
# Facts worth showing as "versions recorded" (the rest is for diff).
VERSION_FACTS = ("server", "server_version", "python", "torch", "cuda", "nvcc", "driver", "nccl", "flashinfer",
                 "triton", "gpu", "compute_capability", "gpu_count")


@dataclass
class LogExcerpt:
    """Line number -> text of the lines kept; ``complete`` when every line is."""

    lines: dict[int, str] = field(default_factory=dict)
    total: int = 0
    complete: bool = True
    versions: list[tuple[str, str, int]] = field(default_factory=list)  # (fact, value, line)


def windows(lines_of_interest: Iterable[int], context: int = CONTEXT) -> set[int]:
    """Every line within ``context`` of a line of interest."""
    out: set[int] = set()
    for n in lines_of_interest:
        out.update(range(max(1, n - context), n + context + 1))
    return out


def read_excerpt(source: Source, interest: Iterable[int], facts_range: tuple[int, int] | None = None,
                 whole_bytes: int = WHOLE_LOG_BYTES) -> LogExcerpt:
    """Read ``source`` again: every line while the log fits in ``whole_bytes``,
    else the windows around ``interest``; the facts of the lines in
    ``facts_range`` (the lifetime the page is about)."""
    keep = windows(interest)
    out = LogExcerpt()
    size = 0
    facts = RunFacts()
    lo, hi = facts_range or (1, 0)
    hi = min(hi, lo + FACT_LINES)
    n = 0
    for block in Source(source.name, source.path, journal_filter=source.journal_filter).blocks():
        parts = block.split("\n")  # not splitlines(): a \r or \f inside a line is not a new line here
        if block.endswith("\n"):
            parts.pop()
        for text in parts:
            n += 1
            if lo <= n <= hi and FACT_TRIGGER.search(text):  # (the cheap pre-check RunFacts.observe makes)
                facts.observe_text(text, n)
            if out.complete:
                size += len(text) + 1
                if size > whole_bytes:
                    out.complete = False
                    out.lines = {k: v for k, v in out.lines.items() if k in keep}
            if out.complete or n in keep:
                out.lines[n] = text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + " [… clipped]"
    out.total = n
    found = facts.finish()
    out.versions = [(k, found[k].value, found[k].line) for k in VERSION_FACTS if k in found]
    return out
