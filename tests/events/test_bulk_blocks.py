"""``thin_blocks`` (runs skipped at C speed) yields exactly the lines of
``thin_serving`` (the per-line definition): same items, same order, same
skipped count, the gate read at the same moments, over any split of the
text into blocks; and every line the RE2 run pattern accepts is a bulk line."""
from __future__ import annotations

import itertools
from typing import Iterator

import pytest
from hypothesis import given, settings, strategies as st

from forensics.events import bulk
from forensics.events.bulk import BulkGate, is_bulk_line, thin_blocks, thin_serving
from forensics.events.parser import number_lines, take_head

P = "2026-05-30T06:01:14+0000 gpu-node-7 python3[22351]: "
LINES = [
    P + "[2026-05-30 06:01:14 TP3] Decode batch. #running-req: 8, #token: 2859, token usage: 0.03, "
        "cuda graph: True, gen throughput (token/s): 562.05, #queue-req: 0",
    P + "[2026-05-30 06:01:13 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00",
    P + '[2026-05-30 06:01:14] INFO:     10.0.0.189:50290 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    P + '[2026-05-30 06:01:14] INFO:     10.0.0.1:1 - "GET /metrics HTTP/1.1" 503 Service Unavailable',  # bulk, has 'b'
    "2026 host-b python3[1]: Decode batch. #running-req: 1",  # bulk, 'b' in the host
    P + "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s",  # vLLM: bulk
    P + "Decode batch. #running-req: 1 HTTP/1.1",  # not bulk: HTTP/
    P + "Decode batch. Traceback (most recent call last):",  # not bulk
    P + '"GET /x HTTP/1.1" 200 Traceback',  # not bulk
    P + 'Tracebac "GET /x HTTP/1.1" 200 ok',  # bulk ('b' before the request: per-line)
    P + "Traceback (most recent call last):",  # the consumer closes the gate on it
    P + "ValueError: boom",  # and opens it again
    P + "Load weight begin. avail mem=78.21 GB",
    P + "[2026-05-30 06:01:14 TP0] Decode batch. Ünïcode µs",  # non-ASCII, bulk
    P + '"GET /caf\u00e9 HTTP/1.1" 200 OK',  # non-ASCII path: bulk for is_bulk_line (\\S), not for the pattern
    "",
    P + "Prefill batch[x] Decode batch. #running-req: 1",
    "Decode batch.",
    "xDecode batch.",
    P + "abc batch Decode batch. #running-req: 1",  # not bulk: the first " batch" is not the token
    P + "Traceback Decode batch. #running-req: 1",  # not bulk
    P + ' HTTP/ "GET /x HTTP/1.1" 200 OK',  # not bulk: the first " HTTP/" has no quote before it
    P + '"q" "GET /x HTTP/1.1" 200 OK',  # bulk
    P + '"GET /a b "GET /x HTTP/1.1" 200 OK',  # not bulk: the last quote before " HTTP/" opens no request
    P + '"GET /x HTTP/1.1" 200 Decode batch. x',  # not bulk (HTTP/ in a batch line)
    P + '"GET /x HTTP/1.1" 200 OK Traceback',  # not bulk
    P + '"GET /x\u2003y HTTP/1.1" 200 OK',  # not bulk: a Unicode space in the path
    # Probes and requests: a run keeps each line that raises its level (probe < generate < a client's POST).
    P + '[2026-05-30 06:01:14] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 200 OK',
    P + '[2026-05-30 06:01:14] INFO:     127.0.0.1:6 - "GET /v1/models HTTP/1.1" 200 OK',
    P + '[2026-05-30 06:01:14] INFO:     10.0.0.b:7 - "POST /generate HTTP/1.1" 500 Internal Server Error',  # served
    P + '[2026-05-30 06:01:14] INFO:     10.0.0.2:8 - "PUT /v2/models/m/infer HTTP/1.1" 200 OK',  # served
    P + "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs",  # idle
    P + '[2026-05-30 06:01:14] INFO:     127.0.0.1:9 - "POST /generate HTTP/1.1" 200 OK',  # served, not a client's
]


def _consume(items: Iterator[tuple[int, str]], gate: BulkGate, lookahead: bool) -> list[tuple[int, str]]:
    """A consumer like run_parser: it closes the gate on a traceback start and
    opens it on the exception line; with ``lookahead`` it reads one item ahead
    (as iter_records does to merge continuation lines) before acting on one."""
    out: list[tuple[int, str]] = []
    pending = None

    def act(item: tuple[int, str]) -> None:
        out.append(item)
        if "Traceback (most recent" in item[1]:
            gate.open = False
        elif "Error:" in item[1]:
            gate.open = True

    for item in items:
        if lookahead:
            if pending is not None:
                act(pending)
            pending = item
        else:
            act(item)
    if pending is not None:
        act(pending)
    return out


