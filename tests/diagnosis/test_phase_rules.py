"""Issue 27 item 4: where a failure happened, and what a healthy log reached, on
lines built here around the exact wording the programs print (never copied from
the corpora): what a step encloses, what CUDA says about a capture, a bind that
never listened, a router's worker thread, and servers' own serving lines."""
from __future__ import annotations

import pytest

from helpers import classify_lines as _run

SITE = "/usr/local/lib/python3.12/dist-packages"


def _tb(frames: list[tuple[str, str]], exc: str, prefix: str = "") -> list[str]:
    out = [prefix + "Traceback (most recent call last):"]
    for path, fn in frames:
        out += [f'{prefix}  File "{SITE}/{path}", line 10, in {fn}', f"{prefix}    x = y()"]
    return out + [prefix + exc]


_V1_WARMUP = [("vllm/v1/engine/core.py", "_initialize_kv_caches"),
              ("vllm/v1/worker/gpu_worker.py", "compile_or_warm_up_model"),
              ("vllm/v1/worker/gpu/warmup.py", "warmup_kernels"),
              ("vllm/v1/sample/ops/topk_topp_sampler.py", "flashinfer_sample"),
              ("flashinfer/sampling.py", "get_sampling_module"),
              ("flashinfer/jit/core.py", "build_and_load"),
              ("flashinfer/jit/cpp_ext.py", "run_ninja")]


def test_a_kernel_built_lazily_by_the_warm_up_failed_in_the_warm_up():
    # vLLM V1 warms up from inside its KV-cache set-up; the sampler's first call builds FlashInfer's module.
    d = _run(_tb(_V1_WARMUP, "RuntimeError: something the signatures do not know went wrong"))
    assert d["verdict"] == "failed" and d["phase"] == "warmup"


def test_a_warm_up_of_the_kernels_themselves_and_an_umbrella_step_are_not_the_warm_up():
    # SGLang's ModelRunner.kernel_warmup builds kernels before capture: the compile step; vLLM V1's
    # compile_or_warm_up_model runs compile, capture and warm-up, so what it calls decides.
    jit = [("triton/runtime/jit.py", "run"), ("triton/compiler/compiler.py", "compile")]
    d = _run(_tb([("sglang/srt/model_executor/model_runner.py", "initialize"),
                  ("sglang/srt/model_executor/model_runner.py", "kernel_warmup"), *jit],
                 "RuntimeError: something the signatures do not know went wrong"))
    assert d["phase"] == "kernel-jit"
    d = _run(_tb([("vllm/v1/worker/gpu_worker.py", "compile_or_warm_up_model"),
                  ("vllm/v1/worker/gpu_model_runner.py", "_dummy_run"), *jit],
                 "RuntimeError: something the signatures do not know went wrong"))
    assert d["phase"] == "kernel-jit"


def test_a_build_that_failed_inside_the_profile_run_is_the_compile_step():
    frames = [("vllm/v1/worker/gpu_worker.py", "determine_available_memory"),
              ("vllm/v1/worker/gpu_model_runner.py", "profile_run"),
              ("torch/_inductor/compile_fx.py", "compile_fx_inner"),
              ("triton/runtime/build.py", "_build")]
    d = _run(_tb(frames, "torch._inductor.exc.InductorError: RuntimeError: Failed to find C compiler. Please specify "
                         "via CC environment variable or set triton.knobs.build.impl."))
    assert d["verdict"] == "failed" and d["phase"] == "kernel-jit"
    # the profile run's own failure (not a build's) stays the memory plan
    d = _run(_tb(frames[:2], "RuntimeError: something the signatures do not know went wrong"))
    assert d["phase"] == "memory-plan"


def test_cuda_refusing_an_operation_while_a_stream_captures_is_the_capture():
    frames = [("vllm/v1/worker/gpu_model_runner.py", "_dummy_run"),
              ("triton/compiler/compiler.py", "_init_handles")]
    d = _run(_tb(frames, "RuntimeError: Triton Error [CUDA]: operation not permitted when stream is capturing"))
    assert d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"


