"""Where start-up was when a failure happened, when the log has no marker
for it: from the enclosing functions of the frames, from the function that
prints the message (the message catalogue's function -> phase map), from the
message's own words, and from what always follows the last marker.

Function names are stable across releases; file paths are used only where
they are unambiguous (vLLM's compilation/cuda_graph.py wraps every forward,
so it proves nothing).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from forensics.events import types as kinds
from forensics.events.phases import PHASE_ORDER
from forensics.events.types import Event, Frame
from forensics.events.textmemo import memo_by_text
from forensics.diagnosis.guarded import AsciiSet

# (phase, regex over "function file" lines of the frames), most specific first.
FUNCTION_PHASES: list[tuple[str, re.Pattern[str]]] = [
    ("cuda-graph-capture", re.compile(
        r"^\S*capture\S*\s|init_device_graphs\s|\scuda_graph_runner\.py$|^_?capture_model\s|^\S*cudagraph\S*\s", re.I | re.M)),
    ("memory-plan", re.compile(
        r"^(?:profile_run|determine_available_memory|init_memory_pool|initialize_kv_cache|_initialize_kv_caches|"
        r"determine_num_available_blocks|profile_max_num_token|get_kv_cache_spec\w*|get_kv_cache_configs?|"
        r"_check_enough_kv_cache_memory|"
        r"initialize_from_config|_init_kv_cache\w*|init_cache_engine|_allocate_kv_cache\w*)\s", re.M)),
    ("kernel-jit", re.compile(
        r"^\S*(?:jit|compile|load_inline|build_extension|_run_ninja|_write_ninja|make_ptx|make_cubin|ptx_to_cubin|"
        r"make_llir|make_ttgir|build_and_load|gen_\w+_module)\S*\s|"
        r"\s\S*(?:triton/compiler/|flashinfer/jit/|cpp_extension\.py|deep_gemm/jit|torch/_inductor/)", re.I | re.M)),
    # vLLM's _dummy_sampler_run warms the sampler up (its own error says "when warming up sampler");
    # the memory profile run that also calls it is found first, by profile_run.
    ("warmup", re.compile(r"^\S*warm_?up\S*\s|^encode_images\s|^_dummy_sampler_run\s", re.I | re.M)),
    # A package opening its shared library (ctypes.CDLL in llama_cpp's _load_shared_library,
    # TensorRT-LLM's _load_plugin_lib, torch.ops.load_library) or a module being imported
    # (importlib's _load_unlocked): an import, at launch; not one of a weight loader's _load_*
    # helpers below. And the server resolving the model's configuration from its arguments (vLLM's
    # and SGLang's get_config, which builds the engine's model config before any weight is read; not
    # transformers' AutoConfig as such, which a loader also calls from inside its load_model). So too
    # its tokenizer and multimodal processor, which vLLM and SGLang build from the same arguments
    # before any weight is read (vLLM's transformers_utils get_tokenizer / get_processor and their
    # cached_* wrappers, SGLang's hf_transformers_utils get_tokenizer / get_processor). And a worker
    # setting up its device (vLLM's Worker.init_device, on every platform: the device index, the
    # distributed environment, the start-up memory snapshot and its check), which the executor runs
    # before it asks the worker to load the model.
    ("launch", re.compile(r"^_?load_(?:\w+_)?(?:shared_)?lib\w*\s|^_load_(?:plugin|dll)\w*\s|^_load_unlocked <frozen importlib|"
                          r"^init_device \S*worker\w*\.py$|"
                          r"^get_config \S*(?:transformers_utils/config|hf_transformers_utils|hf_transformers/config)\.py$|"
                          r"^(?:cached_)?get_(?:tokenizer|processor|image_processor)\w* \S*(?:transformers_utils/\w+|"
                          r"hf_transformers_utils|hf_transformers/\w+)\.py$", re.M)),
    ("load-weights", re.compile(
        r"^(?:load_model|load_weights|get_model|from_pretrained|load_checkpoint|_load_\w+|create_weights|"
        r"initialize_model|_initialize_model|load_state_dict|weight_loader\w*|process_weights_after_loading|"
        # LMDeploy TurboMind's weight threads (_create_weight_func, create_shared_weights), and torch's
        # Module._apply / convert, which .to(device) / .cuda() run to move a built model's weights onto
        # the device (module.py's own frames only: the names alone are common words).
        r"_create_weight\w*|create_shared_weights|(?:_apply|convert) \S*torch/nn/modules/module\.py|"
        # A rotary embedding builds its frequency and cos/sin tables in its constructor, run while the
        # model is built for its weights (vLLM's and SGLang's layers/rotary_embedding.py).
        r"_compute_inv_freq|_compute_cos_sin_cache)\s|"
        # Hugging Face Hub downloading the model's files (huggingface_hub's file_download.py
        # hf_hub_download, _snapshot_download.py snapshot_download, their own frames): fetching the
        # model is the start of its load. Not a call that its argument check refused before the
        # download began (the validator's frames, no hub frame: a bad repo id, launch), nor a server
        # resolving only its configuration (get_config, above: launch).
        r"^(?:hf_hub_download|snapshot_download) \S*huggingface_hub/\w+\.py$|"
        # A model's layers being constructed (__init__ in vLLM's and SGLang's models/ and layers/, vLLM's
        # attention layer): the loaders build the model only to load its weights into it (load_model ->
        # initialize_model). Not SGLang's attention backends (layers/attention/), built after the memory pool.
        r"^__init__ \S*(?:vllm/model_executor/(?:models|layers)/\S+|vllm/attention/layer|sglang/srt/models/\S+|"
        r"sglang/srt/layers/(?:linear|quantization/\S+|moe/\S+|vocab_parallel_embedding|rotary_embedding|layernorm|"
        r"radix_attention))\.py$|"
        # Xinference launching a model (launch_builtin_model, _launch_one_model, _launch_model): its worker
        # creates the model's actor and loads the model into it, on a server already up.
        r"^(?:launch_builtin_model|_launch_one_model|_launch_model) \S*xinference[/\\]core[/\\](?:worker|supervisor)\.py$", re.M)),
    ("serving", re.compile(
        r"^(?:event_loop\w*|run_batch|execute_model|process_batch_result\w*|forward_batch_generation|run_busy_loop|"
        r"_process_engine_step|handle_generate_request|generate_request|step|start_worker_execution_loop|\w*forward_thread\w*|sample|_sample|"
        r"\w*sampler\w*|forward_decode|decode_step|generate_token|prefill|decode|"
        # vLLM V0's multiprocessing engine taking a client's request off its socket (MQLLMEngine
        # handle_new_input) and LMDeploy's PyTorch engine's loop, which schedules and runs the requests
        # (engine.py _async_loop and its _async_loop_* parts): only a running server is in them.
        r"handle_new_input|_async_loop\w*)\s|"
        # MLC LLM's engine loop and its new-request prefill (cpp/serve/threaded_engine.cc, new_request_prefill.cc).
        r"^\S*::RunBackgroundLoop\(\)\s|^\S*::NewRequestPrefill\w*::Step\(|"
        # SGLang's disaggregation transfer thread, which moves requests' KV cache between instances.
        r"^transfer_worker \S*sglang/srt/disaggregation/", re.M)),
]

# Message wording that says where start-up was (lines without frames).
TEXT_PHASES: list[tuple[str, re.Pattern[str]]] = [
    ("cuda-graph-capture", re.compile(
        r"(?i)BeginCapture|begin capture stream|stream is capturing|during (?:cuda |acl )?graph capture|"
        r"graph capture (?:failed|error)|capturing (?:cuda|acl) ?graphs?|capture (?:cuda|acl) ?graph failed|"
        r"failed to capture (?:cuda |acl )?graph|"
        # torch_npu's NPU graph capture checks the ACL runtime's capture status (aclmdlRICaptureGetInfo:
        # ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE / _INVALIDATED): only a capture reads it.
        r"\b[Aa]clmdlRICapture\w*|\bACL_MODEL_RI_CAPTURE_STATUS_\w+")),
    # TGI's shard names the RPC it was serving ("Method Warmup encountered an
    # error.", text_generation_server/interceptor.py) and its router the span
    # ("warmup{max_input_length=...}:warmup:").
    ("warmup", re.compile(
        r"(?i)\bMethod Warmup encountered an error|\bwarmup\{|:warmup:|\bwarm(?:ing)?[ _-]?up (?:failed|error)\b|"
        r"\berror (?:during|in|while) (?:the )?warm(?:ing)?[ _-]?up\b")),
    # Hugging Face's Rust routers (TGI, TEI) run start-up and warm-up on the main thread; the
    # runtime's worker threads run what is spawned: the request handlers and the batching loop.
    ("serving", re.compile(r"\bMethod (?:Prefill|Decode|FilterBatch) encountered an error|"
                           r"\bthread 'tokio-runtime-worker' panicked at \S*router/src/")),
    ("kernel-jit", re.compile(
        r"(?i)\bnvcc\b|\bninja\b|\bJIT\b|\bptxas\b|CompilationError|not supported in this architecture|"
        r"Building extension|load_inline|compil(?:e|ing|ation) (?:the )?(?:kernel|extension|module)s?\b|"
        # A compiler's or a build tool's own words (nvcc's front end, gcc, make) and LLVM's
        # abort inside Triton's code generation.
        r"errors? detected in the compilation of|\bCompilation terminated\.|\bCatastrophic error: |\bg?make(?:\[\d+\])?: \*\*\* |"
        r"\bLLVM ERROR: ")),
    ("memory-plan", re.compile(
        r"(?i)kv cache (?:is needed|memory|blocks?)|num_gpu_blocks|available kv cache|memory profiling")),
    ("load-weights", re.compile(
        r"(?i)\b(?:error|failed) (?:when |while )?(?:initiali[sz]ing|loading) (?:the )?(?:model|weights)\b|"
        r"\bloading (?:the )?(?:model )?weights\b|"
        # TGI's launcher: a shard died before it was ready (it loads the model, after the
        # distributed set-up: a wrapper, so after a signature's own phase).
        r"\bShard \d+ failed to start|Shard process was signaled")),
]

# What a server says about the step that failed, around the error itself: it says where
# start-up was better than a signature's usual phase for the error (a driver or import error
# inside Triton's model load is a failed model load).
STEP_PHASES: list[tuple[str, re.Pattern[str]]] = [
    # A wrapper that names the capture it was in (SGLang's cuda_graph_runner "Capture cuda graph
    # failed: ...", vLLM's and Ascend's capture errors): whatever the inner error's usual phase.
    ("cuda-graph-capture", re.compile(
        r"(?i)\bcapture (?:cuda|acl|npu) ?graph failed|failed to capture (?:cuda |acl |npu )?graph|"
        r"\bduring (?:cuda |acl |npu )?graph capture\b")),
    # A compiler run that the program reports as failed ("Failed compilation with ['neuronx-cc', ...]",
    # "NVCC compilation failed", "compilation failed"): the compile step, whatever the error's usual place.
    # TensorRT-LLM's builder reporting that TensorRT's engine build (its kernels' compile) failed; and
    # LMDeploy's environment check of Triton, which compiles and launches a test kernel
    # (pytorch/check_env: "<Triton> test failed!", later "<Triton> check failed!").
    ("kernel-jit", re.compile(r"(?i)\bfailed compilation with\b|\bcompilation failed\b|\bEngine building failed\b|"
                              r"<Triton> (?:test|check) failed!")),
    # TGI's shard names the RPC that failed (text_generation_server/interceptor.py); its
    # warm-up can fail before the launcher has seen the shard ready.
    ("warmup", re.compile(r"\bMethod Warmup encountered an error|"
                          # TensorRT-LLM's PyTorch executor names the component it was creating when the
                          # GPU ran out (py_executor_creator.py _ExecutorCreationStage): the executor itself,
                          # whose constructor warms the model up ...
                          r"\bThe following component could not be created: Additional executor resources\r?\n")),
    # ... and any server that says the failing step was a request it was executing (SGLang's and
    # others' "Error executing request", LMDeploy's engine loop, which runs the requests, KoboldCpp's
    # prompt processing): what failed was serving, whatever the last start-up marker said.
    ("serving", re.compile(r"\bMethod (?:Prefill|Decode|FilterBatch) encountered an error|"
                           r"(?i:\b(?:error|failed|failure) (?:while |when |in )?(?:executing|processing|handling) "
                           r"(?:an? |the )?(?:inference )?request\b)|\bEngine loop failed\b|\bProcessing Prompt\b|"
                           # A failing message naming the client's request by the id an OpenAI-compatible
                           # server gives it ("cmpl-...", "chatcmpl-..."): ids only client requests get.
                           r"\b(?:for|of|in) request (?:chat)?cmpl-[0-9a-f]|"
                           # vLLM's front end once the engine it was feeding died: V1's EngineDeadError
                           # (the engine core died after start-up; a start-up death is "Engine core
                           # initialization failed"), V0's AsyncEngineDeadError and its background loop's
                           # own timeout, and the stream generators that were answering a client.
                           r"\b(?:Async)?EngineDeadError\b|\bEngine iteration timed out\b|"
                           r"\bError in (?:chat )?completion stream generator\b|"
                           # TensorRT-LLM's executor loop, which steps the requests in flight.
                           r"\bEncountered an error in forward(?:Async|Sync)? function\b|"
                           # llama.cpp's server decoding its slots' batch (update_slots, the loop that runs
                           # the requests) and llama-cpp-python's eval of a prompt.
                           r"\bupdate_slots ?: failed to decode\b|\bllama_decode returned -?\d|"
                           # Xinference's model actor, whose inference calls (generate, chat) report an OOM so.
                           r"\bModel actor is out of memory\b|"
                           # TGI's and LoRAX's router: its batching loop's span ("batch{batch_size=1}:prefill:")
                           # and a request that failed while generating (not the warm-up's "warmup{...}:warmup:").
                           r"\bbatch\{batch_size=\d+\}:(?:prefill|decode)\b|\bRequest failed during generation\b|"
                           # SGLang's scheduler watchdog, which times a forward batch in its event loop.
                           r"\bScheduler watchdog timeout\b|\bWatchdog timeout \(self\.watchdog_timeout\b|"
                           # Prefill/decode disaggregation moving a request's KV cache between instances
                           # (SGLang's KVPoll states and rooms, vLLM's NIXL handshake with a remote engine,
                           # done on a request's first transfer): only requests are moved.
                           r"\bKVPoll\.\w+|\btransfer worker error for room\b|\bDecode instance could be dead\b|"
                           r"\bHandshake with \S+ failed\b|\bRemote NIXL agent engine ID mismatch\b|"
                           # ... and Mooncake's transfer engine failing a transfer (its TCP transport's
                           # "Session::readBody failed" / "Session::writeBody failed", a worker's "Process
                           # failed for slice (opcode: ..."): it moves only requests' KV cache.
                           r"\bSession::(?:read|write)Body failed\b|\bProcess failed for slice \(opcode: ")),
    # The KV cache's sizing, named by the server: vLLM's check that the longest sequence fits
    # ("larger than the maximum number of tokens that can be stored in KV cache"), TensorRT-LLM's
    # ("maxTokensInPagedKvCache must be large enough"); and TensorRT-LLM's executor, which Triton's
    # backend builds when it creates the model instance (the engine already deserialised): the
    # allocation that runs out there is its KV-cache pool.
    # llama.cpp (and the servers built on it) builds its context once the weights are in: the KV cache
    # (llama_kv_cache_init) and the compute buffers the graph allocator reserves (ggml_gallocr_reserve_n,
    # graph_reserve); a device allocation that fails there says so on the next lines.
    ("memory-plan", re.compile(
        r"\bmaximum number of tokens that can be stored in KV cache\b|\bmaxTokensInPagedKvCache\b|"
        r"\bcreating modelInstanceState: [^\n]{0,400}?\bout of memory\b|"
        r"\bfailed to allocate buffer for kv cache\b|\bllama_kv_cache_init\(\) failed\b|"
        r"\bfailed to allocate compute (?:pp |tg )?buffers\b|\bggml_gallocr_reserve_n\w*: failed to allocate\b|"
        r"\bfailed to initialize the context: |"
        # ... the KV cache, or what is sized with it (TensorRT-LLM's executor creation, above).
        r"\bThe following component could not be created: (?:KV cache|Initial KV cache|"
        r"Additional executor resources \(temporary for KV cache size estimation\))")),
    ("load-weights", re.compile(
        # Triton's model lifecycle and repository (model_lifecycle.cc, model_repository_manager.cc):
        # a model that did not load, its status (a row of the status table, or the status alone
        # once the table's columns are peeled off), the poll of its directory, an ensemble whose
        # member did not load.
        r"\bfailed to load '[^']+'|failed to load all models|Poll failed for model directory|(?:^|\n|\| +)UNAVAILABLE: |"
        r"\bwhich has no loaded version\b|"
        # TensorRT deserialising a model's engine file.
        r"Serialization assertion|\bdeserializ\w+ (?:the )?(?:cuda )?engine\b|"
        # (TensorRT's runtime refusing an engine built by another release as it deserialises it.)
        r"\bThe engine plan file is not compatible with this version of TensorRT\b|"
        # TGI's launcher: the weights' download died.
        r"Download process was signaled|"
        # Ollama's scheduler and llama.cpp's loader, LocalAI's backends ("Fails: could not load model").
        r"error loading llama server|llama runner process has terminated|timed out waiting for llama runner to start|"
        # (Ollama's scheduler once a model's load failed: server/sched.go Scheduler.load "Load failed".)
        r"\bmsg=\"Load failed\" model=|"
        # (A program's own words, capitalised or not at the start of its message: "Failed to load model
        # [sam]: ...", "Error loading model", "Unable to load the model".)
        r"model requires more system memory|model request too large for system|\b[Ff]ailed to load (?:the )?model\b|"
        r"\b(?:[Cc]ould not|[Uu]nable to) load (?:the )?model\b|\b[Ee]rror loading (?:the )?model\b|"
        # ... the model, or the draft model (TensorRT-LLM's executor creation, above).
        r"\bThe following component could not be created: (?:Model|Draft model for speculative decoding)\r?\n|"
        # TensorRT building its runtime and deserialising an engine's plugins, named by the C++ frames
        # of a native backtrace (nvinfer's createInferRuntime, a plugin creator's deserializePlugin,
        # IRuntime::deserializeCudaEngine): the engine file being loaded.
        r"\bcreateInferRuntime_INTERNAL\b|::deserializePlugin\(|\bdeserializeCudaEngine\(|"
        # Hugging Face's text-embeddings-inference router failing to download the model's files
        # (router/src/lib.rs: "Could not download model artifacts"): fetching the model starts its load.
        r"\bCould not download model artifacts\b")),
    # torch's NCCL watchdog timing out the process group's first collective (ProcessGroupNCCL numbers
    # them from 1: "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, ...)"): the distributed set-up's own barrier
    # or all-reduce, at launch, whatever a later collective's timeout would mean.
    # ... and vLLM's worker refusing to start because the device's free memory is already below what
    # --gpu-memory-utilization asks ("Free memory on device ... on startup is less than desired GPU memory
    # utilization": v1/worker request_memory, run by init_device before the model is loaded).
    # ... and Dynamo's runtime connecting to its discovery and messaging services as the process starts
    # (DistributedRuntime(...), before any engine: "Failed to connect to etcd server with config ...",
    # "Failed to connect to NATS: ...").
    ("launch", re.compile(r"\bWorkNCCL\(SeqNum=1, |\bon startup is less than desired GPU memory utilization\b|"
                          r"\bFailed to connect to (?:etcd server with config|NATS: )")),
]


# CUDA refusing an operation because a stream is being captured (a kernel loaded, memory
# allocated or synchronised during capture): a CUDA graph was being captured, whatever the
# frames were doing for it (Triton loading its compiled kernel, an allocator).
_CAPTURING = re.compile(r"\bnot permitted when stream is capturing\b|cudaErrorStreamCapture(?:Invalidated|Unsupported)\b")


def during_capture(text: str) -> bool:
    """The failing lines say a stream was being captured into a CUDA graph."""
    return _CAPTURING.search(text[:4000]) is not None


# uvicorn's lines before it runs the application's lifespan start-up ("Started server process",
# "Waiting for application startup."; phases.yaml's uvicorn_starting). A server that loads its model
# in that start-up (GPT4All's API, Infinity, FastAPI model servers) printed no step of its own before
# them; one whose engine came up first (vLLM, SGLang) printed its load and memory plan first.
_APP_STARTUP = re.compile(r"\bWaiting for application startup\.|\bStarted server process \[\d+\]")


def app_startup_loads(marker_text: str | None, steps: set[str]) -> bool:
    """The last marker is uvicorn starting the application's lifespan and no step past launch came
    before it: the application's own start-up, which loads the model, was running (taxonomy:
    load-weights). Read only where nothing else (frames, the step a server names) says where."""
    return bool(marker_text) and _APP_STARTUP.search(marker_text or "") is not None and \
        steps <= {"launch", "warmup"}


def frame_names(frames: Iterable[Frame]) -> list[str]:
    """"function file" for each frame, plus what its source line calls."""
    out = []
    for f in frames:
        out.append(f"{f.function or '-'} {f.file}")
        call = _CALL.search(f.source or "")
        if call:  # the source line says what the frame was calling
            out.append(f"{call.group(1)} {f.file}")
    return out


_CALL = re.compile(r"(?:\.|^|\s)(\w+)\(")


def phase_of_frames(frames: list[Frame], use_catalogue: bool = False) -> str | None:
    """Phase from the frames' function names; with ``use_catalogue``, also
    from the catalogue's function -> phase map (it costs a load, so only
    when nothing else in the log says where start-up was)."""
    names = frame_names(frames)
    if not names:
        return None
    phase = _function_phase("\n".join(names))
    if phase is not None:
        return phase
    return _catalogue_phase(frames) if use_catalogue else None


# One pass for all of them (an RE2 set on ASCII text; see guarded.AsciiSet):
# the frame names of a traceback run to kilobytes, and ``re`` tries the
# ``^\S*...`` patterns at every line.
_FUNCTION_SET = AsciiSet([(rx.pattern, rx.flags & (re.I | re.M)) for _phase, rx in FUNCTION_PHASES])
_TEXT_SET = AsciiSet([(rx.pattern, rx.flags & (re.I | re.M)) for _phase, rx in TEXT_PHASES])
_STEP_SET = AsciiSet([(rx.pattern, rx.flags & (re.I | re.M)) for _phase, rx in STEP_PHASES])


@memo_by_text
def _function_phase(blob: str) -> str | None:
    """The first of FUNCTION_PHASES whose regex finds the frames' names (the
    ranks of a crash loop fail in the same frames every lifetime), unless a
    later start-up step encloses a JIT build (``_nested_step``)."""
    i = _FUNCTION_SET.first(blob)
    if i is None:
        return None
    phase = FUNCTION_PHASES[i][0]
    if phase in ("memory-plan", "kernel-jit"):
        return _nested_step(blob.split("\n")) or phase
    if phase == "cuda-graph-capture" and _in_memory_plan(blob.split("\n")):
        return "memory-plan"
    return phase


def _in_memory_plan(names: list[str]) -> bool:
    """The memory plan encloses the capture-named frames: vLLM V1's profile run measures the graphs'
    memory (determine_available_memory -> profile_cudagraph_memory) and its KV-cache set-up settles
    the graph mode (initialize_kv_cache -> _check_and_update_cudagraph_mode); the capture for good is
    a later step, which calls neither."""
    return any((f := n.split(" ", 1)[0]) in _PROFILE_RUNS or f == "initialize_kv_cache" for n in names)


_STEP_RX = dict(FUNCTION_PHASES)
# Steps after the compile step: a kernel built lazily inside one of them (FlashInfer's sampler
# built by the warm-up's first sampling, vLLM V1's warm-up called from inside its KV-cache set-up)
# failed in that step. A JIT build inside the memory profile run is the compile step itself
# (vLLM compiles the model during its profile run), and the profile run's own sampler warm-up
# (_dummy_sampler_run) is part of the profile run.
_LATE_STEPS = ("cuda-graph-capture", "warmup")


def _nested_step(names: list[str]) -> str | None:
    """The innermost start-up step of the frames (outermost first), when it is a step that comes
    after the compile step and a JIT build or the memory plan's set-up encloses or follows it."""
    for k in range(len(names) - 1, -1, -1):
        line = names[k]
        if _STEP_RX["memory-plan"].search(line) and line.split(" ", 1)[0] in _PROFILE_RUNS:
            return None  # inside the profile run: the first match (memory-plan or JIT) stands
        if line.startswith(_JIT_WARMUPS):
            return None  # a warm-up of the kernels themselves is the compile step
        if line.startswith(_UMBRELLAS):
            continue  # runs several steps: the one inside it says which
        for step in _LATE_STEPS:
            if _STEP_RX[step].search(line):
                return step
    return None


