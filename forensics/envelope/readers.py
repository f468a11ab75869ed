"""Stage 2's entry point: numbered physical lines -> records, by the reader
of the source's envelope format, looked up in one table."""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from forensics.envelope.clock import Clock
from forensics.envelope.containers import docker_records, jsonl_records
from forensics.envelope.journald import (SHORT_ALIASES, SHORT_PATTERNS, export_records, json_records, short_reader,
                                         verbose_records)
from forensics.envelope.record import COLOURED, Record, plain_records, strip_sgr

FORMATS = (
    "auto", "plain", "jsonl", "short", "short-precise", "short-iso", "short-iso-precise", "short-full",
    "with-unit", "short-unix", "short-monotonic", "short-delta", "cat", "json", "json-seq",
    "json-sse", "export", "verbose", "docker",
)

# A reader: (numbered lines, clock, merge) -> records. ``merge`` matters only to
# the short modes (see ``short_reader``); the others ignore what they do not need.
Reader = Callable[[Iterable[tuple[int, str]], Clock, bool], Iterator[Record]]


def _plain(lines: Iterable[tuple[int, str]], clock: Clock, merge: bool = True) -> Iterator[Record]:
    return plain_records(lines)


READERS: dict[str, Reader] = {
    **{name: short_reader(name) for name in SHORT_PATTERNS},
    "json": json_records, "json-seq": json_records, "json-sse": json_records,
    "jsonl": jsonl_records,
    "export": export_records,
    "verbose": verbose_records,
    "docker": docker_records,
    "plain": _plain,
}
READERS.update({alias: READERS[name] for alias, name in SHORT_ALIASES.items()})


def iter_records(lines: Iterable[tuple[int, str]], fmt: str, clock: Clock, merge: bool = True) -> Iterator[Record]:
    """Records from numbered physical lines (text without the newline). With
    ``merge``, a journald message printed over several lines stays one record
    (this needs one line of lookahead, so live streams turn it off). A format
    without a reader of its own (``auto`` unresolved, ``cat``) reads as plain."""
    reader = READERS.get(fmt)
    if reader is None:
        if not fmt.endswith(COLOURED):
            return _plain(lines, clock, merge)
        # Coloured from the first byte: the colour off, then the format's own reader.
        lines, reader = strip_sgr(lines), READERS.get(fmt[:-len(COLOURED)], _plain)
    return reader(lines, clock, merge)
