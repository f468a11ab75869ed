"""Issue 13, incidents: the shape of a process's death (launchers, supervisors, shells,
containers, Ray, Rust, C++), clean exits and stops, the rank that failed first and its
consequences."""
from __future__ import annotations

import pytest

from forensics.incidents import outcome

from helpers import TGI_START, VLLM_START, classify_lines as _run


# ------------------------------------------------------------ the shape of death
DEATHS = {
    "supervisord": ["2026-01-01 10:00:09,000 INFO exited: vllm (exit status 1; not expected)"],
    "docker compose": ["vllm-1 exited with code 1"],
    "kubectl": ["  Warning  BackOff  12s (x4 over 60s)  kubelet  Back-off restarting failed container vllm in pod vllm-0_ml(1b2c)"],
    "shell segfault": ["Segmentation fault (core dumped)"],
    "shell killed": ["./serve.sh: line 12: 40213 Killed                  python3 -m vllm.entrypoints.openai.api_server --model m"],
    "ray": ["ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task."],
    "tgi launcher": ["2025-02-11T17:03:12.000000Z ERROR text_generation_launcher: Shard 0 failed to start",
                     "Error: ShardCannotStart"],
    "rust panic": ["thread 'main' panicked at router/src/main.rs:300:10:", "called `Result::unwrap()` on an `Err` value"],
    "c++ terminate": ["terminate called after throwing an instance of 'std::runtime_error'",
                      "  what():  could not open device"],
    "mpirun": ["mpirun detected that one or more processes exited with non-zero status, thus causing",
               "the job to be terminated. The first process to do so was:"],
    # vLLM's asynchronous engine (V0): its engine loop's task ended with an exception
    "vllm async engine": ["ERROR 07-01 09:41:30 [async_llm_engine.py:66] Engine background task failed"],
    "multiprocessing": ["WARNING 07-01 09:41:30 [multiproc_executor.py:449] Worker proc VllmWorker-1 died unexpectedly (exit code: -9), shutting down executor."],
    # abseil's failure signal handler (Ray workers, JAX/XLA)
    "abseil signal handler": ["(RayWorkerWrapper pid=233, ip=10.20.1.125) *** SIGSEGV received at time=1762945937 on cpu 6 ***",
                              "(RayWorkerWrapper pid=233, ip=10.20.1.125) PC: @     0x71bd29eb3ab5  (unknown)  (unknown)"],
    # CPython's faulthandler: the crash, then every thread's stack (frames only, innermost first)
    "faulthandler": ["Fatal Python error: Segmentation fault", "",
                     "Current thread 0x00007f2a9c0f5740 (most recent call first):",
                     '  File "/opt/venv/lib/python3.12/site-packages/vllm/model_executor/model_loader/loader.py", '
                     "line 400 in load_weights",
                     '  File "/opt/venv/lib/python3.12/site-packages/vllm/worker/model_runner.py", line 300 in load_model'],
}


@pytest.mark.parametrize("shape", sorted(DEATHS))
def test_a_process_that_died_after_an_error_is_a_failure(shape):
    lines = VLLM_START + ["ERROR 07-01 09:41:21 [worker.py:200] Worker failed to initialise its device",
                          *DEATHS[shape]]
    d = _run(lines)
    assert d["verdict"] == "failed", shape
    texts = [e["text"] for e in d["evidence"]]
    # The error that came before the death is the cause; the death line is a wrapper, never the cause.
    assert "Worker failed to initialise its device" in texts[0], (shape, texts)


@pytest.mark.parametrize("shape", ["docker compose", "shell segfault", "ray", "rust panic", "c++ terminate"])
def test_a_death_line_alone_is_a_failure(shape):
    d = _run(VLLM_START + DEATHS[shape])
    assert d["verdict"] == "failed", shape


def test_clean_exits_and_stops_are_not_deaths():
    lines = VLLM_START + [
        "INFO 07-01 09:40:00 [launcher.py:46] Route: /v1/models, Methods: GET",
        "INFO:     Application startup complete.",
        "INFO:     127.0.0.1:43692 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
        "vllm-1 exited with code 0",
        "2026-01-01 10:00:09,000 INFO exited: vllm (exit status 0; expected)",
    ]
    assert _run(lines)["verdict"] != "failed"


