"""Data for the synthetic log generator: hardware, models, versions, and one
failure builder per taxonomy label.

Every message text below is a message that SGLang, vLLM, PyTorch, NCCL,
Triton, FlashInfer, nvcc, the dynamic loader, the kernel or systemd prints
(see ``/work/shared/reference/log-formats.md``); the numbers, names and paths
around them are varied at random.  Nothing here is copied from a real log.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from random import Random

# --------------------------------------------------------------------------
# hardware, software, models
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Gpu:
    name: str      # as torch prints it
    short: str     # as people call it
    sm: int        # compute capability * 10
    total_gib: float


GPUS: list[Gpu] = [
    Gpu("NVIDIA H100 80GB HBM3", "H100", 90, 79.19),
    Gpu("NVIDIA H100 PCIe", "H100-PCIe", 90, 79.18),
    Gpu("NVIDIA H200", "H200", 90, 139.81),
    Gpu("NVIDIA B200", "B200", 100, 178.35),
    Gpu("NVIDIA B300 SXM6 AC", "B300", 103, 267.7),
    Gpu("NVIDIA GB200", "GB200", 100, 184.31),
    Gpu("NVIDIA GeForce RTX 5090", "RTX 5090", 120, 31.36),
    Gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000", 120, 94.97),
    Gpu("NVIDIA L4", "L4", 89, 22.05),
    Gpu("NVIDIA A100-SXM4-80GB", "A100", 80, 79.25),
    Gpu("NVIDIA A100-SXM4-40GB", "A100-40G", 80, 39.39),
    Gpu("Tesla T4", "T4", 75, 14.56),
    Gpu("NVIDIA A10G", "A10G", 86, 22.06),
    Gpu("NVIDIA L40S", "L40S", 89, 44.39),
    Gpu("NVIDIA GB10", "GB10", 121, 119.7),
    Gpu("NVIDIA GeForce RTX 4090", "RTX 4090", 89, 23.52),
]


@dataclass(frozen=True)
class Model:
    hf: str
    arch: str
    shards: int
    weights_gib: float   # full model, bf16
    heads: int
    vlm: bool = False
    mla: bool = False
    max_len: int = 32768


MODELS: list[Model] = [
    Model("meta-llama/Llama-3.1-8B-Instruct", "LlamaForCausalLM", 4, 14.99, 32, max_len=131072),
    Model("meta-llama/Llama-3.3-70B-Instruct", "LlamaForCausalLM", 30, 131.4, 64, max_len=131072),
    Model("Qwen/Qwen3-8B", "Qwen3ForCausalLM", 5, 15.26, 32, max_len=40960),
    Model("Qwen/Qwen3-14B", "Qwen3ForCausalLM", 8, 27.52, 40, max_len=40960),
    Model("Qwen/Qwen3-32B", "Qwen3ForCausalLM", 17, 61.03, 64, max_len=40960),
    Model("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM", 16, 56.87, 32, max_len=40960),
    Model("Qwen/Qwen2.5-7B-Instruct", "Qwen2ForCausalLM", 4, 14.19, 28, max_len=32768),
    Model("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2_5_VLForConditionalGeneration", 5, 15.45, 28, vlm=True, max_len=128000),
    Model("Qwen/Qwen3-VL-8B-Instruct", "Qwen3VLForConditionalGeneration", 4, 16.33, 32, vlm=True, max_len=262144),
    Model("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3MoeForCausalLM", 16, 56.9, 32, max_len=262144),
    Model("deepseek-ai/DeepSeek-V3", "DeepseekV3ForCausalLM", 163, 641.3, 128, mla=True, max_len=163840),
    Model("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen2ForCausalLM", 2, 14.19, 28, max_len=131072),
    Model("mistralai/Mistral-7B-Instruct-v0.3", "MistralForCausalLM", 3, 13.5, 32, max_len=32768),
    Model("google/gemma-3-27b-it", "Gemma3ForConditionalGeneration", 12, 51.2, 32, vlm=True, max_len=131072),
    Model("openai/gpt-oss-20b", "GptOssForCausalLM", 3, 12.82, 64, max_len=131072),
    Model("openai/gpt-oss-120b", "GptOssForCausalLM", 15, 60.77, 64, max_len=131072),
    Model("moonshotai/Kimi-VL-A3B-Instruct", "KimiVLForConditionalGeneration", 7, 30.6, 16, vlm=True, max_len=131072),
    Model("zai-org/GLM-4.5-Air", "Glm4MoeForCausalLM", 47, 205.8, 96, max_len=131072),
    Model("microsoft/Phi-4-mini-instruct", "Phi3ForCausalLM", 2, 7.15, 24, max_len=131072),
    Model("ibm-granite/granite-3.3-8b-instruct", "GraniteForCausalLM", 4, 15.23, 32, max_len=131072),
]

SGLANG_VERSIONS = ["0.4.6.post5", "0.4.9.post2", "0.5.0rc2", "0.5.2", "0.5.4", "0.5.4.post1", "0.5.6.post2", "0.5.9", "0.5.23"]
VLLM_VERSIONS = ["0.6.3", "0.6.6.post1", "0.9.2", "0.9.1", "0.11.0", "0.10.2", "0.33.0"]

TORCH_BUILDS = ["2.5.1+cu124", "2.6.0+cu124", "2.7.1+cu126", "2.7.1+cu128", "2.8.0+cu128", "2.8.0+cu129", "2.9.0+cu128", "2.9.1+cu130"]

SITE_ROOTS = [
    "/usr/local/lib/python{py}/dist-packages",
    "/usr/local/lib/python{py}/dist-packages",
    "/opt/conda/lib/python{py}/site-packages",
    "/home/{user}/.venv/lib/python{py}/site-packages",
    "/root/miniconda3/envs/sglang/lib/python{py}/site-packages",
    "/workspace/.venv/lib/python{py}/site-packages",
    "/usr/local/lib/python{py}/site-packages",
]
USERS = ["ubuntu", "ml", "admin", "svc-llm", "dev", "ec2-user", "paperspace", "jovyan"]
HOSTNAMES = ["gpu-node-7", "h100-03", "ip-10-0-3-17", "dgx-a100-02", "inference-4", "b200-r12-n3", "gb200-nvl-07",
             "worker-gpu-12", "llm-serve-01", "rtx-box", "spark-gb10", "node0042", "sglang-prod-2", "vllm-eu-1"]

SM_ARCH = {75: "sm_75", 80: "sm_80", 86: "sm_86", 89: "sm_89", 90: "sm_90", 100: "sm_100", 103: "sm_103",
           120: "sm_120", 121: "sm_121"}

# Optional model-module import failures that SGLang logs as harmless warnings.
IGNORED_MODEL_IMPORTS = [
    ("glm_ocr", "No module named 'transformers.models.glm_ocr'"),
    ("glmasr", "cannot import name 'GlmAsrConfig' from 'transformers'"),
    ("mllama4", "No module named 'transformers.models.llama4'"),
    ("kimi_vl", "No module named 'blobfile'"),
    ("deepseek_ocr", "No module named 'addict'"),
    ("phi4mm", "No module named 'peft'"),
    ("qwen3_omni_moe", "cannot import name 'Qwen3OmniMoeConfig' from 'transformers'"),
    ("step3_vl", "No module named 'timm'"),
    ("midashenglm", "No module named 'torchaudio'"),
    ("dots_vlm", "No module named 'transformers.models.dots'"),
    ("nemotron_h", "No module named 'mamba_ssm'"),
    ("interns1", "cannot import name 'InternS1Config' from 'transformers'"),
]

# --------------------------------------------------------------------------
# context for one generated log
# --------------------------------------------------------------------------


@dataclass
class Ctx:
    rng: Random
    server: str            # sglang | vllm
    version: str
    gen: str               # sglang: old|mid|new   vllm: v06|v09|v011|v033
    gpu: Gpu
    tp: int
    dp_attn: bool
    ep: bool
    model: Model
    py: str
    sp: str                # site-packages root
    torch: str
    cuda: str
    host: str
    port: int
    journald: bool         # rendered through journald (kernel/systemd lines possible)
    user: str = "root"

    @property
    def sm_arch(self) -> str:
        return SM_ARCH.get(self.gpu.sm, f"sm_{self.gpu.sm}")

    def lineno(self, path: str, func: str) -> int:
        return 40 + zlib.crc32(f"{self.version}|{path}|{func}".encode()) % 2900

    def frame(self, path: str, func: str, src: str | None = None, caret: bool = False) -> list[str]:
        full = path if path.startswith("/") or path.startswith("<") else f"{self.sp}/{path}"
        out = [f'  File "{full}", line {self.lineno(path, func + (src or ""))}, in {func}']
        if src is not None:
            out.append("    " + src)
            stripped = src.strip()
            # Python 3.11+ marks the call part of an assignment or return; a
            # statement that is the whole expression gets no marker line.
            if caret and self.py >= "3.11" and ("= " in stripped or stripped.startswith("return ")):
                lead = len(src) - len(stripped)
                start = stripped.find("= ") + 2 if "= " in stripped else 7
                width = max(1, len(stripped.rstrip("(,")) - start + (1 if stripped.endswith("(") else 0))
                out.append("    " + " " * (lead + start) + "^" * width)
        return out

    def frames(self, spec: list[tuple]) -> list[str]:
        out: list[str] = []
        for item in spec:
            path, func = item[0], item[1]
            src = item[2] if len(item) > 2 else None
            caret = bool(item[3]) if len(item) > 3 else False
            if caret and self.rng.random() < 0.5:
                caret = False
            out.extend(self.frame(path, func, src, caret))
        return out


CUDA_TRAILER = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]

CAPTURE_HINTS_OLD = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
    "3. disable torch compile by not using --enable-torch-compile",
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
]
CAPTURE_HINTS_NEW = [
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)",
    "3. disable torch compile by not using --enable-torch-compile",
    "4. disable CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)",
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
]


@dataclass
class Precursor:
    lines: list[str]          # message lines (the first one is the log record, the rest raw continuation)
    substring: str
    phase: str                # phase in which it is printed
    style: str = "log"        # log (server logger, rank 0) | raw (warnings.warn / library print) | nccl | kernel | systemd | vlog
    level: str = "WARNING"    # for vLLM logger records
    vfile: str = "__init__.py"
    lead: tuple[float, float] = (5.0, 240.0)


@dataclass
class Failure:
    label: str
    phase: str
    exc: list[str]                     # traceback / exception text lines
    fatal: str                         # exact substring of the proving line
    scope: str = "ranks"               # ranks | rank0 | main | argparse | kernel | log | systemd
    pre: list[str] = field(default_factory=list)      # raw lines printed before the traceback (compiler output ...)
    pre_scope: str = "rank0"           # rank0 | ranks
    cxx: list[str] = field(default_factory=list)      # C++ lines printed after (terminate called ...)
    log_line: str = ""                 # scope=log: a server log record that itself is the proof
    log_level: str = "ERROR"
    capture_wrap: bool = False         # may be wrapped in SGLang's "Capture cuda graph failed"
    precursor: Precursor | None = None
    result: str = "signal"             # systemd result when the unit dies (sglang self-SIGKILL → signal)
    kernel: list[str] = field(default_factory=list)   # kernel lines (journald only)
    systemd: list[str] = field(default_factory=list)  # extra systemd lines (unit-prefixed text without unit)
    exit_status: str = ""              # override systemd "Main process exited" tail
    variant: str = ""                  # short name of the catalog entry (for the note)


def pick(rng: Random, seq):
    return seq[rng.randrange(len(seq))]


def gib(rng: Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 2)


# --------------------------------------------------------------------------
# stacks by server and phase (head frames, outermost first)
# --------------------------------------------------------------------------


def sglang_sched_head(c: Ctx, phase: str) -> list[str]:
    new = c.gen == "new"
    f: list[tuple] = [("sglang/srt/managers/scheduler.py", "run_scheduler_process",
                       "scheduler = Scheduler(" if not new else "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)", True)]
    if phase in ("serving", "warmup"):
        loop = pick(c.rng, ["event_loop_overlap", "event_loop_normal"])
        f = [("sglang/srt/managers/scheduler.py", "run_scheduler_process", f"scheduler.{loop}()"),
             ("/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py".replace("/usr/local/lib/python3.12/dist-packages", c.sp), "decorate_context", "return func(*args, **kwargs)", True),
             ("sglang/srt/managers/scheduler.py", loop, "result = self.run_batch(batch)", True),
             ("sglang/srt/managers/scheduler.py", "run_batch",
              "logits_output, next_token_ids, can_run_cuda_graph = self.tp_worker.forward_batch_generation(", True),
             ("sglang/srt/managers/tp_worker.py", "forward_batch_generation",
              "logits_output, can_run_cuda_graph = self.model_runner.forward(", True),
             ("sglang/srt/model_executor/model_runner.py", "forward", "output = self._forward_raw(", True),
             ("sglang/srt/model_executor/model_runner.py", "_forward_raw",
              pick(c.rng, ["ret = self.forward_decode(forward_batch, pp_proxy_tensors=pp_proxy_tensors)",
                           "ret = self.forward_extend(", "ret = self.cuda_graph_runner.replay("]), True)]
        return c.frames(f)
    f += [("sglang/srt/managers/scheduler.py", "__init__", "self.tp_worker = TpModelWorker(" if c.gen != "old" else "self.tp_worker = TpWorkerClass(", True)]
    if c.gen == "old":
        f += [("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(", True)]
    f += [("sglang/srt/managers/tp_worker.py", "__init__", "self.model_runner = ModelRunner(", True),
          ("sglang/srt/model_executor/model_runner.py", "__init__", "self.initialize(min_per_gpu_memory)")]
    if phase == "launch":
        f += [("sglang/srt/model_executor/model_runner.py", "initialize" if new else "__init__",
               "min_per_gpu_memory = self.init_torch_distributed()", True)]
    elif phase == "load-weights":
        f += [("sglang/srt/model_executor/model_runner.py", "initialize", "self.load_model()"),
              ("sglang/srt/model_executor/model_runner.py", "load_model", "self.model = get_model(", True)]
    elif phase == "memory-plan":
        f += [("sglang/srt/model_executor/model_runner.py", "initialize", "self.init_memory_pool(")]
    elif phase == "kernel-jit":
        f += [("sglang/srt/model_executor/model_runner.py", "initialize", pick(c.rng, ["self.kernel_warmup()", "self.init_attention_backend()"]))]
    elif phase == "cuda-graph-capture":
        fn = "init_device_graphs" if c.gen != "old" else "init_cuda_graphs"
        f += [("sglang/srt/model_executor/model_runner.py", "initialize", f"self.{fn}()"),
              ("sglang/srt/model_executor/model_runner.py", fn,
               "self.graph_runner = graph_runners[self.device](self)", True),
              ("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", "self.capture()"),
              ("sglang/srt/model_executor/cuda_graph_runner.py", "capture", ") = self.capture_one_batch_size(bs, forward)", True),
              ("sglang/srt/model_executor/cuda_graph_runner.py", "capture_one_batch_size", "run_once()"),
              ("sglang/srt/model_executor/cuda_graph_runner.py", "run_once", "logits_output_or_pp_proxy_tensors = forward(", True)]
    return c.frames(f)


def _vllm_v0_engine_head(c: Ctx, phase: str) -> list[str]:
    """Frames of the V0 engine (vLLM 0.6) for a phase."""
    f: list[tuple] = [("vllm/engine/multiprocessing/engine.py", "run_mp_engine", "engine = MQLLMEngine.from_engine_args(engine_args=engine_args,", True),
                      ("vllm/engine/multiprocessing/engine.py", "from_engine_args", "return cls(", True),
                      ("vllm/engine/multiprocessing/engine.py", "__init__", "self.engine = LLMEngine(*args, **kwargs)", True),
                      ("vllm/engine/llm_engine.py", "__init__", "self.model_executor = executor_class(", True),
                      ("vllm/executor/executor_base.py", "__init__", "self._init_executor()")]
    if phase in ("load-weights", "launch"):
        f += [("vllm/executor/gpu_executor.py", "_init_executor", "self.driver_worker.load_model()"),
              ("vllm/worker/worker.py", "load_model", "self.model_runner.load_model()"),
              ("vllm/worker/model_runner.py", "load_model", "self.model = get_model(model_config=self.model_config,", True)]
    elif phase == "memory-plan":
        f = f[:3] + [("vllm/engine/llm_engine.py", "__init__", "self._initialize_kv_caches()"),
                     ("vllm/engine/llm_engine.py", "_initialize_kv_caches", "self.model_executor.determine_num_available_blocks())", True),
                     ("vllm/worker/worker.py", "determine_num_available_blocks", "self.model_runner.profile_run()")]
    elif phase in ("cuda-graph-capture", "kernel-jit", "warmup"):
        f = f[:3] + [("vllm/engine/llm_engine.py", "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)"),
                     ("vllm/worker/worker.py", "_warm_up_model", "self.model_runner.capture_model(self.gpu_cache)"),
                     ("vllm/worker/model_runner.py", "capture_model", "graph_runner.capture(**capture_inputs)")]
    return c.frames(f)


def vllm_core_head(c: Ctx, phase: str) -> list[str]:
    """Frames of the engine core (V1) or the V0 engine for a phase."""
    if c.gen == "v06":
        return _vllm_v0_engine_head(c, phase)
    if phase in ("serving",):
        f = [("vllm/v1/engine/core.py", "run_engine_core", "engine_core.run_busy_loop()"),
             ("vllm/v1/engine/core.py", "run_busy_loop", "self._process_engine_step()"),
             ("vllm/v1/engine/core.py", "_process_engine_step", "outputs, model_executed = self.step_fn()", True),
             ("vllm/v1/engine/core.py", "step", "model_output = self.execute_model_with_error_logging(", True),
             ("vllm/v1/engine/core.py", "execute_model_with_error_logging", "raise err"),
             ("vllm/v1/engine/core.py", "execute_model_with_error_logging", "return model_fn(scheduler_output)"),
             ("vllm/v1/executor/abstract.py", "execute_model", "output = self.collective_rpc(\"execute_model\",", True),
             ("vllm/v1/worker/gpu_worker.py", "execute_model", "output = self.model_runner.execute_model(scheduler_output,", True),
             ("vllm/v1/worker/gpu_model_runner.py", "execute_model", "model_output = self.model(", True)]
        return c.frames(f)
    f = [("vllm/v1/engine/core.py", "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)", True),
         ("vllm/v1/engine/core.py", "__init__", "super().__init__(vllm_config, executor_class, log_stats,")]
    if phase in ("launch", "load-weights"):
        f += [("vllm/v1/engine/core.py", "__init__", "self.model_executor = executor_class(vllm_config)", True),
              ("vllm/executor/executor_base.py", "__init__", "self._init_executor()"),
              ("vllm/executor/uniproc_executor.py", "_init_executor",
               "self.collective_rpc(\"load_model\")" if phase == "load-weights" else "self.collective_rpc(\"init_device\")"),
              ("vllm/executor/uniproc_executor.py", "collective_rpc", "answer = run_method(self.driver_worker, method, args, kwargs)", True),
              ("vllm/utils/__init__.py", "run_method", "return func(*args, **kwargs)", True)]
        if phase == "load-weights":
            f += [("vllm/v1/worker/gpu_worker.py", "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)"),
                  ("vllm/v1/worker/gpu_model_runner.py", "load_model", "self.model = model_loader.load_model(", True),
                  ("vllm/model_executor/model_loader/base_loader.py", "load_model", "self.load_weights(model, model_config)")]
        else:
            f += [("vllm/worker/worker_base.py", "init_device", "self.worker.init_device()  # type: ignore"),
                  ("vllm/v1/worker/gpu_worker.py", "init_device", "torch.cuda.set_device(self.device)")]
    else:
        f += [("vllm/v1/engine/core.py", "__init__", "self._initialize_kv_caches(vllm_config)", True)]
        if phase == "memory-plan":
            f += [("vllm/v1/engine/core.py", "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()", True),
                  ("vllm/v1/executor/abstract.py", "determine_available_memory", "return self.collective_rpc(\"determine_available_memory\")", True),
                  ("vllm/v1/worker/gpu_worker.py", "determine_available_memory", "self.model_runner.profile_run()"),
                  ("vllm/v1/worker/gpu_model_runner.py", "profile_run", "hidden_states, last_hidden_states = self._dummy_run(", True)]
        else:
            f += [("vllm/v1/engine/core.py", "_initialize_kv_caches", "self.model_executor.initialize_from_config(kv_cache_configs)"),
                  ("vllm/v1/executor/abstract.py", "initialize_from_config", "self.collective_rpc(\"compile_or_warm_up_model\")"),
                  ("vllm/v1/worker/gpu_worker.py", "compile_or_warm_up_model",
                   "cuda_graph_memory_bytes = self.model_runner.capture_model()" if phase == "cuda-graph-capture" else "self.model_runner._dummy_run(size, skip_eplb=True)", True)]
            if phase == "cuda-graph-capture":
                f += [("vllm/v1/worker/gpu_model_runner.py", "capture_model", "self._capture_cudagraphs(", True),
                      ("vllm/v1/worker/gpu_model_runner.py", "_capture_cudagraphs", "self._dummy_run(num_tokens,", True)]
            f += [("vllm/v1/worker/gpu_model_runner.py", "_dummy_run", "outputs = self.model(", True)]
    return c.frames(f)


def model_forward_frames(c: Ctx) -> list[str]:
    """Frames from the model forward down to a layer (shared by both servers)."""
    tsp = c.sp
    m = c.model.arch.lower().replace("forcausallm", "").replace("forconditionalgeneration", "")
    mod = {"llama": "llama", "qwen3": "qwen3", "qwen3moe": "qwen3_moe", "qwen2": "qwen2", "mistral": "llama",
           "deepseekv3": "deepseek_v2", "gptoss": "gpt_oss", "glm4moe": "glm4_moe", "phi3": "phi3", "granite": "granite",
           "gemma3": "gemma3_mm", "qwen2_5_vl": "qwen2_5_vl", "qwen3vl": "qwen3_vl", "kimivl": "kimi_vl"}.get(m, "llama")
    pkg = "sglang/srt/models" if c.server == "sglang" else "vllm/model_executor/models"
    f = [(f"{tsp}/torch/nn/modules/module.py", "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)", True),
         (f"{tsp}/torch/nn/modules/module.py", "_call_impl", "return forward_call(*args, **kwargs)", True),
         (f"{pkg}/{mod}.py", "forward", "hidden_states = self.model(", True),
         (f"{pkg}/{mod}.py", "forward", "hidden_states, residual = layer(", True),
         (f"{pkg}/{mod}.py", "forward", pick(c.rng, ["hidden_states = self.self_attn(", "hidden_states = self.mlp(hidden_states)"]), True)]
    return c.frames(f)


def import_frames(c: Ctx, chain: list[tuple[str, str]]) -> list[str]:
    """Frames of an import chain starting from the entry point."""
    if c.server == "sglang":
        f: list[tuple] = [("<frozen runpy>", "_run_module_as_main"), ("<frozen runpy>", "_run_code"),
                          ("sglang/launch_server.py", "<module>", "from sglang.srt.entrypoints.http_server import launch_server")]
        out = []
        for path, func, *rest in f:
            if path.startswith("<"):
                out.append(f'  File "{path}", line {c.lineno(path, func) % 300 + 88}, in {func}')
            else:
                out += c.frame(path, func, rest[0] if rest else None)
    else:
        bin_ = pick(c.rng, ["/usr/local/bin/vllm", "/opt/conda/bin/vllm", f"/home/{c.user}/.venv/bin/vllm"])
        out = [f'  File "{bin_}", line 5, in <module>', "    from vllm.entrypoints.cli.main import main"]
    for path, src in chain:
        out += c.frame(path, "<module>", src)
    return out


def tb(lines: list[str]) -> list[str]:
    return ["Traceback (most recent call last):"] + lines