@pytest.mark.parametrize("frames,exc", [
    ([("llama_cpp/llama_cpp.py", "<module>"), ("llama_cpp/llama_cpp.py", "_load_shared_library")],
     "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"),
    ([("vllm/worker/worker_base.py", "init_worker"), ("<frozen importlib._bootstrap>", "_load_unlocked"),
      ("vllm/model_executor/layers/utils.py", "<module>")],
     "RuntimeError: something the signatures do not know went wrong"),
])
def test_opening_a_library_or_importing_a_module_is_launch_not_a_weight_loader(frames, exc):
    lines = _tb(frames, exc)
    # importlib's own frames are printed as '<frozen importlib._bootstrap>', not under site-packages
    lines = [ln.replace(f"{SITE}/<frozen", "<frozen") for ln in lines]
    assert _run(lines)["phase"] == "launch"


def test_a_bind_failure_after_uvicorns_start_up_line_never_listened():
    d = _run(["INFO:     Started server process [4242]",
              "INFO:     Waiting for application startup.",
              "INFO:     Application startup complete.",
              "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
              "INFO:     Waiting for application shutdown.",
              "INFO:     Application shutdown complete."])
    assert d["root_cause"] == "net.port-in-use" and d["phase"] == "launch"


def test_a_panic_on_a_rust_routers_worker_thread_is_while_serving():
    # (an excerpt from the panic on: no readiness line before it)
    d = _run(["thread 'tokio-runtime-worker' panicked at router/src/infer.rs:598:14:",
              "ID not found in entries. This is a bug.",
              "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
              "2025-06-01T10:05:00.000000Z ERROR text_generation_launcher: Webserver Crashed",
              "Error: WebserverFailed"])
    assert d["verdict"] == "failed" and d["phase"] == "serving"


@pytest.mark.parametrize("lines,phase", [
    # Ray Serve 2.8-2.10: a replica logs the called method upper-cased
    (["INFO 2024-02-01 16:30:00,000 serve 1 api.py:500 - Deployed app 'default' successfully.",
      "(ServeReplica:default:Translator pid=333) INFO 2024-02-01 16:38:02,251 default_Translator hx aa / "
      "replica.py:380 - __CALL__ OK 192.1ms"], "serving"),
    # trtllm-bench: the benchmark's requests, then its backend stopped
    (["[01/18/2025-01:01:26] [TRT-LLM] [I] Starting benchmark...",
      "[01/18/2025-01:01:28] [TRT-LLM] [I] Benchmark complete.",
      "[01/18/2025-01:01:28] [TRT-LLM] [I] Stopping LLM backend.",
      "[01/18/2025-01:01:28] [TRT-LLM] [I] LLM Backend stopped."], "shutdown"),
    (["2024-05-28 15:32:32,971 xinference.core.model 6486 INFO     ModelActor(qwen2-instruct-0) loaded"], "ready"),
])
def test_servers_own_serving_lines_say_what_a_healthy_log_reached(lines, phase):
    d = _run(lines)
    assert d["verdict"] == "ready" and d["phase"] == phase


def test_a_request_handlers_traceback_without_a_ready_line_is_a_server_serving():
    # an excerpt that starts after readiness: vLLM's chat handler logs one request's rejection
    pre = "(APIServer pid=3650) ERROR 05-20 13:20:05 [serving_chat.py:255] "
    frames = [("vllm/entrypoints/openai/serving_chat.py", "create_chat_completion"),
              ("vllm/entrypoints/openai/serving_engine.py", "_validate_input")]
    lines = [pre + "Error in preprocessing prompt inputs"] + _tb(
        frames, "ValueError: This model's maximum context length is 4096 tokens. However, your request has 4516 "
                "input tokens. Please reduce the length of the input messages.", prefix=pre)
    d = _run(lines)
    assert d["verdict"] == "ready" and d["phase"] == "serving"


_LLAMA_LOAD = ["llama_model_loader: loaded meta data with 24 key-value pairs and 291 tensors from /m.gguf (version GGUF V3 (latest))",
               "load_tensors: loading model tensors, this can take a while... (mmap = true)",
               "load_tensors: offloaded 33/33 layers to GPU"]


def test_llama_cpps_context_set_up_is_the_memory_plan_and_after_it_the_warm_up():
    # Weights loaded, then the context (KV cache, compute buffers): an allocation failing there is the memory plan.
    ctx = ["llama_context: constructing llama_context", "llama_context: n_ctx         = 4096"]
    oom = ["ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory",
           "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
           "terminate called after throwing an instance of 'std::runtime_error'",
           "  what():  failed to allocate buffer for kv cache"]
    assert _run(_LLAMA_LOAD + ctx + oom)["phase"] == "memory-plan"
    # once the context is built ("graph splits"), the first graph run is the tools' warm-up
    built = ctx + ["llama_context:  CUDA0 compute buffer size =   300.01 MiB", "llama_context: graph splits = 2"]
    crash = ["CUDA error: an illegal memory access was encountered",
             "  current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2500",
             "Aborted (core dumped)"]
    assert _run(_LLAMA_LOAD + built + crash)["phase"] == "warmup"


