"""Traceback assembly: collect the lines of each Python traceback per
process/rank, decide where it ends, and hand the block to the Lark grammar.

Lines are keyed by (host, pid, process prefix pid, rank) so ranks that print
line by line into one stream never mix. SGLang prints the header on a
prefixed line and the rest unprefixed; those unprefixed lines go to the
newest open traceback of the same (host, pid). vLLM repeats its header on
every line; a line with the same header continues the record.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mypy_extensions import mypyc_attr

from forensics.events.grammars import parse_traceback
from forensics.events.types import TRACEBACK, Event, ExceptionRecord, Frame

HEADER_TEXT = "Traceback (most recent call last):"
CAUSE_TEXT = "The above exception was the direct cause of the following exception:"
CONTEXT_TEXT = "During handling of the above exception, another exception occurred:"

MAX_TOKENS = 3000  # per traceback; deeper recursion is counted, not kept
MAX_CONT = 12  # lines of exception message after the exception line
MAX_OPEN = 256  # open tracebacks at once

_ELISIONS = frozenset({"...", "…", "[...]", "(...)", "....", "[…]", "<snip>", "[snip]"})
_GROUP_SEP = re.compile(r"^\+?[-+]+(?: (?:\d+|and \d+ more exceptions?) -*)?$")
_CARET = re.compile(r"^[\^~\s]+$")
# A lone exception line: dotted name ending in Error/Exception/... (warnings excluded).
STRICT_EXC = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure)|Exception"
    r"|KeyboardInterrupt|StopIteration|GeneratorExit|BaseExceptionGroup|ExceptionGroup)(?:: |:$|$)"
)
_RAISE = re.compile(r"^\s{2,}raise [A-Za-z_][\w.]*")
# What an exception line looks like when its name does not end in Error & co.
# (``BackendCompilerFailed: ...``, ``RayTaskError(ValueError): ...``): a dotted
# name, an optional parenthesised one, then a colon.
# A line of Python's warnings module (``path.py:N: FutureWarning: ...``): another
# thread's or a library's stderr written into a traceback being printed, not its end.
_PY_WARNING = re.compile(r"^\S+\.py:\d+: [A-Za-z_]\w*Warning: ")
# A ``--timestamps`` line (docker, kubectl) whose payload was empty: a blank line.
_BARE_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?\s*$")
_EXC_SHAPE = re.compile(r"^[A-Za-z_][\w.]*(?:\([\w.]*\))?:(?: |$)")
# The clock in a repeated header: a logger with milliseconds (log4j, Python's asctime)
# stamps the lines of one traceback with times that tick while it is printed.
_HEADER_CLOCK = re.compile(r"(?:\d{2,4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d+)?")
_CLOCK_TICK_S = 2.0  # how far the clock may move within one printed traceback


def _same_header(header: str | None, tb: "OpenTraceback", ts: datetime | None) -> bool:
    """``header`` repeats the header of ``tb``'s lines: the same text, or the same
    but for a clock that moved by a moment (the traceback's lines printed over a tick)."""
    if tb.header is None or header is None:
        return False
    if header == tb.header:
        return True
    if ts is None or tb.ts is None or abs((ts - tb.ts).total_seconds()) > _CLOCK_TICK_S:
        return False
    return _HEADER_CLOCK.sub("", header) == _HEADER_CLOCK.sub("", tb.header)


# Python classes even where this module is compiled (forensics.native): they are
# copied, deep-copied or pickled (live readers fork them), which mypyc's native classes
# do not support.
@mypyc_attr(native_class=False)
@dataclass
class OpenTraceback:
    key: tuple
    hp: tuple
    start: int
    ts: datetime | None
    host: str | None
    ident: str | None
    pid: int | None
    rank: str | None
    level: str | None
    logger: str | None
    header: str | None
    carrier: str | None
    state: str  # "frames" | "exc" | "sep"
    tokens: list[tuple[str, str, int]] = field(default_factory=list)
    last_line: int = 0
    last_seen: int = 0  # input line when last fed (line numbers, not counters: chunked runs agree)
    cont: int = 0
    dropped: int = 0
    last_ttype: str | None = None
    in_group: bool = False
    after_blank: bool = False  # a blank line inside the frames was held back


def _group_strip(text: str) -> tuple[str, bool]:
    """Remove exception-group box pipes: ``  |   File ...`` -> ``  File ...``."""
    s = text.lstrip()
    stripped = False
    while s.startswith("|"):
        s = s[1:]
        if s.startswith(" "):
            s = s[1:]
        stripped = True
        nxt = s.lstrip()
        if not nxt.startswith("|"):
            break
        s = nxt
    return s, stripped


def classify_line(text: str, state: str, last: str | None) -> str | None:
    """Token type of a line inside an open traceback, or None if it is not one."""
    s = text.lstrip()
    if not s:
        return None
    if HEADER_TEXT in text:
        return "HEADER"
    if s.startswith("+ Exception Group Traceback"):
        return "GROUP_HEAD"
    if s.startswith("File \""):
        return "FILE"
    if s.startswith("[Previous line repeated") or s in _ELISIONS:
        return "REPEAT"  # also the "..." people leave where they cut lines out
    if s.startswith(CAUSE_TEXT[:30]):
        return "CAUSE"
    if s.startswith(CONTEXT_TEXT[:30]):
        return "CONTEXT"
    if (s[0] in "+-") and _GROUP_SEP.match(s):
        return "GROUP_SEP"
    if _CARET.match(s):
        return "CARET" if last in ("SOURCE", "FILE") else ("CONT" if state == "exc" else "CARET")
    indented = text[:1] in (" ", "\t")
    if state == "frames":
        if indented:
            return "SOURCE"
        return "EXC"
    if state == "sep":
        if STRICT_EXC.match(s):
            return "EXC"
        return None
    # state == "exc": the exception message may run over several lines
    return "CONT"


def _blank_in_frames(tb: "OpenTraceback", body: str) -> bool:
    """A blank line among the frames, the first of its run: some loggers print one
    between frames (TGI's and LoRAX's shards relayed by their launcher), and a
    ``--timestamps`` log gives it a bare time stamp. One is held back; a second
    in a row, or one after the exception line, ends the traceback as before."""
    if tb.state != "frames" or tb.after_blank or tb.last_ttype not in ("HEADER", "FILE", "SOURCE", "CARET"):
        return False
    # Only an empty line: a whitespace-only one is a frame's blank source line, and
    # holding it would join what follows (a SIGTERM handler's frames and its
    # SystemExit) to the frames before it; that stays as it was.
    return not body or _BARE_STAMP.match(body) is not None


def _lost_indent_source(tb: "OpenTraceback", body: str) -> bool:
    """A paste that lost its indentation (a web page's rendering, a chat) prints a
    frame's source line flush left after its ``File`` line, where an exception line
    would stand. Python puts the source line there whenever it has the file, so
    such a line is the frame's source, unless it reads as an exception: the
    frames and the exception line go on in order and the traceback stays whole
    (an ``Exception in ASGI application`` stays a request handler's traceback)."""
    prev = tb.tokens[-1][1] if tb.tokens else ""
    if prev[:1] in (" ", "\t") or not prev.startswith('File "'):
        return False  # the File line kept its indentation: the paste did not lose it
    return not (STRICT_EXC.match(body) or _EXC_SHAPE.match(body))


def _start_type(text: str) -> str | None:
    """The kind of line that starts a traceback, or None."""
    if HEADER_TEXT in text:
        return "HEADER"
    s = text.lstrip()
    start_type = None
    if s.startswith("+ Exception Group Traceback"):
        start_type = "GROUP_HEAD"
    elif s.startswith("File \"") and text[:1] == " ":
        start_type = "FILE"
    elif STRICT_EXC.match(text):
        start_type = "EXC"
    elif _RAISE.match(text):
        start_type = "SOURCE"
    return start_type


@mypyc_attr(native_class=False)
class TracebackAssembler:
    def __init__(self, source: str = "-") -> None:
        self.source = source
        self.open: dict[tuple, OpenTraceback] = {}
        self.by_hp: dict[tuple, tuple] = {}
        self.counter = 0
        self.capped = 0

    def has_open(self) -> bool:
        return bool(self.open)

    # -- feeding ----------------------------------------------------------
    def feed(self, line: int, text: str, key: tuple, hp: tuple, prefixed: bool, header: str | None,
             ctx: tuple) -> tuple[bool, list[Event]]:
        """Offer a line. Returns (consumed, finished events). ``ctx``: the line's
        (ts, host, ident, pid, rank, level, logger), for a traceback it starts."""
        self.counter = line
        out: list[Event] = []
        tb = self.open.get(key)
        if tb is None and not prefixed:
            k = self.by_hp.get(hp)
            if k is not None:
                tb = self.open.get(k)
        if tb is not None:
            done = self._continue(tb, line, text, key, hp, prefixed, header, ctx, out)
            if done is not None:
                return done
        # No open traceback takes it: does it start one?
        start_type = _start_type(text)
        if start_type is None:
            return False, out
        self._start(start_type, line, text, key, hp, prefixed, header, ctx, out)
        return True, out

    def _continue(self, tb: OpenTraceback, line: int, text: str, key: tuple, hp: tuple, prefixed: bool,
                  header: str | None, ctx: tuple, out: list[Event]) -> tuple[bool, list[Event]] | None:
        """Offer a line to the open traceback ``tb``: the answer of ``feed``, or
        None when the line is not part of it (``tb`` may have been closed into
        ``out``) and may start a traceback of its own."""
        # A prefixed line continues a traceback only when it repeats the
        # header the traceback's lines carry (vLLM); otherwise it is a new record.
        same_record = (not prefixed) or _same_header(header, tb, ctx[0])
        body, grouped = _group_strip(text) if tb.in_group else (text, False)
        if same_record and _blank_in_frames(tb, body):
            tb.after_blank = True  # held back: the next line says whether the traceback goes on
            return True, out
        ttype = classify_line(body, tb.state, tb.last_ttype) if same_record else None
        if ttype is not None and tb.after_blank:
            tb.after_blank = False
            if ttype == "EXC" and not (STRICT_EXC.match(body.lstrip()) or _EXC_SHAPE.match(body.lstrip())):
                ttype = None  # after a blank line only more frames or the exception continue it
        if ttype == "EXC" and _PY_WARNING.match(body):
            ttype = None
        if ttype is None and same_record and HEADER_TEXT in text:
            ttype = "HEADER"
        if not same_record:
            # A new record from this process: a header starts a new traceback,
            # anything else ends this one (its frames may be cut short).
            if HEADER_TEXT in text or tb.state in ("exc", "frames", "sep"):
                out.append(self._close(tb))
            return None
        if ttype is None or (ttype == "CONT" and tb.cont >= MAX_CONT) or (ttype == "HEADER" and tb.state == "exc"):
            out.append(self._close(tb))
            return None
        if ttype == "FILE" and tb.state == "exc" and not tb.in_group:
            # Frames never follow an exception line in one traceback (a chained
            # one starts with "During handling ..."): this one is complete, and
            # the frames belong to the traceback whose header a logger just
            # printed with a prefix (only its first line carries the prefix).
            out.append(self._close(tb))
            consumed, more = self.feed(line, text, key, hp, prefixed, header, ctx)
            return consumed, out + more
        if (ttype == "EXC" and tb.last_ttype == "FILE" and tb.tokens and '", line ' not in tb.tokens[-1][1]
                and not STRICT_EXC.match(body)):
            # A File line hard-wrapped by a narrow window: glue the rest back on.
            kind, prev, at = tb.tokens[-1]
            tb.tokens[-1] = (kind, prev + body.strip(), at)
            tb.last_line = line
            return True, out
        if ttype == "EXC" and tb.last_ttype == "FILE" and _lost_indent_source(tb, body):
            ttype = "SOURCE"
        self._add(tb, ttype, body, line)
        return True, out

    def _start(self, start_type: str, line: int, text: str, key: tuple, hp: tuple, prefixed: bool,
               header: str | None, ctx: tuple, out: list[Event]) -> None:
        """Open a traceback at this line (closing the stalest one past ``MAX_OPEN``)."""
        if len(self.open) >= MAX_OPEN:
            oldest = min(self.open.values(), key=lambda t: (t.last_seen, t.start))
            out.append(self._close(oldest))
            self.capped += 1
        carrier = None
        if start_type == "HEADER":
            i = text.find(HEADER_TEXT)
            carrier = text[:i].strip() or None
        ts, host, ident, pid, rank, level, logger = ctx
        tb = OpenTraceback(key, hp, line, ts, host, ident, pid, rank, level, logger, header, carrier, "frames")
        self.open[key] = tb
        if not prefixed or start_type == "HEADER":
            self.by_hp[hp] = key
        else:
            self.by_hp.setdefault(hp, key)
        self._add(tb, start_type, text.strip() if start_type == "HEADER" else text, line)

    def _add(self, tb: OpenTraceback, ttype: str, text: str, line: int) -> None:
        tb.last_line = line
        tb.last_seen = self.counter
        if ttype == "HEADER":
            tb.state = "frames"
            text = HEADER_TEXT
        elif ttype == "GROUP_HEAD":
            tb.state = "frames"
            tb.in_group = True
        elif ttype == "GROUP_SEP":
            tb.state = "sep"  # a sub-exception (or the end of the group) follows
        elif ttype in ("FILE", "SOURCE", "CARET", "REPEAT"):
            tb.state = "frames"
        elif ttype == "EXC":
            tb.state = "exc"
            tb.cont = 0
        elif ttype == "CONT":
            tb.cont += 1
        elif ttype in ("CAUSE", "CONTEXT"):
            tb.state = "sep"
        tb.last_ttype = ttype
        if len(tb.tokens) >= MAX_TOKENS and ttype in ("FILE", "SOURCE", "CARET", "REPEAT"):
            tb.dropped += 1
            return
        tb.tokens.append((ttype, text, line))

    # -- closing ------------------------------------------------------------
    def close_idle(self, older_than: int, now_line: int | None = None) -> list[Event]:
        """Close tracebacks not fed for ``older_than`` input lines (exception
        already seen) or ten times that (still in frames)."""
        out = []
        now = self.counter if now_line is None else now_line
        for tb in sorted(self.open.values(), key=lambda t: t.start):
            age = now - tb.last_seen
            if age > older_than and tb.state == "exc" or age > older_than * 10:
                out.append(self._close(tb))
        return out

    def close_complete(self) -> list[Event]:
        """Close the tracebacks whose exception line has arrived. By its
        structure such a traceback is complete: only more of the message or
        a chained ``During handling ...`` / ``The above exception ...`` from
        the same process could extend it, and in a file the next line that
        is not one of those closes it. A live reader calls this on a
        ``fork`` when the stream pauses, so it sees the traceback at its
        exception line without waiting for the next line."""
        return [self._close(tb) for tb in sorted(self.open.values(), key=lambda t: t.start) if tb.state == "exc"]

    def fork(self) -> "TracebackAssembler":
        """An independent copy of the open tracebacks (a live reader closes
        the copy to see "the answer if the stream ended here")."""
        new = copy.copy(self)
        new.open = {}
        for k, tb in self.open.items():
            t = copy.copy(tb)
            t.tokens = list(tb.tokens)
            new.open[k] = t
        new.by_hp = dict(self.by_hp)
        return new

    def close_all(self, eof: bool = False, incomplete_last_line: bool = False) -> list[Event]:
        out = [self._close(tb, eof=eof, cut_line=incomplete_last_line) for tb in sorted(self.open.values(), key=lambda t: t.start)]
        return out

    def _close(self, tb: OpenTraceback, eof: bool = False, cut_line: bool = False) -> Event:
        self.open.pop(tb.key, None)
        if self.by_hp.get(tb.hp) == tb.key:
            del self.by_hp[tb.hp]
        return build_event(tb, self.source, cut_line=cut_line)


def build_event(tb: OpenTraceback, source: str, cut_line: bool = False) -> Event:
    parsed = parse_traceback(tb.tokens)
    chain: list[ExceptionRecord] = []
    dangling: list[Frame] = []
    has_header = False
    orphan: list[str] = []
    if parsed is not None:
        chain = parsed["chain"]
        dangling = parsed["dangling_frames"]
        has_header = parsed["has_header"]
        orphan = parsed["orphan_source"]
    truncated = (not has_header) or (not chain) or bool(dangling) or tb.state in ("frames", "sep")
    if any(f.partial for f in dangling) or (cut_line and tb.last_line and tb.tokens and tb.tokens[-1][0] != "EXC"):
        truncated = True
    last = chain[-1] if chain else None
    frames = list(last.frames) if last else []
    frames.extend(dangling)
    if last is not None:
        text = last.rendered.split("\n", 1)[0]
    elif orphan:
        text = orphan[-1]
    elif frames:
        f = frames[-1]
        text = f'File "{f.file}"' + (f", line {f.lineno}, in {f.function}" if f.lineno else "")
    else:
        text = tb.tokens[0][1] if tb.tokens else ""
    data: dict[str, Any] = {
        "exc_type": last.exc_type if last else None,
        "exc_message": last.exc_message if last else None,
        "frames": tuple(frames),
        "chain": tuple(chain),
        "truncated": truncated,
        "carrier": tb.carrier,
        # whether it began with its "Traceback (most recent call last):" line: a traceback cut before
        # its exception line is then proven by that line, what its logger said when it caught it
        "headed": has_header,
    }
    if orphan:
        data["orphan_source"] = orphan
    if tb.dropped:
        data["frames_dropped"] = tb.dropped
    return Event(TRACEBACK, tb.start, text, tb.ts, tb.host, tb.ident, tb.pid, tb.rank, tb.level or "ERROR",
                 tb.logger, tb.last_line or tb.start, source, data)
