"""Property-based tests of the parse path (hypothesis, bounded).

* arbitrary bytes / text: ``forensics.parse`` never raises, every event's line
  is within the input, and line accounting holds;
* arbitrary interleavings of known lines (SGLang prefixed lines, vLLM lines,
  traceback lines of several pids in journald ``short`` format): the same;
* 8 ranks printing complete tracebacks line by line into one journal (distinct
  pids): 8 complete traceback events, each with its own pid and all frames.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forensics
from forensics.api import to_sources
from forensics.errors import InputError
from forensics.events.parser import iter_source_events

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def parse_with_stats(data: bytes, input_format: str = "auto"):
    """Events and the parser's stats for in-memory bytes."""
    (src,) = to_sources(data)
    holder: list = []
    events = list(iter_source_events(src, input_format, parser_out=holder))
    stats = holder[0].stats if holder else None
    return events, stats


REFUSALS = ("not a text log", "is corrupt or cut before the first line")


def check_invariants(data: bytes, input_format: str = "auto"):
    try:
        events, st = parse_with_stats(data, input_format)
    except InputError as e:
        # Input that is not a text log is refused with one line; never a crash.
        assert any(r in str(e) for r in REFUSALS) and "\n" not in str(e), e
        return [], None
    n = physical_lines(data)
    if st is not None:
        assert st.lines == n, (st.lines, n)
        assert st.lines == st.parsed + st.unparsed
        assert 0 <= st.unparsed <= st.lines
        assert st.events == len(events)
    else:
        assert n == 0 and events == []
    for ev in events:
        assert 1 <= ev.line <= n, (ev.line, n, ev)
        if ev.end_line is not None:
            assert ev.line <= ev.end_line <= n, (ev.line, ev.end_line, n)
        ev.to_dict()
    return events, st


# ---------------------------------------------------------------- arbitrary input
@SETTINGS
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data):
    _, st = check_invariants(data)
    # the public API too (bytes in, generator out)
    if st is not None:
        for _ in forensics.parse(data):
            pass


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=2000))
def test_arbitrary_text(text):
    data = text.encode("utf-8", "surrogatepass")
    check_invariants(data)


FORMATS = ["plain", "short", "short-iso", "short-full", "short-unix", "short-monotonic", "json", "export",
           "verbose", "docker", "json-seq", "json-sse"]


@SETTINGS
@given(st.binary(max_size=1500), st.sampled_from(FORMATS))
def test_arbitrary_bytes_forced_format(data, fmt):
    check_invariants(data, fmt)


# ---------------------------------------------------------------- known lines, interleaved
TB_BODY = [
    '  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 2356, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/opt/sglang/python/sglang/srt/model_executor/model_runner.py", line 215, in __init__',
    "    self.initialize(min_per_gpu_memory)",
    "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "RuntimeError: CUDA error: out of memory",
]

KNOWN = [
    "[2026-03-14 09:00:11 TP0] Load weight begin. avail mem=78.21 GB",
    "[2026-03-14 09:00:11 TP1] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=62.9 GB",
    "[2026-03-14 09:00:12 TP0] Capture cuda graph begin. This can take up to several minutes.",
    "[2026-03-14 09:00:12 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    "[2026-03-14 09:00:13] INFO:     127.0.0.1:41234 - \"GET /health HTTP/1.1\" 200 OK",
    "[2026-03-14 09:00:14] The server is fired up and ready to roll!",
    "INFO 06-01 12:00:00 [core.py:61] Initializing a V1 LLM engine (v0.9.2)",
    "ERROR 06-01 12:00:01 [core.py:390] EngineCore failed to start.",
    "ERROR 06-01 12:00:01 [core.py:390] Traceback (most recent call last):",
    'ERROR 06-01 12:00:01 [core.py:390]   File "/x/vllm/v1/engine/core.py", line 381, in run_engine_core',
    "ERROR 06-01 12:00:01 [core.py:390] ValueError: bad config",
    "(EngineCore_DP0 pid=123) INFO 06-01 12:00:02 [gpu_model_runner.py:1] Loading model",
    "(VllmWorker rank=1 pid=456) ERROR 06-01 12:00:03 [multiproc_executor.py:1] WorkerProc failed",
    "Traceback (most recent call last):",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "  + Exception Group Traceback (most recent call last):",
    "  |   File \"x.py\", line 1, in <module>",
    "  | ValueError: one",
    "  +---------------- 1 ----------------",
    "    [Previous line repeated 996 more times]",
    "sglang.service: Main process exited, code=killed, status=9/KILL",
    "Started sglang.service - SGLang server.",
    "-- Boot 3c1e7a2b9d8f4e6a8b0c1d2e3f405162 --",
    "[5.3K blob data]",
    "",
    "   ",
    *TB_BODY,
]


