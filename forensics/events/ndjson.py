"""The NDJSON lines of ``forensics parse`` in one process, with a fast path
for the serving bulk of a short-iso journal.

A serving SGLang log is ~99% batch-statistics and access lines that differ
from their neighbours only in the line number, the journald timestamp, the
date of the SGLang head and the message. ``ServingLines`` writes such a line
straight from its text: the rest of its JSON (host, ident, pid, rank, level,
kind data, source) is a template keyed by the text that decides it, made
once by the full path (reader, parser, ``Event.to_json``) on the second line
of that key and checked there against the full path's own output. Every
other line, and any line whose key the full path does not confirm, goes
through the full path. Why a line with a known key reads as its template
says, piece by piece (``ServingLines.line``):

* the reader (``envelope/journald.py``): a short-iso line whose timestamp
  column matches alone and whose message part is printable ASCII is read as
  (its timestamp's time, the columns' host/ident/pid, the rest) whatever its
  neighbours are, and the columns' meaning depends only on their text (the
  reader's own seen-columns rule); a message without "[0", "#0", "001b[" is
  not cleaned or split; a record merges with the next line only when that
  line is indented, so such a line goes the full way;
* the prefix (``events/prefixes.py``): an SGLang head "[" + a 19-character
  date + the rest up to the first "] " gives a rank decided by that rest
  alone (the date only sets ``app_ts``, unused while the journald time is
  set), then an optional uvicorn level, then the message;
* the parser (``EventParser.feed``): with no traceback open and no traceback
  header in the message, a message opening with a batch head and without
  "HTTP/" is a batch-statistics event; one that opens with a digit and
  holds an access request is an ``access`` event whose data is that request's
  (the template key carries it). The ident and pid decide whether the
  structured-line grammar is asked: templates are made only where it is not.

Lines are never re-ordered: the reader and the parser read every other line
as one stream, and a fast line is written once every line before it has been
parsed (``_feeder``).
"""
from __future__ import annotations

import itertools
import re
from json.encoder import encode_basestring  # what Event.to_json encodes an ASCII text with
from typing import Any, Callable, Iterable, Iterator

from forensics.envelope.clock import Clock
from forensics.envelope.journald import PRINTABLE_TAIL, UNSEEN, columns_end, iso_column_time
from forensics.envelope.readers import iter_records
from forensics.events.bulk import ACCESS
from forensics.events.parser import (SYSTEMD_IDENTS, EventParser, OpenSource, ParseStats, finish_source,
                                     open_source)
from forensics.events.phases import BATCH_HEADS, MARKER_DATA
from forensics.events.prefixes import UVICORN, UVICORN_HEADS, is_sglang_rest
from forensics.events.textmemo import remember
from forensics.events.tracebacks import HEADER_TEXT
from forensics.events.types import ACCESS as ACCESS_KIND
from forensics.events.types import PHASE_MARKER, Event
from forensics.ingest.sources import Source

_DATE = re.compile(r"[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\Z").match
_DIGITS = "0123456789"
_TEXT_MARK = ',"text":"\\u0000"'  # the JSON of a template event's sentinel text
_BATCH_STATS = MARKER_DATA["batch_stats"]
_INDENTS = (" ", "\t")
# A template table entry: the key was seen once, no template made yet (an object,
# not a tuple: compiled, a tuple constant is unboxed and "is" would not find it).
_ONCE: Any = object()
MEMO_LIMIT = 4096  # templates, timestamps and dates remembered (each table cleared when full)
# A line's JSON is tpl[0] + its number + ',"ts":' + its time's JSON + tpl[1] + its message's JSON + tpl[2].
Template = tuple[str, str, str]


