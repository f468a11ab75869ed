"""The proving line is usually printed by a library, not by the server: rules keyed on
the library's own wording name the cause whichever server printed it (logs built here
around the strings the libraries print)."""
from __future__ import annotations

import pytest

from helpers import classify_lines as _run


def test_a_rust_panic_is_proved_by_its_location_and_its_message_together():
    res = _run([
        "2024-03-18T18:17:40.000000Z  INFO text_generation_router: Connected",
        "thread 'tokio-runtime-worker' panicked at router/src/server.rs:180:45:",
        "byte index 1000 is not a char boundary; it is inside 'x' (bytes 999..1002)",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    ])
    first = res["evidence"][0]["text"]
    assert "panicked at router/src/server.rs:180:45:" in first and "byte index 1000" in first


@pytest.mark.parametrize("lines, label", [
    # llama.cpp's loader, as Ollama's runner and llama.cpp's server print it
    (["time=2025-01-01T10:00:00.000Z level=INFO source=server.go:380 msg=\"starting llama server\"",
      "llama_model_load: error loading model: error loading model hyperparameters: key not found in model: qwen9.context_length",
      "llama_load_model_from_file: failed to load model",
      "time=2025-01-01T10:00:01.000Z level=ERROR source=sched.go:455 msg=\"error loading llama server\" error=\"llama runner process has terminated: exit status 2\""],
     "config.model-load"),
    # the Ascend runtime's stream sync, whatever its error code
    (["Traceback (most recent call last):",
      '  File "/srv/engine/executor.py", line 88, in sync',
      "    torch.npu.synchronize()",
      "RuntimeError: ACL stream synchronize failed."],
     "gpu.illegal-access"),
    # the KV cache does not fit, in another engine's words
    (["ERROR engine::kvcache_allocator: KVCache allocation failed: Insufficient GPU memory for KVCache allocation."],
     "gpu.out-of-memory"),
    # transformers' config lacks what the model code reads
    (["Traceback (most recent call last):",
      '  File "/srv/engine/model_agent.py", line 120, in build_model',
      "    hidden = config.hidden_size",
      "AttributeError: 'Qwen9VLConfig' object has no attribute 'hidden_size'"],
     "config.model-load"),
])
def test_a_library_wording_names_the_cause_whichever_server_printed_it(lines, label):
    res = _run(lines)
    assert res["verdict"] == "failed" and res["root_cause"] == label, (res["root_cause"], res.get("evidence"))


def test_a_runtime_error_goes_ahead_of_a_cut_tracebacks_last_frame():
    # The traceback was cut before its exception; the HIP runtime said what failed.
    res = _run([
        "INFO 01-01 10:00:00 [engine.py:100] Initializing engine",
        "ERROR 01-01 10:00:05 [engine.py:448] HIP error: invalid device function",
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.11/site-packages/vllm/engine/multiprocessing/engine.py", line 128, in from_vllm_config',
        "    return cls(",
    ])
    assert res["evidence"][0]["text"].endswith("HIP error: invalid device function"), res["evidence"]


def test_the_raised_exception_line_goes_ahead_of_the_quoted_raise():
    res = _run([
        'File "/usr/local/lib/python3.10/site-packages/vllm/config.py", line 1608, in __init__',
        'raise RuntimeError("Failed to infer device type")',
        "RuntimeError: Failed to infer device type",
    ])
    assert res["evidence"][0]["text"] == "RuntimeError: Failed to infer device type", res["evidence"]


def test_an_error_chain_is_proved_by_its_deepest_cause():
    # anyhow's "Caused by:" block (outermost first): the last cause says what went wrong,
    # whatever the program; the context line stays behind it.
    res = _run([
        "2024-03-18T18:17:40.000000Z  INFO widget_router: Starting model backend",
        "Error: Could not start the widget engine",
        "",
        "Caused by:",
        "    0: opening the shard map",
        "    1: frobnication of shard 7 refused by the quux layer",
    ])
    texts = [e["text"] for e in res["evidence"]]
    assert texts[0] == "frobnication of shard 7 refused by the quux layer"
    assert "Error: Could not start the widget engine" in texts[1:]


@pytest.mark.parametrize("logged", [
    "Could not start Fast engine: Could not open engine: frobnication of shard 7 refused",
    '{"timestamp":"2025-03-24T04:51:46.312403Z","level":"ERROR","message":"Could not start Fast engine: '
    'Could not open engine: frobnication of shard 7 refused","target":"widget_engine"}',
])
def test_an_error_chain_that_kept_only_generic_words_gives_way_to_the_error_logged_before_it(logged):
    # a Rust program logs the error, then returns it from main with context (TEI's shape): anyhow's last
    # cause keeps only the words the logged line continues with the reason
    res = _run([
        "2024-03-18T18:17:40.000000Z  INFO widget_router: Starting the widget engine",
        logged,
        "Error: Could not create engine",
        "",
        "Caused by:",
        "    Could not open engine: no suitable engine could be opened",
    ])
    texts = [e["text"] for e in res["evidence"]]
    assert res["evidence"][0]["line"] == 2, texts
    assert "Error: Could not create engine" in texts[1:]
