"""Split one big regular file across processes (``--jobs``) with the same
result as one process.

The file is cut into byte ranges at line starts. A worker starts parsing a
little before its range (warm-up) so tracebacks that began earlier are
assembled, not mistaken for fragments; it keeps the events that start inside
its range, and runs past the range end until no traceback is open (to the end
of the file if need be, then it finishes the file as one process would).
Every event is tagged with the line whose processing emitted it, so merging
the workers' outputs by that tag reproduces the single-process order exactly.

Exactness does not rest on the warm-up being long enough (a few long lines
can fill it): each worker reports the line where it stopped with no
traceback open (its *sync line*) and whether it was itself clean when it
reached its first line. The next chunk is taken as is only when it starts at
that sync line and was clean there; otherwise it is parsed again from the sync
line, from a clean state, which is what one process had there.

The file is read as it was when the run began (its size then): a file that
grows, shrinks or is replaced meanwhile is reported (``stats.changed`` and a
warning on stderr), never silently miscounted.
"""
from __future__ import annotations

import dataclasses
import heapq
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from forensics.envelope.readers import iter_records
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.parser import (SAMPLE_LINES, THIN_FORMATS, BulkGate, EventParser, ParseStats, SourcePlan,
                                     number_lines, plan_source, thin_blocks, thins)
from forensics.events.file_ranges import (RangeSource, count_newlines, file_id, number_chunks, offset_of_line,
                                         plan_cuts, warm_start)
from forensics.ingest.sources import Source

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor  # imported when a pool starts: most runs use none

# Work unit: small enough to stream (a crash-loop chunk is all events: the parent
# holds ~3), big enough to amortise; text lines pickle cheaply, so bigger.
EVENT_CHUNK_BYTES = 1 << 20
TEXT_CHUNK_BYTES = 4 << 20
WARM_BYTES = 256 << 10  # how far before its range a worker starts, to pick up open tracebacks
PARALLEL_FORMATS = THIN_FORMATS | {"plain", "cat"}
INF = float("inf")

# How a worker hands an event back as one line of text (no raw newline in it):
# ``encode(event, source_name, cache)``; picklable (a module-level function).
LineEncoder = Callable[[Event, str, list], str]


def split_jobs(path: Path | None, requested: int | None) -> int:
    """Processes for an explicit ``--jobs``: as many as asked, but one for
    what cannot be split (no file, compressed streams, journal files, binary
    input). Without ``--jobs``, one: with the NDJSON fast path a split costs
    ~2.3x the CPU for no wall-clock gain on 2 cores (bench/README.md)."""
    if requested is None or requested < 2 or path is None:
        return 1
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return 1
    from forensics.ingest.encoding import sniff_encoding
    from forensics.ingest.sources import JOURNAL_MAGIC, compression_of, looks_like

    wide = sniff_encoding(head)
    if compression_of(head) or head.startswith(JOURNAL_MAGIC) or (wide and wide[0] != "utf-8") or looks_like(head):
        # compressed streams cannot be split; journal, binary and UTF-16/32 files (whose
        # newlines are not the byte 0x0a) take the one-process path
        return 1
    return requested


@dataclass
class ChunkResult:
    keys: list[tuple[float, int]]  # emit keys, in emit order
    payloads: list[Any]  # events, or lines of text
    end_line: float  # first line of the next range
    joined: bool = False  # payloads is one newline-joined string (encoded lines)
    events: int = 0
    unparsed_lines: set[int] = field(default_factory=set)
    tracebacks: int = 0
    truncated: int = 0
    clipped: int = 0
    start_line: int = 1
    sync_line: float = INF  # first line at/after end_line reached with no traceback open; INF: ran to EOF
    clean_at_start: bool = True  # no traceback was open when the worker reached start_line
    short_read: bool = False  # the file ended before the size it had when the run began


@dataclass(frozen=True)
class ChunkTask:
    """One worker's share: bytes ``start``..``end`` (line ``start_line`` on),
    parsed with ``plan``; ``limit``: the file's size when the run began."""

    path: str
    start: int
    end: int
    start_line: int
    end_line: float
    plan: SourcePlan
    name: str
    warm_bytes: int
    limit: int
    thin: bool = False  # thin runs of serving lines (a BulkGate: for a diagnosis)
    encode: LineEncoder | None = None  # hand events back as lines of text


def _last_line(rec: Any) -> int:
    """The last physical line of a record (a merged journald entry spans several)."""
    return rec.line + rec.text.count("\n") * rec.line_step if rec.line_step else rec.line


