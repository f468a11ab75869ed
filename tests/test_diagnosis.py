"""Diagnosis acceptance on the seed incidents and on real logs."""
from __future__ import annotations

import json

import pytest

from forensics import classify
from forensics.lab.evaluate import evaluate_dirs

from conftest import CORPORA, REAL, needs_real, run_cli

SEEDS = CORPORA / "seeds"


def _json(*args, input=None):
    p = run_cli("classify", "--format", "json", *args, input=input)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize("name", ["seed1.short.log", "seed1.short-iso.log", "seed1.json.log", "seed1.short-iso-precise.log"])
def test_seed1_full_renderings(name):
    rc, d = _json(str(SEEDS / name))
    assert rc == 1
    assert d["verdict"] == "failed" and d["root_cause"] == "env.module-missing" and d["phase"] == "warmup"
    assert d["confidence"] >= 0.9
    assert any("ImportError: Vendored FlashAttention CUTE is not available" in e["text"] for e in d["evidence"])
    walk = [w for w in d["early_warnings"] if "cutlass.cute.experimental" in w["text"]]
    assert walk and walk[0]["lead_seconds"] > 60
    assert walk[0]["line"] < d["evidence"][0]["line"]


def test_seed1_grep_fragment():
    rc, d = _json(str(SEEDS / "seed1.grep.log"))
    assert rc == 1 and d["verdict"] == "failed" and d["root_cause"] == "env.module-missing"
    assert any("Vendored FlashAttention CUTE" in e["text"] for e in d["evidence"])


def test_seed1_from_stdin():
    rc, d = _json(input=(SEEDS / "seed1.short.log").read_bytes())
    assert rc == 1 and d["source"] == "-" and d["root_cause"] == "env.module-missing"


def test_seed2_full_log():
    rc, d = _json(str(SEEDS / "seed2.full.log"))
    assert d["root_cause"] == "toolchain.compiler-missing" and d["phase"] == "cuda-graph-capture"
    assert any("Ninja is required" in e["text"] for e in d["evidence"])
    # The "Capture cuda graph failed" wrapper never decides.
    assert d["signature"] and "capture" not in d["signature"]


def test_seed2_tail30_is_only_as_sure_as_the_evidence():
    rc, d = _json(str(SEEDS / "seed2.tail30.log"))
    assert rc == 1 and d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"
    assert d["truncated"] is True
    assert d["root_cause"] in ("unknown", "toolchain.compiler-missing", "toolchain.compile-failed")
    if d["root_cause"] == "unknown":
        assert d["confidence"] < 0.5
    else:
        assert d["confidence"] <= 0.8


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


def test_text_report_is_readable():
    p = run_cli("classify", str(SEEDS / "seed1.short.log"))
    out = p.stdout.decode()
    assert p.returncode == 1
    assert "FAILED" in out and "env.module-missing" in out and "early warnings" in out and "try:" in out
    assert len(out.splitlines()) < 30


def test_restarts_become_separate_incidents():
    d = classify(CORPORA / "journald" / "fixture.short.log")
    verdicts = [i["verdict"] for i in d["incidents"]]
    assert len(verdicts) == 3 and verdicts[0] == "failed" and verdicts[-1] == "starting"
    assert d["incidents"][1]["root_cause"] == "host.out-of-memory"


@needs_real
def test_real_dev_rules_only():
    r = evaluate_dirs([REAL / "dev"], use_classifier=False)
    assert r["modes"]["rules"]["accuracy"] >= 0.90
    assert r["evidence_hit_rate"] >= 0.90


@needs_real
def test_real_early_warnings():
    r = evaluate_dirs([REAL / "early-warning"], use_classifier=False)
    assert r["early_warning_recall"] >= 0.80


@needs_real
def test_real_healthy_none_failed_and_verdicts_match():
    r = evaluate_dirs([REAL / "healthy"], use_classifier=True)
    for mode in r["modes"].values():
        assert mode["healthy_called_failed"] == 0
    assert r["healthy_verdicts"]["match"] == r["healthy_verdicts"]["n"]


@needs_real
def test_every_real_log_parses_and_fatal_line_is_an_event():
    import csv

    from forensics import parse

    for sub in ("dev", "early-warning", "healthy"):
        rows = list(csv.DictReader(open(REAL / sub / "labels.csv")))
        for row in rows:
            evs = list(parse(REAL / sub / f"{row['id']}.log"))
            fatal = row.get("fatal_substring")
            if not fatal:
                continue
            texts = []
            for e in evs:
                texts.append(e.text)
                for c in e.data.get("chain") or ():
                    texts.append(c.rendered)
            assert any(fatal in t for t in texts), (sub, row["id"], fatal)


def test_short_log_does_not_import_pandas_or_sklearn(tmp_path):
    import subprocess
    import sys

    from conftest import REPO
    log = tmp_path / "short.log"
    log.write_text("\n".join((SEEDS / "seed1.short.log").read_text().splitlines()[:50]) + "\n")
    code = ("import sys; from forensics.cli.main import main\n"
            "try:\n    main(['classify', %r])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('pandas', 'sklearn', 'numpy', 'scipy') if m in sys.modules]\n"
            "print('HEAVY', bad, file=sys.stderr)\n") % str(log)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO, timeout=60)
    assert b"HEAVY []" in p.stderr, p.stderr.decode()[-500:]


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


def test_a_cause_logged_as_a_warning_is_shown_with_the_fatal_error_it_led_to():
    lines = [
        "INFO 06-01 12:00:00 [api_server.py:1000] vLLM API server version 0.6.3",
        "WARNING 06-01 12:00:01 [_custom_ops.py:20] Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')",
        "INFO 06-01 12:00:05 [config.py:100] Loading model config",
        "Traceback (most recent call last):",
        '  File "/v/_custom_ops.py", line 40, in <module>',
        "    torch.ops._C.scalar_types",
        "RuntimeError: Tried to instantiate class '_C.ScalarType', but it does not exist! Ensure that it is registered via torch::class_",
    ]
    d = classify("\n".join(lines) + "\n")
    assert d["root_cause"] == "env.library-missing"
    assert d["evidence"][0]["role"] == "fatal" and "Tried to instantiate class" in d["evidence"][0]["text"]
    assert any("cannot open shared object file" in w["text"] for w in d["early_warnings"])
