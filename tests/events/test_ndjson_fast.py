"""``forensics parse``'s one-process fast path (``events/ndjson.py``) writes
exactly what the full path writes: same NDJSON lines, same order, same
statistics, for any mix of serving lines and the lines around them (other
heads, levels, traceback lines, continuation lines, odd dates, pids and
characters), with its memos, flushes and unchecked stretches at any size; and it does take the
serving lines."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.api import to_sources
from forensics.events import ndjson
from forensics.events.ndjson import ServingLines, SourceLines
from forensics.events.parser import iter_source_events, open_source

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

STAMPS = ["2026-05-30T06:17:25+0000", "2026-05-30T06:17:26+0000", "2026-05-30T06:17:25.123456+00:00",
          "2026-05-30T06:17:25Z", "2026-13-30T06:17:25+0000", "2026-05-30T06:17:25"]
COLUMNS = ["gpu-node-7 python3[22351]: ", "gpu-node-7 python3[22280]: ", "gpu-node-7 python3[1]: ",
           "gpu-node-7 systemd[1]: ", "gpu-node-7 python3: ", "h python3[0123]: ", "h sglang:x[5]: ", "python3[7]: "]
HEADS = ["[2026-05-30 06:17:25 TP3] ", "[2026-05-30 06:17:25] ", "[2026-05-30 06:17:26 TP0] ",
         "[2026-05-30 06:17:25.123 TP0 EP1] ", "[2026-99-99 99:99:99 TP1] ", "[2026-05-30 06:17:25 encode_server] ",
         "[2026-05-30 06:17:25 encode_dp_worker[3]] ", "[2026-05-30 06:17:25 foo] ", "[2026-05-30 06:17:2x TP1] ",
         "[2026-05-30 06:17:25 TP1]", "", "[rank0]: ", "[\u0662026-05-30 06:17:25 TP3] ",
         "[2026-05-30 06:17:25 TP3] [TP3] "]
LEVELS = ["", "", "INFO:     ", "WARNING: ", "INFO:", "DEBUG: ", "ERROR:  "]
MESSAGES = [
    "Decode batch. #running-req: 91, #token: 32000, token usage: 0.38, #queue-req: 2",
    "Prefill batch. #new-seq: 2, #new-token: 4309, #cached-token: 1432",
    "Decode batch[x] y", "Decode batch. HTTP/1.1", "Decode batch. Traceback (most recent call last):",
    'Decode batch. "quoted" \\ back', "Decode batch. \u00fcn\u00ef", "Decode batch. \x1b[0m x", "Decode batch. #012two",
    "Decode batch. tail blob data]", "Decode batch.\u2028sep",
    '10.0.0.157:33302 - "POST /v1/completions HTTP/1.1" 200 OK',
    '10.0.0.9:1 - "GET /metrics HTTP/1.1" 503 Service Unavailable',
    '10.0.0.9:1 - "GET /caf\u00e9 HTTP/1.1" 200 OK', "1 HTTP/1.1 nothing", '9 "GET /x HTTP/1.1" 200 Traceback',
    "Traceback (most recent call last):", '  File "/x.py", line 3, in f', "    raise ValueError('boom')",
    "ValueError: boom", "(EngineCore pid=3) Decode batch. x", "Registering 336 cuda graph addresses",
    "Load weight end. type=Qwen2ForCausalLM", "[3.5K blob data]", "",
    "sglang.service: Main process exited, code=killed, status=9/KILL",
]
OTHER = ["  indented continuation", "\ttab continuation", "-- Boot 0123456789abcdef0123456789abcdef --", "",
         "garbage line", "2026-05-30T06:17:25+0000 gpu-node-7 systemd[1]: Started sglang.service."]


def journal_line() -> st.SearchStrategy[str]:
    parts = st.tuples(st.sampled_from(STAMPS), st.sampled_from(COLUMNS), st.sampled_from(HEADS),
                      st.sampled_from(LEVELS), st.sampled_from(MESSAGES))
    return st.one_of(parts.map(lambda p: f"{p[0]} {p[1]}{''.join(p[2:])}"), st.sampled_from(OTHER))


def _source(lines: list[str]):
    (src,) = to_sources(("\n".join(lines) + "\n").encode("utf-8"))
    return src


def _full(lines: list[str], input_format: str) -> tuple[list[str], dict]:
    """What parse wrote before the fast path: every event through Event.to_json."""
    src = _source(lines)
    holder: list = []
    out = [ev.to_json(src.name) for ev in iter_source_events(src, input_format, parser_out=holder)]
    return out, holder[0].stats.to_dict() if holder else {}


def _lines(lines: list[str], input_format: str, fast: bool) -> tuple[list[str], dict]:
    got = SourceLines(_source(lines), input_format, fast=fast)
    out = list(got)
    return out, got.stats.to_dict() if got.stats is not None else {}


@SETTINGS
@given(st.lists(journal_line(), min_size=1, max_size=60), st.sampled_from(["auto", "short-iso"]))
def test_fast_path_writes_what_the_full_path_writes(lines: list[str], input_format: str) -> None:
    want = _full(lines, input_format)
    assert _lines(lines, input_format, fast=False) == want
    assert _lines(lines, input_format, fast=True) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(journal_line(), min_size=1, max_size=40))
def test_memos_flushes_and_skips_of_any_size(lines: list[str]) -> None:
    want = _full(lines, "short-iso")
    old = ndjson.MEMO_LIMIT, ndjson.FLUSH_LINES, ndjson.MISS_LINES, ndjson.SKIP_LINES
    try:
        for sizes in ((1, 2, 1000, 1), (1, 2, 2, 3), (4096, 512, 1, 1)):
            ndjson.MEMO_LIMIT, ndjson.FLUSH_LINES, ndjson.MISS_LINES, ndjson.SKIP_LINES = sizes
            assert _lines(lines, "short-iso", fast=True) == want, sizes
    finally:
        ndjson.MEMO_LIMIT, ndjson.FLUSH_LINES, ndjson.MISS_LINES, ndjson.SKIP_LINES = old


def test_serving_lines_take_the_fast_path() -> None:
    serving = [f"{STAMPS[0]} {COLUMNS[0]}{HEADS[0]}{MESSAGES[0]}",
               f"{STAMPS[1]} {COLUMNS[1]}{HEADS[1]}{LEVELS[2]}{MESSAGES[11]}"]
    src = open_source(_source(serving), "short-iso")
    fast = ServingLines(src.parser)
    items = list(src.lines)
    assert [fast.line(n, text) for n, text in items] == [None, None]  # a key seen once: the full path
    got = [fast.line(n, text) for n, text in items]
    assert all(got), got
    assert got == _full(serving, "short-iso")[0]
    # Not serving lines, or a head the full path reads otherwise: the full path.
    for text in (f"{STAMPS[0]} {COLUMNS[3]}{HEADS[0]}{MESSAGES[0]}", f"{STAMPS[0]} {COLUMNS[0]}{HEADS[7]}{MESSAGES[0]}",
                 f"{STAMPS[4]} {COLUMNS[0]}{HEADS[0]}{MESSAGES[0]}",
                 f"{STAMPS[0]} {COLUMNS[0]}{HEADS[0]}{MESSAGES[16]}"):
        assert fast.line(9, text) is None and fast.line(9, text) is None, text


def test_every_combination_in_one_log() -> None:
    """Every head x level x message, for each columns text, in one log and
    reversed: the first line of each key makes its template, the later ones
    use it (a key that left out something deciding would show here)."""
    for cols in COLUMNS:
        combos = [f"{stamp} {cols}{head}{level}{msg}" for head in HEADS for level in LEVELS for msg in MESSAGES
                  for stamp in STAMPS[:2]]
        for lines in (combos, combos[::-1]):
            assert _lines(lines, "short-iso", fast=True) == _full(lines, "short-iso")



def _failing(lines: list[str], after: int):
    """A source whose read fails after ``after`` blocks of 3 lines (past the
    first 64 lines, which are read before any is parsed)."""
    src = _source(lines)
    blocks = src.blocks

    def broken(line_mode: bool = False, raw: bool = False):  # type: ignore[no-untyped-def]
        text = "".join(b if isinstance(b, str) else b.decode() for b in blocks(line_mode=line_mode, raw=raw))
        parts = [p + "\n" for p in text.split("\n")[:-1]]
        stop = min(after, len(parts) // 3 - 1)
        for i in range(0, len(parts), 3):
            if i // 3 == stop:
                raise OSError("read error")
            yield "".join(parts[i:i + 3])
    src.blocks = broken  # type: ignore[method-assign]
    return src


def _until_error(make) -> list[str]:  # type: ignore[no-untyped-def]
    out: list[str] = []
    try:
        for text in make():
            out.append(text)
    except OSError:
        return out
    raise AssertionError("no read error")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(journal_line(), min_size=70, max_size=150), st.integers(min_value=22, max_value=50))
def test_a_read_error_ends_the_output_where_the_full_path_ends_it(lines: list[str], after: int) -> None:
    want = _until_error(lambda: (ev.to_json(src.name) for src in [_failing(lines, after)]
                                 for ev in iter_source_events(src, "short-iso")))
    got = _until_error(lambda: iter(SourceLines(_failing(lines, after), "short-iso", fast=True)))
    assert got == want


def test_unchecked_stretches_of_every_size(monkeypatch) -> None:
    """Serving lines between start-up lines, with every small stretch and
    miss count: a serving line right after an unchecked stretch is written
    after the stretch's last record."""
    serving = f"{STAMPS[0]} {COLUMNS[0]}{HEADS[0]}{MESSAGES[0]}"
    other = f"{STAMPS[0]} {COLUMNS[0]}{HEADS[0]}Load weight end. type=Qwen2ForCausalLM"
    lines = [serving, serving] + [serving if i % 5 < 2 else other for i in range(60)]
    want = _full(lines, "short-iso")
    for miss in range(1, 5):
        for skip in range(1, 5):
            monkeypatch.setattr(ndjson, "MISS_LINES", miss)
            monkeypatch.setattr(ndjson, "SKIP_LINES", skip)
            assert _lines(lines, "short-iso", fast=True) == want, (miss, skip)
