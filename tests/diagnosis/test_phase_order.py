"""Issue 27 item 4: the phase of a failure from what the log says around the failing line, on
lines built here around the exact wording the programs print (never copied from the corpora):
the caller's traceback that relays a worker's error, a traceback whose frames continue under a
worker's prefix, the order of start-up markers over an umbrella's frames, and the steps that
TensorRT, TensorRT-LLM, Triton and torch_npu name in their own words."""
from __future__ import annotations

import pytest

from helpers import classify_lines as _run

SITE = "/usr/local/lib/python3.12/dist-packages"
UNKNOWN = "RuntimeError: something the signatures do not know went wrong"


def _tb(frames: list[tuple[str, str]], exc: str, prefix: str = "", header: bool = True) -> list[str]:
    out = [prefix + "Traceback (most recent call last):"] if header else []
    for path, fn in frames:
        out += [f'{prefix}  File "{SITE}/{path}", line 10, in {fn}', f"{prefix}    x = y()"]
    return out + [prefix + exc]


_WORKER = "(Worker_TP0 pid=659280) ERROR 12-03 06:08:15 [multiproc_executor.py:671] "
_CORE = "(EngineCore_DP0 pid=657851) ERROR 12-03 06:08:15 [core.py:708] "
_FORWARD = [("vllm/v1/worker/gpu_worker.py", "execute_dummy_batch"), ("torch/nn/modules/module.py", "_call_impl"),
            ("vllm/model_executor/models/llama.py", "forward")]


def test_the_callers_traceback_that_relays_a_workers_error_names_the_step():
    # The worker's own frames (a forward pass) say nothing; the engine's traceback quotes its message
    # and its frames say the engine was sizing the KV cache.
    msg = "index 0 is out of bounds for dimension 0 with size 0"
    caller = [("vllm/v1/engine/core.py", "__init__"), ("vllm/v1/engine/core.py", "_initialize_kv_caches"),
              ("vllm/v1/executor/abstract.py", "determine_available_memory"),
              ("vllm/v1/executor/multiproc_executor.py", "get_response")]
    lines = (_tb(_FORWARD, f"IndexError: {msg}", prefix=_WORKER) + [_CORE + "EngineCore failed to start."]
             + _tb(caller, f"RuntimeError: Worker failed with error '{msg}', please check the stack trace above "
                           "for the root cause", prefix=_CORE))
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "memory-plan"


def test_a_callers_traceback_that_quotes_another_message_says_nothing_of_this_one():
    caller = [("vllm/v1/engine/core.py", "_initialize_kv_caches"), ("vllm/v1/executor/abstract.py",
                                                                      "determine_available_memory")]
    lines = (_tb(_FORWARD, "IndexError: index 0 is out of bounds for dimension 0 with size 0", prefix=_WORKER)
             + _tb(caller, "RuntimeError: Worker failed with error 'a different error altogether happened here'",
                   prefix=_CORE))
    assert _run(lines)["phase"] != "memory-plan"


def test_a_bare_traceback_header_takes_the_frames_printed_under_the_workers_prefix():
    # The header is printed before the worker's log prefix starts; its frames follow under it.
    frames = [("vllm/v1/worker/gpu_model_runner.py", "capture_model"),
              ("vllm/v1/worker/gpu_model_runner.py", "_capture_cudagraphs"),
              ("vllm/v1/worker/gpu_model_runner.py", "_dummy_run")]
    lines = ["Traceback (most recent call last):"] + _tb(frames, "KeyError: 14", prefix=_WORKER, header=False)
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"


def test_torch_npus_graph_capture_status_is_the_capture():
    d = _run(["ERROR 08-12 01:31:20 [core.py:586] RuntimeError: status == aclmdlRICaptureStatus::ACL_MODEL_RI_"
              "CAPTURE_STATUS_ACTIVE INTERNAL ASSERT FAILED at \"build/CMakeFiles/torch_npu.dir/compiler_depend.ts\""
              ":162, please report a bug to PyTorch."])
    assert d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"


_V1_START = ["(EngineCore pid=818) INFO 06-10 04:15:00 [gpu_model_runner.py:4752] Starting to load model m...",
             "(EngineCore pid=818) INFO 06-10 04:15:09 [default_loader.py:267] Loading weights took 3.05 seconds",
             "(EngineCore pid=818) INFO 06-10 04:15:12 [gpu_worker.py:480] Available KV cache memory: 66.24 GiB"]
_CORE_PRE = "(EngineCore pid=818) ERROR 06-10 04:15:39 [core.py:1199] "