class ServingLines:
    """The fast path: ``line(n, text)`` is the NDJSON line the full path
    writes for a serving line, or None: not such a line, or its key not
    confirmed. The caller makes sure no traceback is open, that the next
    line is not indented, and counts the event when it writes it."""

    def __init__(self, parser: EventParser) -> None:
        self.parser = parser
        self.name = parser.source
        self.templates: dict[tuple, Any] = {}  # key -> Template, None (not confirmed) or _ONCE
        self.stamps: dict[str, str | None] = {}  # timestamp column -> its time's JSON (None: no time)
        self.dates: dict[str, bool] = {}  # SGLang head date -> of the digit shape

    def line(self, n: int, text: str) -> str | None:
        """The checks in the order of the full path (module docstring)."""
        sp = text.find(" ")
        if sp <= 0:
            return None
        k = columns_end(text, sp)
        if text[k:k + 1] != "[" or PRINTABLE_TAIL(text, k) is None:
            return None
        whole = text[k:]  # the reader's message
        if "[0" in whole or "#0" in whole or "001b[" in whole:
            return None
        ok = self.dates.get(whole[1:20])
        if ok is None:
            ok = remember(self.dates, whole[1:20], _DATE(whole, 1, 20) is not None, MEMO_LIMIT)
        j = whole.find("] ", 20, 90) if ok else -1
        if j < 0:
            return None
        s = j + 2
        c = whole[s:s + 1]
        if c in "IWECDT" and whole.startswith(UVICORN_HEADS, s) and (um := UVICORN.match(whole, s)) is not None:
            s = um.end()
            c = whole[s:s + 1]
        msg = whole[s:]
        if c == "[" or c == "(" or HEADER_TEXT in msg:  # peel_prefix would peel on; a traceback may start
            return None
        if msg.startswith(BATCH_HEADS) and "HTTP/" not in msg:
            key: tuple = (text[sp + 1:k], whole[20:s], None)
        elif c and c in _DIGITS and "HTTP/" in msg and (am := ACCESS.search(msg)) is not None:
            key = (text[sp + 1:k], whole[20:s], am.group(0))
        else:
            return None
        tsj: Any = self.stamps.get(text[:sp], UNSEEN)  # str, None (no time) or UNSEEN
        if tsj is UNSEEN:
            tsj = remember(self.stamps, text[:sp], _stamp_json(text[:sp]), MEMO_LIMIT)
        if tsj is None:
            return None
        tpl = self.templates.get(key, UNSEEN)
        if tpl is UNSEEN:  # a key seen once is left to the full path: a crash loop has many (pids change)
            remember(self.templates, key, _ONCE, MEMO_LIMIT)
            return None
        if tpl is _ONCE:
            tpl = remember(self.templates, key, self._template(n, text, whole[20:j + 2], msg, tsj, key[2] is None),
                           MEMO_LIMIT)
        if tpl is None:
            return None
        return f'{tpl[0]}{n},"ts":{tsj}{tpl[1]}{encode_basestring(msg)}{tpl[2]}'

    def _template(self, n: int, text: str, rest: str, msg: str, tsj: str, batch: bool) -> Template | None:
        """The template of this line's key, from the full path's event for it
        (a parser of its own: no traceback open, as the caller ensures), or
        None when that event is not what the key says."""
        if not is_sglang_rest(rest):
            return None
        clock = Clock()
        clock.year = self.parser.clock.year
        recs = list(iter_records(iter(((n, text),)), "short-iso", clock))
        if len(recs) != 1 or recs[0].text != text[columns_end(text, text.find(" ")):]:
            return None
        evs = EventParser(self.name, clock, []).feed(recs[0])
        ev = evs[0] if len(evs) == 1 else None
        if (ev is None or ev.text != msg or ev.ts is None or ev.line != n or ev.end_line is not None
                or ev.ident is None or ev.ident in SYSTEMD_IDENTS or ev.pid == 1
                or ((ev.kind, ev.data) != (PHASE_MARKER, _BATCH_STATS) if batch else ev.kind != ACCESS_KIND)):
            return None
        blank = Event(ev.kind, 0, "\x00", None, ev.host, ev.ident, ev.pid, ev.rank, ev.level, ev.logger, None,
                      ev.source, ev.data).to_json(self.name)
        head = f'{{"kind":"{ev.kind}","line":0,"ts":null'
        i = blank.find(_TEXT_MARK, len(head))
        if not blank.startswith(head) or i < 0:
            return None
        tpl = (f'{{"kind":"{ev.kind}","line":', blank[len(head):i] + ',"text":', blank[i + len(_TEXT_MARK):])
        # The layout checked on this line against Event.to_json itself.
        if f'{tpl[0]}{n},"ts":{tsj}{tpl[1]}{encode_basestring(msg)}{tpl[2]}' != ev.to_json(self.name):
            return None
        return tpl


def _stamp_json(ts_text: str) -> str | None:
    """The JSON of the time the reader gives a timestamp column (None: none)."""
    ts = iso_column_time(ts_text)
    if ts is UNSEEN or ts is None:
        return None
    return '"' + ts.isoformat() + '"'


def _fast_plan(src: OpenSource) -> bool:
    """Whether the fast path applies: a short-iso journal without wrappers."""
    return src.plan.fmt == "short-iso" and not src.plan.wrappers


