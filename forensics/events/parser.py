"""Records -> events. One combined regex routes each message; only lines that
carry structure (and traceback blocks) go to Lark."""
from __future__ import annotations

import itertools
import os
from datetime import datetime, timedelta, timezone
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from mypy_extensions import mypyc_attr

from forensics.envelope.clock import ENV as TZ_ENV
from forensics.envelope.clock import Clock, infer_offset
from forensics.envelope.readers import iter_records
from forensics.envelope.record import Record
from forensics.envelope.sniff import detect_format
from forensics.envelope.wrappers import detect_wrappers, unwrap
from forensics.events import types as kinds
from forensics.events.bulk import ACCESS as _ACCESS
from forensics.events.bulk import THIN_FORMATS, BulkGate, thin_blocks, thin_serving
from forensics.events.grammars import parse_message
from forensics.events.types import ACCESS, LOG, MESSAGE, PHASE_MARKER, Event, hot_data
from forensics.events.phases import BATCH_HEADS, MARKER_DATA, match_marker
from forensics.events.prefixes import LEVEL_NAMES, peel_prefix
from forensics.events.tracebacks import HEADER_TEXT, STRICT_EXC, TracebackAssembler
from forensics.ingest.live import decode
from forensics.ingest.sources import Source
from forensics.ingest.values import bounded_int
from forensics.events.textmemo import remember

# The router: one search decides whether a line needs the message grammar.
_STRUCT = re.compile(
    r"(?P<cgr>^Regist(?:ering|ered) \d+ cuda graph addresses)"
    r"|(?P<pkw>^Unexpected error during package walk: )"
    r"|(?P<unit>^[\w@.\\\-:]+?\.(?:service|scope|socket|target|mount|timer|slice|path): "
    r"|^(?:Started|Starting|Stopping|Stopped|Failed to start|Dependency failed for|Reloading|Reloaded) "
    r"|^Unit \S+ entered \w+ state)"
)
_BLOB = re.compile(r"^\[(?P<size>\d+(?:\.\d)?[BKMG]) blob data\]$")
SYSTEMD_IDENTS = frozenset({"systemd", "init", "init.scope", "systemd-logind"})
# A level written at the head of a message the envelope had no level for:
# "ERROR: ...", and the bracketed error tags of C++ runtimes' loggers, after
# their component tags: TurboMind "[TM][ERROR]", TensorRT-LLM
# "[TensorRT-LLM][ERROR]", CANN "[ERROR] 2025-05-09-10:11:12 (PID:...)". Their
# warning tags stay text: early-warning linking reads a level from the text
# already, and as event levels they made harmless plugin warnings live alarms.
_LEVEL_HINT = re.compile(r"^(?:(?P<word>ERROR|Error|FATAL|Fatal|CRITICAL|WARNING|Warning|WARN)\b[:\s]|"
                         r"(?:\[[\w.\-]{1,24}\])*\[(?P<tag>ERROR|FATAL|CRITICAL)\][\s\[])")
_YEAR_HINT = re.compile(r"(20\d\d)-\d\d-\d\d[ T]\d\d:")
SAMPLE_LINES = 64


# Python classes even where this module is compiled (forensics.native): they are
# copied, deep-copied or pickled (live readers fork them), which mypyc's native classes
# do not support.
@mypyc_attr(native_class=False)
@dataclass
class ParseStats:
    lines: int = 0
    events: int = 0
    unparsed: int = 0
    clipped_lines: int = 0
    tracebacks: int = 0
    truncated_tracebacks: int = 0
    caps_hit: dict[str, int] = field(default_factory=dict)
    format: str | None = None
    truncated_gzip: bool = False
    changed: bool = False  # the file grew, shrank or was replaced while it was read

    @property
    def parsed(self) -> int:
        return self.lines - self.unparsed

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"lines": self.lines, "parsed": self.parsed, "unparsed": self.unparsed, "events": self.events,
             "tracebacks": self.tracebacks, "truncated_tracebacks": self.truncated_tracebacks,
             "format": self.format}
        if self.clipped_lines:
            d["clipped_lines"] = self.clipped_lines
        if self.caps_hit:
            d["caps_hit"] = dict(self.caps_hit)
        if self.truncated_gzip:
            d["truncated_gzip"] = True
        if self.changed:
            d["changed"] = True
        return d


