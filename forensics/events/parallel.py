"""Split one big regular file across processes (``--jobs``) with the same
result as one process.

The file is cut into byte ranges at line starts. A worker starts parsing a
little before its range (warm-up) so tracebacks that began earlier are
assembled, not mistaken for fragments; it keeps the events that start inside
its range, and runs past the range end until no traceback is open. Every
event is tagged with the line whose processing emitted it, so merging the
workers' outputs by that tag reproduces the single-process order exactly.
"""
from __future__ import annotations

import heapq
import mmap
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from forensics.envelope.formats import Clock, iter_records
from forensics.events import model as K
from forensics.events.model import Event
from forensics.events.parser import (SAMPLE_LINES, _THIN_FORMATS, BulkGate, EventParser, ParseStats, _numbered, plan_source, run_parser)
from forensics.ingest.sources import Source

CHUNK_BYTES = {"classify": 1 << 20, "parse": 4 << 20}  # work unit: small enough to stream (a crash-loop chunk is all events: the parent holds ~3), big enough to amortise
WARM_BYTES = 256 << 10  # how far before its range a worker starts, to pick up open tracebacks
MIN_PARALLEL_BYTES = 48 << 20  # below this, one process is faster
PARALLEL_FORMATS = _THIN_FORMATS | {"plain", "cat"}
INF = float("inf")


def auto_jobs(path: Path | None, requested: int | None) -> int:
    """``--jobs``: an explicit number, else all cores (up to 4) for big regular files."""
    if requested is not None:
        return max(1, requested)
    if path is None:
        return 1
    try:
        st = path.stat()
    except OSError:
        return 1
    if st.st_size < MIN_PARALLEL_BYTES:
        return 1
    from forensics.ingest.sources import JOURNAL_MAGIC, compression_of, looks_like

    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if compression_of(head) or head.startswith(JOURNAL_MAGIC) or looks_like(head):
        return 1  # compressed streams cannot be split; journal and binary files take the one-process path
    return max(1, min(4, os.cpu_count() or 1))


@dataclass
class ChunkResult:
    keys: list[tuple[float, int]]  # emit keys, in emit order
    payloads: list[Any]  # events, or NDJSON lines
    end_line: float  # first line of the next range
    joined: bool = False  # payloads is one newline-joined string (parse mode)
    events: int = 0
    unparsed_lines: set[int] = field(default_factory=set)
    tracebacks: int = 0
    truncated: int = 0
    clipped: int = 0


class _RangeSource(Source):
    def __init__(self, path: Path, offset: int) -> None:
        super().__init__(str(path), path)
        self.offset = offset

    def open_binary(self):  # type: ignore[override]
        f = open(self.path, "rb")  # type: ignore[arg-type]
        f.seek(self.offset)
        return f


def _line_start_before(mm: mmap.mmap, pos: int) -> int:
    if pos <= 0:
        return 0
    nl = mm.rfind(b"\n", 0, pos)
    return nl + 1


def plan_cuts(path: Path, size: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``chunk_bytes``, cut at line starts (no data copied)."""
    cuts = [0]
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = chunk_bytes
        while pos < size:
            nl = mm.find(b"\n", pos)
            if nl < 0 or nl + 1 >= size:
                break
            cuts.append(nl + 1)
            pos = nl + 1 + chunk_bytes
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def _count_newlines(args: tuple[str, int, int]) -> tuple[int, bool]:
    path, a, b = args
    with open(path, "rb") as f:
        f.seek(a)
        data = f.read(b - a)
    return data.count(b"\n"), data.endswith(b"\n")


def number_chunks(ranges: list[tuple[int, int]], counts: list[tuple[int, bool]]) -> tuple[list[tuple[int, int, int]], int]:
    """(start, end, first line) per range, and the file's line count."""
    chunks = []
    line = 1
    for (a, b), (n, _) in zip(ranges, counts):
        chunks.append((a, b, line))
        line += n
    ends_nl = counts[-1][1] if counts else True
    return chunks, line - 1 + (0 if ends_nl else 1)


def _work(args: tuple) -> ChunkResult:
    path, start, end, start_line, end_line, plan, mode, name, warm_bytes = args
    path = Path(path)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        warm = _line_start_before(mm, max(0, start - warm_bytes)) if start else 0
        warm_line = start_line - mm[warm:start].count(b"\n")
    src = _RangeSource(path, warm)
    clock = Clock()
    clock.year = plan.year
    parser = EventParser(name, clock, plan.wrappers)
    gate = BulkGate() if mode == "classify" else None
    lines = _numbered(src.blocks(), start=warm_line)
    res = ChunkResult([], [], end_line)
    keys, payloads = res.keys, res.payloads
    ts_cache: list = [None, None]

    def keep(emit_line: float, evs: list[Event]) -> None:
        for k, ev in enumerate(evs):
            if start_line <= ev.line < end_line:
                keys.append((emit_line, k))
                payloads.append(ev.to_json(name, ts_cache) if mode == "parse" else ev)
                res.events += 1
                if ev.kind == K.MESSAGE:
                    res.unparsed_lines.add(ev.line)
                elif ev.kind == K.TRACEBACK:
                    res.tracebacks += 1
                    res.truncated += bool(ev.data.get("truncated"))

    if mode == "parse":
        # The hot loop of `parse --jobs`: no generator layer or call per line
        # beyond the parser itself (one event per line is the common case).
        tb_open = parser.tb.open
        feed = parser.feed
        stop = end_line if end_line != INF else None
        for rec in iter_records(lines, plan.fmt, clock):
            line = rec.line
            if stop is not None and line >= stop and not tb_open:
                break
            evs = feed(rec)
            if len(evs) == 1:
                ev = evs[0]
                if start_line <= ev.line < end_line and ev.kind != K.MESSAGE and ev.kind != K.TRACEBACK:
                    keys.append((line, 0))
                    payloads.append(ev.to_json(name, ts_cache))
                    res.events += 1
                    continue
            if evs:
                keep(line, evs)
    else:
        for emit_line, evs in run_parser(parser, lines, plan, gate, (start_line, end_line),
                                         stop_at=end_line if end_line != INF else None):
            keep(emit_line, evs)
    if end_line == INF:
        keep(INF, parser.finish(incomplete_last_line=src.stats.incomplete_last_line))
    if gate is not None:
        res.events += gate.skipped
    res.clipped = src.stats.clipped_lines
    if mode == "parse":
        # One string pickles and unpickles far faster than 100k small ones;
        # NDJSON lines never contain a raw newline, so it splits back exactly.
        res.payloads = ["\n".join(payloads)] if payloads else []
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


def parallel_events(source: Source, jobs: int, mode: str, input_format: str = "auto",
                    stats_out: list | None = None, chunk_bytes: int | None = None,
                    warm_bytes: int = WARM_BYTES) -> Iterator[Any]:
    """Payloads (events, or NDJSON strings when ``mode == 'parse'``) of a
    regular file in single-process order, computed by ``jobs`` processes."""
    for batch in parallel_batches(source, jobs, mode, input_format, stats_out, chunk_bytes, warm_bytes):
        if mode == "parse":
            for text in batch:  # whole chunks arrive newline-joined
                yield from text.split("\n")
        else:
            yield from batch


def parallel_batches(source: Source, jobs: int, mode: str, input_format: str = "auto",
                     stats_out: list | None = None, chunk_bytes: int | None = None,
                     warm_bytes: int = WARM_BYTES) -> Iterator[list[Any]]:
    """Like ``parallel_events`` but in lists (one write per chunk)."""
    path = source.path
    assert path is not None
    size = path.stat().st_size
    sample = []
    for item in _numbered(Source(str(path), path).blocks()):
        sample.append(item)
        if len(sample) >= SAMPLE_LINES:
            break
    plan = plan_source(sample, input_format)
    ranges = plan_cuts(path, size, chunk_bytes or CHUNK_BYTES[mode])
    if plan.fmt not in PARALLEL_FORMATS or len(ranges) < 2 or jobs < 2:
        # Not splittable (multi-line records, one chunk): the ordinary path.
        from forensics.events.parser import iter_source_events

        holder: list = []
        gate = BulkGate() if mode == "classify" else None
        batch = []
        for ev in iter_source_events(source, input_format, parser_out=holder, bulk_gate=gate):
            batch.append(ev.to_json(source.name) if mode == "parse" else ev)
            if len(batch) >= 4096:
                yield batch
                batch = []
        yield batch
        if stats_out is not None and holder:
            stats_out.append(holder[0].stats)
        return
    stats = ParseStats(format=plan.fmt)
    if stats_out is not None:
        stats_out.append(stats)
    pending: list[tuple[tuple[float, int], int, Any]] = []  # late emissions (a heap; rare)
    seq = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        # Line numbers first (every chunk must know its first line), counted in parallel.
        counts = list(pool.map(_count_newlines, [(str(path), a, b) for a, b in ranges], chunksize=4))
        chunks, total_lines = number_chunks(ranges, counts)
        work = [(str(path), s0, e0, first, chunks[i + 1][2] if i + 1 < len(chunks) else INF, plan, mode,
                 source.name, warm_bytes) for i, (s0, e0, first) in enumerate(chunks)]
        # Results come back in chunk order; at most `jobs` chunks run at once.
        for res in _bounded_map(pool, _work, work, jobs + 1):
            stats.events += res.events
            stats.unparsed += len(res.unparsed_lines)
            stats.tracebacks += res.tracebacks
            stats.truncated_tracebacks += res.truncated
            stats.clipped_lines += res.clipped
            end = res.end_line
            keys, payloads = res.keys, res.payloads
            if not pending and (not keys or keys[-1][0] < end):
                # The common case: nothing to interleave, hand the chunk over whole.
                yield payloads
                continue
            if res.joined:
                payloads = payloads[0].split("\n") if payloads else []
            batch: list[Any] = []
            for key, payload in zip(keys, payloads):
                if key[0] >= end:  # emitted past the chunk: its turn comes in a later chunk
                    heapq.heappush(pending, (key, seq, payload))
                    seq += 1
                    continue
                while pending and pending[0][0] < key:
                    batch.append(heapq.heappop(pending)[2])
                batch.append(payload)
            while pending and pending[0][0][0] < end:
                batch.append(heapq.heappop(pending)[2])
            yield batch
        if pending:
            yield [heapq.heappop(pending)[2] for _ in range(len(pending))]
    lines_total = total_lines
    stats.lines = lines_total
    source.stats.lines = lines_total