def test_moving_a_built_model_onto_the_device_is_the_weight_load():
    # torch's Module.to(device) runs Module._apply / convert on every parameter.
    frames = [("mymodel/server.py", "main"), ("torch/nn/modules/module.py", "to"),
              ("torch/nn/modules/module.py", "_apply"), ("torch/nn/modules/module.py", "convert")]
    d = _run(_tb(frames, "RuntimeError: something the signatures do not know went wrong"))
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"


@pytest.mark.parametrize("lines", [
    # vLLM's check that the longest sequence fits the KV cache (an excerpt: no marker, no frames)
    ([("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored "
       "in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
       "the engine.")]),
    # TensorRT-LLM's executor sizing its paged KV cache
    ([("[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1 sequence to "
       "completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)")]),
    # Triton's TensorRT-LLM backend creating the model instance (its executor, after the engine
    # deserialised): the allocation that runs out is the KV-cache pool, whatever Triton's status line says
    (["I0601 10:00:00.000000 1 model_lifecycle.cc:469] loading: tensorrt_llm:1",
      ("E0601 10:00:09.000000 1 model_lifecycle.cc:638] failed to load 'tensorrt_llm' version 1: Internal: "
       "unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in "
       "::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/"
       "tllmBuffers.h:125)")]),
])
def test_a_server_naming_its_kv_cache_sizing_failed_in_the_memory_plan(lines):
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "memory-plan"


def test_the_kv_cache_configuration_frames_are_the_memory_plan():
    frames = [("vllm/v1/engine/core.py", "_initialize_kv_caches"), ("vllm/v1/core/kv_cache_utils.py", "get_kv_cache_configs"),
              ("vllm/v1/core/kv_cache_utils.py", "_check_enough_kv_cache_memory")]
    from forensics.diagnosis import phase_infer

    names = "\n".join(f"{fn} {SITE}/{path}" for path, fn in frames[1:])
    assert phase_infer._function_phase(names) == "memory-plan"
    assert _run(_tb(frames, "ValueError: To serve at least one request with the models's max seq len (32768), "
                            "(4.0 GiB KV cache is needed, which is larger than the available KV cache memory "
                            "(2.1 GiB)."))["phase"] == "memory-plan"


def _trtllm_executor_oom(stage: str) -> list[str]:
    # TensorRT-LLM's PyTorch executor (_torch/pyexecutor/py_executor_creator.py) re-raises an OOM with
    # the component it was creating on the message's next lines.
    return _tb([("tensorrt_llm/executor/worker.py", "worker_main"),
                ("tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", "create_py_executor"),
                ("contextlib.py", "__exit__"),
                ("tensorrt_llm/_torch/pyexecutor/py_executor_creator.py", "observe_creation_stage")],
               "RuntimeError: Executor creation failed due to insufficient GPU memory.") + [
        "",
        f"The following component could not be created: {stage}",
        "Total GPU memory (GiB): 79.11",
        "Free GPU memory before component creation attempt (GiB): 12.40",
        "",
        "Previously created components and free GPU memory before/after creation (GiB):",
        "Model: 78.20 / 40.02",
    ]


@pytest.mark.parametrize("stage,phase", [
    ("Model", "load-weights"),
    ("KV cache", "memory-plan"),
    ("Initial KV cache (temporary for KV cache size estimation)", "memory-plan"),
    ("Additional executor resources (temporary for KV cache size estimation)", "memory-plan"),
    ("Additional executor resources", "warmup"),  # the executor's constructor warms the model up
])
def test_the_component_an_executor_could_not_create_names_the_step(stage, phase):
    d = _run(_trtllm_executor_oom(stage))
    assert d["root_cause"] == "gpu.out-of-memory" and d["phase"] == phase