def test_an_operator_stop_during_startup_is_not_a_failure():
    lines = VLLM_START + [
        "INFO 07-01 09:38:59 [core.py:70] Initializing a V1 LLM engine (v0.10.1) with config: model='m'",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 1775, in signal_handler',
        '    raise KeyboardInterrupt("terminated")',
        "KeyboardInterrupt: terminated",
    ]
    assert _run(lines)["verdict"] != "failed"


def test_a_parent_reporting_that_its_child_was_stopped_is_the_stop_not_a_failure():
    # Ctrl-C during torch.compile (public batch-02/026): the engine's KeyboardInterrupt, then the
    # API server's "Engine core initialization failed" about it. With a real error first, it fails.
    stop = [
        "(EngineCore pid=3408798) INFO 06-22 01:26:12 [backends.py:1148] Dynamo bytecode transform time: 7.92 s",
        "(EngineCore pid=3408798) Process EngineCore:",
        "(EngineCore pid=3408798) Traceback (most recent call last):",
        '(EngineCore pid=3408798)   File "/opt/miniconda3/lib/python3.13/multiprocessing/process.py", line 313, in _bootstrap',
        "(EngineCore pid=3408798)     self.run()",
        "(EngineCore pid=3408798) KeyboardInterrupt",
    ]
    wrapper = [
        "(APIServer pid=3407862) Traceback (most recent call last):",
        '(APIServer pid=3407862)   File "/venv/lib/python3.13/site-packages/vllm/v1/engine/utils.py", line 1249, in wait_for_engine_startup',
        "(APIServer pid=3407862)     raise RuntimeError(",
        "(APIServer pid=3407862) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]
    assert _run(VLLM_START + stop + wrapper)["verdict"] != "failed"
    error = ["(EngineCore pid=3408798) ERROR 06-22 01:26:13 [core.py:700] RuntimeError: CUDA error: out of memory"]
    assert _run(VLLM_START + error + stop + wrapper)["verdict"] == "failed"


def test_an_error_line_that_ends_the_log_is_the_failure():
    lines = TGI_START + [
        "2025-02-11T17:03:08.530117Z  WARN text_generation_launcher: Could not import Flash Attention enabled models: No module named 'flash_attn_2_cuda'",
        "2025-02-11T17:03:10.120440Z ERROR text_generation_launcher: Method Warmup encountered an error.",
    ]
    d = _run(lines)
    assert d["verdict"] == "failed"
    assert "Method Warmup encountered an error" in d["evidence"][0]["text"]


def test_healthy_tail_with_an_early_harmless_error_is_not_a_failure():
    lines = VLLM_START + [
        "ERROR 07-01 09:38:59 [config.py:100] Error retrieving safetensors: Repo id must be in the form 'repo_name'",
        "INFO 07-01 09:39:20 [gpu_model_runner.py:1000] Model loading took 15.2 GiB and 9.1 seconds",
        "INFO 07-01 09:39:40 [core.py:210] init engine (profile, create kv cache, warmup model) took 20.1 seconds",
        "INFO:     Application startup complete.",
    ]
    assert _run(lines)["verdict"] != "failed"


# ------------------------------------------------------------ multi-rank
def test_the_rank_that_failed_first_is_named_and_the_others_are_consequences():
    lines = [
        "[2026-01-01 10:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=2.00 GB",
        "[2026-01-01 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/x/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 385, in capture',
        "    self.capture_one_batch_size(bs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free.",
        "[2026-01-01 10:10:01 TP1] [rank1]:[E1108 10:10:01.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
        "[2026-01-01 10:10:02 TP1] Connection closed by remote peer 10.0.0.1<35187>",
    ]
    d = _run(lines)
    assert d["root_cause"] == "gpu.out-of-memory"
    assert d.get("failed_first") and "TP0" in (d["failed_first"]["process"] or "")
    cons = d.get("consequences") or []
    assert any("Watchdog caught collective operation timeout" in c["text"] for c in cons)
    assert all("TP1" in (c["process"] or "") for c in cons)


def test_consequence_wording():
    assert outcome.CONSEQUENCE.search("socketProgress: Connection closed by remote peer node02<35187>")
    assert outcome.CONSEQUENCE.search("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
                                      "from [0] via c10d key-value store by key '0', but store->get('0') got error: "
                                      "Connection reset by peer")
    assert not outcome.CONSEQUENCE.search("torch.OutOfMemoryError: CUDA out of memory.")


def test_every_diagnosed_failure_carries_a_remediation():
    for shape in sorted(DEATHS):
        d = _run(VLLM_START + DEATHS[shape])
        assert d["remediation"], shape


def test_a_crash_reports_stack_is_not_a_failure_of_its_own():
    # faulthandler after a segfault dumps every thread (a waiting one too): the crash
    # is the failure, its stacks are its report, and nothing says a label for it.
    d = _run(VLLM_START + ["Fatal Python error: Segmentation fault", "",
                           "Thread 0x00007f2a1b7fe640 (most recent call first):",
                           '  File "/usr/lib/python3.12/threading.py", line 320 in wait', "",
                           "Current thread 0x00007f2a9c0f5740 (most recent call first):",
                           '  File "/opt/venv/lib/python3.12/site-packages/vllm/worker/model_runner.py", '
                           "line 300 in load_model"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "Fatal Python error: Segmentation fault"
    assert d["root_cause"] != "hang.timeout"


def test_faulthandlers_frames_keep_their_function():
    from forensics import parse

    tbs = [e for e in parse('  File "/srv/loader.py", line 400 in load_weights\n') if e.kind == "traceback"]
    assert [(f.lineno, f.function) for f in tbs[0].data["frames"]] == [(400, "load_weights")]


def test_a_c_plus_plus_terminate_with_nothing_before_is_its_what_line():
    d = _run(["[2025-03-01 10:00:05 TP0] Load weight begin. avail mem=78.00 GB",
              "terminate called after throwing an instance of 'std::runtime_error'",
              "  what():  [TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(&ptr, size): out of memory "
              "(/src/tensorrt_llm/runtime/tllmBuffers.h:125)"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("what():  [TensorRT-LLM][ERROR] CUDA runtime error")
    assert d["evidence"][0]["role"] == "cause"


def test_an_abseil_sigterm_at_shutdown_is_no_death():
    d = _run(VLLM_START + ["*** SIGTERM received at time=1759954468 on cpu 5 ***"])
    assert d["verdict"] != "failed"


# ------------------------------------------------------------ killed from outside while up
_UP = VLLM_START + [
    "INFO 07-01 09:40:00 [launcher.py:46] Route: /v1/models, Methods: GET",
    "INFO:     Application startup complete.",
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    "INFO:     127.0.0.1:43692 - \"GET /v1/models HTTP/1.1\" 200 OK",
]
_SHELL_KILL = "./serve.sh: line 12: 40213 Killed                  vllm serve m"


def test_a_shell_kill_after_readiness_with_nothing_wrong_since_is_no_failure():
    # A kill from outside (an operator's kill -9, a scheduler's eviction): the log proves only the signal.
    d = _run(_UP + [_SHELL_KILL])
    assert d["verdict"] == "ready" and d["phase"] == "ready"


@pytest.mark.parametrize("kill", ["zsh: killed     vllm serve m", "zsh: terminated  vllm serve m"])
def test_zshs_report_of_a_kill_after_readiness_is_read_as_bashs(kill):
    # zsh words a job's end in lowercase ("zsh: killed  CMD"): the same kill from outside as bash's
    # "line N: PID Killed  CMD", no failure while up; before readiness it stays one.
    assert _run(_UP + [kill])["verdict"] == "ready"
    loading = VLLM_START + ["INFO 07-01 09:39:00 [gpu_model_runner.py:2602] Starting to load model m..."]
    assert _run(loading + ["zsh: killed     vllm serve m"])["verdict"] == "failed"


def test_a_shell_kill_after_an_error_while_up_or_before_readiness_stays_a_failure():
    err = "ERROR 07-01 09:41:21 [core.py:200] EngineCore encountered a fatal error: CUDA error: an illegal memory access was encountered"
    assert _run(_UP + [err, _SHELL_KILL])["verdict"] == "failed"
    # before readiness (host RAM runs out while weights load: the OOM killer's SIGKILL)
    loading = VLLM_START + ["INFO 07-01 09:39:00 [gpu_model_runner.py:2602] Starting to load model m..."]
    assert _run(loading + [_SHELL_KILL])["verdict"] == "failed"
    # a crash signal is the program's own failure, ready or not
    assert _run(_UP + ["Segmentation fault (core dumped)"])["verdict"] == "failed"


# ------------------------------------------------------------ a supervisor's verdict on its child
def test_a_runner_still_printing_its_set_up_after_ollama_gave_up_on_it_is_a_failure():
    # Ollama's scheduler logs the load failure at info level; the runner's own lines that follow (its
    # llama.cpp context set-up, printed before it was killed) are not the start-up going on.
    lines = [
        'time=2026-01-04T10:01:00.000Z level=INFO source=server.go:400 msg="starting runner" cmd="ollama runner"',
        "llama_model_loader: loaded meta data with 24 key-value pairs and 291 tensors from /m.gguf (version GGUF V3 (latest))",
        "load_tensors: loading model tensors, this can take a while... (mmap = true)",
        "llama_context: constructing llama_context",
        'time=2026-01-04T10:06:00.000Z level=INFO source=sched.go:470 msg="Load failed" model=/m.gguf '
        'error="timed out waiting for llama runner to start - progress 0.82 - "',
        "llama_context: n_ctx         = 4096",
        "llama_context: n_batch       = 512",
        "llama_kv_cache:        CPU KV buffer size =   512.00 MiB",
        "llama_context:        CPU compute buffer size =   258.50 MiB",
        "llama_context: graph splits = 1",
    ]
    d = _run(lines)
    assert d["verdict"] == "failed"


def test_a_sycl_exception_exit_after_ollama_was_listening_is_a_death() -> None:
    # IPEX-LLM's Ollama: the server listens, the runner starts, and ggml-sycl's catch prints the
    # SYCL error with "Exception caught at file:..., line:N" and std::exit(1)s.
    lines = ['time=2024-12-23T23:09:25.511+08:00 level=INFO source=routes.go:1248 msg="Listening on 127.0.0.1:11434 (version 0.4.6-ipexllm-20241223)"',
             'time=2024-12-23T23:09:28.726+08:00 level=INFO source=server.go:619 msg="llama runner started in 3.77 seconds"',
             "The program was built for 1 devices",
             "Build program log for 'Intel(R) UHD Graphics':",
             " -11 (PI_ERROR_BUILD_PROGRAM_FAILURE)Exception caught at file:D:/llm.cpp/ggml/src/ggml-sycl.cpp, line:3775"]
    inc = _run(lines)["incidents"][-1]
    assert inc["verdict"] == "failed"
    assert "PI_ERROR_BUILD_PROGRAM_FAILURE" in inc["evidence"][0]["text"]


def test_a_startup_that_shuts_down_right_after_its_error_died_of_it():
    """Lemonade (corpora/public/batch-86/014): 'Failed to load model', then 'Shutting down server...'
    and 'Server stopped successfully': the server cleaning up before it exits on its error, not an
    operator's stop (the sixteenth session; the detector was never consulted on a lifetime that
    shut down)."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[2] / "corpora" / "public" / "batch-86" / "014.log"
    d = _run(log.read_text(encoding="utf-8").splitlines())
    assert d["verdict"] == "failed"
    assert any("Failed to load model" in e["text"] for e in d["evidence"])


def test_a_startup_stopped_by_its_operator_after_a_warning_is_still_no_failure():
    lines = VLLM_START + ["WARNING 01-01 10:00:05 config.py:10 Possibly too large max_model_len",
                          "^C", "INFO:     Shutting down", "INFO:     Finished server process [1234]"]
    assert _run(lines)["verdict"] != "failed"
