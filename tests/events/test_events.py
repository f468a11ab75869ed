"""Foundation acceptance: events from real and realistic logs."""
from __future__ import annotations

import pytest


from forensics import parse

from conftest import CORPORA
from helpers import short_line as _short, traceback_lines as _traceback_lines

SEED1 = CORPORA / "seeds" / "seed1.short.log"


def _events(path_or_text):
    return list(parse(path_or_text))


def _line_of(path, needle):
    for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if needle in line:
            return i, line
    raise AssertionError(needle)


def test_seed1_structured_events_with_envelope_fields():
    evs = _events(SEED1)
    reg = [e for e in evs if e.kind == "cuda_graph_registration"]
    assert len(reg) == 1 and reg[0].data["count"] == 336
    n, raw = _line_of(SEED1, "Registering 336 cuda graph addresses")
    r = reg[0]
    assert r.line == n and r.host == "mild-hope-wilts-fin-03" and r.pid == 22284 and r.rank == "TP0"
    assert r.ts.isoformat().startswith("2026-05-30T14:47:43")
    walk = [e for e in evs if e.kind == "package_walk_warning"]
    assert walk and all(e.data["package"] == "cutlass.cute.experimental" for e in walk)
    n, _ = _line_of(SEED1, "Unexpected error during package walk")
    assert walk[0].line == n and walk[0].pid is not None
    tbs = [e for e in evs if e.kind == "traceback" and e.data["exc_type"] == "ImportError"]
    assert tbs
    tb = [t for t in tbs if t.pid == 22288]
    assert tb and "Vendored FlashAttention CUTE is not available" in tb[0].data["exc_message"]
    assert tb[0].host == "mild-hope-wilts-fin-03" and tb[0].ts is not None
    assert not tb[0].data["truncated"] and len(tb[0].data["frames"]) > 3


def test_seed1_renderings_agree():
    """short, short-iso and json renderings of the same journal give the same key events."""
    def key(path):
        evs = _events(path)
        return sorted((e.kind, e.pid, e.data.get("count") or e.data.get("exc_type"))
                      for e in evs if e.kind in ("cuda_graph_registration", "traceback"))
    base = key(SEED1)
    for other in ("seed1.short-iso.log", "seed1.json.log", "seed1.short-iso-precise.log"):
        assert key(CORPORA / "seeds" / other) == base, other


def test_seed2_truncated_traceback_keeps_frames():
    evs = _events(CORPORA / "seeds" / "seed2.tail30.log")
    tbs = [e for e in evs if e.kind == "traceback"]
    assert tbs
    last = tbs[-1]
    assert last.data["truncated"] is True
    files = [f.file for f in last.data["frames"]]
    assert any(f.endswith("hybrid_linear_attn_backend.py") for f in files)
    assert files[-1].endswith("flashinfe")  # the path cut mid-word is kept as a partial frame
    assert last.data["frames"][-1].partial


def test_eight_ranks_interleaved_line_by_line():
    blocks = [_traceback_lines(r) for r in range(8)]
    lines = [_short(4300 + r, blocks[r][i]) for i in range(len(blocks[0])) for r in range(8)]
    evs = _events("\n".join(lines) + "\n")
    tbs = [e for e in evs if e.kind == "traceback"]
    assert len(tbs) == 8
    assert sorted(e.pid for e in tbs) == list(range(4300, 4308))
    for e in tbs:
        assert not e.data["truncated"]
        assert len(e.data["frames"]) == 2
        assert e.data["exc_type"] == "torch.OutOfMemoryError"
        assert f"GPU {e.pid - 4300} " in e.data["exc_message"]
        assert e.rank == f"TP{e.pid - 4300}"


def test_vllm_prefixed_workers_interleaved():
    lines = []
    for i in range(4):
        for r in range(2):
            body = ["Traceback (most recent call last):", '  File "/v/worker.py", line 10, in run',
                    "    self.step()", f"RuntimeError: worker {r} broke"][i]
            lines.append(f"(VllmWorker rank={r} pid={900 + r}) ERROR 06-01 12:00:01 [multiproc_executor.py:500] {body}")
    evs = _events("\n".join(lines) + "\n")
    tbs = sorted((e for e in evs if e.kind == "traceback"), key=lambda e: e.rank)
    assert [t.data["exc_message"] for t in tbs] == ["worker 0 broke", "worker 1 broke"]
    assert all(len(t.data["frames"]) == 1 for t in tbs)