@mypyc_attr(native_class=False)
class EventParser:
    """Feed records, get events. Keeps only per-process traceback buffers."""

    def __init__(self, source: str = "-", clock: Clock | None = None, wrappers: list | None = None) -> None:
        self.source = source
        self.clock = clock or Clock()
        self.wrappers = wrappers or []
        self.tb = TracebackAssembler(source)
        self.stats = ParseStats()
        self._last_unparsed_line = -1
        self._since_idle_check = 0
        self._app_zone = self.clock.app_zone

    def feed(self, rec: Record) -> list[Event]:
        out: list[Event] = []
        if rec.marker is not None:
            if rec.marker == "boot":
                out.extend(self._flush_tracebacks())
            kind = kinds.JOURNAL_MARKER if rec.marker != "null-message" else kinds.BLOB
            out.append(Event(kind, rec.line, rec.text, rec.ts, rec.host, rec.ident, rec.pid,
                             source=self.source, data={"marker": rec.marker}))
            return self._count(out)
        text = rec.text
        if "\n" in text:
            return self._feed_multiline(rec)
        if self.wrappers:
            text = unwrap(text, self.wrappers)
        if text[:1] == "[" and text.endswith(" blob data]") and _BLOB.match(text):
            out.append(Event(kinds.BLOB, rec.line, text, rec.ts, rec.host, rec.ident, rec.pid, source=self.source,
                             data={"size": _BLOB.match(text).group("size")}))  # type: ignore[union-attr]
            return self._count(out)
        msg, pfx = peel_prefix(text, self.clock.year)
        ts = rec.ts or (pfx.app_ts if self._app_zone is None else self._app_time(pfx))
        tb = self.tb
        if not tb.open and HEADER_TEXT not in msg:
            if msg.startswith(BATCH_HEADS) and "HTTP/" not in msg and rec.pid != 1 \
                    and rec.ident not in SYSTEMD_IDENTS and (rec.ident is not None or pfx.dialect):
                # A batch-statistics line (the serving bulk): what _line_event makes of it,
                # its branches decided (such a line cannot start a traceback).
                self.stats.events += 1
                return [Event(PHASE_MARKER, rec.line, msg, ts, rec.host, rec.ident, rec.pid, pfx.rank, pfx.level,
                              pfx.logger, None, self.source, _BATCH_STATS)]
            if msg[:1] not in _TB_FIRST or not _may_start_traceback(msg):
                # The common case: one line, one event, nothing half-assembled.
                self.stats.events += 1
                return [self._line_event(rec, pfx, msg, ts)]
        # Tracebacks first: an open one may claim this line.
        prefixed = pfx.header is not None
        key = (rec.host, rec.pid, pfx.proc_pid, pfx.rank, pfx.proc)
        hp = (rec.host, rec.pid, pfx.proc_pid)
        ctx = (ts, rec.host, rec.ident, rec.pid, pfx.rank, pfx.level, pfx.logger)  # see TracebackAssembler.feed
        consumed, done = tb.feed(rec.line, msg, key, hp, prefixed, pfx.header, ctx)
        out.extend(done)
        # Every 256th input line (by number, so split runs agree), close
        # tracebacks that went quiet long ago.
        if rec.line // 256 != self._since_idle_check:
            self._since_idle_check = rec.line // 256
            out.extend(tb.close_idle(400, rec.line))
        if consumed:
            return self._count(out)
        ev = self._line_event(rec, pfx, msg, ts)
        if ev.kind == kinds.UNIT_LIFECYCLE:
            # A lifetime boundary: tracebacks of the old process are complete now.
            out.extend(self._flush_tracebacks())
        out.append(ev)
        return self._count(out)

    def _feed_multiline(self, rec: Record) -> list[Event]:
        """One journal entry printed over several lines. A traceback (or any
        line of one) goes through the assembler line by line; anything else
        stays one message."""
        parts = rec.text.split("\n")
        step = rec.line_step
        tracebackish = self.tb.open or any(HEADER_TEXT in p or _may_start_traceback(p.lstrip("[]0123456789-: ")) or
                                           p.lstrip().startswith('File "') for p in parts)
        if tracebackish:
            out: list[Event] = []
            for i, part in enumerate(parts):
                sub = Record(rec.line + i * step, part, rec.ts, rec.host, rec.ident, rec.pid, cont=i > 0,
                             unit=rec.unit)
                out.extend(self.feed(sub))
            return out
        first = Record(rec.line, parts[0], rec.ts, rec.host, rec.ident, rec.pid, unit=rec.unit)
        text = unwrap(parts[0], self.wrappers) if self.wrappers else parts[0]
        msg, pfx = peel_prefix(text, self.clock.year)
        ts = rec.ts or (pfx.app_ts if self._app_zone is None else self._app_time(pfx))
        ev = self._line_event(first, pfx, msg, ts)
        end = rec.line + (len(parts) - 1) * step
        full = "\n".join([ev.text, *parts[1:]])
        merged = Event(ev.kind, ev.line, full, ev.ts, ev.host, ev.ident, ev.pid, ev.rank, ev.level, ev.logger,
                       end if end != ev.line else None, ev.source, ev.data)
        if ev.kind == kinds.MESSAGE and step:
            self.stats.unparsed += end - rec.line  # the first line was counted by _line_event
        if ev.kind == kinds.UNIT_LIFECYCLE:
            return self._count([*self._flush_tracebacks(), merged])
        self.stats.events += 1
        return [merged]

    def _line_event(self, rec: Record, pfx, msg: str, ts) -> Event:  # type: ignore[no-untyped-def]
        level = pfx.level
        c0 = msg[:1]
        ident = rec.ident
        if (c0 == "R" and (msg.startswith("Registering ") or msg.startswith("Registered "))
                or c0 == "U" and msg.startswith("Unexpected error during package walk")
                or ident in SYSTEMD_IDENTS or rec.pid == 1 or (ident is None and not pfx.dialect)) \
                and _STRUCT.match(msg) is not None:
            ev = self._structured_event(rec, pfx, msg, ts)
            if ev is not None:
                return ev
        if "HTTP/" in msg and (am := _ACCESS.search(msg)) is not None:
            return Event(ACCESS, rec.line, msg, ts, rec.host, ident, rec.pid, pfx.rank, level, pfx.logger,
                         None, self.source, _access_data(am))
        name = match_marker(msg, pfx.logger)
        if name is not None:
            return Event(PHASE_MARKER, rec.line, msg, ts, rec.host, ident, rec.pid, pfx.rank, level,
                         pfx.logger, None, self.source, MARKER_DATA[name])
        if level is None and (lm := _LEVEL_HINT.match(msg)) is not None:
            w = (lm.group("word") or lm.group("tag")).upper()
            level = LEVEL_NAMES.get(w, w)
        if pfx.dialect is not None or level is not None:
            return Event(LOG, rec.line, msg, ts, rec.host, ident, rec.pid, pfx.rank, level, pfx.logger, None,
                         self.source)
        if rec.line != self._last_unparsed_line:
            self.stats.unparsed += 1
            self._last_unparsed_line = rec.line
        return Event(MESSAGE, rec.line, msg, ts, rec.host, ident, rec.pid, pfx.rank, None, None, None, self.source)

    def _structured_event(self, rec: Record, pfx, msg: str, ts) -> Event | None:  # type: ignore[no-untyped-def]
        """The event of a line the router sent to the message grammar, or None
        when the grammar does not know it."""
        parsed = parse_message(msg)
        if parsed is None:
            return None
        kind, fields = parsed
        if kind == kinds.UNIT_LIFECYCLE and rec.unit and not fields.get("unit"):
            fields["unit"] = rec.unit
        return Event(kind, rec.line, msg, ts, rec.host, rec.ident, rec.pid, pfx.rank,
                     pfx.level or ("WARNING" if kind == kinds.PACKAGE_WALK_WARNING else None),
                     pfx.logger, source=self.source, data=fields)

    def _app_time(self, pfx) -> datetime | None:  # type: ignore[no-untyped-def]
        """A prefix's time; one printed without a zone is read in ``Clock.app_zone``."""
        ts = pfx.app_ts
        if ts is not None and self._app_zone is not None and not pfx.app_zoned:
            return ts.replace(tzinfo=self._app_zone).astimezone(timezone.utc)
        return ts

    def _flush_tracebacks(self) -> list[Event]:
        return self.tb.close_all() if self.tb.open else []

    def flush_idle(self) -> list[Event]:
        """Close tracebacks whose exception line has arrived (live streams call
        this when input pauses, so a failure is reported without waiting)."""
        if not self.tb.open:
            return []
        return self._count(self.tb.close_idle(-1))

    def finish(self, incomplete_last_line: bool = False) -> list[Event]:
        out = self.tb.close_all(eof=True, incomplete_last_line=incomplete_last_line)
        if self.tb.capped:
            self.stats.caps_hit["open_tracebacks"] = self.tb.capped
        return self._count(out)

    def _count(self, events: list[Event]) -> list[Event]:
        st = self.stats
        st.events += len(events)
        for ev in events:
            if ev.kind == kinds.TRACEBACK:
                st.tracebacks += 1
                if ev.data.get("truncated"):
                    st.truncated_tracebacks += 1
                if ev.data.get("frames_dropped"):
                    st.caps_hit["traceback_frames"] = st.caps_hit.get("traceback_frames", 0) + ev.data["frames_dropped"]
        return events


