"""Thinning the bulk of a serving log (classify's fast path).

A server that is serving prints access lines and batch statistics, ~99% of
a long log. A diagnosis needs only the first and last line of each run of
them; the lines in between are counted, not parsed. ``thin_serving`` is the
definition, one line at a time; ``thin_blocks`` yields exactly the same lines
from whole text blocks, skipping the middle of a run at C speed: RE2 finds
the runs of lines that are *surely* bulk (a pattern whose every match
``is_bulk_line`` accepts), ``bytes.count`` numbers them, and only the lines
around them pass through ``is_bulk_line`` in Python. Without RE2, or for a
line the pattern does not know, the per-line test decides: slower, never
different (tests compare both with the full parse).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Generator, Iterable, Iterator

ACCESS = re.compile(r'"(?P<method>GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3})')
_BATCH_LINE = re.compile(r"(?:Decode|Prefill) batch[. \[]|Avg prompt throughput: ")
# Line-oriented formats whose every line carries a timestamp: thinning a
# run keeps its first and last timestamps exact.
THIN_FORMATS = frozenset({"short", "short-precise", "short-iso", "short-iso-precise", "short-full", "with-unit",
                          "short-unix", "short-monotonic", "short-delta", "docker", "json", "json-seq", "json-sse"})
Item = tuple[int, str]


class BulkGate:
    """Lets a consumer that only needs a diagnosis skip the bulk of a serving
    log. While ``open`` (no traceback is being assembled), runs of access and
    batch-statistics lines are thinned to their first and last line; the
    lines in between are counted, not parsed. Incidents only keep the first
    and last serving activity, so the diagnosis is the same (a test checks)."""

    __slots__ = ("open", "skipped")

    def __init__(self) -> None:
        self.open = True
        self.skipped = 0


# What a bulk line says about serving, in rising order: nothing (0: not a bulk line), the
# server was up (BULK: a probe, a listing, an idle engine's statistics), it served
# (SERVED: a batch of requests, a generate or encode request, which is also what SGLang
# sends itself to warm up before its ready line), or a client's request served (CLIENT:
# any other POST). The taxonomy counts only requests as serving, so a run keeps each line
# that raises its level (at most two) as well as its first and last line.
BULK, SERVED, CLIENT = 1, 2, 3
# SGLang's own warm-up requests (http_server._wait_and_warmup: POST /generate, or /encode
# for an embedding model); any other POST comes from a client.
WARMUP_PATHS = ("/generate", "/encode")
# POSTs of a server's control plane, not inference (taxonomy: serving is a completion, chat, generate
# or embeddings request): FastChat's controller (its workers registering and beating, the web UI
# refreshing and listing them), a proxy's login, Ollama's model management (pull, show, copy, create,
# push), a tokenizer's endpoints. The server was up (BULK), not serving.
CONTROL_PATHS = frozenset({
    "/register_worker", "/receive_heart_beat", "/refresh_all_workers", "/list_models", "/get_worker_address",
    "/login", "/v1/login", "/v2/login",
    "/api/pull", "/api/show", "/api/copy", "/api/create", "/api/push",
    "/tokenize", "/detokenize",
})


def answered_request(method: str | None) -> bool:
    """An access line of a request the server handled: a POST (or PUT), whatever
    its answer (a request that failed was still served). GETs are probes and
    listings (``/health``, ``/v1/models``, ``/metrics``), not inference
    (taxonomy: phases, ``serving``)."""
    return method == "POST" or method == "PUT"


# vLLM's engine statistics of an idle engine (older releases print them every interval,
# requests or not): running requests and throughput are 0, so they prove readiness, not serving.
_IDLE_STATS = "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs"


def idle_stats(text: str) -> bool:
    """An engine-statistics line of an engine that served nothing in its interval."""
    return _IDLE_STATS in text  # (a literal: a substring test, no regex)


def request_class(method: str | None, path: str | None) -> int:
    """BULK, SERVED or CLIENT (above) for one access line's request."""
    if not answered_request(method) or path in CONTROL_PATHS:
        return BULK
    return SERVED if path in WARMUP_PATHS else CLIENT