def journald(line: str, pid: int, ts: str = "Mar 14 09:00:12") -> str:
    return f"{ts} gpu-node-7 python3[{pid}]: {line}"


line_strategy = st.one_of(
    st.sampled_from(KNOWN),
    st.builds(journald, st.sampled_from(KNOWN), st.integers(1, 9999)),
    st.builds(journald, st.sampled_from(KNOWN), st.sampled_from([4242, 4310, 4311]),
              st.sampled_from(["Mar 14 09:00:12", "Mar 13 23:59:59", "Jan  1 00:00:00"])),
    st.text(max_size=80),
)


@SETTINGS
@given(st.lists(line_strategy, max_size=120), st.booleans(), st.sampled_from(["\n", "\r\n"]))
def test_interleaved_known_lines(lines, trailing_newline, eol):
    text = eol.join(lines) + (eol if trailing_newline and lines else "")
    data = text.encode("utf-8", "surrogatepass")
    check_invariants(data)


# ---------------------------------------------------------------- 8 ranks, line by line
def rank_traceback(rank: int, pid: int, sglang_header: bool) -> tuple[list[str], list[tuple[str, int, str]]]:
    """One rank's complete traceback as journald short lines, and its frames."""
    frames = [(f"/opt/sglang/python/sglang/srt/layer{k}.py", 100 + 10 * rank + k, f"fn_{rank}_{k}")
              for k in range(2 + rank % 4)]
    if sglang_header:
        head = f"[2026-03-14 09:00:12 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):"
    else:
        head = "Traceback (most recent call last):"
    body = [head]
    for file, lineno, fn in frames:
        body.append(f'  File "{file}", line {lineno}, in {fn}')
        body.append(f"    result = step_{rank}(x)")
    body.append(f"RuntimeError: NCCL error on rank {rank}: unhandled system error")
    return [journald(b, pid) for b in body], frames


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_eight_ranks_interleaved_line_by_line(data):
    pids = [5000 + 7 * r for r in range(8)]
    headers = data.draw(st.lists(st.booleans(), min_size=8, max_size=8), label="sglang_header")
    per_rank = [rank_traceback(r, pids[r], headers[r]) for r in range(8)]
    # an interleaving = a permutation of the multiset of rank ids
    order = data.draw(st.permutations([r for r in range(8) for _ in per_rank[r][0]]), label="order")
    noise_pid = 4242
    with_noise = data.draw(st.booleans(), label="noise")
    cursor = [0] * 8
    out: list[str] = []
    for i, r in enumerate(order):
        out.append(per_rank[r][0][cursor[r]])
        cursor[r] += 1
        if with_noise and i % 5 == 0:
            out.append(journald("[2026-03-14 09:00:12] Decode batch. #running-req: 1, #token: 90", noise_pid))
    text = "\n".join(out) + "\n"
    events, st_ = check_invariants(text.encode())
    tbs = [e for e in events if e.kind == "traceback"]
    assert len(tbs) == 8, [(e.pid, e.data.get("exc_type"), len(e.data.get("frames", ()))) for e in tbs]
    by_pid = {e.pid: e for e in tbs}
    assert sorted(by_pid) == sorted(pids)
    for r, pid in enumerate(pids):
        ev = by_pid[pid]
        assert ev.data["truncated"] is False, (r, ev)
        assert ev.data["exc_type"] == "RuntimeError"
        assert f"rank {r}:" in ev.data["exc_message"]
        got = [(f.file, f.lineno, f.function) for f in ev.data["frames"]]
        assert got == per_rank[r][1], (r, got)
    assert st_.tracebacks == 8 and st_.truncated_tracebacks == 0


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations([r for r in range(8) for _ in range(8)]))
def test_eight_ranks_via_public_api(order):
    """Same property through ``forensics.parse`` on text (the notebook path)."""
    pids = [700 + r for r in range(8)]
    per_rank = [rank_traceback(r, pids[r], False) for r in range(8)]
    n = [len(per_rank[r][0]) for r in range(8)]
    cursor = [0] * 8
    out = []
    for r in order:  # 8 slots per rank; ranks with fewer lines just skip
        if cursor[r] < n[r]:
            out.append(per_rank[r][0][cursor[r]])
            cursor[r] += 1
    for r in range(8):  # the rest in rank order
        out.extend(per_rank[r][0][cursor[r]:])
    tbs = [e for e in forensics.parse("\n".join(out) + "\n") if e.kind == "traceback"]
    assert sorted(e.pid for e in tbs) == pids
    for e in tbs:
        r = pids.index(e.pid)
        assert [(f.file, f.lineno, f.function) for f in e.data["frames"]] == per_rank[r][1]
        assert not e.data["truncated"]