# Warm-ups whose work is building kernels: SGLang's ModelRunner.kernel_warmup (FlashInfer's
# autotune and JIT, before capture), DeepGEMM's JIT warm-up.
_JIT_WARMUPS = ("kernel_warmup ", "_kernel_warmup ", "deep_gemm_warmup ", "jit_warmup ")
# Functions that run several steps in turn: vLLM V1's compile_or_warm_up_model compiles the
# sizes asked for, captures the graphs and warms up (warmup_kernels).
_UMBRELLAS = ("compile_or_warm_up_model ",)
# The memory plan's profile run, which itself runs warm-up-named helpers.
_PROFILE_RUNS = frozenset({"profile_run", "determine_available_memory", "determine_num_available_blocks",
                           "profile_max_num_token"})


def runs_several_steps(ev: Event) -> bool:
    """The traceback's frames pass through a function that runs several start-up steps in turn
    (``_UMBRELLAS``): which of them failed is told by the markers the process printed, not by
    the frames' first match."""
    frames = list(ev.data.get("frames") or ())
    for link in ev.data.get("chain") or ():
        frames.extend(link.frames or ())
    return any(f"{f.function} ".startswith(_UMBRELLAS) for f in frames)


def past_step(marker_text: str | None, marker: str | None, framed: str | None) -> bool:
    """The last marker says a start-up step finished ("Graph capturing finished in 4 secs") that
    comes after the step ``framed`` names: the process had gone past that step."""
    if not (marker_text and marker and framed) or marker in ("ready", "serving", "shutdown"):
        return False
    return PHASE_ORDER.get(framed, 99) < PHASE_ORDER.get(marker, 0) and _FINISHED.search(marker_text) is not None