def test_vllm_workers_named_by_parallel_rank():
    """vLLM's multiproc workers tagged with their rank after a space ("(VllmWorker TP1 pid=N) ") carry
    vLLM's own header under the tag: the traceback under it is read as any vLLM worker's."""
    lines = [f"(VllmWorker TP1 pid=901) ERROR 06-01 12:00:01 [multiproc_executor.py:500] {body}" for body in (
        "WorkerProc hit an exception.", "Traceback (most recent call last):", '  File "/v/worker.py", line 10, in run',
        "    self.step()", "RuntimeError: worker 1 broke")]
    evs = _events("\n".join(lines) + "\n")
    tbs = [e for e in evs if e.kind == "traceback"]
    assert [t.data["exc_message"] for t in tbs] == ["worker 1 broke"]
    assert evs[0].level == "ERROR" and evs[0].text == "WorkerProc hit an exception."


def test_chained_traceback_and_cuda_trailer():
    text = "\n".join([
        "Traceback (most recent call last):",
        '  File "/a/loader.py", line 3, in load',
        "    torch.cuda.synchronize()",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "The above exception was the direct cause of the following exception:",
        "Traceback (most recent call last):",
        '  File "/a/runner.py", line 9, in <module>',
        "    main()",
        "RuntimeError: Failed to build model",
    ]) + "\n"
    tbs = [e for e in _events(text) if e.kind == "traceback"]
    assert len(tbs) == 1
    chain = tbs[0].data["chain"]
    assert [c.exc_type for c in chain] == ["RuntimeError", "RuntimeError"]
    assert chain[1].relation == "cause"
    assert "CUDA_LAUNCH_BLOCKING" in chain[0].exc_message
    assert tbs[0].data["exc_message"] == "Failed to build model"


def test_exception_group():
    text = "\n".join([
        "  + Exception Group Traceback (most recent call last):",
        '  |   File "/tmp/tb/t2.py", line 4, in <module>',
        "  |     f()",
        "  | ExceptionGroup: startup failed (2 sub-exceptions)",
        "  +-+---------------- 1 ----------------",
        "    | ValueError: bad tp size",
        "    +---------------- 2 ----------------",
        "    | TypeError: bad dtype",
        "    +------------------------------------",
    ]) + "\n"
    tbs = [e for e in _events(text) if e.kind == "traceback"]
    assert len(tbs) == 1
    types = [c.exc_type for c in tbs[0].data["chain"]]
    assert types == ["ExceptionGroup", "ValueError", "TypeError"]


