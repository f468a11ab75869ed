"""Every phase marker's examples (events/phases.yaml) parse as that marker,
through the whole per-line path (prefixes peeled, the keyword pre-filter, the
marker regexes, the logger a marker is tied to), with RE2 and with ``re``."""
from __future__ import annotations

import pytest

from forensics import parse
from forensics.events import phases
from forensics.events.tables import load_table

ROWS = load_table(phases.__file__, "phases.yaml")
CASES = [(row["name"], ex) for row in ROWS for ex in row.get("examples") or ()]


def test_every_marker_has_an_example():
    assert all(row.get("examples") for row in ROWS), [row["name"] for row in ROWS if not row.get("examples")]


@pytest.mark.parametrize("name,line", CASES)
def test_example_parses_as_its_marker(name, line):
    evs = [e for e in parse([line]) if e.text.strip()]
    assert evs and evs[0].kind == "phase_marker", (line, [(e.kind, e.text, e.logger) for e in evs])
    assert evs[0].data["marker"] == name


@pytest.mark.parametrize("name,line", CASES)
def test_example_matches_without_re2(name, line, monkeypatch):
    ev = next(e for e in parse([line]) if e.text.strip())
    monkeypatch.setattr(phases, "_SET_MATCH", None)
    assert phases.match_marker(ev.text, ev.logger) == name


@pytest.mark.parametrize("text,logger", [
    ("Connected", "some_client"),  # a bare word counts only from the router that prints it
    ("Ready", None),
])
def test_logger_bound_markers_need_their_logger(text, logger):
    assert phases.match_marker(text, logger) is None


def test_api_server_tasks_are_before_it_listens():
    """vLLM's API server lists its tasks once its engine is up, before it listens: the warm-up is
    over, readiness is not reached (offline llm.py's list is offline_ready's)."""
    assert phases.PHASE_OF[phases.match_marker("Supported tasks: ['generate']", "api_server.py")] == "warmup"
    assert phases.match_marker("Supported tasks: ['generate']", "some_client") is None



@pytest.mark.parametrize("line", [
    # FlashInfer's notice at import (no prebuilt kernels): launch, not a build.
    "2025-06-10 02:40:11,120 - INFO - flashinfer.jit: Prebuilt kernels not found, using JIT backend",
    # A ggml-era loader's own failure is the failure, not progress through loading.
    "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'qwen2'",
    # An inference route answered with an error: no request served (a listing answered is
    # probe_answered, ready: the server was up).
    '10:33AM INF Error ip=127.0.0.1 latency="1.2s" method=POST status=500 url=/v1/chat/completions',
    # llama.cpp's timings at exit with nothing evaluated.
    "llama_perf_context_print: prompt eval time =       0.00 ms /     1 tokens (    0.00 ms per token,      inf tokens per second)",
    # mistral.rs's engine logger with nothing running: an idle engine.
    "2025-06-14T12:14:24.773015Z  INFO mistralrs_core::engine::logger: Throughput (T/s) 0.00, Prefix cache hitrate 0.00%, 0 running, 0 waiting",
    # vLLM's request log of a tokenize call (tokn-): no inference request.
    "INFO 06-01 10:02:00 [logger.py:39] Received request tokn-788eaac1b2: prompt: 'hello', params: None",
    # "Loading" a file that holds no weights.
    "INFO     Loading the extension \"gallery\"",
    # a start-up step's one word, not a model folder's name (review22)
    "INFO:Loading tokenizer...",
    "2024-01-01 10:00:00 INFO Loading configuration...",
    "Loading plugins...",
    "Loading \"settings\"",
])
def test_lines_that_are_no_marker(line):
    evs = [e for e in parse([line]) if e.text.strip()]
    assert not evs or evs[0].kind != "phase_marker", (line, evs[0].data)


# Lines a hostile or broken writer sends, each aimed at a marker regex's worst case under ``re`` (the
# path taken without RE2): a long run of the characters a greedy run and the part after it both
# accept, with the marker's trigger present and the rest failing. Linear regexes take milliseconds.
_HOSTILE_MARKER_LINES = [
    "print_info: a" + " " * 100_000,  # a name run and the padding before " =" share the space
    "a-" * 50_000 + "x-server: listening on ftp",  # a dashed name tried from every word boundary
    "x-server: listening on ftp " + "a." * 50_000,
    "status=200 " * 9_000 + "method=POST",  # an access log's fields, each gap scanned to the line's end
    "method=POST route=/chat " * 400,  # ... a start for each POST, a second scan for each route
]


def _quarter(line: str) -> str:
    """The hostile line's shape at a quarter of its length: its longest repeated run cut to a quarter,
    the trigger before or after it kept."""
    import re

    best = max((m for unit in (" ", "a-", "a.", "status=200 ", "method=POST route=/chat ")
                for m in re.finditer(f"(?:{re.escape(unit)})+", line)), key=lambda m: len(m.group()))
    unit = next(u for u in (" ", "a-", "a.", "status=200 ", "method=POST route=/chat ")
                if best.group() == u * (len(best.group()) // len(u)))
    n = len(best.group()) // len(unit)
    assert n * len(unit) > len(line) // 2, line[:40]
    return line[:best.start()] + unit * (n // 4) + line[best.end():]


@pytest.mark.parametrize("line", _HOSTILE_MARKER_LINES,
                         ids=["print-info-spaces", "dashed-name", "dotted-tail", "status-fields", "post-route-pairs"])
def test_marker_regexes_are_linear_on_hostile_lines_without_re2(line, monkeypatch):
    # Linear, judged against a peer in the same run rather than a wall-clock bound (which a loaded
    # machine breaks): the same hostile shape at a quarter of its length. A linear scan takes about
    # 4x as long on the whole line; a quadratic one 16x (at these sizes, minutes against milliseconds).
    import time

    monkeypatch.setattr(phases, "_SET_MATCH", None)

    def fastest(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            phases.match_marker(text, None)
            best = min(best, time.perf_counter() - t)
        return best

    quarter = _quarter(line)
    whole, part = fastest(line), fastest(quarter)
    assert whole < max(10 * part, 0.05), (whole, part)