def phase_of_traceback(ev: Event, use_catalogue: bool = False) -> str | None:
    """Phase from what the frames of a traceback (and of its first chained
    exception) were doing."""
    frames = list(ev.data.get("frames") or ())
    chain = ev.data.get("chain") or ()
    if chain and chain[0].frames:
        frames = list(chain[0].frames) + frames
    return phase_of_frames(frames, use_catalogue)


def phase_of_text(text: str) -> str | None:
    """Phase from the message's own words, else from the function that prints
    it (the message catalogue, where it knows the message)."""
    return phase_of_words(text) or phase_of_catalogue(text)


def phase_of_words(text: str) -> str | None:
    """Phase from the message's own words alone (TEXT_PHASES), not the catalogue's function."""
    i = _TEXT_SET.first(text[:2000])
    return TEXT_PHASES[i][0] if i is not None else None


def phase_of_step(text: str) -> str | None:
    """Phase from what the server says about the step that failed (STEP_PHASES), else from the
    method it names as the one that failed (``_METHOD``)."""
    i = _STEP_SET.first(text[:4000])
    if i is not None:
        return STEP_PHASES[i][0]
    m = _METHOD.search(text[:4000])
    return _function_phase(f"{m.group(1)} -") if m else None


# An executor relaying a worker's failure with the method it had asked the worker to run (vLLM V0's
# multiproc executor: "Exception in worker VllmWorkerProcess while processing method load_model."):
# the method is a function of the worker, named as FUNCTION_PHASES knows them (load_model,
# determine_num_available_blocks, start_worker_execution_loop ...).
_METHOD = re.compile(r"\bwhile processing method (\w+)")