class _Keeper:
    """Keeps the events a chunk owns (those that start inside its range), with their emit keys."""

    def __init__(self, task: ChunkTask, res: ChunkResult) -> None:
        self.start_line = task.start_line
        self.encode = task.encode
        self.name = task.name
        self.ts_cache: list = [None, None]
        self.res = res

    def keep(self, emit_line: float, evs: list[Event]) -> None:
        res, encode = self.res, self.encode
        for k, ev in enumerate(evs):
            if self.start_line <= ev.line:  # past end_line only while a traceback stays open: ours too
                res.keys.append((emit_line, k))
                res.payloads.append(encode(ev, self.name, self.ts_cache) if encode is not None else ev)
                res.events += 1
                if ev.kind == kinds.MESSAGE:
                    res.unparsed_lines.add(ev.line)
                elif ev.kind == kinds.TRACEBACK:
                    res.tracebacks += 1
                    res.truncated += bool(ev.data.get("truncated"))


def _feed_chunk(task: ChunkTask, parser: EventParser, gate: BulkGate | None, lines: Iterator[tuple[int, str]],
                keeper: _Keeper, warm_line: int) -> tuple[bool, int]:
    """Feed the chunk's lines; returns (stopped at a sync line, last line fed)."""
    res, start_line, encode, name, ts_cache = keeper.res, task.start_line, task.encode, task.name, keeper.ts_cache
    keys, payloads, keep = res.keys, res.payloads, keeper.keep
    tb_open = parser.tb.open
    feed = parser.feed
    stop = task.end_line if task.end_line != INF else None
    last_fed = warm_line - 1
    seen_start = False
    # The hot loop (`parse --jobs` above all): no generator layer or call per
    # line beyond the parser itself (one event per line is the common case).
    for rec in iter_records(lines, task.plan.fmt, parser.clock):
        line = rec.line
        if not seen_start and line >= start_line:
            seen_start = True
            res.clean_at_start = not tb_open
        if stop is not None and line >= stop and not tb_open:
            return True, last_fed
        evs = feed(rec)
        last_fed = _last_line(rec) if rec.line_step else line
        if gate is not None:
            gate.open = not tb_open
        if encode is not None and len(evs) == 1:
            ev = evs[0]
            if start_line <= ev.line and ev.kind != kinds.MESSAGE and ev.kind != kinds.TRACEBACK:
                keys.append((line, 0))
                payloads.append(encode(ev, name, ts_cache))
                res.events += 1
                continue
        if evs:
            keep(line, evs)
    return False, last_fed


def _work(task: ChunkTask) -> ChunkResult:
    path = Path(task.path)
    warm, back = warm_start(path, task.start, task.warm_bytes)
    warm_line = task.start_line - back
    src = RangeSource(path, warm, task.limit)
    parser = EventParser(task.name, task.plan.clock(), task.plan.wrappers)
    gate = BulkGate() if task.thin else None
    res = ChunkResult([], [], task.end_line, start_line=task.start_line)
    keeper = _Keeper(task, res)
    if gate is not None and thins(task.plan):
        lines = thin_blocks(src.blocks(raw=True), gate, (task.start_line, task.end_line), start=warm_line)
    else:
        lines = number_lines(src.blocks(), start=warm_line)
    stopped, last_fed = _feed_chunk(task, parser, gate, lines, keeper, warm_line)
    if stopped:
        res.sync_line = max(task.end_line, last_fed + 1)
    else:
        # The rest of the file was ours (the last chunk, or a traceback open
        # to the end): finish it as one process does.
        keeper.keep(INF, parser.finish(incomplete_last_line=src.stats.incomplete_last_line))
        res.sync_line = INF
    res.short_read = bool(src.reader is not None and src.reader.short)
    if gate is not None:
        res.events += gate.skipped
    res.clipped = src.stats.clipped_lines
    if task.encode is not None:
        # One string pickles and unpickles far faster than 100k small ones;
        # encoded lines never contain a raw newline, so it splits back exactly.
        res.payloads = ["\n".join(res.payloads)] if res.payloads else []
        res.joined = True
    return res


def _bounded_map(pool: ProcessPoolExecutor, fn: Callable, items: list, window: int) -> Iterator[Any]:
    """Ordered results with at most ``window`` tasks submitted ahead, so
    memory stays bounded however big the file is."""
    futures = []
    it = iter(items)
    for item in it:
        futures.append(pool.submit(fn, item))
        if len(futures) >= window:
            break
    while futures:
        fut = futures.pop(0)
        nxt = next(it, None)
        if nxt is not None:
            futures.append(pool.submit(fn, nxt))
        yield fut.result()


def split_source(source: Source, jobs: int, input_format: str = "auto", thin: bool = False,
                 encode: LineEncoder | None = None, chunk_bytes: int | None = None,
                 warm_bytes: int = WARM_BYTES) -> "SplitRun | None":
    """The work of ``jobs`` processes over a regular file, or None when it
    cannot be split (multi-line records, one chunk): then one process reads it."""
    path = source.path
    assert path is not None
    before = file_id(path)
    sample = []
    for item in number_lines(Source(str(path), path).blocks()):
        sample.append(item)
        if len(sample) >= SAMPLE_LINES:
            break
    plan = plan_source(sample, input_format)
    chunk = chunk_bytes or (TEXT_CHUNK_BYTES if encode is not None else EVENT_CHUNK_BYTES)
    ranges = plan_cuts(path, before[0], chunk)
    if plan.fmt not in PARALLEL_FORMATS or len(ranges) < 2 or jobs < 2:
        return None
    template = ChunkTask(str(path), 0, 0, 1, INF, plan, source.name, warm_bytes, before[0], thin, encode)
    return SplitRun(source, jobs, ranges, before, template)