_ACCESS_MEMO: dict[str, dict] = {}  # the request text -> its fields (few distinct: same routes, same codes)


def _access_data(am: re.Match[str]) -> dict:
    """An access line's fields, shared by the lines of the same request and
    status (never mutated; to_json encodes them once: ``hot_data``)."""
    key = am.group(0)
    got = _ACCESS_MEMO.get(key)
    if got is None:
        got = remember(_ACCESS_MEMO, key, hot_data({"method": am.group("method"), "path": am.group("path"),
                                                    "status": bounded_int(am.group("status"), 999, 3)}), 1024)
    return got


_EXC_TAILS = ("Error", "Exception", "Exit", "Interrupt", "Fault", "Failure", "Iteration", "ExceptionGroup")


_BATCH_STATS = MARKER_DATA["batch_stats"]
# The first characters ``_may_start_traceback`` can say yes to (a space or a letter).
_TB_FIRST = frozenset(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _may_start_traceback(msg: str) -> bool:
    c = msg[:1]
    if c == " ":
        s = msg.lstrip()
        return s.startswith("File \"") or s.startswith("raise ") or s.startswith("+ Exception Group")
    if not c.isalpha():
        return False
    i = msg.find(":")
    head = msg[:i] if 0 < i < 160 else msg[:160]
    if " " in head or not head.endswith(_EXC_TAILS):
        return False
    return STRICT_EXC.match(msg) is not None


# ---------------------------------------------------------------- whole sources
def _split_blocks(blocks: Iterable[str]) -> Iterator[list[str]]:
    for block in blocks:
        lines = block.split("\n")
        if block.endswith("\n"):
            lines.pop()
        yield lines


def number_lines(blocks: Iterable[str], start: int = 1) -> Iterator[tuple[int, str]]:
    # enumerate/chain run in C: no Python frame per line.
    return enumerate(itertools.chain.from_iterable(_split_blocks(blocks)), start)


def take_head(blocks: Iterator[Any], n: int) -> tuple[list[tuple[int, str]], Iterator[Any]]:
    """The first ``n`` numbered lines, and the blocks of the rest (the rest of
    the last block read, then the unread blocks): ``number_lines`` over them
    from ``len(head) + 1`` continues the head exactly. Blocks of bytes
    (``Source.blocks(raw=True)``) give decoded head lines, raw rest blocks."""
    head: list[tuple[int, str]] = []
    for block in blocks:
        raw = not isinstance(block, str)
        nl = b"\n" if raw else "\n"
        lines = block.split(nl)
        if block.endswith(nl):
            lines.pop()
        want = n - len(head)
        taken = lines if len(lines) <= want else lines[:want]
        head.extend(enumerate([decode(t) for t in taken] if raw else taken, len(head) + 1))
        if len(lines) <= want:
            if len(head) < n:
                continue
            return head, blocks
        cut = 0
        for _ in range(want):
            cut = block.index(nl, cut) + 1
        return head, itertools.chain((block[cut:],), blocks)
    return head, blocks


@mypyc_attr(native_class=False)
@dataclass
class SourcePlan:
    """What the first lines of a source decide for all of it."""

    fmt: str
    year: int
    wrappers: list
    offset: int | None = None  # minutes east of UTC of a zone-less clock beside a zoned one (Clock.offset)

    def clock(self) -> Clock:
        clock = Clock(offset=self.offset)
        clock.year = self.year
        return clock


def thins(plan: SourcePlan) -> bool:
    """Whether runs of serving lines may be thinned in this format."""
    return plan.fmt in THIN_FORMATS and not plan.wrappers


def plan_source(sample: list[tuple[int, str]], input_format: str = "auto", mtime: float | None = None) -> SourcePlan:
    """``mtime``: when the file was last written. Timestamps without a year
    take it from a full date in the first lines (ISO stamps of the server,
    journalctl's ``-- Logs begin at`` header), else from when the log ended
    (the file's mtime, else now): a log whose first month is later than that
    month began the year before."""
    fmt = detect_format([t for _, t in sample]) if input_format == "auto" else input_format
    clock = Clock()
    for _, t in sample:
        y = _YEAR_HINT.search(t)
        if y:
            clock.year = bounded_int(y.group(1), 9999, 4) or clock.year
            break
    else:
        clock.year = _year_from_end(sample, fmt, mtime)
    probe = Clock()
    probe.year = clock.year
    sample_records = list(iter_records(iter(sample), fmt, probe)) if sample else []
    wrappers = detect_wrappers([r.text for r in sample_records if r.marker is None])
    offset = None if os.environ.get(TZ_ENV) else infer_offset(  # --tz wins
        sample_records, fmt, lambda text: _app_stamp(text, clock.year))
    return SourcePlan(fmt, clock.year, wrappers, offset)


def _app_stamp(text: str, year: int) -> tuple[datetime | None, bool]:
    pfx = peel_prefix(text, year)[1]
    return pfx.app_ts, pfx.app_zoned


def _year_from_end(sample: list[tuple[int, str]], fmt: str, mtime: float | None) -> int:
    end = datetime.fromtimestamp(mtime, timezone.utc) if mtime is not None else datetime.now(timezone.utc)
    probe = Clock()
    probe.year = end.year
    for rec in iter_records(iter(sample[:16]), fmt, probe) if sample else ():
        if rec.ts is not None:
            if rec.ts > end + timedelta(days=1):  # began after it ended: the year before
                return end.year - 1
            break
    return end.year


def run_parser(parser: EventParser, lines: Iterator[tuple[int, str]], plan: SourcePlan,
               bulk_gate: BulkGate | None = None, count_range: tuple[int, float] | None = None,
               stop_at: float | None = None, merge: bool = True,
               thinned: bool = False) -> Iterator[tuple[int, list[Event]]]:
    """Feed numbered lines; yield (line that emitted them, events). With
    ``stop_at``, stop at the first line at or past it once no traceback is
    open (a chunk of a file split across processes). ``thinned``: ``lines``
    already come through ``bulk_gate`` (``thin_blocks``)."""
    clock = parser.clock
    if bulk_gate is not None and not thinned and thins(plan):
        lines = thin_serving(lines, bulk_gate, count_range)
    tb_open = parser.tb.open
    feed = parser.feed
    for rec in iter_records(lines, plan.fmt, clock, merge):
        if stop_at is not None and rec.line >= stop_at and not tb_open:
            return
        evs = feed(rec)
        if bulk_gate is not None:
            bulk_gate.open = not tb_open
        if evs:
            yield rec.line, evs


@mypyc_attr(native_class=False)
@dataclass
class OpenSource:
    """A source ready to be parsed: its plan, its parser, its numbered lines."""

    plan: SourcePlan
    parser: EventParser
    lines: Iterator[tuple[int, str]]
    thinned: bool


def open_source(source: Source, input_format: str = "auto", line_mode: bool = False,
                bulk_gate: BulkGate | None = None) -> OpenSource:
    """The first lines of a source read and planned; a parser for the rest."""
    # A diagnosis reads the blocks undecoded: thinning decodes only the lines it keeps.
    raw = bulk_gate is not None and not line_mode
    blocks = source.blocks(line_mode=line_mode, raw=True) if raw else source.blocks(line_mode=line_mode)
    sample: list[tuple[int, str]] = []
    if input_format == "auto" or not line_mode:
        sample, blocks = take_head(blocks, 8 if line_mode else SAMPLE_LINES)
    mtime = None
    if source.path is not None and not source.journal:
        try:
            mtime = source.path.stat().st_mtime
        except OSError:
            pass
    plan = plan_source(sample, input_format, mtime)
    parser = EventParser(source.name, plan.clock(), plan.wrappers)
    parser.stats.format = plan.fmt
    thinned = bulk_gate is not None and thins(plan)
    if thinned:
        lines = thin_blocks(blocks, bulk_gate, start=len(sample) + 1, head=sample)  # type: ignore[arg-type]
    else:
        text_blocks = map(decode, blocks) if raw else blocks
        lines = itertools.chain(sample, number_lines(text_blocks, start=len(sample) + 1))
    return OpenSource(plan, parser, lines, thinned)


def finish_source(source: Source, parser: EventParser, bulk_gate: BulkGate | None = None) -> Iterator[Event]:
    """The events the end of a source closes, then its statistics completed."""
    yield from parser.finish(incomplete_last_line=source.stats.incomplete_last_line)
    st = parser.stats
    if bulk_gate is not None:
        st.events += bulk_gate.skipped
    st.lines = source.stats.lines
    st.clipped_lines = source.stats.clipped_lines
    st.truncated_gzip = source.stats.truncated_gzip


def iter_source_events(source: Source, input_format: str = "auto", line_mode: bool = False,
                       parser_out: list | None = None, bulk_gate: BulkGate | None = None) -> Iterator[Event]:
    """Events of one source, streaming. ``parser_out`` receives the
    EventParser (for its stats) before the first event is yielded."""
    src = open_source(source, input_format, line_mode, bulk_gate)
    parser = src.parser
    if parser_out is not None:
        parser_out.append(parser)
    if bulk_gate is None:
        # run_parser's loop without its (line, events) pairs: one generator less a line.
        feed = parser.feed
        for rec in iter_records(src.lines, src.plan.fmt, parser.clock, not line_mode):
            yield from feed(rec)
    else:
        for _, evs in run_parser(parser, src.lines, src.plan, bulk_gate, merge=not line_mode, thinned=src.thinned):
            yield from evs
    yield from finish_source(source, parser, bulk_gate)