def _catalogue() -> Any:
    try:
        from forensics.events import catalogue  # type: ignore[attr-defined]
    except ImportError:  # the catalogue is optional data
        return None
    return catalogue


def _catalogue_phase(frames: list[Frame]) -> str | None:
    cat = _catalogue()
    if cat is None:
        return None
    for f in reversed(frames):  # innermost first
        try:
            phase = cat.phase_of_function(f.module, f.function)
        except Exception:  # noqa: BLE001 - optional knowledge never breaks a diagnosis
            return None
        if phase == "ready":
            # a function the catalogue files under readiness is one that waits for it (vLLM's
            # executor wait_for_ready): start-up still going, it says nothing of which step failed
            continue
        if phase:
            return str(phase)
    return None


def phase_of_catalogue(text: str) -> str | None:
    """Phase of the function the message catalogue says prints the message, where it knows it."""
    cat = _catalogue()
    if cat is None:
        return None
    try:
        entry = cat.lookup(text)
        if not entry:
            return None
        module = _get(entry, "module")
        function = _get(entry, "function")
        phase = _get(entry, "phase") or (cat.phase_of_function(module, function) if module and function else None)
    except Exception:  # noqa: BLE001
        return None
    return str(phase) if phase else None


def _get(entry: Any, key: str) -> Any:
    if isinstance(entry, (list, tuple)):
        entry = entry[0] if entry else None
    if entry is None:
        return None
    if isinstance(entry, dict):
        return entry.get(key)
    return getattr(entry, key, None)


def successor_phase(marker_text: str | None, phase: str | None) -> str | None:
    """What always follows a finished step: both SGLang and vLLM plan memory (profile run, KV
    cache pool) right after the weights are loaded, and warm up once the graphs are captured."""
    if not (marker_text and _FINISHED.search(marker_text)):
        return None
    return {"load-weights": "memory-plan", "cuda-graph-capture": "warmup"}.get(phase or "")


# "took" with the figure it took ("Loading weights took 3.05 seconds", "... took in total 15.05
# GiB"): the same words in a traceback's listing of the logging call ('logger.info("Loading model
# weights took %.4f GB", ...)') say nothing finished.
_FINISHED = re.compile(r"\btook [^%\d\n]{0,16}\d|\bend\b|\bfinished\b|\bdone\b", re.I)


def is_traceback(ev: Event | None) -> bool:
    return ev is not None and ev.kind == kinds.TRACEBACK