class SplitRun:
    """Payloads of a split file in single-process order. ``stats`` is the
    file's ParseStats, complete once ``batches()`` is consumed."""

    def __init__(self, source: Source, jobs: int, ranges: list[tuple[int, int]],
                 before: tuple[int, int, int, int], template: ChunkTask) -> None:
        self.source, self.jobs, self.ranges, self.before, self.template = source, jobs, ranges, before, template
        self.stats = ParseStats(format=template.plan.fmt)
        self.changed = False
        self.pending: list[tuple[tuple[float, int], int, Any]] = []  # late emissions (a heap; rare)
        self.seq = 0

    def batches(self) -> Iterator[list[Any]]:
        """Lists of payloads (one write per chunk); encoded lines arrive
        newline-joined, several to a string."""
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            # Line numbers first (every chunk must know its first line), counted in parallel.
            path = self.template.path
            counts = list(pool.map(count_newlines, [(path, a, b) for a, b in self.ranges], chunksize=4))
            self.changed = any(c[2] for c in counts)
            chunks, total_lines = number_chunks(self.ranges, counts)
            work = [dataclasses.replace(self.template, start=s0, end=e0, start_line=first,
                                        end_line=chunks[i + 1][2] if i + 1 < len(chunks) else INF)
                    for i, (s0, e0, first) in enumerate(chunks)]
            yield from self._results(pool, chunks, work)
            if self.pending:
                yield [heapq.heappop(self.pending)[2] for _ in range(len(self.pending))]
        self._finish(total_lines)

    def _results(self, pool: ProcessPoolExecutor, chunks: list[tuple[int, int, int]],
                 work: list[ChunkTask]) -> Iterator[list[Any]]:
        sync: float = 1  # where the previous chunk left the parser with no traceback open
        # Results come back in chunk order; at most `jobs` chunks run at once.
        for i, res in enumerate(_bounded_map(pool, _work, work, self.jobs + 1)):
            if sync == INF:
                continue  # an earlier chunk ran to the end of the file: it said everything
            if res.start_line != sync or not res.clean_at_start:
                # The warm-up did not reach back far enough (long lines, or a
                # traceback over the border): parse this chunk again from the
                # sync line, clean, as one process would be there.
                if sync >= res.end_line:
                    continue  # the whole chunk was inside the previous chunk's traceback
                redo = self._redo(chunks[i], work[i], sync)
                if redo is None:
                    self.changed = True
                    continue
                res = pool.submit(_work, redo).result()
            sync = res.sync_line
            self._count(res)
            yield from self._merge(res)

    def _redo(self, chunk: tuple[int, int, int], task: ChunkTask, sync: float) -> ChunkTask | None:
        s0, _, first = chunk
        off = offset_of_line(Path(task.path), s0, first, int(sync), task.limit)
        if off is None:
            return None
        return dataclasses.replace(task, start=off, start_line=int(sync), warm_bytes=0)

    def _count(self, res: ChunkResult) -> None:
        stats = self.stats
        self.changed = self.changed or res.short_read
        stats.events += res.events
        stats.unparsed += len(res.unparsed_lines)
        stats.tracebacks += res.tracebacks
        stats.truncated_tracebacks += res.truncated
        stats.clipped_lines += res.clipped

    def _merge(self, res: ChunkResult) -> Iterator[list[Any]]:
        """A chunk's payloads in single-process order, with late emissions of earlier chunks put in place."""
        pending = self.pending
        end = res.end_line
        keys, payloads = res.keys, res.payloads
        if not pending and (not keys or keys[-1][0] < end):
            # The common case: nothing to interleave, hand the chunk over whole.
            yield payloads
            return
        if res.joined:
            payloads = payloads[0].split("\n") if payloads else []
        batch: list[Any] = []
        for key, payload in zip(keys, payloads):
            if key[0] >= end:  # emitted past the chunk: its turn comes in a later chunk
                heapq.heappush(pending, (key, self.seq, payload))
                self.seq += 1
                continue
            while pending and pending[0][0] < key:
                batch.append(heapq.heappop(pending)[2])
            batch.append(payload)
        while pending and pending[0][0][0] < end:
            batch.append(heapq.heappop(pending)[2])
        yield batch

    def _finish(self, total_lines: int) -> None:
        path = self.source.path
        assert path is not None
        self.stats.lines = total_lines
        self.source.stats.lines = total_lines
        changed = self.changed
        try:
            changed = changed or file_id(path) != self.before
        except OSError:
            changed = True
        if changed:
            self.stats.changed = True
            sys.stderr.write(f"forensics: warning: {self.source.name} changed while it was read; the result covers "
                             f"its first {self.before[0]:,} bytes as they were read and may be inexact\n")