@pytest.mark.parametrize("lines,phase", [
    # a batch script's line whose program is not there: the server never started
    (["+ srun ollama serve", "/var/spool/slurm/job4242/slurm_script: line 12: /home/me/ollama/bin/ollama: No such file or directory"],
     "launch"),
    # a launcher's exec of the server's executable
    (["2025-05-01 10:00:00 - gpustack.worker.backends.vllm - INFO - Starting vllm server",
      "2025-05-01 10:00:00 - gpustack.worker.backends.vllm - ERROR - Failed to run the vllm server: "
      "[Errno 2] No such file or directory: '/opt/envs/gpustack/bin/vllm'"], "launch"),
])
def test_a_program_that_could_not_be_found_to_start_failed_at_launch(lines, phase):
    assert _run(lines)["phase"] == phase


@pytest.mark.parametrize("compiler", ["/usr/local/cuda/bin/nvcc", "/usr/bin/gcc-14", "/usr/bin/x86_64-linux-gnu-g++"])
def test_a_compiler_that_a_jit_build_could_not_find_is_not_launch(compiler):
    d = _run(_tb([("torch/utils/cpp_extension.py", "_jit_compile"), ("torch/utils/cpp_extension.py", "_write_ninja_file_and_build_library"),
                  ("subprocess.py", "_execute_child")],
                 f"FileNotFoundError: [Errno 2] No such file or directory: '{compiler}'"))
    assert d["phase"] == "kernel-jit"


def test_a_model_load_ollamas_scheduler_reports_failed_after_a_runtime_assert_is_load_weights():
    # ggml's assert has no step of its own; Ollama's scheduler says on the next line whose load failed.
    d = _run(['time=2025-10-25T21:59:34.181-05:00 level=INFO source=server.go:1338 msg="waiting for server to become available"',
              "ggml.c:1921: GGML_ASSERT(ggml_can_repeat(b, a)) failed",
              'time=2025-10-25T21:59:34.396-05:00 level=INFO source=sched.go:446 msg="Load failed" model=/root/.ollama/models/blobs/sha256-0a1b2c',
              'time=2025-10-25T21:59:34.396-05:00 level=DEBUG source=server.go:1699 msg="stopping llama server" pid=12616'])
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"


@pytest.mark.parametrize("lines", [
    # vLLM V1's front end once the engine core died after start-up (an excerpt: no marker, no frames)
    (["ERROR 05-01 10:00:00 [async_llm.py:480] AsyncLLM output_handler failed.",
      "ERROR 05-01 10:00:00 [async_llm.py:480] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an "
      "issue. See stack trace (above) for the root cause."]),
    # vLLM V0's background loop
    (["ERROR 05-01 10:00:00 async_llm_engine.py:60] Engine background task failed",
      "vllm.engine.async_llm_engine.AsyncEngineDeadError: Task finished unexpectedly. This should never happen! "
      "Please open an issue on GitHub."]),
    # TensorRT-LLM's executor loop
    (["[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] Assertion failed: "
      "something went wrong (/src/tensorrt_llm/batch_manager/kvCacheManager.cpp:500)"]),
    # llama.cpp's server decoding its slots' batch
    (["slot update_slots: id  0 | task 812 | kv cache rm [0, end)",
      "update_slots : failed to decode the batch, n_batch = 1, ret = 1"]),
    # SGLang's scheduler watchdog
    (["[2025-05-01 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"]),
    # prefill/decode disaggregation moving a request's KV cache
    (["[2025-05-01 10:00:00 TP0] Prefill transfer failed for request rank=0 req.rid='abc' with exception "
      "KVTransferError(bootstrap_room=42): Request 42 timed out after 600.0s in KVPoll.WaitingForInput"]),
])
def test_a_server_saying_the_failing_step_was_a_request_is_serving(lines):
    from forensics.diagnosis import phase_infer

    assert phase_infer.phase_of_step("\n".join(lines)) == "serving"
    d = _run(lines)
    assert d["verdict"] != "failed" or d["phase"] == "serving"


def test_a_routers_batching_loop_is_serving_and_its_warm_up_is_not():
    from forensics.diagnosis import phase_infer

    assert phase_infer.phase_of_step(
        "ERROR batch{batch_size=1}:decode:decode{size=1}:decode{size=1}: text_generation_client: "
        "router/client/src/lib.rs:33: Server error: transport error") == "serving"
    assert phase_infer.phase_of_step(
        "2025-05-01T10:00:00.000000Z ERROR warmup{max_input_length=1024 max_prefill_tokens=1024}:warmup: "
        "text_generation_client: router/client/src/lib.rs:33: Server error: CANCELLED") is None