# ---------------------------------------------------------------- values at the edge (issue 16)
import json as _json  # noqa: E402
import re as _re  # noqa: E402

from forensics.ingest.values import bounded_int, no_surrogates  # noqa: E402

_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
                          st.floats(allow_nan=True, allow_infinity=True),
                          st.text(alphabet=st.characters(codec=None), max_size=40))
_JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12)
_JOURNAL_KEYS = st.sampled_from(["MESSAGE", "_PID", "SYSLOG_PID", "__REALTIME_TIMESTAMP",
                                 "_SOURCE_REALTIME_TIMESTAMP", "_HOSTNAME", "SYSLOG_IDENTIFIER", "_COMM", "UNIT",
                                 "_BOOT_ID", "log", "msg", "time", "ts", "stream", "host", "kubernetes"])


@SETTINGS
@given(st.lists(st.dictionaries(_JOURNAL_KEYS, _JSON_VALUES, max_size=8), min_size=1, max_size=12),
       st.sampled_from(["json", "jsonl", "auto"]))
def test_json_envelopes_with_any_values(objs, fmt):
    """Any JSON value in any journal / shipper field: no exception, accounting
    holds, and every event serialises to JSON that encodes as UTF-8 (lone
    surrogates from ``\\ud800`` escapes never reach the output)."""
    data = "\n".join(_json.dumps(o) for o in objs).encode("utf-8", "surrogatepass") + b"\n"
    events, _ = check_invariants(data, fmt)
    for ev in events:
        ev.to_json("x").encode("utf-8")
        assert ev.pid is None or (isinstance(ev.pid, int) and 0 <= ev.pid < 2 ** 31)


@SETTINGS
@given(st.text(max_size=30))
def test_bounded_int_never_raises_and_agrees_with_int(text):
    v = bounded_int(text)
    if text.isascii() and text.isdigit() and len(text) <= 19 and int(text) <= 2 ** 63 - 1:
        assert v == int(text)
    else:
        assert v is None


@SETTINGS
@given(st.text(alphabet=st.characters(codec=None), max_size=50))
def test_no_surrogates_makes_text_encodable(text):
    out = no_surrogates(text)
    out.encode("utf-8")
    assert len(out) == len(text)


_OLD_BOX = _re.compile(r"^\s*[│┃║|](?:\s*\d+\s*[│┃║|])?\s?(?P<msg>.*?)\s*(?:[│┃║|]\s*)?$")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x85\u3000|│┃║a1x-"), max_size=24))
def test_box_wrapper_equals_the_old_regex(text):
    """The linear box-border matcher gives the message the old (quadratic)
    regex gave, on any text."""
    from forensics.envelope.wrappers import _WRAPPERS

    a, b = _OLD_BOX.match(text), _WRAPPERS["box"].match(text)
    assert (a is None) == (b is None)
    if a is not None:
        assert a.group("msg") == b.group("msg")


_DATES = st.datetimes(min_value=__import__("datetime").datetime(1, 1, 2), max_value=__import__("datetime").datetime(9999, 12, 30))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.text(alphabet=st.characters(codec=None), min_size=1, max_size=12), _DATES, _DATES),
                min_size=1, max_size=5), st.sampled_from([".parquet", ".csv", ".jsonl"]))
def test_incident_tables_hold_any_time_and_name(tmp_path_factory, rows, suffix):
    """Any timestamp a log can spell (year 1 to 9999) and any source name
    (lone surrogates included) give a table that writes and reads back with
    every row; times a table cannot hold are NA with their text kept."""
    from forensics.report.frames import read_table, rows_frame, write_table

    recs = [{"source": name, "incident": i, "start_ts": a.isoformat(), "end_ts": b.isoformat(), "verdict": "failed"}
            for i, (name, a, b) in enumerate(rows)]
    df = rows_frame(recs)
    out = tmp_path_factory.mktemp("tables") / f"t{suffix}"
    write_table(df, out)
    back = read_table(out)
    assert len(back) == len(rows)
    for (_, a, _b), (ts, text) in zip(sorted(rows, key=lambda r: r[0]), zip(df["start_ts"], df["start_ts_text"])):
        import pandas as pd

        held = ts is not None and not pd.isna(ts)
        if 1678 <= a.year <= 2261:  # well inside pandas' range (its edges fall inside 1677 and 2262)
            assert held and str(ts)[:4] == f"{a.year:04d}"
        if not held:
            assert isinstance(text, str) and text.startswith(f"{a.year:04d}")
        else:
            assert str(ts)[:4] == f"{a.year:04d}"