def bulk_class(text: str) -> int:
    """0, BULK, SERVED or CLIENT (above) for one line. A bulk line is an access or
    batch-statistics line that carries nothing a diagnosis needs beyond 'the
    server was up, or serving, at this time'. Must agree with what the full
    path makes of the line (an ``access`` or ``batch_stats`` event, no
    traceback): a test checks both paths give the same diagnosis. Runs on
    every serving line, so it uses ``str.find`` rather than a regex scan."""
    i = text.find(" batch")
    if i >= 6:
        nxt = text[i + 6:i + 7]
        if (nxt == "." or nxt == " " or nxt == "[") and (text[i - 6:i] == "Decode" or text[i - 7:i] == "Prefill"):
            return SERVED if "HTTP/" not in text and "Traceback" not in text else 0
    j = text.find(" HTTP/")
    if j > 0:
        q = text.rfind('"', 0, j)
        m = ACCESS.match(text, q) if q >= 0 else None
        if m is None or "Traceback" in text:
            return 0
        return request_class(m.group("method"), m.group("path"))
    if "Avg prompt throughput: " in text:
        if "HTTP/" in text or "Traceback" in text or _BATCH_LINE.search(text) is None:
            return 0
        return BULK if idle_stats(text) else SERVED
    return 0


def is_bulk_line(text: str) -> bool:
    """``bulk_class`` is not 0."""
    return bulk_class(text) != 0


def thin_serving(items: Iterator[Item], gate: BulkGate,
                 count_range: tuple[int, float] | None = None) -> Iterator[Item]:
    """The definition: per line. ``gate.open`` is read once per line, when
    the line is reached (the consumer closes it while a traceback is open).
    A run yields its first line, each line that raises its level, and its last line."""
    held = None  # the latest line of the current run, not yet yielded
    in_run = False
    level = 0  # the highest bulk_class yielded in the current run
    lo, hi = count_range if count_range is not None else (0, float("inf"))
    for item in items:
        cls = bulk_class(item[1]) if gate.open else 0
        if cls:
            if not in_run:
                in_run, level = True, cls
                yield item  # the first line of a run is parsed
                continue
            if held is not None and lo <= held[0] < hi:
                gate.skipped += 1  # counted as it goes: a chunk worker may stop early
            if cls > level:
                level, held = cls, None
                yield item  # the run's first served (or client's) request: where serving began
                continue
            held = item
            continue
        in_run = False
        if held is not None:
            yield held
            held = None
        yield item
    if held is not None:
        yield held


# ---------------------------------------------------------------- block level
# One line that is surely bulk, over the line's UTF-8 bytes read as Latin-1
# (every byte one character; a multi-byte character never contains an ASCII
# byte). Why each match passes ``is_bulk_line``:
# * batch: no 'b' before the token, so the token's " batch" is the first one;
#   no 'H' or 'b' elsewhere, so no "HTTP/" and no "Traceback" (RE2 has no
#   look-around: excluded letters stand in for excluded words);
# * access: no 'b' anywhere outside the request, so no " batch"; no 'H' before
#   the request's " HTTP/", which is thus the first; no '"' before the opening
#   quote, which is thus the last one before it; the path is printable ASCII
#   without '"', 'H', 'T' (a subset of ``\S``), so ``ACCESS`` matches at that
#   quote; no 'T' or 'b' after the status, so no "Traceback".
# Lines it does not cover ("Avg prompt throughput", a 'b' in a host name) go
# through ``is_bulk_line``: only slower.
_SURE_LINE = (rb'(?:[^\nHb]*(?:Decode|Prefill) batch[. \[][^\nHb]*'
              rb'|[^\n"bH]*"(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) [!#-GI-SU-~]+ HTTP/[0-9.]+" [0-9]{3}[^\nTb]*)\n')
RunFinder = Callable[[bytes, int], int]
_finder: list[RunFinder | None] = []  # built on first use
MAX_BACKOFF = 64  # lines a failed try lets pass per line before the next try