@pytest.mark.parametrize("lines", [
    # Ollama's scheduler placing the model, and its offload plan (no runner line yet)
    (['time=2025-05-01T10:00:00.000Z level=INFO source=sched.go:715 msg="new model will fit in available VRAM in '
      'single GPU, loading" model=/root/.ollama/models/blobs/sha256-0a1b2c gpu=GPU-1 parallel=1 available=25 required="9.1 GiB"',
      'time=2025-05-01T10:00:00.000Z level=INFO source=server.go:135 msg="system memory" total="62.4 GiB" free="60.0 GiB"',
      'time=2025-05-01T10:00:00.000Z level=INFO source=server.go:168 msg=offload library=cuda layers.requested=-1 '
      'layers.model=41 layers.offload=41']),
    # a loader naming the file it reads
    (["Welcome to KoboldCpp - Version 1.60", "Loading model: /models/mistral-7b-instruct.Q4_K_M.gguf",
      "[Threads: 4, BlasThreads: 4, SmartContext: False, ContextShift: True]"]),
    # Triton's model table once the repository's models have loaded, before its endpoints start
    (["I0601 10:00:05.000000 1 server.cc:634]", "+--------+---------+--------+", "| Model  | Version | Status |",
      "+--------+---------+--------+", "| add_sub | 1       | READY  |", "+--------+---------+--------+"]),
])
def test_a_server_still_loading_its_model_reached_the_weight_load(lines):
    d = _run(lines)
    assert d["verdict"] != "failed" and d["phase"] == "load-weights"


@pytest.mark.parametrize("method,phase", [("load_model", "load-weights"), ("determine_num_available_blocks", "memory-plan"),
                                          ("start_worker_execution_loop", "serving")])
def test_the_method_an_executor_says_its_worker_failed_in_names_the_step(method, phase):
    from forensics.diagnosis import phase_infer

    assert phase_infer.phase_of_step(
        f"(VllmWorkerProcess pid=4242) ERROR 05-01 10:00:00 multiproc_worker_utils.py:242] Exception in worker "
        f"VllmWorkerProcess while processing method {method}.") == phase


def test_the_server_resolving_the_models_configuration_is_launch_and_a_loader_reading_it_is_the_load():
    unknown = ("ValueError: The checkpoint you are trying to load has model type `newarch` but Transformers does not "
               "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
               "version of Transformers is out of date.")
    d = _run(_tb([("sglang/srt/managers/scheduler.py", "__init__"), ("sglang/srt/configs/model_config.py", "from_server_args"),
                  ("sglang/srt/utils/hf_transformers_utils.py", "get_config"),
                  ("transformers/models/auto/configuration_auto.py", "from_pretrained")], unknown))
    assert d["phase"] == "launch"
    d = _run(_tb([("fastchat/serve/model_worker.py", "__init__"), ("fastchat/model/model_adapter.py", "load_model"),
                  ("transformers/models/auto/configuration_auto.py", "from_pretrained")], unknown))
    assert d["phase"] == "load-weights"


def test_the_messages_words_name_the_step_before_the_catalogues_guess_at_a_cut_stack():
    # TGI's shard logging a model constructor's failure over the tail of its stack: the words say the
    # model was being built (its weights), whatever step the catalogue files the constructor under.
    d = _run(["2024-01-01T10:00:00.000000Z ERROR text_generation_launcher: Error when initializing model",
              "    self.model = MixtralModel(config, weights)",
              f'  File "{SITE}/text_generation_server/models/custom_modeling/flash_mixtral_modeling.py", line 749, in __init__',
              "    [",
              f'  File "{SITE}/text_generation_server/models/custom_modeling/flash_mixtral_modeling.py", line 750, in <listcomp>',
              "    MixtralLayer("])
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"


@pytest.mark.parametrize("line", [
    "llama-server failed to start within timeout",
    "[ERROR] whisper-server process has terminated with exit code: 3",
    "2024/01/06 21:48:54 llama.go:320: llama runner exited with error: exit status 1",
    'time=2025-06-27T14:42:08.637Z level=ERROR source=server.go:415 msg="llama runner terminated" error="signal: killed"',
    "RuntimeError: server crashed for some reason, unable to proceed",
    "2025-02-25T11:27:40+00:00 - gpustack.worker.backends.base - ERROR - Failed to initialize: Timeout waiting for "
    "model instance to be initializing.",
])
def test_a_model_server_that_died_before_it_was_up_was_loading_its_model(line):
    # a supervisor's word that its model-server child died or timed out starting, nothing else said
    from forensics.diagnosis import phase_priors

    assert phase_priors.typical_phase("unknown", False, [line]) == "load-weights"
    assert phase_priors.typical_phase("unknown", False, ["RuntimeError: server crashed"]) is None
    # the label's own typical phase stands where it has one
    assert phase_priors.typical_phase("toolchain.compile-failed", False, [line]) == "kernel-jit"


