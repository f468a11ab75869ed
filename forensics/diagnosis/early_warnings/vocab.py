"""The vocabulary of early warnings (rules as data): names as the programs print
them, and what each failure label is about."""
from __future__ import annotations

import re
from typing import Any


class _lazy:
    """A regex compiled on first use: ``classify`` imports this module for
    every log, and only logs that failed need most of these patterns."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def warm(self) -> None:
        """Compile now (``forensics.diagnosis.warm``)."""
        if self._rx is None:
            self._rx = re.compile(*self._args)

    def __getattr__(self, name: str) -> Any:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(*self._args)
        return getattr(rx, name)

# --------------------------------------------------------------------------
# Vocabulary (rules as data). Names are what the programs print; a subject is
# ``kind:value`` with the value normalised (lower case, ``-`` -> ``_``).
# --------------------------------------------------------------------------
# Distribution name -> import name, where they differ.
DIST_TO_IMPORT = {
    "nvidia_cutlass_dsl": "cutlass", "flash_attn": "flash_attn", "flash_attention": "flash_attn",
    "flashinfer_python": "flashinfer", "flashinfer_cubin": "flashinfer", "flashinfer_jit_cache": "flashinfer",
    "sgl_kernel": "sgl_kernel", "deep_gemm": "deep_gemm", "deepgemm": "deep_gemm", "pytorch": "torch",
    "pytorch_triton": "triton", "triton": "triton", "nvidia_nccl_cu12": "nccl", "nvidia_nccl_cu13": "nccl",
    "vllm_flash_attn": "flash_attn", "torch_c_dlpack_ext": "tvm_ffi", "apache_tvm_ffi": "tvm_ffi",
    "nvidia_cuda_nvrtc_cu12": "nvrtc", "nvidia_cuda_nvrtc": "nvrtc", "bitsandbytes": "bitsandbytes",
    "xformers": "xformers", "transformers": "transformers", "jaxlib": "jax", "jax_cuda12_plugin": "jax",
    "jax_cuda13_plugin": "jax", "cupy_backends": "cupy", "cupy_cuda12x": "cupy", "cupy_cuda13x": "cupy", "mamba_ssm": "mamba_ssm", "causal_conv1d": "causal_conv1d",
}
# Packages worth naming even when written as a bare word ("Triton is not installed").
KNOWN_PACKAGES = frozenset({
    "torch", "triton", "flashinfer", "vllm", "sglang", "transformers", "cutlass", "flash_attn", "xformers",
    "deep_gemm", "deepep", "sgl_kernel", "vllm_ascend", "lmdeploy", "turbomind", "tvm_ffi", "aiter",
    "bitsandbytes", "mamba", "mamba_ssm", "exllamav2", "exllamav2_kernels", "amdsmi", "pynvml", "nvshmem",
    "mooncake", "ray", "jax", "jaxlib", "cupy", "tensorrt", "apex", "accelerate", "safetensors", "tokenizers", "numpy",
    "text_generation_server", "causal_conv1d", "flash_mla", "outlines", "xgrammar", "torchvision", "torchaudio",
})
TOOLS = ("nvcc", "ninja", "gcc", "g++", "clang", "clang++", "ptxas", "hipcc", "cmake", "nvlink", "fatbinary",
         "cc1plus", "nvdisasm", "cuobjdump", "ld", "c++", "make", "hipconfig")
BACKENDS = {
    "flashinfer": "flashinfer", "flash_attn": "flash_attn", "flash-attn": "flash_attn", "flashattention": "flash_attn",
    "fa2": "flash_attn", "fa3": "flash_attn", "fa4": "flash_attn", "flash_attn_2": "flash_attn",
    "xformers": "xformers", "triton_attn": "triton", "flex_attention": "flex_attention",
    "flexattention": "flex_attention", "torch_sdpa": "sdpa", "sdpa": "sdpa", "cutlass": "cutlass",
    "cute": "cutlass", "marlin": "marlin", "awq_marlin": "marlin", "deep_gemm": "deep_gemm", "aiter": "aiter",
    "trtllm": "trtllm", "fa_utils": "flash_attn", "cuda graph": "cuda_graph", "cudagraph": "cuda_graph",
    "cuda_graph": "cuda_graph", "acl graph": "cuda_graph", "torch.compile": "torch_compile", "inductor": "torch_compile",
}
ATTENTION_BACKENDS = frozenset({"flashinfer", "flash_attn", "xformers", "triton", "flex_attention", "sdpa", "trtllm",
                                "aiter"})
QUANT = ("awq", "gptq", "fp8", "nvfp4", "mxfp4", "fp4", "int4", "int8", "w8a8", "w4a16", "bitsandbytes", "gguf",
         "compressed-tensors", "compressed_tensors", "modelopt", "marlin", "bf16", "bfloat16", "float16", "fp16")
COLLECTIVES = {
    "allreduce": "all_reduce", "all_reduce": "all_reduce", "all-reduce": "all_reduce", "custom allreduce": "all_reduce",
    "all_gather": "all_gather", "allgather": "all_gather", "reduce_scatter": "reduce_scatter",
    "broadcast": "broadcast", "all_to_all": "all_to_all", "alltoall": "all_to_all", "nccl": "nccl", "rccl": "nccl",
    "nvshmem": "nvshmem", "gloo": "gloo", "ucx": "ucx", "bootstrap": "bootstrap", "p2p": "p2p",
    "placement group": "placement_group", "symm_mem": "symm_mem", "mooncake": "mooncake", "rdma": "rdma",
    "c10d": "c10d", "tcpstore": "c10d", "rendezvous": "c10d", "distributed_c10d": "c10d",
}
# NVIDIA GPU generations by SM version (CUDA's compute capabilities): a line naming sm_120 and a start-up
# that says "Blackwell" (or a failure about "this architecture" on a Blackwell host) are about one part.
ARCH_GENERATIONS = {"sm_70": "volta", "sm_72": "volta", "sm_75": "turing", "sm_80": "ampere", "sm_86": "ampere",
                    "sm_87": "ampere", "sm_89": "ada", "sm_90": "hopper", "sm_100": "blackwell", "sm_101": "blackwell",
                    "sm_103": "blackwell", "sm_110": "blackwell", "sm_120": "blackwell", "sm_121": "blackwell"}

# A failure about "this" GPU's architecture that names none ("Unsupported architecture", "no kernel image
# is available for execution on the device"): it is about the architecture the start-up stated.
UNNAMED_ARCH_FAILURE = _lazy(
    r"(?i)unsupported (?:gpu |cuda |device )?arch|arch(?:itecture)? (?:is )?not supported|no kernel image|"
    r"not supported on this (?:gpu|device|arch)")

# Dotted names and words that are everywhere and say nothing about a cause.
GENERIC = frozenset({
    "py", "so", "utils", "util", "layers", "models", "model", "core", "main", "init", "__init__", "base", "config",
    "srt", "managers", "engine", "v1", "worker", "executor", "model_executor", "python", "lib", "site_packages",
    "dist_packages", "src", "entrypoints", "common", "api", "server", "self", "os", "sys", "environ", "get",
    "json", "com", "org", "www", "github", "http", "https", "html", "md", "txt", "log", "cuda", "nn", "functional",
    "modules", "module", "ops", "_ops", "__main__", "cli", "distributed", "parallel_state", "platforms",
    "exc", "error", "errors", "runtime", "bfloat16", "float16", "float32", "float64", "half", "float8_e4m3fn",
    "float8_e5m2", "int8", "uint8", "int32", "int64", "dtype", "device", "tensor", "warnings", "warn", "logging", "asyncio", "concurrent", "futures",
    "multiprocessing", "process", "threading", "run", "builtins", "importlib", "contextlib", "typing",
})
# Environment variables that every CUDA error message names (boilerplate).
BOILERPLATE_ENV = frozenset({"CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "HIP_LAUNCH_BLOCKING",
                             "AMD_SERIALIZE_KERNEL", "TORCH_SHOW_CPP_STACKTRACES", "NCCL_DEBUG"})

# Which subjects and words a failure label is about (its topic).
LABEL_TOPICS: dict[str, tuple[frozenset[str], Any]] = {
    "env.module-missing": (frozenset({"pkg", "mod"}), _lazy(
        r"(?i)import|not installed|no module|not available|could not load|cannot load|plugin")),
    "env.library-missing": (frozenset({"lib", "pkg", "mod"}), _lazy(
        r"(?i)shared object|cannot open|\.so\b|not found|import|library|could not load|dlopen")),
    "env.abi-mismatch": (frozenset({"lib", "pkg", "mod", "ver"}), _lazy(
        r"(?i)undefined symbol|abi|import|version|built (?:with|against)|mismatch|incompatible|not compatible")),
    "env.gpu-arch-unsupported": (frozenset({"arch"}), _lazy(
        r"(?i)capabilit|sm_?\d|gfx|arch|processor|not compatible|not supported|unsupported|kernel image|"
        r"code object|bfloat16|ptx")),
    "env.driver-too-old": (frozenset({"lib"}), _lazy(
        # (the GPU's management library, which reads the driver: NVIDIA's NVML, AMD's amdsmi / rocm-smi)
        r"(?i)driver|platform|cuda version|runtime version|no gpu|device not found|nvml|amd_?smi|rocm[-_]?smi|"
        r"forward compat")),
    "toolchain.compiler-missing": (frozenset({"tool", "env"}), _lazy(
        r"(?i)compiler|nvcc|ninja|gcc|g\+\+|cuda_home|toolkit|not found|cxx|ptxas|hipcc")),
    "toolchain.compile-failed": (frozenset({"tool", "env", "arch", "backend"}), _lazy(
        r"(?i)compil|nvcc|ptxas|ninja|toolkit|jit|arch|capabilit|triton|llvm|inductor|fall(?:ing)? ?back|"
        r"cuda_home|cuda runtime")),  # a build reads CUDA_HOME and asks the runtime for the arch
    "gpu.out-of-memory": (frozenset({"qty"}), _lazy(
        r"(?i)memory|kv cache|gpu_memory_utilization|mem_fraction|GiB|\bGB\b|blocks?\b|max_model_len|max seq len|"
        r"retract|swap")),
    "gpu.illegal-access": (frozenset({"backend"}), _lazy(
        r"(?i)illegal|out of bounds|async|sync|index|overflow|divide by zero|invalid value|\bnan\b|\binf\b")),
    "gpu.cuda-graph-capture": (frozenset({"backend"}), _lazy(r"(?i)cuda ?graph|capture|graph")),
    "dist.nccl": (frozenset({"coll"}), _lazy(
        r"(?i)nccl|rccl|nvshmem|gloo|ucx|bootstrap|p2p|peer|socket|retry|rank|connection|all_?reduce|network")),
    "config.model-load": (frozenset({"model", "pkg", "quant"}), _lazy(
        r"(?i)model|architecture|transformers|version|config|checkpoint|tokenizer|quantiz|weights?|gated|hf_token|hugging ?face hub|repositor")),
    "config.invalid-argument": (frozenset({"dev", "count"}), _lazy(
        r"(?i)exceed|invalid|not supported|must be|gpu #|device|argument|\b(?:tp|dp|pp)[_ ]size|placement")),
    "net.port-in-use": (frozenset(), _lazy(r"(?i)port|address|bind|listen")),
    "host.out-of-memory": (frozenset({"qty"}), _lazy(r"(?i)swap|memory|\bram\b|cpu|host|pin_memory|shm")),
    "hang.timeout": (frozenset({"coll"}), _lazy(
        r"(?i)timeout|timed out|waiting|retry|health|heartbeat|stuck|\bhang(?:s|ing)?\b|\bhung\b|deadlock")),
}

# Wording that says memory falls short (any program: llama.cpp's "failed to fit params to free device
# memory", NIM's "not runnable due to low free GPU memory", "not enough memory", "insufficient VRAM"):
# a line about the memory topic as much as one that states a quantity.
MEMORY_SHORT_RE = _lazy(
    r"(?i)(?:fail(?:ed|s)? to fit|does(?:n't| not) fit|won't fit|not enough|insufficient|too (?:large|big) for|"
    r"low free|short of|(?:cannot|unable to|failed to) allocate)\b.{0,40}?\b(?:memory|VRAM|RAM)\b|"
    r"\b(?:memory|VRAM|RAM)\b.{0,30}?\b(?:not enough|insufficient|too (?:small|low)|exhausted|exceed(?:s|ed)?)\b")

# CUDA's error codes (the driver API's CUDA_ERROR_*, the runtime's cudaError*: cuda.h and
# driver_types.h of CUDA 11-13), what each proves when a program that went on printed it.
CUDA_ERROR_LABELS: tuple[tuple[Any, str], ...] = tuple((_lazy(rx), label) for rx, label in (
    (r"CUDA_ERROR_STREAM_CAPTURE_\w+|cudaErrorStreamCapture\w+|CUDA_ERROR_CAPTURED_EVENT|cudaErrorCapturedEvent",
     "gpu.cuda-graph-capture"),
    (r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation", "gpu.out-of-memory"),
    ((r"CUDA_ERROR_NO_BINARY_FOR_GPU|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|cudaErrorNoKernelImageForDevice|"
      r"cudaErrorUnsupportedPtxVersion"), "env.gpu-arch-unsupported"),
    # (not CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: NVIDIA's container entrypoint reports a forward
    # compatibility it tried and goes on with the host driver, which is new enough as often as not)
    ((r"CUDA_ERROR_(?:INSUFFICIENT_DRIVER|SYSTEM_DRIVER_MISMATCH|NO_DEVICE)|"
      r"cudaError(?:InsufficientDriver|SystemDriverMismatch|NoDevice)"), "env.driver-too-old"),
    (r"CUDA_ERROR_ILLEGAL_ADDRESS|CUDA_ERROR_MISALIGNED_ADDRESS|cudaErrorIllegalAddress|cudaErrorMisalignedAddress",
     "gpu.illegal-access"),
))


def cuda_error_label(text: str) -> str | None:
    """The label a CUDA error code on this line proves, or None."""
    if "CUDA_ERROR_" not in text and "cudaError" not in text:
        return None
    return next((label for rx, label in CUDA_ERROR_LABELS if rx.search(text)), None)


# Subject relations: one subsystem that programs name in many ways, so a line
# about one of its parts and a failure about another are about the same thing.
# (Built from what the programs print; each entry says which.)
FAMILIES: dict[str, Any] = {
    # NCCL/RCCL's network transport ("NET"): its plugins (IB verbs, sockets,
    # UCX, OFI/EFA, SHARP/CollNet -- "NET/Plugin: Loaded net plugin ...",
    # "NET/IB : Using [0]mlx5_0:1/RoCE", "via NET/UCX/0/GDRDMA"), GPUDirect RDMA
    # (NCCL registers GPU memory on the NIC through the plugin's regMr; UCX's
    # registration cache reports "rcache.c ... failed to insert region"), DMA-BUF
    # registration, and the variables that steer them (NCCL_NET_*, NCCL_IB_*,
    # NCCL_NET_GDR_LEVEL, NCCL_DMABUF_ENABLE, UCX_*). nccl 2.18-2.28, rccl 2.18.
    "net-transport": _lazy(
        r"(?i)\bNET/(?:IB|Socket|Plugin|UCX|OFI|AWS|GDR)\b|\bnet plugin|\bncclNet|\bncclCollNet|ucx_plugin|"
        r"\bUCX\b|\bUCX_[A-Z_]+|\bNCCL_(?:NET|IB|UCX|COLLNET|DMABUF|GDR)\w*|\bGDR(?:DMA|COPY)?\b|"
        r"GPU ?Direct ?RDMA|\bgdrcopy\b|\bnv_?peer_?mem\b|nvidia[_-]peermem|\bdma-?buf\b|\brcache\b|"
        r"\breg_?mr\b|\bibv_\w+|\bRoCE\b|\bmlx5\w*|\bbnxt_re\w*|\bhfi1\b|\befa\b|aws-ofi|\bOFI\b|\bSHARP\b|"
        r"lib(?:nccl|rccl)-net"),
    # The CUDA toolkit a JIT build runs: torch.utils.cpp_extension finds nvcc
    # under CUDA_HOME ("No CUDA runtime is found, using CUDA_HOME=...", then
    # "<CUDA_HOME>/bin/nvcc: not found"); ptxas/nvlink/fatbinary are its parts.
    # torch 2.x, triton 3.x, flashinfer JIT.
    "cuda-toolkit": _lazy(
        r"\bCUDA_(?:HOME|PATH|ROOT)\b|\bnvcc\b|\bptxas\b|\bnvlink\b|\bfatbinary\b|\bcuda toolkit\b|"
        r"No CUDA runtime is found|/cuda(?:-\d+(?:\.\d+)?)?/bin\b|"
        # DeepGEMM compiles every kernel with NVCC at run time and looks for the toolkit when it is
        # imported (deep_gemm/__init__.py, jit/compiler.py: CUDA_HOME, nvcc): its import or its build
        # failing is the toolkit missing as often as not (not any line about it: a skipped warm-up)
        r"\bdeep_?gemm\b.{0,60}?(?:\bfail(?:ed|s)? to (?:import|load|build|compile|initiali[sz]e)\b|ImportError|"
        r"\bcould not be (?:imported|loaded|built)\b|\bis not available\b)", re.I),
    # The driver under the CUDA runtime: what torch warns at initialisation
    # ("CUDA initialization: The NVIDIA driver on your system is too old",
    # "Unexpected error from cudaGetDeviceCount()"), cuInit/NVML errors, forward
    # compatibility ("Error 804"), and "No CUDA GPUs are available". torch 2.x, jaxlib 0.4+.
    "cuda-driver": _lazy(
        r"\bNVIDIA driver\b|\bdriver version\b|\bCUDA driver\b|\bcuInit\b|CUDA_ERROR_(?:NO_DEVICE|"
        r"INSUFFICIENT_DRIVER|COMPAT_NOT_SUPPORTED_ON_DEVICE|SYSTEM_DRIVER_MISMATCH)|cudaGetDeviceCount|\bNVML\b|"
        r"forward compatibility|no CUDA GPUs|Found no NVIDIA driver|libcuda\.so|unsupported display driver|"
        r"CUDA initialization", re.I),
    # A wait that ran out, however a program words it: Python's TimeoutError and asyncio's, "timed out",
    # a worker or heartbeat "timeout", gRPC's DEADLINE_EXCEEDED, a collective's watchdog timeout.
    "timeouts": _lazy(r"(?i)\btime(?:d)? ?out\b|\bTimeoutError\b|\bDEADLINE_EXCEEDED\b|\bdeadline exceeded\b"),
    # The CPU's instruction set: the extensions a build of ggml, llama.cpp, Ollama's runners, PyTorch's
    # CPU kernels or ONNX Runtime was compiled for (x86 AVX/AVX2/AVX-512/AVX-VNNI/AMX, SSE, FMA, F16C;
    # Arm NEON/SVE; "CPU does not have vector extensions", llama.cpp's "system_info: ... AVX2 = 0"), and
    # the signal a CPU raises on an instruction it lacks (SIGILL, the shell's "Illegal instruction (core
    # dumped)"). CUDA's "an illegal instruction was encountered" is a GPU kernel's, not this.
    "cpu-isa": _lazy(
        r"\bAVX(?:2|512\w*|[-_]?VNNI)?\b|\bSSE[234]?(?:\.\d)?\b|\bSSSE3\b|\bF16C\b|\bAMX\w*\b|\bNEON\b|\bSVE2?\b|"
        r"\bvector extensions?\b|\binstruction set\b|\bSIGILL\b|Illegal instruction \(core dumped\)|"
        # a CPU emulated in software implements part of the set: QEMU's user mode (jemalloc's "running under
        # QEMU", QEMU's own "qemu: uncaught target signal 4 (Illegal instruction)"), Apple's Rosetta
        r"(?i:\bqemu\b|\brosetta\b)"),
    # Access to the model hub a server fetches config, tokenizer and weights
    # from: its credentials (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, "huggingface-cli
    # login" / "hf auth login"), gated and missing repositories (GatedRepoError
    # "Cannot access gated repo", RepositoryNotFoundError), offline mode
    # (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, LocalEntryNotFoundError), HTTP
    # errors (HfHubHTTPError), a repository's file and API URLs, transformers'
    # "We couldn't connect to 'https://huggingface.co'". huggingface_hub
    # 0.2x-1.x, transformers 4.x. Not the hub in general (HF_HOME, downloads:
    # every start-up names them), nor its documentation pages, which error
    # messages of every kind point to.
    "model-hub-access": _lazy(
        r"\bHF_TOKEN\b|\bHUGGING_FACE_HUB_TOKEN\b|\bHF_HUB_OFFLINE\b|\bTRANSFORMERS_OFFLINE\b|\bHF token\b|"
        r"huggingface-cli login|\bhf auth login\b|\bgated (?:repo|model)s?\b|GatedRepoError|RepositoryNotFoundError|"
        r"LocalEntryNotFoundError|HfHubHTTPError|\bhuggingface\.co/(?:api/|[\w.-]+/[\w.-]+/resolve/)|"
        r"connect to '?https?://huggingface\.co", re.I),
}
# Wording a program prints when it goes on after an error: the line is not
# where the process died, so a failure later is what it warned of.
_GOES_ON = (r"(?i)\bfall(?:ing)? ?back\b|\bfell back\b|\bretrying\b|\bwill retry\b|\bcontinuing\b|\bproceeding\b|"
            r"\bignoring\b|\bskipping\b|\busing [\w .-]{1,40} instead\b")
SURVIVED_RE = _lazy(_GOES_ON)
# ... or goes on without a feature. Live, either is a degraded start, not a
# failure foretold (a precursor signature still speaks; classify still links
# the line if a failure follows).
DEGRADED_RE = _lazy(_GOES_ON + r"|\bwill not be (?:available|used|enabled)\b|\bwill be disabled\b")
# A default the user changed (NCCL's "X set by environment to Y", vLLM's
# "non-default args", "Overriding ..."): a deliberate change about the failing
# subsystem is a likely cause.
OVERRIDE_RE = _lazy(r"(?i)\bset by environment\b|\bnon-default args\b|\boverrid(?:e|es|ing|den)\b|"
                    r"\bset (?:by|from) (?:the )?user\b|\bforced? (?:by|via) (?:the )?(?:env|environment)")
