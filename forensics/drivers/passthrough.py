"""``forensics run``'s output path: the child's bytes to ours, untouched,
and its complete lines to the analysis without ever waiting for it.

- ``OutputPump`` (a thread) reads the child's stdout and stderr as bytes
  arrive and writes them to ours at once; a blocked reader of ours blocks the
  child, exactly as a pipe would without us. It cuts complete lines off each
  stream (the file reader's rule, ``ingest.live.LineCutter``) and hands them,
  as blocks of bytes numbered by their first line, to the ``Backlog``.
- ``Backlog`` is bounded: under a flood the analysis falls behind and the
  oldest blocks are dropped (counted), never the pump slowed.
- ``FdWriter`` writes whole, survives a reader that left (EPIPE) or a full
  disk by dropping bytes (our output is not worth the server), and keeps our
  own notes from splitting one of the child's lines.
"""
from __future__ import annotations

import fcntl
import os
import select
import selectors
import sys
import termios
import threading
import time
from collections import deque
from typing import IO, Any

from forensics.drivers.startup import StartupState
from forensics.errors import ForensicsError
from forensics.ingest.live import LineCutter

READ_SIZE = 1 << 17  # a pipe holds 64 KiB; one read takes all of it
BACKLOG_BYTES = 8 << 20  # analysis backlog; beyond it the oldest blocks are dropped (a flood)
DRAIN_IDLE = 0.05  # after the child died: pipes empty this long means its output is all read
DRAIN_MAX = 0.5  # ... and a grandchild that keeps writing does not keep us alive longer
EOF = object()