def test_a_later_marker_says_which_step_an_umbrellas_frames_failed_in():
    # vLLM V1 runs compile, capture and warm-up from inside its KV-cache set-up (initialize_from_config ->
    # compile_or_warm_up_model); it said it was warming up: the warm-up, not the memory plan.
    frames = [("vllm/v1/engine/core.py", "_initialize_kv_caches"),
              ("vllm/v1/executor/abstract.py", "initialize_from_config"),
              ("vllm/v1/worker/gpu_worker.py", "compile_or_warm_up_model"),
              ("vllm/model_executor/warmup/kernel_warmup.py", "kernel_warmup"),
              ("vllm/v1/worker/gpu_model_runner.py", "_dummy_run")]
    warm = "(EngineCore pid=818) INFO 06-10 04:15:16 [kernel_warmup.py:97] Warming up FlashInfer attention."
    d = _run(_V1_START + [warm, _CORE_PRE + "EngineCore failed to start."] + _tb(frames, UNKNOWN, prefix=_CORE_PRE))
    assert d["verdict"] == "failed" and d["phase"] == "warmup"
    # without that marker the frames' own first match stands
    d = _run(_V1_START + [_CORE_PRE + "EngineCore failed to start."] + _tb(frames, UNKNOWN, prefix=_CORE_PRE))
    assert d["phase"] == "memory-plan"


def test_a_requests_frames_after_the_finished_warm_up_are_serving():
    done = "(EngineCore pid=818) INFO 06-10 04:15:45 [core.py:210] init engine (profile, create kv cache, warmup " \
           "model) took 18.51 seconds"
    frames = [("vllm/v1/engine/core.py", "run_busy_loop"), ("vllm/v1/engine/core.py", "step"),
              ("vllm/v1/executor/abstract.py", "execute_model")]
    d = _run(_V1_START + [done] + _tb(frames, UNKNOWN, prefix=_CORE_PRE))
    assert d["verdict"] == "failed" and d["phase"] == "serving"


@pytest.mark.parametrize("lines,phase", [
    # TensorRT's builder had built the engine; the host ran out while it was written out
    (["[06/02/2024-06:14:20] [TRT] [I] Total Weights Memory: 1274045696",
      "[06/02/2024-06:14:20] [TRT] [I] Engine generation completed in 13.4439 seconds.",
      "Killed"], "kernel-jit"),
    # TensorRT-LLM's builder says the engine build failed
    (["[08/11/2024-06:10:36] [TRT] [E] [virtualMemoryBuffer.cpp::resizePhysical::151] Error Code 2: OutOfMemory "
      "(Requested size was 16654532608 bytes.)",
      "[08/11/2024-06:10:36] [TRT-LLM] [E] Engine building failed, please check the error log."], "kernel-jit"),
    # Triton (the kernel language) could not load the kernel it had just compiled
    (["2024-04-24 19:19:00,509 - lmdeploy - INFO - Checking environment for PyTorch Engine.",
      "2024-04-24 19:19:03,669 - lmdeploy - ERROR - RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
      "2024-04-24 19:19:03,669 - lmdeploy - ERROR - <Triton> test failed!"], "kernel-jit"),
    # TensorRT-LLM's executor warming up (its autotuner) when a GEMM failed
    (["[06/21/2025-01:30:40] [TRT-LLM] [RANK 0] [I] [Autotuner]: Autotuning process starts ...",
      "[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [I] [Autotuner]: Autotuning process ends",
      "[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] "
      "Assertion failed: Error occurred when running GEMM! (/src/cpp/tensorrt_llm/kernels/runner.cpp:120)"], "warmup"),
    # Triton's backend API initialising a model when the process died
    (["[TensorRT-LLM][WARNING] gpu_device_ids is not specified, will be automatically set",
      'I0821 08:15:32.609876 2817 libtensorrtllm.cc:114] "TRITONBACKEND_ModelInitialize: tensorrt_llm (version 1)"',
      "Segmentation fault (core dumped)"], "load-weights"),
    # TensorRT's runtime created the execution contexts (after the engine): the memory plan
    (["[TensorRT-LLM][INFO] Loaded engine size: 12569 MiB",
      "[TensorRT-LLM][INFO] [MemUsageChange] TensorRT-managed allocation in IExecutionContext creation: CPU +0, "
      "GPU +0, now: CPU 0, GPU 12569 (MiB)",
      "E1120 10:00:00.000000 1 model_lifecycle.cc:621] failed to load 'tensorrt_llm' version 1: Internal: "
      "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory "
      "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)"], "memory-plan"),
])
def test_the_steps_tensorrt_and_triton_name_in_their_own_words(lines, phase):
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == phase