_UVICORN_START = ["INFO:     Started server process [4242]", "INFO:     Waiting for application startup."]


def test_a_failure_in_the_applications_start_up_before_any_step_is_the_model_load():
    # a FastAPI model server loads its model in its lifespan start-up, after uvicorn's lines and before
    # "Application startup complete."; nothing before them said a step
    lines = _UVICORN_START + ["ERROR:    Traceback (most recent call last):",
                              "RuntimeError: something the signatures do not know went wrong",
                              "ERROR:    Application startup failed. Exiting."]
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"
    # vLLM's API server starts uvicorn after its engine loaded and planned memory: not its load
    engine = ["INFO 06-01 10:00:01 [default_loader.py:262] Loading weights took 3.05 seconds",
              "INFO 06-01 10:00:02 [gpu_worker.py:276] Available KV cache memory: 60.50 GiB"]
    d = _run(engine + lines)
    assert d["phase"] != "load-weights"


def test_a_vllm_request_log_line_is_serving():
    ready = ["INFO:     Application startup complete."]
    d = _run(ready + ["INFO 10-31 21:08:41 [logger.py:39] Received request cmpl-82a2f7b4642147c0-0: prompt: 'Hi', "
                      "params: SamplingParams(n=1)"])
    assert d["verdict"] == "ready" and d["phase"] == "serving"
    d = _run(ready + ["INFO 09-15 06:40:18 [async_llm.py:270] Added request 848225de-9239-11f0-8a14-2ee336e2d0b5."])
    assert d["phase"] == "serving"
    d = _run(ready + ["INFO 06-01 10:02:00 [logger.py:39] Received request tokn-788eaac1b2: prompt: 'hello', params: None"])
    assert d["phase"] == "ready"


@pytest.mark.parametrize("line", [
    "[2025-07-21 06:52:38.758084] I srv                     start: server is ready",
    "2025-07-18 16:11:10.888396+08:00 - gpustack.server.server - INFO - Serving on 0.0.0.0:80.",
])
def test_more_servers_listening_lines_are_readiness(line):
    d = _run([line])
    assert d["verdict"] == "ready" and d["phase"] == "ready"


@pytest.mark.parametrize("lines", [
    # llama.cpp's loader printing the model's hyper-parameters (an excerpt without its "file format" line)
    (["print_info: n_embd_v_gqa          = 512", "print_info: f_norm_rms_eps        = 1.0e-06"]),
    # Triton's model table whose padded name column reads like a compose service's prefix
    (["I0328 09:48:48.039005 1588 server.cc:677] ", "+------------------+---------+--------+",
      "| Model            | Version | Status |", "+------------------+---------+--------+",
      "| ensemble         | 1       | READY  |", "| tensorrt_llm     | 1       | READY  |",
      "+------------------+---------+--------+"]),
    (["INFO 03-20 07:42:39 [weight_utils.py:257] Using model weights format ['*.bin']"]),
    (["2024-11-28T20:38:45.931592Z  INFO mistralrs_core::device_map: Model has 64 repeating layers."]),
    (["Jul 23 13:07:31.688 [INFO] Model weights are loaded in float16, quantized to nf4 format"]),
    (["Loading Model: [1/2]\tLoading HF model to memory"]),
])
def test_more_loaders_lines_say_the_model_is_loading(lines):
    d = _run(lines)
    assert d["verdict"] != "failed" and d["phase"] == "load-weights"


