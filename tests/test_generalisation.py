"""Issue 13: failures, causes and phases on logs of servers and releases the
project did not grow up with. Each mechanism on realistic logs built here
around the exact strings the programs print (never copied from corpora-real),
plus floors on the real collections."""
from __future__ import annotations

import pytest

from forensics import classify
from forensics.lab.evaluate import evaluate_dirs
from forensics.diagnosis.remedies import LABEL_REMEDIES, remediation_for
from forensics.diagnosis.taxonomy import LABELS
from forensics.incidents import outcome

from conftest import REAL, needs_real

VLLM_START = [
    "INFO 07-01 09:38:56 [api_server.py:1000] vLLM API server version 0.10.1",
    "INFO 07-01 09:38:58 [model.py:611] Resolved architecture: LlamaForCausalLM",
]
TGI_START = [
    "2025-02-11T17:03:00.000000Z  INFO text_generation_launcher: Args { model_id: \"m\", num_shard: Some(1) }",
    "2025-02-11T17:03:01.000000Z  INFO download: text_generation_launcher: Starting download process.",
    "2025-02-11T17:03:05.000000Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0",
]


def _run(lines: list[str]) -> dict:
    return classify("\n".join(lines) + "\n")


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
    "multiprocessing": ["WARNING 07-01 09:41:30 [multiproc_executor.py:449] Worker proc VllmWorker-1 died unexpectedly (exit code: -9), shutting down executor."],
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


# ------------------------------------------------------------ phase without a marker
def _tb(frames: list[tuple[str, str]], exc: str) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for path, fn in frames:
        out += [f'  File "/usr/local/lib/python3.12/dist-packages/{path}", line 10, in {fn}', "    x = y()"]
    return out + [exc]


@pytest.mark.parametrize("frames,phase", [
    ([("vllm/v1/worker/gpu_worker.py", "determine_available_memory"), ("vllm/v1/worker/gpu_model_runner.py", "profile_run")],
     "memory-plan"),
    ([("vllm/v1/worker/gpu_model_runner.py", "execute_model"), ("vllm/v1/sample/sampler.py", "sample")], "serving"),
    ([("vllm/model_executor/model_loader/default_loader.py", "load_model"),
      ("vllm/model_executor/model_loader/weight_utils.py", "safetensors_weights_iterator")], "load-weights"),
    ([("sglang/srt/model_executor/cuda_graph_runner.py", "capture"),
      ("sglang/srt/model_executor/cuda_graph_runner.py", "capture_one_batch_size")], "cuda-graph-capture"),
])
def test_phase_from_the_enclosing_function_of_the_frames(frames, phase):
    d = _run(_tb(frames, "RuntimeError: something the signatures do not know went wrong"))
    assert d["verdict"] == "failed" and d["phase"] == phase


def test_phase_from_the_message_words():
    d = _run(["(EngineCore_DP0 pid=4410) ERROR 03-02 08:11:09 [core.py:700] EE9999: Inner Error!",
              "(EngineCore_DP0 pid=4410) ERROR 03-02 08:11:09 [core.py:700]        rtStreamBeginCapture execution failed, reason=driver error:resource alloc fail[FUNC:FuncErrorReason]"])
    assert d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"


def test_weights_loaded_then_died_is_the_memory_plan():
    lines = VLLM_START + [
        "INFO 07-01 09:39:15 [gpu_model_runner.py:1897] Starting to load model m...",
        "INFO 07-01 09:39:29 [default_loader.py:272] Loading weights took 9.99 seconds",
        "ERROR 07-01 09:39:31 [core.py:700] EngineCore failed to start.",
        "ERROR 07-01 09:39:31 [core.py:700] Traceback (most recent call last):",
        'ERROR 07-01 09:39:31 [core.py:700]   File "/x/site-packages/torch/_ops.py", line 1123, in __call__',
        "ERROR 07-01 09:39:31 [core.py:700]     return self._op(*args, **(kwargs or {}))",
        "ERROR 07-01 09:39:31 [core.py:700] RuntimeError: something the signatures do not know went wrong",
    ]
    assert _run(lines)["phase"] == "memory-plan"


