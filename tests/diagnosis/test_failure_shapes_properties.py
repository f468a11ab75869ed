"""Property test (hypothesis, bounded) of the whole diagnosis over logs built from the failure shapes
the nineteenth session taught it (a cut traceback's header with its logger's words, a chained
traceback after a request's, multiprocessing's ``_bootstrap`` frame, llama.cpp's loader restating
"failed to load model", ggml's abort, the core-dumping signals, Ollama's runner terminating, a
"STAMP | message" column, print_info rows, uvicorn's lifespan start) mixed with hostile lines (empty,
a lone bar, NUL, invalid UTF-8, a traceback header as the last line, CRLF).

Whatever the mix: ``classify_text`` never raises, counts every physical line, answers failed or not,
and every evidence line it lists lies inside the input with text of its own."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forensics

SHAPES = [
    "INFO:     Started server process [7]",
    "INFO:     Waiting for application startup.",
    "2024-07-31 15:47:53 | Loading the model",
    "2024-07-31 15:47:53 | | ensemble | 1 | READY |",
    "2024-07-31 15:47:53 | Error: boom | more | bars",
    "print_info: n_embd_v_gqa          = 512",
    "ERROR 10-01 09:00:00 [serving.py:1] Error in request: Traceback (most recent call last):",
    "[2026-03-14 09:00:12 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.11/multiprocessing/process.py", line 314, in _bootstrap',
    "    self.run()",
    '  File "/opt/app/engine.py", line 42, in handle_new_input',
    "    raise EngineDeadError()",
    "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "RuntimeError: CUDA error: out of memory",
    "gguf_init_from_file_impl: tensor 'blk.0.attn_q.weight' has invalid ggml type 39 (NONE)",
    "llama_model_load: error loading model: llama_model_loader: failed to load model from /m.gguf",
    "llama_load_model_from_file: failed to load model",
    "llama_init_from_gpt_params: error: failed to load model '/m.gguf'",
    "/root/llama.cpp/ggml/src/ggml-backend.cpp:179: GGML_ASSERT(buffer) failed",
    "Quit (core dumped)",
    "Bad system call",
    'time=2025-01-10T08:00:00.000Z level=ERROR source=server.go:449 msg="llama runner terminated" error="exit status 2"',
    "ROCm error: invalid device function",
    "radv/amdgpu: Not enough memory for command submission.",
    "No compatible code objects found for: gfx1152",
    "INFO 10-31 21:08:41 [async_llm.py:256] Added request cmpl-82a2.",
    '[GIN] 2025/01/10 - 08:00:00 | 200 | 1.2s | 127.0.0.1 | POST "/api/chat"',
]
HOSTILE = ["", " ", "|", "| ", "\x00", "a\udcff\udcfe b\udc80", "x" * 5000, "Traceback (most recent call last):" * 3]

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@SETTINGS
@given(st.lists(st.sampled_from(SHAPES + HOSTILE), min_size=1, max_size=40), st.sampled_from(["\n", "\r\n"]),
       st.booleans())
def test_any_mix_of_the_shapes_is_diagnosed_whole(lines, eol, trailing):
    data = (eol.join(lines) + (eol if trailing else "")).encode("utf-8", "surrogateescape")
    try:
        out = forensics.classify_text(data, use_classifier=False)
    except forensics.errors.InputError:
        return  # refused as no text log, in one line: never a crash
    res = out.to_dict() if hasattr(out, "to_dict") else out
    n = _physical_lines(data)
    assert res["stats"]["lines"] == n
    assert res["verdict"] in ("failed", "ready", "starting", "stalled", "no-failure")
    for inc in res.get("incidents") or ():
        for ev in inc.get("evidence") or ():
            assert isinstance(ev["line"], int) and 1 <= ev["line"] <= n, (ev, n)
            assert str(ev["text"]).strip(), ev


@SETTINGS
@given(st.lists(st.sampled_from(SHAPES + HOSTILE), max_size=30), st.sampled_from(["Quit (core dumped)", "Bad system call",
       "Trace/breakpoint trap (core dumped)"]), st.sampled_from(["\n", "\r\n"]))
def test_a_core_dumping_signal_as_the_last_line_is_a_failure(lines, death, eol):
    """The shell's report that the server died of a signal, as the log's last word, whatever came before."""
    data = eol.join([*lines, death, ""]).encode("utf-8", "surrogateescape")
    res = forensics.classify_text(data, use_classifier=False)
    assert res["verdict"] == "failed", (res["verdict"], lines)