def test_a_failing_message_naming_a_clients_request_id_is_serving():
    d = _run(["(EngineCore_DP0 pid=344) ERROR 02-10 19:23:35 [offload_connector.py:2498] Error gathering blocks "
              "for request cmpl-9cbf94ef9250316c-0: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting "
              "to allocate 832.0K. That was not possible. There are 112.5K free."])
    assert d["verdict"] == "failed" and d["phase"] == "serving"


@pytest.mark.parametrize("lines", [
    # ggml's Metal backend failing its first graph compute, nothing else said
    (["ggml_metal_add_buffer: allocated 'scr1            ' buffer, size =   256.00 MB, (23984.91 / 21845.34)",
      "ggml_metal_graph_compute: command buffer 0 failed with status 5",
      "GGML_ASSERT: ggml-metal.m:1177: false"]),
    # Ollama's scheduler reporting the runner that died in that run as a failed load
    (['time=2024-09-20T10:00:00.000Z level=ERROR source=sched.go:455 msg="error loading llama server" '
      'error="llama runner process has terminated: CUDA error: unspecified launch failure\\n  current device: 0, '
      'in function ggml_cuda_compute_forward at ggml/src/ggml-cuda.cu:2326\\n  err"']),
])
def test_a_ggml_forward_that_failed_before_the_server_was_up_is_the_warm_up_run(lines):
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "warmup"


def _watchdog(seq: int) -> list[str]:
    return [f"[rank1]:[E601 10:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=60000) "
            "ran for 60027 milliseconds before timing out."]


def test_the_process_groups_first_collective_timing_out_is_the_distributed_set_up():
    d = _run(_watchdog(1))
    assert d["verdict"] == "failed" and d["phase"] == "launch"
    assert _run(_watchdog(20518))["phase"] != "launch"


def test_a_logging_calls_source_in_a_traceback_says_no_step_finished():
    # rich's traceback lists the source of the logging call, which names the load marker's words:
    # still loading (not "weights loaded, so the memory plan").
    lines = ["INFO 11-06 05:01:00 llm_engine.py:100] Initializing an LLM engine (v0.5.0) with config: model='m'",
             "│   159 │   │   │   )                                                                │",
             '    160     logger.info("Loading model weights took %.4f GB",',
             "KeyError: '10_mlp.down_proj.weight_quantizer.lowbound_factor'"]
    assert _run(lines)["phase"] == "load-weights"
    # the line itself, with its figure: the weights were loaded, the memory plan comes next
    lines[2] = "INFO 11-06 05:01:09 model_runner.py:160] Loading model weights took 14.2487 GB"
    assert _run(lines)["phase"] == "memory-plan"


def test_after_a_finished_capture_an_umbrellas_frames_are_the_warm_up():
    frames = [("vllm/v1/executor/multiproc_executor.py", "__init__"),
              ("vllm/v1/worker/gpu_worker.py", "compile_or_warm_up_model"),
              ("vllm/v1/worker/gpu_model_runner.py", "_dummy_run"), ("torch/nn/modules/module.py", "_call_impl")]
    done = "(EngineCore pid=818) INFO 06-10 04:15:26 [gpu_model_runner.py:2037] Graph capturing finished in 54 " \
           "secs, took 1.82 GiB"
    d = _run(_V1_START + [done, _CORE_PRE + "WorkerProc failed to start."] + _tb(frames, UNKNOWN, prefix=_CORE_PRE))
    assert d["verdict"] == "failed" and d["phase"] == "warmup"


def test_the_same_error_from_another_rank_is_no_relay():
    # two ranks print one error with frames of their own; the other rank's frames say nothing more
    msg = "ImportError: /opt/conda/lib/libstdc++.so.6: version `CXXABI_1.3.15' not found (required by x.so)"
    jit = "[2025-10-12 13:48:59 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time " \
          "(typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`."
    mute = [("sglang/srt/managers/scheduler.py", "__init__")]
    lib = [("torchvision/extension.py", "<module>"), ("torch/_ops.py", "load_library")]
    d = _run([jit] + _tb(mute, msg, prefix="[2025-10-12 13:49:37 TP0] ")
             + _tb(lib, msg, prefix="[2025-10-12 13:49:37 TP1] "))
    assert d["verdict"] == "failed" and d["phase"] == "kernel-jit"