# ------------------------------------------------------------ evidence: the proving line
def test_the_compilers_own_error_comes_before_the_build_wrapper():
    lines = [
        "[2026-01-01 10:00:00] Capture cuda graph begin. This can take up to several minutes. avail mem=70.00 GB",
        "[1/3] /usr/local/cuda/bin/nvcc -c /root/.cache/flashinfer/batch_decode.cu -o batch_decode.cuda.o",
        "FAILED: batch_decode.cuda.o",
        "/root/.cache/flashinfer/batch_decode.cu(41): error: identifier \"__nv_fp8_e4m3\" is undefined",
        "1 error detected in the compilation of \"/root/.cache/flashinfer/batch_decode.cu\".",
        "ninja: build stopped: subcommand failed.",
        "Traceback (most recent call last):",
        '  File "/x/site-packages/torch/utils/cpp_extension.py", line 2107, in _run_ninja_build',
        "    raise RuntimeError(message) from e",
        "RuntimeError: Error building extension 'batch_decode'",
    ]
    d = _run(lines)
    assert d["verdict"] == "failed"
    roles = [(e["role"], e["text"]) for e in d["evidence"]]
    build = [i for i, (role, text) in enumerate(roles) if role == "build-error"]
    assert build, roles
    assert any("error: identifier" in roles[i][1] for i in build)
    wrapper = [i for i, (role, _) in enumerate(roles) if role == "wrapper"]
    assert not wrapper or min(build) < min(wrapper)


def test_a_device_runtime_line_proves_a_wrapped_failure():
    lines = [
        "gpu-b7:2211:2240 [1] net_ib.cc:1021 NCCL WARN NET/IB : Got completion from peer 10.1.0.7<41913> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid fe80::1 remoteGid fe80::2 hca mlx5_0 Failed",
        "gpu-b7:2211:2240 [1] NCCL INFO transport/net.cc:1012 -> 6",
        "gpu-b7: Test NCCL failure common.cu:1005 'internal error - please report this issue to the NCCL developers / '",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
    ]
    d = _run(lines)
    assert d["root_cause"] == "dist.nccl"
    assert any("NCCL WARN NET/IB : Got completion from peer" in e["text"] for e in d["evidence"])


def test_a_raw_kernel_assertion_does_not_beat_the_error_that_names_it():
    lines = ["/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [5,0,0], thread: [64,0,0] "
             "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed."] * 3 + [
        "Traceback (most recent call last):",
        '  File "/x/site-packages/vllm/v1/worker/gpu_model_runner.py", line 10, in execute_model',
        "    out = self.model(x)",
        "torch.AcceleratorError: CUDA error: device-side assert triggered",
    ]
    d = _run(lines)
    assert d["root_cause"] == "gpu.illegal-access"
    assert "device-side assert triggered" in d["evidence"][0]["text"]


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


# ------------------------------------------------------------ remediation
def test_every_label_has_a_remediation():
    assert set(LABELS) <= set(LABEL_REMEDIES)
    assert all(len(LABEL_REMEDIES[lab]) > 40 for lab in LABELS)


def test_remediation_names_what_the_message_names():
    text = "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'"
    assert "ninja" in remediation_for("toolchain.compiler-missing", [text])
    assert "flash_attn" in remediation_for("env.module-missing", ["ModuleNotFoundError: No module named 'flash_attn'"])
    assert "libnuma.so.1" in remediation_for("env.library-missing",
                                             ["ImportError: libnuma.so.1: cannot open shared object file"])


def test_a_classifier_decided_missing_ninja_says_install_ninja():
    lines = [
        "[2026-05-21 03:13:38] Capture cuda graph begin. This can take up to several minutes. avail mem=7.61 GB",
        "[2026-05-21 03:13:39] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/root/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py", line 2107, in _run_ninja_build',
        "    subprocess.run(",
        '  File "/usr/lib/python3.12/subprocess.py", line 1955, in _execute_child',
        "    raise child_exception_type(errno_num, err_msg, err_filename)",
        "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
    ]
    d = _run(lines)
    assert d["root_cause"] == "toolchain.compiler-missing"
    assert "ninja" in d["remediation"].lower() and "environment" in d["remediation"]


def test_every_diagnosed_failure_carries_a_remediation():
    for shape in sorted(DEATHS):
        d = _run(VLLM_START + DEATHS[shape])
        assert d["remediation"], shape


# ------------------------------------------------------------ floors on the real collections
# Measured on this branch (see the report); the floors sit at what was reached so
# that a regression fails. dev-b phase: two labels rest on judgement (the issue's
# notes say UNSURE); healthy-b phase: two identical-looking logs carry different
# labels (ready / serving).
FLOORS = {
    "dev": {"top1": 1.0, "evidence": 1.0, "phase": 1.0},
    "dev-b": {"top1": 0.95, "evidence": 0.92, "phase": 0.85},
    "early-warning": {"top1": 1.0, "evidence": 1.0, "phase": 0.93},
    "early-warning-b": {"top1": 0.95, "evidence": 0.95, "phase": 0.95},
}