def _build_finder() -> RunFinder | None:
    try:
        import re2
    except ImportError:
        return None
    opts = re2.Options()
    opts.encoding = re2.Options.Encoding.LATIN1
    opts.longest_match = True  # the whole run, not its first line
    opts.log_errors = False
    rx = re2.compile(rb"(?:" + _SURE_LINE + rb")+", opts)
    raw = getattr(rx, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "ANCHOR_START", None)
    if raw is not None and anchor is not None:
        match = raw.Match  # the binding itself: the wrapper's Match object costs more than a short run

        def run_end(data: bytes, pos: int) -> int:
            return match(anchor, data, pos, len(data))[0][1]
        return run_end

    def run_end_public(data: bytes, pos: int) -> int:
        m = rx.match(data, pos)
        return -1 if m is None else m.end()
    return run_end_public


def run_finder() -> RunFinder | None:
    """The end of the run of surely-bulk lines that starts at a line start
    (anchored: RE2 reads each byte once), or -1; None without RE2."""
    if not _finder:
        _finder.append(_build_finder())
    return _finder[0]


def _split_lines(text: str) -> list[str]:
    """The lines of a block, as ``number_lines`` numbers them."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


class _Thinner:
    """``thin_serving``'s state, carried across blocks."""

    def __init__(self, gate: BulkGate, count_range: tuple[int, float] | None) -> None:
        self.gate = gate
        self.lo, self.hi = count_range if count_range is not None else (0, float("inf"))
        self.in_run = False
        self.level = 0  # the highest bulk_class yielded in the current run
        self.held: Item | None = None

    def lines(self, items: Iterable[Item], sure: bool = False) -> Iterator[Item]:
        """``thin_serving`` over some lines (``sure``: all of them are bulk).
        Stops early, with ``self.held`` set, when ``sure`` and a line was
        held without yielding: the rest of the run cannot change the gate."""
        gate = self.gate
        for item in items:
            if not gate.open:
                cls = 0
            elif sure and self.level == CLIENT:
                cls = BULK  # no line can raise the run's level any more
            else:
                cls = bulk_class(item[1])
            if cls:
                if not self.in_run:
                    self.in_run, self.level = True, cls
                    yield item
                    continue
                held = self.held
                if held is not None and self.lo <= held[0] < self.hi:
                    gate.skipped += 1
                if cls > self.level:
                    self.level, self.held = cls, None
                    yield item
                    continue
                self.held = item
                if sure:
                    return
                continue
            self.in_run, self.level = False, 0
            if self.held is not None:
                yield self.held
                self.held = None
            yield item

    def skip_rest(self, last: Item) -> None:
        """The rest of a run up to ``last``, all bulk, the gate open and a line
        held: each line replaces the held one, which is counted (if in range)."""
        held = self.held
        assert held is not None
        lo = max(self.lo, held[0])
        hi = min(self.hi, last[0])
        if hi > lo:
            self.gate.skipped += int(hi - lo)
        self.held = last

    def finish(self) -> Iterator[Item]:
        if self.held is not None:
            yield self.held
            self.held = None


def thin_blocks(blocks: Iterable[Any], gate: BulkGate, count_range: tuple[int, float] | None = None,
                start: int = 1, head: Iterable[Item] = ()) -> Iterator[Item]:
    """``thin_serving(chain(head, number_lines(blocks, start)), ...)``, the
    same lines in the same order, each reached when ``thin_serving`` would
    reach it (so ``gate.open`` is read at the same moments)."""
    thinner = _Thinner(gate, count_range)
    yield from thinner.lines(head)
    find = run_finder()
    n = start
    for block in blocks:
        if find is None:
            lines = _split_lines(block if isinstance(block, str) else _decode(block))
            yield from thinner.lines(enumerate(lines, n))
            n += len(lines)
            continue
        n = yield from _thin_block(thinner, find, block, n)
    yield from thinner.finish()


def _decode(data: bytes | bytearray) -> str:
    return data.decode("utf-8", "replace")  # as ``ingest.live.decode``


