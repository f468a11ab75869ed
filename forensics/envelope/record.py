"""The record every envelope reader yields, and what several readers share:
journald's ``-- Boot ... --`` markers, syslog's ``#012`` newline escape, and
the bounded JSON-object decoding of the JSON readers."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Iterator

from forensics.envelope.clean import clean_message
from forensics.ingest.values import json_nesting_exceeds


@dataclass(slots=True, eq=False, repr=False)
class Record:
    """One logical message line with its envelope. ``line`` is the 1-based
    physical input line where it starts; ``cont`` marks a journald
    continuation line of a multi-line entry."""

    line: int
    text: str
    ts: datetime | None = None
    host: str | None = None
    ident: str | None = None
    pid: int | None = None
    cont: bool = False
    marker: str | None = None
    unit: str | None = None
    # A multi-line message: its k-th line is on physical line ``line + k * line_step``
    # (1 for journald's indented continuation lines, 0 inside one JSON/export entry).
    line_step: int = 0

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Record({self.line}, {self.text!r}, ts={self.ts}, host={self.host}, ident={self.ident}, pid={self.pid})"


# Colour codes (SGR: "\x1b[32m", "\x1b[1;31m"), and the suffix of a format whose
# lines are coloured from their first byte (see ``detect_format``): ccze colours
# each column, a coloured capture the whole line.
SGR = re.compile(r"\x1b\[[0-9;]*m")
COLOURED = "+sgr"


def strip_sgr(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for n, text in lines:
        yield n, (SGR.sub("", text) if "\x1b" in text else text)


MARKER = re.compile(r"^-- (?:(?P<boot>Boot [0-9a-f]{32})|(?P<reboot>Reboot)|(?P<none>No entries)|(?P<begin>(?:Logs|Journal) begins? at .*?)) --\s*$")


def marker_record(n: int, text: str) -> Record | None:
    m = MARKER.match(text)
    if not m:
        return None
    kind = "boot" if (m.group("boot") or m.group("reboot")) else ("no-entries" if m.group("none") else "logs-begin")
    return Record(n, text.strip(), marker=kind)


def split_escaped(rec: Record) -> Iterator[Record]:
    """Syslog transports escape newlines as ``#012``: a whole traceback can
    arrive as one line. Split it back into its lines."""
    if "#012" not in rec.text:
        yield rec
        return
    for i, part in enumerate(rec.text.split("#012")):
        if i and not part.strip():
            continue
        yield Record(rec.line, part, rec.ts, rec.host, rec.ident, rec.pid, cont=i > 0 or rec.cont, unit=rec.unit)


def plain_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
    for n, text in lines:
        if text.startswith("-- ") and (rec := marker_record(n, text)) is not None:
            yield rec
            continue
        yield from split_escaped(Record(n, clean_message(text)))



# A journal entry is flat (byte arrays at most one level down). A line that
# nests deeper is kept as text: the bound is explicit, so the answer never
# depends on how much stack the caller happened to have left.
MAX_JSON_DEPTH = 64


def load_object(raw: str) -> dict | None:
    """The JSON object on one line, or None (not JSON, not an object, or nested
    deeper than ``MAX_JSON_DEPTH``: a truncated last object, junk between objects)."""
    try:
        if json_nesting_exceeds(raw, MAX_JSON_DEPTH):
            return None
        obj = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deep
        return None
    return obj if isinstance(obj, dict) else None