def test_lone_fragments_are_truncated_tracebacks():
    evs = _events("May 30 14:47:53 h python[22288]: raise ImportError(\n"
                  "May 30 14:47:53 h python[22288]: ImportError: Vendored FlashAttention CUTE is not available\n")
    tbs = [e for e in evs if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["truncated"] and tbs[0].data["exc_type"] == "ImportError"


def test_systemd_lifecycle_fields():
    text = ("Jun 01 12:00:00 gpu-node-7 systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE\n"
            "Jun 01 12:00:00 gpu-node-7 systemd[1]: sglang.service: Failed with result 'exit-code'.\n"
            "Jun 01 12:00:05 gpu-node-7 systemd[1]: sglang.service: Scheduled restart job, restart counter is at 3.\n"
            "Jun 01 12:00:05 gpu-node-7 systemd[1]: Started sglang.service - SGLang server.\n")
    evs = [e for e in _events(text) if e.kind == "unit_lifecycle"]
    assert [e.data["event"] for e in evs] == ["process-exited", "failed", "restart-scheduled", "started"]
    assert evs[0].data["status"] == 1 and evs[0].data["status_name"] == "FAILURE"
    assert evs[2].data["restart_counter"] == 3 and evs[3].data["unit"] == "sglang.service"


def test_human_elisions_inside_a_traceback():
    t = ('Traceback (most recent call last):\n  File "/a/b.py", line 3, in f\n    x()\n...\n'
         '  File "/a/c.py", line 9, in g\n    torch.cuda.synchronize()\n'
         'RuntimeError: CUDA error: an illegal memory access was encountered\n')
    tbs = [e for e in _events(t) if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "RuntimeError" and len(tbs[0].data["frames"]) == 2


def test_hard_wrapped_file_line_is_glued_back():
    t = ('Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/sglang/srt/model_exec\n'
         'utor/model_runner.py", line 300, in load_model\n    self.model = get_model(model_config=self.model_config)\n'
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    tb = [e for e in _events(t) if e.kind == "traceback"][0]
    assert tb.data["exc_type"] == "torch.OutOfMemoryError"
    assert [f.file for f in tb.data["frames"]] == ["/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py"]
    assert tb.data["frames"][0].lineno == 300 and not tb.data["truncated"]


@pytest.mark.parametrize("text, msg, level, logger", [
    # Rust's tracing-subscriber (TGI's launcher and router) once an envelope took the timestamp
    ("ERROR text_generation_launcher: Shard 0 failed to start", "Shard 0 failed to start", "ERROR",
     "text_generation_launcher"),
    (" INFO text_generation_launcher: Starting shard rank=0", "Starting shard rank=0", "INFO",
     "text_generation_launcher"),
    ("  WARN text_generation_router::server: router/src/server.rs:1500: Invalid hostname", "Invalid hostname",
     "WARNING", "text_generation_router::server"),
    # spans say what the process was doing: they stay in the message
    (" INFO shard-manager: text_generation_launcher: Starting shard rank=0",
     "shard-manager: text_generation_launcher: Starting shard rank=0", "INFO", None),
    ("ERROR warmup{max_input_length=4095}:warmup: text_generation_router_v3::client: backends/v3/src/client/mod.rs:54: "
     "Server error: CUDA out of memory", "warmup{max_input_length=4095}:warmup: text_generation_router_v3::client: "
     "backends/v3/src/client/mod.rs:54: Server error: CUDA out of memory", "ERROR", None),
    # a bare word after a level is no Rust target; an indented line is no log line
    ("WARN x: y", "WARN x: y", None, None),
    ("    INFO something happened", "    INFO something happened", None, None),
])
def test_rust_tracing_lines_are_peeled(text, msg, level, logger):
    from forensics.events.prefixes import peel_prefix

    got, p = peel_prefix(text, 2025)
    assert (got, p.level, p.logger) == (msg, level, logger)


def test_tracing_prefix_is_linear_on_a_hostile_line():
    import time
    from forensics.events.prefixes import peel_prefix

    line = "ERROR " + "a:" * 200_000 + "a"
    t0 = time.process_time()
    assert peel_prefix(line, 2025)[0] == line
    assert time.process_time() - t0 < 30  # CPU time, not wall: quadratic backtracking would take hours


def test_llama_cpp_timestamped_log_lines_carry_their_level():
    # llama-server prints "<uptime> <level letter> <message>" (common/log.cpp with timestamps):
    # the letter is the line's level, the uptime no clock time.
    from forensics.events.prefixes import peel_prefix

    rest, p = peel_prefix("3.02.199.205 E llama_init_from_model: failed to initialize the context", 2025)
    assert rest == "llama_init_from_model: failed to initialize the context" and p.level == "ERROR"
    rest, p = peel_prefix("0.34.028.011 W warning: failed to mlock 707899392-byte buffer", 2025)
    assert rest.startswith("warning: failed to mlock") and p.level == "WARNING" and p.app_ts is None
    rest, p = peel_prefix("1.5 GiB free", 2025)
    assert rest == "1.5 GiB free" and p.level is None


@pytest.mark.parametrize("text, msg, level", [
    # a log viewer's or a container UI's export: "STAMP | message", the server's own prefix after the bar
    ("2026-05-01 21:27:17.857 | (EngineCore pid=188) ERROR 05-01 19:27:17 [core.py:1136] RuntimeError: UVA is not available",
     "RuntimeError: UVA is not available", "ERROR"),
    ("2025-03-02 10:00:01 | Traceback (most recent call last):", "Traceback (most recent call last):", None),
    # loguru's columns keep their level and logger
    ("2026-01-29 05:21:22.178 | INFO     | __main__:main:334 - EVALUATING MODEL", "__main__:main:334 - EVALUATING MODEL",
     "INFO"),
    # a bar inside the message is the message's
    ("2024-01-01 10:00:00 started | 4 workers", "started | 4 workers", None),
])
def test_a_stamps_own_bar_column_is_peeled(text, msg, level):
    from forensics.events.prefixes import peel_prefix

    got, p = peel_prefix(text, 2026)
    assert (got, p.level) == (msg, level)