class FdWriter:
    """Writes to one of our descriptors, whole, whatever its mode. If the
    reader left (EPIPE) or the disk is full, the bytes are dropped and the
    child goes on: our output is not worth the server. Notes of our own
    (annotations, the diagnosis) wait for a line boundary of the child's
    output so they never split one of its lines."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.closed = False
        self.at_line_start = True
        self.pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        with self.lock:
            self._write_all(data)
            if data:
                self.at_line_start = data.endswith(b"\n")
            if self.pending and self.at_line_start:
                self._flush_pending()

    def note(self, text: str, force: bool = False) -> None:
        """Our own line(s); ``force``: now, ending the child's unfinished line first."""
        data = text.encode("utf-8", "replace")
        with self.lock:
            self.pending.append(data)
            if force and not self.at_line_start:
                self._write_all(b"\n")
                self.at_line_start = True
            if self.at_line_start:
                self._flush_pending()

    def _flush_pending(self) -> None:
        data, self.pending = b"".join(self.pending), []
        self._write_all(data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.closed:
            try:
                n = os.write(self.fd, view)
                view = view[n:]
            except BlockingIOError:  # our stdout was handed to us non-blocking
                try:
                    select.select([], [self.fd], [], 1.0)
                except (OSError, ValueError):
                    self.closed = True
            except InterruptedError:
                continue
            except OSError:
                self.closed = True


class Backlog:
    """Blocks of complete lines from the pump to the analysis, in order,
    each with the number of its first line. Bounded: a flood drops the
    oldest blocks (the newest lines are where a failure shows)."""

    def __init__(self, cap: int = BACKLOG_BYTES) -> None:
        self.cond = threading.Condition()
        self.blocks: deque[tuple[bytes, int, int]] = deque()
        self.size = 0
        self.cap = cap
        self.closed = False
        self.dropped_lines = 0
        self.incomplete_last = False

    def put(self, block: bytes, start: int, lines: int) -> None:
        with self.cond:
            self.blocks.append((block, start, lines))
            self.size += len(block)
            while self.size > self.cap and len(self.blocks) > 1:
                old, _, n = self.blocks.popleft()
                self.size -= len(old)
                self.dropped_lines += n
            self.cond.notify()

    def trim(self, keep: int) -> None:
        """Keep only the newest ``keep`` bytes or so (whole blocks): once the
        child is dead, how it died is at the end, and we should not outlive
        it by the time a flood's backlog takes to read."""
        with self.cond:
            while self.size > keep and len(self.blocks) > 1:
                old, _, n = self.blocks.popleft()
                self.size -= len(old)
                self.dropped_lines += n

    def close(self, incomplete_last: bool = False) -> None:
        with self.cond:
            self.closed = True
            self.incomplete_last = incomplete_last
            self.cond.notify_all()

    def get(self, timeout: float) -> Any:
        """(block, first line number), None when nothing came in ``timeout``, or EOF."""
        with self.cond:
            if not self.blocks and not self.closed:
                self.cond.wait(timeout)
            if self.blocks:
                block, start, _ = self.blocks.popleft()
                self.size -= len(block)
                return block, start
            return EOF if self.closed else None


def unread(fd: int) -> int:
    """Bytes waiting in a pipe (FIONREAD); 0 if it cannot say."""
    try:
        buf = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(buf, sys.byteorder)
    except OSError:
        return 0


class OutputPump(threading.Thread):
    """The child's stdout and stderr to ours, byte for byte, as they arrive;
    complete lines of both, in arrival order, to the backlog."""

    def __init__(self, streams: list[tuple[int, FdWriter]], backlog: Backlog, state: StartupState) -> None:
        super().__init__(name="forensics-pump", daemon=True)
        self.streams = streams
        self.backlog = backlog
        self.state = state
        self.lines = 0
        self.last_line = b""  # the last complete line (for a termination message without a diagnosis)
        self.child_gone_at: float | None = None

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        cutters: dict[int, LineCutter] = {}
        for fd, writer in self.streams:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, writer)
            cutters[fd] = LineCutter()
        try:
            self._pump(sel, cutters)
        finally:
            incomplete = False
            for fd, cutter in cutters.items():
                raw, cut_short = cutter.finish_raw()
                if raw:
                    incomplete = incomplete or cut_short
                    self._hand_over(bytes(raw) + b"\n")
                try:
                    os.close(fd)
                except OSError:
                    pass
            sel.close()
            self.backlog.close(incomplete)

    def _pump(self, sel: selectors.BaseSelector, cutters: dict[int, LineCutter]) -> None:
        state = self.state
        owed: dict[int, int] | None = None  # bytes in each pipe when the child's death was seen
        while sel.get_map():
            gone = self.child_gone_at
            if gone is not None and owed is None:
                # All the child wrote is in its pipes now: those bytes are read whatever
                # it takes (a slow reader of ours); after them, only while more is there.
                owed = {key.fd: unread(key.fd) for key in sel.get_map().values()}
            ready = sel.select(DRAIN_IDLE if gone is not None else 0.25)
            if not ready and owed is not None and not any(owed.values()):
                return  # the child is dead and its pipes are empty: everything it wrote is read
            for key, _ in ready:
                fd = key.fd
                try:
                    data = os.read(fd, READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(fd)
                    if owed is not None:
                        owed[fd] = 0
                    continue
                if owed is not None:
                    owed[fd] = max(0, owed.get(fd, 0) - len(data))
                key.data.write(data)
                state.last_output_at = time.monotonic()
                raw, _ = cutters[fd].take_raw(data)
                if raw:
                    self._hand_over(bytes(raw))
            if gone is not None and owed is not None and not any(owed.values()) \
                    and time.monotonic() - gone > DRAIN_MAX:
                return  # a grandchild that holds the pipes and keeps writing does not keep us alive

    def _hand_over(self, raw: bytes) -> None:
        n = raw.count(b"\n")
        self.backlog.put(raw, self.lines + 1, n)
        self.lines += n
        cut = raw.rfind(b"\n", 0, len(raw) - 1) + 1
        self.last_line = raw[cut:-1]


class Annotations:
    """``--annotate FILE|-``: our notes, to a file or to our stderr between
    the child's lines."""

    def __init__(self, target: str, stderr: FdWriter) -> None:
        self.stderr = stderr if target == "-" else None
        self.file: IO[str] | None = None
        if self.stderr is None:
            try:
                self.file = open(target, "a", encoding="utf-8", errors="replace")  # noqa: SIM115 - held open
            except OSError as e:
                raise ForensicsError(f"--annotate {target}: {e.strerror or e}") from None

    def write(self, text: str) -> None:
        if self.stderr is not None:
            self.stderr.note(text)
            return
        try:
            assert self.file is not None
            self.file.write(text)
            self.file.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass
