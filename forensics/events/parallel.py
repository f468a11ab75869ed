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

import heapq
import mmap
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from forensics.envelope.clock import Clock
from forensics.envelope.readers import iter_records
from forensics.events import model as K
from forensics.events.model import Event
from forensics.events.parser import (SAMPLE_LINES, _THIN_FORMATS, BulkGate, EventParser, ParseStats, _numbered, _thin,
                                     plan_source)
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
    start_line: int = 1
    sync_line: float = INF  # first line at/after end_line reached with no traceback open; INF: ran to EOF
    clean_at_start: bool = True  # no traceback was open when the worker reached start_line
    short_read: bool = False  # the file ended before the size it had when the run began


class _Bounded:
    """A binary file read from ``offset`` up to ``limit`` bytes from the start
    (the size the file had when the run began), whatever happens to it since."""

    def __init__(self, path: Path, offset: int, limit: int) -> None:
        self.f = open(path, "rb")
        self.f.seek(offset)
        self.left = max(0, limit - offset)
        self.short = False

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.f.read(self.left if n < 0 else min(n, self.left))
        if not data:
            self.short = True
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()


class _RangeSource(Source):
    def __init__(self, path: Path, offset: int, limit: int) -> None:
        super().__init__(str(path), path)
        self.offset = offset
        self.limit = limit
        self.reader: _Bounded | None = None

    def open_binary(self):  # type: ignore[override]
        self.reader = _Bounded(self.path, self.offset, self.limit)  # type: ignore[arg-type]
        return self.reader


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


def _count_newlines(args: tuple[str, int, int]) -> tuple[int, bool, bool]:
    path, a, b = args
    with open(path, "rb") as f:
        f.seek(a)
        data = f.read(b - a)
    return data.count(b"\n"), data.endswith(b"\n"), len(data) != b - a


def number_chunks(ranges: list[tuple[int, int]], counts: list[tuple]) -> tuple[list[tuple[int, int, int]], int]:
    """(start, end, first line) per range, and the file's line count."""
    chunks = []
    line = 1
    for (a, b), (n, *_) in zip(ranges, counts):
        chunks.append((a, b, line))
        line += n
    ends_nl = counts[-1][1] if counts else True
    return chunks, line - 1 + (0 if ends_nl else 1)


def _warm_start(path: Path, start: int, warm_bytes: int) -> tuple[int, int]:
    """(offset, newlines between it and ``start``) of the warm-up start."""
    if not start:
        return 0, 0
    with open(path, "rb") as f:
        lo = max(0, start - warm_bytes)
        f.seek(lo)
        data = f.read(start - lo)  # read, not mmap: a file cut meanwhile cannot SIGBUS us
    if lo == 0:
        return 0, data.count(b"\n")
    nl = data.find(b"\n")
    if nl < 0 or nl + 1 >= len(data):  # no whole line in the warm-up window
        return start, 0
    return lo + nl + 1, data.count(b"\n", nl + 1)


def _last_line(rec: Any) -> int:
    """The last physical line of a record (a merged journald entry spans several)."""
    return rec.line + rec.text.count("\n") * rec.line_step if rec.line_step else rec.line


def _work(args: tuple) -> ChunkResult:
    path, start, end, start_line, end_line, plan, mode, name, warm_bytes, limit = args
    path = Path(path)
    warm, back = _warm_start(path, start, warm_bytes)
    warm_line = start_line - back
    src = _RangeSource(path, warm, limit)
    clock = Clock()
    clock.year = plan.year
    parser = EventParser(name, clock, plan.wrappers)
    gate = BulkGate() if mode == "classify" else None
    lines = _numbered(src.blocks(), start=warm_line)
    res = ChunkResult([], [], end_line, start_line=start_line)
    keys, payloads = res.keys, res.payloads
    ts_cache: list = [None, None]

    def keep(emit_line: float, evs: list[Event]) -> None:
        for k, ev in enumerate(evs):
            if start_line <= ev.line:  # past end_line only while a traceback stays open: ours too
                keys.append((emit_line, k))
                payloads.append(ev.to_json(name, ts_cache) if mode == "parse" else ev)
                res.events += 1
                if ev.kind == K.MESSAGE:
                    res.unparsed_lines.add(ev.line)
                elif ev.kind == K.TRACEBACK:
                    res.tracebacks += 1
                    res.truncated += bool(ev.data.get("truncated"))

    tb_open = parser.tb.open
    feed = parser.feed
    stop = end_line if end_line != INF else None
    last_fed = warm_line - 1
    seen_start = False
    stopped = False
    if gate is not None and plan.fmt in _THIN_FORMATS and not plan.wrappers:
        lines = _thin(lines, gate, (start_line, end_line))
    # The hot loop (`parse --jobs` above all): no generator layer or call per
    # line beyond the parser itself (one event per line is the common case).
    for rec in iter_records(lines, plan.fmt, clock):
        line = rec.line
        if not seen_start and line >= start_line:
            seen_start = True
            res.clean_at_start = not tb_open
        if stop is not None and line >= stop and not tb_open:
            stopped = True
            break
        evs = feed(rec)
        last_fed = _last_line(rec) if rec.line_step else line
        if gate is not None:
            gate.open = not tb_open
        if mode == "parse" and len(evs) == 1:
            ev = evs[0]
            if start_line <= ev.line and ev.kind != K.MESSAGE and ev.kind != K.TRACEBACK:
                keys.append((line, 0))
                payloads.append(ev.to_json(name, ts_cache))
                res.events += 1
                continue
        if evs:
            keep(line, evs)
    if stopped:
        res.sync_line = max(end_line, last_fed + 1)
    else:
        # The rest of the file was ours (the last chunk, or a traceback open
        # to the end): finish it as one process does.
        keep(INF, parser.finish(incomplete_last_line=src.stats.incomplete_last_line))
        res.sync_line = INF
    res.short_read = bool(src.reader is not None and src.reader.short)
    if gate is not None:
        res.events += gate.skipped
    res.clipped = src.stats.clipped_lines
    if mode == "parse":
        # One string pickles and unpickles far faster than 100k small ones;
        # NDJSON lines never contain a raw newline, so it splits back exactly.
        res.payloads = ["\n".join(payloads)] if payloads else []
        res.joined = True
    return res


def _offset_of_line(path: Path, offset: int, line: int, target: int, limit: int) -> int | None:
    """Byte offset where line ``target`` starts, counting from ``offset`` (the
    start of ``line``); None when the file ends first."""
    need = target - line
    with open(path, "rb") as f:
        f.seek(offset)
        pos = offset
        while need > 0 and pos < limit:
            buf = f.read(min(1 << 20, limit - pos))
            if not buf:
                return None
            i = -1
            while need > 0:
                i = buf.find(b"\n", i + 1)
                if i < 0:
                    break
                need -= 1
            if need == 0:
                return pos + i + 1
            pos += len(buf)
    return offset if need == 0 else None


def _file_id(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev


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
    before = _file_id(path)
    size = before[0]
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
    changed = False
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        # Line numbers first (every chunk must know its first line), counted in parallel.
        counts = list(pool.map(_count_newlines, [(str(path), a, b) for a, b in ranges], chunksize=4))
        changed = any(c[2] for c in counts)
        chunks, total_lines = number_chunks(ranges, counts)
        work = [(str(path), s0, e0, first, chunks[i + 1][2] if i + 1 < len(chunks) else INF, plan, mode,
                 source.name, warm_bytes, size) for i, (s0, e0, first) in enumerate(chunks)]
        sync: float = 1  # where the previous chunk left the parser with no traceback open
        # Results come back in chunk order; at most `jobs` chunks run at once.
        for i, res in enumerate(_bounded_map(pool, _work, work, jobs + 1)):
            if sync == INF:
                continue  # an earlier chunk ran to the end of the file: it said everything
            if res.start_line != sync or not res.clean_at_start:
                # The warm-up did not reach back far enough (long lines, or a
                # traceback over the border): parse this chunk again from the
                # sync line, clean, as one process would be there.
                s0, _, first = chunks[i]
                if sync >= res.end_line:
                    continue  # the whole chunk was inside the previous chunk's traceback
                off = _offset_of_line(path, s0, first, int(sync), size)
                if off is None:
                    changed = True
                    continue
                redo = list(work[i])
                redo[1], redo[3], redo[8] = off, int(sync), 0
                res = pool.submit(_work, tuple(redo)).result()
            sync = res.sync_line
            changed = changed or res.short_read
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
    try:
        changed = changed or _file_id(path) != before
    except OSError:
        changed = True
    if changed:
        stats.changed = True
        sys.stderr.write(f"forensics: warning: {source.name} changed while it was read; the result covers "
                         f"its first {size:,} bytes as they were read and may be inexact\n")