@needs_real
@pytest.mark.parametrize("name", sorted(FLOORS))
def test_floors_on_real_failure_sets(name):
    rep = evaluate_dirs([REAL / name])
    mode = rep["modes"].get("hybrid") or rep["modes"]["rules"]
    f = FLOORS[name]
    assert mode["accuracy"] >= f["top1"], mode["misses"]
    assert rep["evidence_hit_rate"] >= f["evidence"]
    assert rep["phase_accuracy"] >= f["phase"]
    # Never "not failed" for a failure log.
    assert all(m["pred"] != "none" for m in mode["misses"]), mode["misses"]


@needs_real
@pytest.mark.parametrize("name", ["healthy", "healthy-b"])
def test_no_healthy_log_is_called_failed(name):
    rep = evaluate_dirs([REAL / name])
    for mode in rep["modes"].values():
        assert mode["healthy_called_failed"] == 0


# ------------------------------------------------ the project's own GPU captures
# corpora/gpu-early-warning: real failures captured on an H200 (README there). Each case
# below was wrong before a generic change; the comment names the mechanism it checks.
from pathlib import Path as _Path  # noqa: E402

from conftest import CORPORA  # noqa: E402

GPU_EW = CORPORA / "gpu-early-warning"
GPU_EW_CASES = {
    # TCPStore client connect timeout: a deadline fired, not an NCCL collective.
    "gpu-ew-c10d-node-rank": "hang.timeout",
    # transformers' GenerationConfig validation is an argument check.
    "gpu-ew-genconfig-temperature": "config.invalid-argument",
    # XLA's "No PTX compilation provider" means the compiler is missing.
    "gpu-ew-jax-libdevice": "toolchain.compiler-missing",
    # JAX's CPU-fallback warning (module missing) when no plugin error precedes it ...
    "gpu-ew-jax-plugin-missing": "env.module-missing",
    # ... and the plugin's own cuInit error when it does (traceback assembly keeps the
    # handled plugin traceback apart from the fatal one logged after it).
    "gpu-ew-jax-no-gpu": "env.driver-too-old",
    "gpu-ew-numpy-missing": "env.module-missing",
    # The SDPA dtype warning was raised at a frame of the failing call: it decides.
    "gpu-ew-sdpa-fp32": "config.invalid-argument",
    "gpu-ew-vision-libjpeg": "env.library-missing",
    "gpu-ew-compile-no-triton": "env.module-missing",
    # "No CUDA runtime is found, using CUDA_HOME=..." means the toolkit WAS found.
    "gpu-ew-arch-build-nogpu": "toolchain.compile-failed",
}


@pytest.mark.parametrize("name", sorted(GPU_EW_CASES))
def test_gpu_capture_root_cause(name):
    d = classify(str(GPU_EW / f"{name}.log"))
    assert d["verdict"] == "failed"
    assert d["root_cause"] == GPU_EW_CASES[name], (d["root_cause"], d.get("candidates"), d["evidence"][:2])


def test_gpu_early_warning_corpus_floor_and_healthy_verdicts():
    rep = evaluate_dirs([GPU_EW])
    mode = rep["modes"].get("hybrid") or rep["modes"]["rules"]
    assert mode["correct"] >= 19, mode["misses"]
    assert mode["healthy_called_failed"] == 0
    # labels.csv says ready (not "healthy") for the healthy captures, and they reach it.
    assert rep["healthy_verdicts"] == {"match": 4, "n": 4}


def test_frames_after_an_exception_line_start_no_chain_in_that_traceback():
    # A plugin's traceback is printed bare and handled; the server logs the fatal one
    # later with its prefix on the header line only. The frames that follow belong
    # to the fatal traceback, not to the handled one (whose exception line came first).
    lines = [
        "[2026-12-01 09:14:01 TP0] Init JAX distributed begin.",
        "Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()",
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/__init__.py", line 369, in initialize',
        "    _check_cuda_versions(raise_on_first_error = True)",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "[2026-12-01 09:14:02 TP0] Load weight begin.",
        "[2026-12-01 09:14:04 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/srv/jax_server.py", line 24, in <module>',
        '    gpu = jax.devices("cuda")[0]',
        '  File "/venv/lib/python3.12/site-packages/jax/_src/xla_bridge.py", line 947, in _get_backend_uncached',
        "    raise RuntimeError(",
        "RuntimeError: Unknown backend cuda. Available backends are ['cpu']",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(3, 7), (9, 14)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].text.startswith("RuntimeError: jaxlib/cuda/versions_helpers.cc:135")
    assert tbs[1].text == "RuntimeError: Unknown backend cuda. Available backends are ['cpu']"
    assert _run(lines)["verdict"] == "failed"