@pytest.mark.parametrize("lines", [
    # vLLM V0's engine taking a client's request, LMDeploy's engine loop: their frames are a running server's
    (_tb([("vllm/engine/multiprocessing/engine.py", "run_engine_loop"),
          ("vllm/engine/multiprocessing/engine.py", "handle_new_input")],
         "RuntimeError: something the signatures do not know went wrong")),
    (_tb([("lmdeploy/pytorch/engine/engine.py", "async_loop"), ("lmdeploy/pytorch/engine/engine.py", "_async_loop")],
         "RuntimeError: something the signatures do not know went wrong")),
    # Mooncake's transfer engine failing a request's KV transfer
    (["E0601 10:05:00.000000 4242 transfer_engine.cpp:100] Session::writeBody failed. Error: Bad address (value: 14), "
      "total_transferred_bytes_: 0, current transferred_bytes: 0"]),
])
def test_a_running_servers_request_loop_and_kv_transfers_are_serving(lines):
    d = _run(lines)
    assert d["verdict"] == "failed" and d["phase"] == "serving"


def test_a_control_planes_posts_are_no_inference_request():
    # FastChat's controller: workers register and beat, the web UI lists them; a request then is serving
    up = ["INFO:     Application startup complete.", "INFO:     Uvicorn running on http://localhost:21001 (Press CTRL+C to quit)"]
    control = ['INFO:     127.0.0.1:40898 - "POST /register_worker HTTP/1.1" 200 OK',
               'INFO:     127.0.0.1:46286 - "POST /receive_heart_beat HTTP/1.1" 200 OK',
               'INFO:     127.0.0.1:46302 - "POST /list_models HTTP/1.1" 200 OK']
    d = _run(up + control)
    assert d["verdict"] == "ready" and d["phase"] == "ready"
    d = _run(up + control + ['INFO:     127.0.0.1:46310 - "POST /v1/chat/completions HTTP/1.1" 200 OK'])
    assert d["phase"] == "serving"


@pytest.mark.parametrize("line", [
    '2025-12-13 18:46:53  INFO http_request{method=POST uri=/v1/completions version=HTTP/1.1 request_id="cmpl-X13J" '
    'status_code=200 latency=4855690}: sgl_model_gateway::response: src/middleware.rs:364: finished processing request',
    "[2024-04-04 14:41:25.168] [INFO] [LM STUDIO SERVER] Processing queued request...",
    "2024-07-31 15:47:53,434 - lmdeploy - INFO - prompt='<|im_start|>user ping', gen_config=EngineGenerationConfig(n=1), "
    "prompt_token_id=[1, 2], adapter_name=None.",
    "2025-06-14T12:14:29.773098Z  INFO mistralrs_core::engine::logger: Throughput (T/s) 120.40, Prefix cache hitrate "
    "0.00%, 1 running, 0 waiting",
])
def test_engines_own_request_lines_after_readiness_are_serving(line):
    d = _run(["INFO:     Application startup complete.", line])
    assert d["verdict"] == "ready" and d["phase"] == "serving"



def test_a_jit_kernel_that_runs_after_a_later_step_began_failed_in_that_step():
    # FlashInfer's JIT module is on the stack whenever its kernel runs; SGLang was capturing, nothing was built.
    d = _run(["[2025-06-01 10:00:05 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=58.45 GB",
              *_tb([("sglang/srt/layers/attention/flashinfer_backend.py", "forward_extend"),
                    ("flashinfer/prefill.py", "run"), ("flashinfer/jit/core.py", "__call__")],
                   "RuntimeError: something the signatures do not know went wrong", "[2025-06-01 10:00:06 TP0] ")])
    assert d["verdict"] == "failed" and d["phase"] == "cuda-graph-capture"


def test_the_memory_profile_of_the_graphs_is_the_memory_plan():
    # vLLM V1's profile run measures the CUDA graphs' memory before the KV cache is sized.
    d = _run(_tb([("vllm/v1/engine/core.py", "_initialize_kv_caches"),
                  ("vllm/v1/worker/gpu_worker.py", "determine_available_memory"),
                  ("vllm/v1/worker/gpu_model_runner.py", "profile_cudagraph_memory"),
                  ("vllm/v1/worker/gpu_model_runner.py", "_warmup_and_capture")],
                 "RuntimeError: something the signatures do not know went wrong"))
    assert d["verdict"] == "failed" and d["phase"] == "memory-plan"


def test_a_failure_after_the_capture_finished_is_the_warm_up():
    d = _run(["[2025-06-01 10:00:05 TP0] Capture cuda graph end. Time elapsed: 12.05 s. mem usage=1.20 GB. avail mem=30.11 GB.",
              "[2025-06-01 10:00:06 TP0] ValueError: something the signatures do not know went wrong"])
    assert d["verdict"] == "failed" and d["phase"] == "warmup"
