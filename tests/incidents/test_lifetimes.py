"""Lifetimes and verdicts: which error ended a start-up, which the process moved past or
recovered from, what a healthy or stopped run is called."""
from __future__ import annotations

from forensics import classify

from conftest import CORPORA, run_cli


SEEDS = CORPORA / "seeds"


def test_ready_log_exit_zero_and_starting_log():
    ready = (SEEDS / "seed1.short.log").read_text().splitlines()
    # A healthy SGLang run: startup markers, ready, serving.
    text = "\n".join([
        "[2025-06-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=1)",
        "[2025-06-01 12:00:05] Load weight begin. avail mem=78.50 GB",
        "[2025-06-01 12:00:20] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB, mem usage=18.50 GB.",
        "[2025-06-01 12:00:21] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
        "[2025-06-01 12:00:22] Capture cuda graph begin. This can take up to several minutes. avail mem=19.00 GB",
        "[2025-06-01 12:00:40] Capture cuda graph end. Time elapsed: 18.00 s. mem usage=1.00 GB. avail mem=18.00 GB.",
        "[2025-06-01 12:00:41] INFO:     Application startup complete.",
        '[2025-06-01 12:00:42] INFO:     127.0.0.1:40000 - "GET /get_model_info HTTP/1.1" 200 OK',
        "[2025-06-01 12:00:45] The server is fired up and ready to roll!",
        '[2025-06-01 12:01:00] INFO:     127.0.0.1:40002 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    ]) + "\n"
    d = classify(text)
    assert d["verdict"] == "ready" and d["root_cause"] is None
    p = run_cli("classify", "-", input=text.encode())
    assert p.returncode == 0
    starting = "\n".join(text.splitlines()[:5]) + "\n"
    d = classify(starting)
    assert d["verdict"] in ("starting", "stalled") and d["root_cause"] is None
    assert d["phase"] == "cuda-graph-capture"


def _startup(*extra: str) -> str:
    base = [
        "Jun 01 12:00:00 gpu-node-7 python3[4242]: [2025-06-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=2)",
        "Jun 01 12:00:05 gpu-node-7 python3[4300]: [2025-06-01 12:00:05 TP0] Load weight begin. avail mem=78.50 GB",
        "Jun 01 12:00:05 gpu-node-7 python3[4301]: [2025-06-01 12:00:05 TP1] Load weight begin. avail mem=78.50 GB",
    ]
    return "\n".join(base + list(extra)) + "\n"


_HANDLED_TB = [
    "Jun 01 12:00:06 gpu-node-7 python3[4300]: Traceback (most recent call last):",
    'Jun 01 12:00:06 gpu-node-7 python3[4300]:   File "/x/hub.py", line 10, in fetch',
    "Jun 01 12:00:06 gpu-node-7 python3[4300]:     resp.raise_for_status()",
    "Jun 01 12:00:06 gpu-node-7 python3[4300]: requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://example/x.json",
]


def test_a_traceback_the_process_moved_past_is_not_the_failure():
    log = _startup(*_HANDLED_TB,
                   "Jun 01 12:00:20 gpu-node-7 python3[4300]: [2025-06-01 12:00:20 TP0] KV Cache is allocated. #tokens: 4000, K size: 2.00 GB, V size: 2.00 GB")
    d = classify(log)
    assert d["verdict"] in ("starting", "stalled"), d["summary"]


def test_another_ranks_progress_does_not_excuse_a_crash():
    log = _startup(*_HANDLED_TB,
                   "Jun 01 12:00:20 gpu-node-7 python3[4301]: [2025-06-01 12:00:20 TP1] KV Cache is allocated. #tokens: 4000, K size: 2.00 GB, V size: 2.00 GB")
    d = classify(log)
    assert d["verdict"] == "failed"


def test_a_traceback_logged_as_a_warning_is_not_the_failure():
    log = _startup(*[
        "WARNING 06-01 12:00:06 [config.py:300] Could not read the generation config; using defaults",
        "WARNING 06-01 12:00:06 [config.py:300] Traceback (most recent call last):",
        'WARNING 06-01 12:00:06 [config.py:300]   File "/x/config.py", line 10, in load',
        "WARNING 06-01 12:00:06 [config.py:300] OSError: generation_config.json not found",
    ])
    d = classify(log)
    assert d["verdict"] != "failed"


def test_an_error_the_server_recovered_from_before_ready_is_not_the_failure():
    lines = [
        "[2025-06-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=1, port=30000)",
        "[2025-06-01 12:00:00] port 30000 is in use. Waiting for 1 seconds for http server to be available.",
        "[2025-06-01 12:00:05] Load weight begin. avail mem=78.50 GB",
        "[2025-06-01 12:00:45] The server is fired up and ready to roll!",
        '[2025-06-01 12:01:00] INFO:     127.0.0.1:40002 - "POST /generate HTTP/1.1" 200 OK',
    ]
    d = classify("\n".join(lines) + "\n")
    assert d["verdict"] == "ready" and d["root_cause"] is None


def test_readiness_printed_after_a_fatal_error_is_not_health():
    # A fallback app can print its own startup line after the engine died.
    lines = [
        "INFO 06-01 12:00:00 [api_server.py:1000] vLLM API server version 0.10.1",
        "ERROR 06-01 12:00:30 [core.py:700] EngineCore failed to start.",
        "ERROR 06-01 12:00:30 [core.py:700] Traceback (most recent call last):",
        'ERROR 06-01 12:00:30 [core.py:700]   File "/v/kv_cache_utils.py", line 600, in check_enough_kv_cache_memory',
        "ERROR 06-01 12:00:30 [core.py:700]     raise ValueError(",
        "ERROR 06-01 12:00:30 [core.py:700] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "INFO:     Application startup complete.",
    ]
    d = classify("\n".join(lines) + "\n")
    assert d["verdict"] == "failed" and d["root_cause"] == "gpu.out-of-memory"


def test_a_stop_requested_during_startup_is_not_a_failure():
    log = "\n".join([
        "Jun 01 12:00:00 h systemd[1]: Started sglang.service - SGLang server.",
        "Jun 01 12:00:01 h python3[4242]: [2025-06-01 12:00:01] server_args=ServerArgs(model_path='m')",
        "Jun 01 12:00:05 h python3[4300]: [2025-06-01 12:00:05 TP0] Load weight begin. avail mem=78.50 GB",
        "Jun 01 12:00:09 h systemd[1]: Stopping sglang.service - SGLang server...",
        "Jun 01 12:00:10 h systemd[1]: sglang.service: Main process exited, code=killed, status=15/TERM",
        "Jun 01 12:00:10 h systemd[1]: sglang.service: Failed with result 'signal'.",
        "Jun 01 12:00:10 h systemd[1]: Stopped sglang.service - SGLang server.",
    ]) + "\n"
    d = classify(log)
    assert d["verdict"] == "no-failure" and "stop" in d["summary"]


_VLLM_UP = [
    "INFO 06-01 12:00:00 [api_server.py:1895] vLLM API server version 0.11.0",
    "INFO 06-01 12:00:05 [gpu_model_runner.py:2602] Starting to load model m...",
    "INFO 06-01 12:00:30 [gpu_worker.py:298] Available KV cache memory: 64.73 GiB",
    "INFO:     Application startup complete.",
]


def test_probes_after_ready_are_not_serving():
    """Taxonomy (phases): /health, /v1/models and an idle engine's statistics leave a
    ready server ready; a completion makes it serving, and probes after it change nothing."""
    probes = [f'INFO:     127.0.0.1:{40000 + i} - "GET {p} HTTP/1.1" 200 OK'
              for i, p in enumerate(["/health", "/v1/models", "/metrics"] * 5)]
    idle = ("INFO 06-01 12:01:00 [metrics.py:334] Avg prompt throughput: 0.0 tokens/s, Avg generation "
            "throughput: 0.0 tokens/s, Running: 0 reqs, Swapped: 0 reqs, Pending: 0 reqs")
    ready = "\n".join(_VLLM_UP + probes + [idle] + probes) + "\n"
    d = classify(ready)
    assert (d["verdict"], d["incidents"][-1]["reached_phase"]) == ("ready", "ready")
    served = "\n".join(_VLLM_UP + probes + ['INFO:     127.0.0.1:50000 - "POST /v1/completions HTTP/1.1" 200 OK']
                       + probes) + "\n"
    d = classify(served)
    assert (d["verdict"], d["incidents"][-1]["reached_phase"]) == ("ready", "serving")


def test_sglang_client_request_before_its_ready_line_is_serving():
    """SGLang sends itself GET /get_model_info and POST /generate before its ready line
    (not serving); a client's request before it means the log lost that line."""
    head = ["[2025-06-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=1)",
            "[2025-06-01 12:00:05] Load weight begin. avail mem=78.50 GB",
            '[2025-06-01 12:00:42] INFO:     127.0.0.1:40000 - "GET /get_model_info HTTP/1.1" 200 OK',
            '[2025-06-01 12:00:43] INFO:     127.0.0.1:40001 - "POST /generate HTTP/1.1" 200 OK']
    d = classify("\n".join(head) + "\n")
    assert d["verdict"] in ("starting", "stalled") and d["incidents"][-1]["reached_phase"] == "load-weights"
    client = '[2025-06-01 12:01:00] INFO:     127.0.0.1:40002 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    d = classify("\n".join(head + [client]) + "\n")
    assert (d["verdict"], d["incidents"][-1]["reached_phase"]) == ("ready", "serving")