def _thin_block(thinner: _Thinner, find: RunFinder, block: str | bytes | bytearray,
                n: int) -> Generator[Item, None, int]:
    """One block (text, or its bytes undecoded): the lines between runs one
    by one, each run at C speed. Returns the number of the next line."""
    if not block:
        yield from thinner.lines(((n, ""),))  # as number_lines numbers an empty block
        return n + 1
    if isinstance(block, str):
        ascii_only = block.isascii()  # then byte offsets are character offsets
        data: bytes | bytearray = block.encode("ascii") if ascii_only else block.encode("utf-8", "surrogatepass")
    else:
        ascii_only, data = False, block

    def text(a: int, b: int) -> str:
        if ascii_only:
            return block[a:b]  # type: ignore[return-value]
        return data[a:b].decode("utf-8", "surrogatepass" if isinstance(block, str) else "replace")

    pos, size, misses = 0, len(data), 0
    while pos < size:
        e = find(data, pos)
        if e < 0:
            # Not a run: the next lines one by one, more of them after each
            # miss (a start-up has no runs; a try costs a call).
            gap_end = pos
            for _ in range(min(MAX_BACKOFF, 1 << misses)):
                gap_end = data.find(b"\n", gap_end) + 1
                if gap_end == 0:
                    gap_end = size
                if gap_end >= size:
                    break
            misses += 1
            gap = _split_lines(text(pos, gap_end))
            yield from thinner.lines(enumerate(gap, n))
            n += len(gap)
            pos = gap_end
            continue
        misses = 0
        k = data.count(b"\n", pos, e)
        yield from _thin_run(thinner, data, text, pos, e, n, k)
        n += k
        pos = e
    return n


def _thin_run(thinner: _Thinner, data: bytes | bytearray, text: Callable[[int, int], str], s: int, e: int, n: int,
              k: int) -> Iterator[Item]:
    """A run of ``k`` surely-bulk lines at bytes ``s``..``e``, numbered from
    ``n``. Line by line until one is held without a yield (nothing runs in
    between that could close the gate), then on to each line that raises the
    run's level (bulk_class), then the rest in one step."""
    p, j = s, 0
    while j < k:
        q = data.index(b"\n", p)
        item = (n + j, text(p, q))
        yield from thinner.lines((item,), sure=True)
        p, j = q + 1, j + 1
        if thinner.held is not item or j >= k:
            continue
        rx = _RAISES_SURE.get(thinner.level)
        m = None if rx is None else rx.search(data, p, e)
        if m is None:
            last_start = data.rindex(b"\n", s, e - 1) + 1
            thinner.skip_rest((n + k - 1, text(last_start, e - 1)))
            return
        start = data.rfind(b"\n", p, m.start()) + 1 or p  # the line holding the match
        if start > p:  # the lines before it do not raise the level: the last of them is held
            gap = data.count(b"\n", p, start)
            prev = data.rindex(b"\n", s, start - 1) + 1
            thinner.skip_rest((n + j + gap - 1, text(prev, start - 1)))
            p, j = start, j + gap


# The surely-bulk lines that raise a run's level (``bulk_class`` above it), found in a run's
# bytes: a sure line has no '"' before its request and no 'T' after its status, so '"POST '
# is its request; no 'H' in a batch line, so a request's words are never a batch line's.
_RAISES_SURE = {
    BULK: re.compile(rb'(?:Decode|Prefill) batch[. \[]|"(?:POST|PUT) [^ \n]+ HTTP/[0-9.]+" [0-9]{3}'),
    SERVED: re.compile(rb'"(?:POST|PUT) (?!/generate |/encode )[^ \n]+ HTTP/[0-9.]+" [0-9]{3}'),
}


class BlockThinner:
    """``thin_blocks`` for blocks that arrive one at a time (``forensics
    run``: the child's output as each read returns it, whole lines only).
    ``block`` returns the lines of one block that pass, numbered from the
    block's first line number (a gap before it is lines dropped upstream);
    ``finish`` the line still held at the end of the stream."""

    def __init__(self, gate: BulkGate) -> None:
        self.gate = gate
        self.thinner = _Thinner(gate, None)
        self.find = run_finder()

    def block(self, data: bytes | bytearray, start: int) -> list[Item]:
        if not data:
            return []
        if self.find is None:
            return list(self.thinner.lines(enumerate(_split_lines(_decode(data)), start)))
        return list(_thin_block(self.thinner, self.find, data, start))

    def finish(self) -> list[Item]:
        return list(self.thinner.finish())
