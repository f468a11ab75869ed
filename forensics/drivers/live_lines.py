"""The lines ``forensics watch`` follows: numbered text lines from a file
descriptor as they arrive, decoded as the file reader decodes them."""
from __future__ import annotations

import os
import select
import time
from collections import deque
from typing import Any

from forensics.errors import InputError
from forensics.ingest.compression import compression_of
from forensics.ingest.encoding import StreamDecoder
from forensics.ingest.live import LineCutter
from forensics.ingest.sources import looks_like

IDLE_TICK = 0.05  # seconds select() waits before the clock runs anyway
HEAD_SNIFF_BYTES = 4096  # first bytes of a live stream tested for text (the file reader tests 64 KiB)
EARLY_LINES = 1024  # first lines kept for a replay (an export entry spans many lines)


class LiveLines:
    """Numbered text lines from a file descriptor as they arrive, decoded as
    the file reader decodes them (UTF-8 with replacement, a line longer than
    ``MAX_LINE_BYTES`` clipped and marked). ``tick`` runs after every read
    and whenever nothing arrives for ``IDLE_TICK``: a stream that sends
    bytes but no newline still runs the clock."""

    def __init__(self, fd: int, tick: Any) -> None:
        self.fd = fd
        self.tick = tick
        self.cutter = LineCutter()  # the file reader's rule: forensics.ingest.live
        self.decoder = StreamDecoder()  # UTF-16/32 (a PowerShell pipe) to UTF-8, as the file reader does
        self.queue: deque[tuple[int, str]] = deque()
        self.n = 0
        self.eof = False
        self.incomplete_last = False
        self.early: list[tuple[int, str]] = []  # the first lines: the plan is made from them, replayed if it changes
        self.consumed = 0  # the last line handed out
        self.last_line_at = time.monotonic()
        self.head = bytearray()  # the first decoded bytes, until they say text or not (HEAD_SNIFF_BYTES)
        self.sniffed = False
        self.raw_start = b""  # the stream's first bytes, for a compressor's magic

    def __iter__(self) -> "LiveLines":
        return self

    def __next__(self) -> tuple[int, str]:
        while not self.queue:
            if self.eof:
                raise StopIteration
            self._fill()
        item = self.queue.popleft()
        self.consumed = item[0]
        return item

    def _fill(self) -> None:
        try:
            ready, _, _ = select.select([self.fd], [], [], IDLE_TICK)
        except InterruptedError:  # pragma: no cover - retried by Python
            ready = []
        except (OSError, ValueError):  # the descriptor went away: the stream is over
            ready, self.eof = [], True
        if ready:
            try:
                data = os.read(self.fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                data = b""
            if data == b"":
                self._end()
            elif data:
                self._take(data)
        self.tick()

    def behind(self) -> bool:
        """Lines have arrived that the pipeline has not handled yet (queued,
        or waiting in the pipe). A watcher starved of CPU wakes up behind;
        its grace period must not end on a view older than the stream."""
        if self.queue:
            return True
        if self.eof or self.fd < 0:
            return False
        try:
            return bool(select.select([self.fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def _take(self, data: bytes) -> None:
        if not self.raw_start:
            self.raw_start = bytes(data[:16])
            packed = compression_of(self.raw_start)
            if packed:  # a live stream is never decompressed: say how to feed it (as classify refuses binary)
                raise InputError(f"-: {packed}-compressed input; decompress it into watch (e.g. zcat FILE | "
                                 "forensics watch), or classify the file")
        self._cut(self._sniff(self.decoder.feed(data)))

    def _sniff(self, utf8: bytes, final: bool = False) -> bytes:
        """The file reader's "is this text?" test on the stream's first bytes:
        binary input is a one-line error (exit 2), not a watch that ends
        "while starting". Lines before the decision are not held back."""
        if not self.sniffed:
            self.head += utf8[:HEAD_SNIFF_BYTES - len(self.head)]
            if len(self.head) >= HEAD_SNIFF_BYTES or final:
                self.sniffed = True
                what = looks_like(bytes(self.head))
                if what:
                    raise InputError(f"-: not a text log (looks like {what})")
        return utf8

    def _cut(self, utf8: bytes) -> None:
        text, _clipped = self.cutter.take(utf8)
        if text:
            for line in text[:-1].split("\n"):
                self._line(line)

    def _line(self, line: str) -> None:
        self.n += 1
        item = (self.n, line)
        self.queue.append(item)
        if self.n <= EARLY_LINES:
            self.early.append(item)
        self.last_line_at = time.monotonic()

    def _end(self) -> None:
        self._cut(self._sniff(self.decoder.finish(), final=True))  # what the decoder held (a stream shorter than its decision)
        last, cut_short = self.cutter.finish()
        if last is not None:
            self.incomplete_last = cut_short
            self._line(last)
        self.eof = True