def _blocks(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut after some of its newlines (blocks of whole lines, as Source.blocks yields)."""
    ends = [i + 1 for i, c in enumerate(text) if c == "\n"]
    chosen = sorted({ends[c % len(ends)] for c in cuts}) if ends else []
    out, prev = [], 0
    for c in chosen:
        if c > prev:
            out.append(text[prev:c])
            prev = c
    if prev < len(text):
        out.append(text[prev:])
    return out


def _both(text: str, cuts: list[int], lookahead: bool, count_range, start: int = 1,  # type: ignore[no-untyped-def]
          raw: bytes | None = None):
    """Reference and block-level results; ``raw``: the input as bytes (maybe
    invalid UTF-8), read as ``Source.blocks`` would (text: decoded blocks)."""
    if raw is not None:
        text = raw.decode("utf-8", "replace")
    blocks = _blocks(text, cuts)
    g1, g2 = BulkGate(), BulkGate()
    ref = _consume(thin_serving(number_lines(iter(blocks), start), g1, count_range), g1, lookahead)
    if raw is not None:
        ends = [i + 1 for i, c in enumerate(raw) if c == 10]
        blocks = [raw[a:b] for a, b in zip([0, *ends], [*ends, len(raw)]) if b > a]  # one line a block
        blocks = [b"".join(blocks[i:i + 3]) for i in range(0, len(blocks), 3)]
    new = _consume(thin_blocks(iter(blocks), g2, count_range, start=start), g2, lookahead)
    return (ref, g1.skipped), (new, g2.skipped)


texts = st.lists(st.sampled_from(range(len(LINES))), max_size=120).map(
    lambda idx: "".join(LINES[i] + "\n" for i in idx))


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.integers(0, 10_000), max_size=6), st.booleans(), st.booleans(),
       st.one_of(st.none(), st.tuples(st.integers(0, 80), st.integers(0, 140))), st.integers(1, 5))
def test_blocks_equal_per_line(text, cuts, lookahead, drop_last_newline, count_range, start):
    if drop_last_newline and text.endswith("\n"):
        text = text[:-1]
    ref, new = _both(text, cuts, lookahead, count_range, start)
    assert new == ref


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(range(len(LINES))), max_size=60),
       st.lists(st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=3)), max_size=8),
       st.booleans(), st.one_of(st.none(), st.tuples(st.integers(0, 40), st.integers(0, 70))))
def test_byte_blocks_equal_per_line(idx, junk, lookahead, count_range):
    """Undecoded blocks (invalid UTF-8 too) give the lines of the decoded text."""
    raw = bytearray("".join(LINES[i] + "\n" for i in idx).encode())
    for at, b in junk:
        if raw:
            raw[at % len(raw):at % len(raw)] = b
    ref, new = _both("", [], lookahead, count_range, raw=bytes(raw))
    assert new == ref


@settings(max_examples=200, deadline=None)
@given(texts)
def test_pattern_only_accepts_bulk_lines(text):
    find = bulk.run_finder()
    if find is None:
        pytest.skip("google-re2 is not installed")
    for line in text.split("\n")[:-1]:
        data = (line + "\n").encode("utf-8")
        if find(data, 0) == len(data):
            assert is_bulk_line(line), line
            # The run's search for a line that raises its level finds exactly those lines.
            cls = bulk.bulk_class(line)
            for level, rx in bulk._RAISES_SURE.items():
                assert (rx.search(data) is not None) == (cls > level), (level, line)


def test_long_runs_across_blocks_and_without_re2(monkeypatch):
    text = "".join(LINES[i % 3] + "\n" for i in range(5000)) + LINES[12] + "\n" + LINES[0]
    for cuts in ([], [7, 2999, 3000], list(range(0, 5000, 97))):
        for lookahead in (False, True):
            ref, new = _both(text, cuts, lookahead, (100, 4000))
            assert new == ref
            assert len(new[0]) < 10
    monkeypatch.setattr(bulk, "_finder", [None])  # the per-line fallback
    ref, new = _both(text, [5, 77], True, None)
    assert new == ref


def test_a_run_keeps_each_line_that_raises_its_level():
    """Probes around requests: the run's first line, its first served request (a generate,
    which SGLang also sends itself), its first client's request, its last line."""
    probe, models, generate, request = LINES[27], LINES[28], LINES[32], LINES[2]
    text = "".join(x + "\n" for x in [probe] * 40 + [models, generate, probe, request, generate] + [probe] * 40)
    for cuts in ([], [3, 41, 42], list(range(0, 90, 7))):
        (ref, skipped_ref), (new, skipped_new) = _both(text, cuts, False, None)
        assert (new, skipped_new) == (ref, skipped_ref)
        assert [n for n, _ in ref] == [1, 42, 44, 85]


def test_take_head_continues_number_lines():
    text = "".join(f"line {i}\n" for i in range(300)) + "tail"
    for cuts in ([], [3, 60, 64, 65, 200], list(range(301))):
        blocks = _blocks(text, cuts)
        for n in (0, 1, 8, 64, 300, 301, 500):
            head, rest = take_head(iter(blocks), n)
            got = list(itertools.chain(head, number_lines(rest, start=len(head) + 1)))
            assert got == list(number_lines(iter(blocks)))
            assert len(head) == min(n, 301)


def test_take_head_of_undecoded_blocks():
    raw = b"".join(b"l\xe2\x82 %d\xff\n" % i for i in range(200)) + b"end\xc3"
    text = raw.decode("utf-8", "replace")
    for size in (1, 7, 64, 5000):
        blocks = [raw[i:i + size] for i in range(0, len(raw), size)]
        cut = [b for b in _rejoin_lines(blocks)]
        for n in (0, 3, 64, 201, 300):
            head, rest = take_head(iter(cut), n)
            got = list(itertools.chain(head, number_lines(
                (b.decode("utf-8", "replace") for b in rest), start=len(head) + 1)))
            assert got == list(number_lines(iter([text])))


def _rejoin_lines(blocks: list[bytes]) -> Iterator[bytes]:
    """Byte blocks of whole lines (as Source.blocks(raw=True) yields)."""
    held = b""
    for b in blocks:
        held += b
        cut = held.rfind(b"\n")
        if cut >= 0:
            yield held[:cut + 1]
            held = held[cut + 1:]
    if held:
        yield held