class SourceLines:
    """The NDJSON lines of one source's events (``forensics parse`` in one
    process; only those of ``kinds`` when given) and its ``stats`` once they
    are consumed. ``fast``: use the serving-line fast path where it applies
    (it holds each line until the next one is read: for a regular file, not
    a live stream)."""

    def __init__(self, source: Source, input_format: str = "auto", kinds: frozenset[str] = frozenset(),
                 fast: bool = True) -> None:
        self.source, self.input_format, self.kinds, self.fast = source, input_format, kinds, fast
        self.parser: EventParser | None = None

    @property
    def stats(self) -> ParseStats | None:
        return self.parser.stats if self.parser is not None else None

    def __iter__(self) -> Iterator[str]:
        src = open_source(self.source, self.input_format)
        parser = self.parser = src.parser
        ts_cache: list = [None, None]
        name, to_json, kinds = self.source.name, Event.to_json, self.kinds
        if self.fast and not kinds and _fast_plan(src):
            yield from _fast_lines(src, ServingLines(parser), ts_cache)
        else:
            feed = parser.feed
            for rec in iter_records(src.lines, src.plan.fmt, parser.clock):
                for ev in feed(rec):
                    if not kinds or ev.kind in kinds:
                        yield to_json(ev, name, ts_cache)
        for ev in finish_source(self.source, parser):
            if not kinds or ev.kind in kinds:
                yield to_json(ev, name, ts_cache)


def write_lines(lines: Iterable[str], write: Callable[[str], Any], per_write: int) -> None:
    """NDJSON lines through ``write``, ``per_write`` lines a call (the last call
    may have fewer)."""
    held: list[str] = []
    try:
        for text in lines:
            held.append(text)
            if len(held) >= per_write:
                held.append("")
                text, held = "\n".join(held), []
                write(text)
    finally:  # a read error ends the output where it ended before: after the last event made
        if held:
            held.append("")
            write("\n".join(held))


# A line the feeder slips to the reader between two of its records: it reads
# as a journal marker (no record merges into it, nor it into one) and is never
# fed to the parser. Line 0: no input line has that number.
_PAUSE = (0, "-- No entries --")
FLUSH_LINES = 512  # fast lines held at most before the consumer is made to write them
MISS_LINES = 256  # lines without a fast one, after which ...
SKIP_LINES = 4096  # ... this many go to the reader unchecked


def _fast_lines(src: OpenSource, fast: ServingLines, ts_cache: list) -> Iterator[str]:
    """Every line's NDJSON in order: the reader and parser read every line
    the fast path does not take, as one stream (``_feeder``); the fast path's
    lines are written between their records."""
    parser = src.parser
    name, to_json, feed = parser.source, Event.to_json, parser.feed
    done: list[str] = []  # the fast path's lines, written before the next record's events
    try:
        for rec in iter_records(_feeder(src, fast, done), src.plan.fmt, parser.clock):
            if done:
                yield from done
                done.clear()
            if rec.line:
                for ev in feed(rec):
                    yield to_json(ev, name, ts_cache)
    except Exception:
        # A read error: the lines before it were parsed, as the full path has
        # written them by then (only the record still held is lost, in both).
        yield from done
        raise
    yield from done


def _feeder(src: OpenSource, fast: ServingLines, done: list[str]) -> Iterator[tuple[int, str]]:
    """The lines for the reader: all but those the fast path takes, which go
    to ``done``. Before a fast line, a pause makes the reader hand on the
    record it holds, so every line before it has been parsed (whether a
    traceback is open is known) and written when the pause is read past; a
    fast line waits for the next line (an indented one would merge into it:
    then both go to the reader)."""
    tb, stats, line = src.parser.tb, src.parser.stats, fast.line
    held: tuple[tuple[int, str], str] | None = None
    paused = True  # no line given to the reader since the last pause
    lines = iter(src.lines)
    misses = 0  # lines since the last fast one
    for item in lines:
        if misses >= MISS_LINES and held is None:
            # A stretch without serving lines (a start-up, a crash loop): the
            # next lines go to the reader unchecked (the fast path only saves
            # time: which lines take it never changes the output).
            misses = 0
            paused = False
            yield item
            yield from itertools.islice(lines, SKIP_LINES)
            continue
        if held is not None:
            if item[1][:1] in _INDENTS:  # it merges into the held line: both go to the reader
                yield held[0]
                paused = False
            else:
                stats.events += 1
                done.append(held[1])
            held = None
        text = item[1]
        # Without " batch" and "HTTP/" a line is of neither kind (most start-up lines): no call.
        js = line(item[0], text) if " batch" in text or "HTTP/" in text else None
        if js is None:
            misses += 1
        else:
            misses = 0
            if not paused or len(done) >= FLUSH_LINES:
                yield _PAUSE
                paused = True
            if not tb.open:
                held = (item, js)
                continue
        yield item
        paused = False
    if held is not None:
        stats.events += 1
        done.append(held[1])
