"""Early warnings that generalise: link what a log said earlier to the failure
it predicted, by what both lines are *about*.

Four mechanisms, all over typed events:

* **subjects** -- what a line is about, normalised: Python packages and
  modules, native libraries, tools, environment variables, GPU architectures
  (every spelling), device indices and counts, model types, quantisation
  methods, attention/kernel backends, collectives and quantities with units;
* **retrospective linking** (``classify``) -- every non-fatal warning-ish line
  before the failure is a candidate, scored by the subjects it shares with the
  failure (weighted by how rare each is in healthy start-ups), by the topic of
  the failure's label and by how unusual it is against the healthy baseline;
* **resource arithmetic** -- lines with numbers predict failures even at INFO
  level (weights above the memory budget, a KV-cache budget that is negative or
  near zero, a GPU index at or beyond the GPUs there are);
* **prospective warnings** (``watch``) -- a pure decision per line: precursor
  signature, or unusual against the baseline *and* about a failure topic.

Precursor signatures stay the strongest prior; they are no longer the only way
in. The healthy baseline (``data/healthy_baseline.json``) is built by
``python -m forensics.corpus.ew_baseline`` from the project's healthy corpora.
"""
from __future__ import annotations

import json
import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from forensics.events import model as K
from forensics.events.model import Event

BASELINE_PATH = Path(__file__).resolve().parent / "data" / "healthy_baseline.json"


class _lazy:
    """A regex compiled on first use: ``classify`` imports this module for
    every log, and only logs that failed need most of these patterns."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

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
        r"(?i)driver|platform|cuda version|runtime version|no gpu|device not found|nvml|forward compat")),
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
        r"(?i)model|architecture|transformers|version|config|checkpoint|tokenizer|quantiz|weights?")),
    "config.invalid-argument": (frozenset({"dev", "count"}), _lazy(
        r"(?i)exceed|invalid|not supported|must be|gpu #|device|argument|\b(?:tp|dp|pp)[_ ]size|placement")),
    "net.port-in-use": (frozenset(), _lazy(r"(?i)port|address|bind|listen")),
    "host.out-of-memory": (frozenset({"qty"}), _lazy(r"(?i)swap|memory|\bram\b|cpu|host|pin_memory|shm")),
    "hang.timeout": (frozenset({"coll"}), _lazy(r"(?i)timeout|timed out|waiting|retry|health|heartbeat|stuck")),
}

# --------------------------------------------------------------------------
# Subjects
# --------------------------------------------------------------------------
_DOTTED = _lazy(r"(?<![\w./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_QUOTED_MOD = _lazy(r"(?:module named|import name|from|import|cannot import|load(?:ing)?)\s+['\"`]?([A-Za-z_][\w.]*)")
_NOT_INSTALLED = _lazy(r"(?i)\b([A-Za-z_][\w.-]*)\s+(?:is\s+)?not\s+(?:installed|available|found)")
_PIP = _lazy(r"(?i)pip install (?:-U |--upgrade )?['\"`]?([A-Za-z][\w.-]*)")
_DIST_VER = _lazy(r"\b([A-Za-z][\w-]*)(?:==|>=|<=|~=)\s?v?\d")
_LIB = _lazy(r"\blib([A-Za-z][\w+-]*?)(?:[-_.]\d[\w.]*)?\.(?:so|a|dylib|dll)\b|(?<![\w-])-l([A-Za-z][\w+]*)\b")
_TOOL = _lazy(r"(?<![\w/+.-])(" + "|".join(re.escape(t) for t in TOOLS) + r")(?![\w+-])(?!\.\w)")
_ENV = _lazy(r"(?<![\w-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")
_ARCH_SM = _lazy(r"(?i)\b(?:sm|compute)_?(\d{2,3})([af]?)\b")
_ARCH_CC = _lazy(r"(?i)(?:compute capability|capability|cuda capability|\bcc)\s*(?:of|is|=|:|>=|<=|<|>|below|above)?\s*"
                      r"\(?(\d{1,2})(?:[.,]\s?(\d))?\)?")
_ARCH_GFX = _lazy(r"\b(gfx\d{2,4}[a-z]?)\b", re.I)
_DEV = _lazy(r"(?i)\b(?:gpu|cuda|device|gpu_id|cudadev|hip)\s*(?:#|:|=|\s)\s*(\d{1,3})\b")
_COUNT = _lazy(r"(?i)\b(tp|dp|pp|ep|tensor_parallel|data_parallel|pipeline_parallel|world|nranks|ngpus|"
                    r"num_gpus|n_gpus)(?:_size)?['\"]?\s*(?:=|:|\s)\s*(\d{1,4})\b")
_GPU_COUNT_WORDS = _lazy(r"(?i)\b(?:number of|num(?:ber)? of (?:required|available)|#)\s*(?:\w+\s)?(?:gpus|devices)\b|"
                              r"\bgpus? (?:available|visible|required)\b")
_MODEL = _lazy(r"(?i)model (?:type|architecture)[s]?\s*[`'\"]?([A-Za-z][\w.-]*)|\b([A-Z]\w+For(?:CausalLM|"
                    r"ConditionalGeneration|SequenceClassification|MaskedLM))\b|model_type['\"]?\s*[=:]\s*['\"]?(\w+)")
_QTY = _lazy(r"(-?\d+(?:\.\d+)?)\s?(TiB|GiB|MiB|KiB|TB|GB|MB|KB|bytes)\b")
_ADDR = _lazy(r"\b(\d{1,3}(?:\.\d{1,3}){3}|localhost):(\d{2,5})\b|\((\d{1,3}(?:\.\d{1,3}){3}|localhost),\s?"
                   r"(\d{2,5})\)")
_BIGNUM = _lazy(r"(?<![\w.:/-])(\d{7,})(?![\w.:/-])")  # byte counts and sizes printed raw
_CPP_OP = _lazy(r"\b(_?[A-Za-z]\w*)::(\w+)")
_WORD_SPLIT = _lazy(r"[A-Za-z_][\w]*")
_QUANT_RE = _lazy(r"(?i)(?<![\w-])(" + "|".join(re.escape(q) for q in QUANT) + r")(?![\w-])")
_BACKEND_RE = _lazy(r"(?i)(?<![\w-])(" + "|".join(re.escape(b) for b in sorted(BACKENDS, key=len, reverse=True))
                         + r")(?![\w-])")
_COLL_RE = _lazy(r"(?i)(?<![A-Za-z0-9-])(" + "|".join(re.escape(c) for c in sorted(COLLECTIVES, key=len, reverse=True))
                      + r")(?![\w-])")
_UNIT_GIB = {"TiB": 1024.0, "TB": 1000.0 / 1.073741824, "GiB": 1.0, "GB": 1.0 / 1.073741824, "MiB": 1 / 1024.0,
             "MB": 1 / 1073.741824, "KiB": 1 / 1048576.0, "KB": 1 / 1073741.824, "bytes": 1 / 1073741824.0}
_FILE_EXT = _lazy(r"\.(?:py|pyc|so|cc|cpp|cu|cuh|h|hpp|c|json|yaml|yml|txt|md|log|html|sh|jinja|safetensors|bin)$")


def _norm(name: str) -> str:
    return name.strip("'\"`()[],:;").replace("-", "_").lower()


def _add_module(out: set[str], dotted: str) -> None:
    """``cutlass.cute.experimental`` -> pkg:cutlass, mod:cute, mod:experimental;
    ``vllm._C`` -> pkg:vllm, mod:vllm._C, mod:_c."""
    if _FILE_EXT.search(dotted) or re.search(r"\.\d", dotted) or ".so" in dotted:
        return  # a file name or a version/host-like token, not a module path
    parts = [p for p in dotted.split(".") if p]
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return
    head = _norm(parts[0])
    if head in GENERIC or len(head) < 2:
        return
    out.add("pkg:" + DIST_TO_IMPORT.get(head, head))
    out.add("mod:" + ".".join(parts[:2]).lower())
    if any("attention" in p.lower() or "attn" in p.lower() for p in parts):
        out.add("backend:attention")
    for p in parts[1:3]:
        n = _norm(p)
        if n not in GENERIC and len(n) >= 2:
            out.add("mod:" + n)


def _package(out: set[str], name: str) -> None:
    n = _norm(name)
    if not n or n in GENERIC or len(n) < 2:
        return
    if "." in n:
        _add_module(out, name.strip("'\"`"))
        return
    out.add("pkg:" + DIST_TO_IMPORT.get(n, n))


def normalise_arch(major: str, minor: str | None = None, suffix: str = "") -> str:
    """sm_90 / 9.0 / (9, 0) / "compute capability 9.0" -> ``sm_90``; 12.0 -> ``sm_120``."""
    if minor is None:
        if len(major) >= 2:  # "90", "120", "75"
            return f"sm_{int(major)}{suffix.lower()}"
        minor = "0"
    return f"sm_{int(major)}{int(minor)}{suffix.lower()}"


_PATH = _lazy(r"(?:[A-Za-z]:)?(?:/[\w.\-+@~]+){2,}/?")
_REL_PY = _lazy(r"(?<![\w/.-])([A-Za-z_]\w*(?:/[A-Za-z_]\w*)+)\.py\b")  # torch/utils/cpp_extension.py
_PY_TAIL = _lazy(r"\.(?:py|pyc|abi3\.so|cpython[\w.-]*\.so|so)(?::\d+)?$")


def _path_subject(m: re.Match[str]) -> str:
    """A path says little, except the module it names inside site-packages,
    the library it names, or the tool it runs."""
    p = m.group(0)
    for anchor in ("site-packages/", "dist-packages/"):
        i = p.rfind(anchor)
        if i >= 0:
            return " " + _PY_TAIL.sub("", p[i + len(anchor):]).strip("/").replace("/", ".") + " "
    parts = p.rstrip("/").split("/")
    base = parts[-1]
    if base.startswith("lib") and ".so" in base or base in TOOLS:
        return " " + base + " "
    if re.search(r"\.py(?::\d+)?$", base):
        # a package outside site-packages (a source tree, a venv of one's own):
        # the identifiers that end the path name it, its head not private
        mods = [_PY_TAIL.sub("", base)]
        for d in reversed(parts[:-1]):
            if not d.isidentifier() or len(mods) >= 3 and not mods[0].startswith("_"):
                break
            mods.insert(0, d)
        while len(mods) > 1 and mods[0].startswith("_"):
            mods.pop(0)
        if len(mods) >= 2:
            return " " + ".".join(mods) + " "
    return " "


def subjects(text: str) -> frozenset[str]:
    """What a line is about, as normalised ``kind:value`` strings."""
    if not text:
        return frozenset()
    text = text[:1000]
    if "/" in text:
        text = _PATH.sub(_path_subject, text)
        text = _REL_PY.sub(lambda m: " " + m.group(1).replace("/", ".") + " ", text)
    out: set[str] = set()
    for m in _DOTTED.finditer(text):
        _add_module(out, m.group(1))
    for rx in (_QUOTED_MOD, _NOT_INSTALLED, _PIP, _DIST_VER):
        for m in rx.finditer(text):
            name = m.group(1)
            if rx is _QUOTED_MOD and "." not in name and _norm(name) not in KNOWN_PACKAGES and not name.startswith("_") \
                    and "_" not in name:
                continue  # "from the", "load model": only real package-looking names
            if rx is _NOT_INSTALLED and _norm(name) not in KNOWN_PACKAGES and "_" not in name and "." not in name:
                continue
            _package(out, name)
    low = text.lower()
    for w in _WORD_SPLIT.findall(low):
        if w in KNOWN_PACKAGES:
            out.add("pkg:" + DIST_TO_IMPORT.get(w, w))
    for m in _LIB.finditer(text):
        name = _norm(m.group(1) or m.group(2))
        if name:
            out.add("lib:" + name)
    for m in _TOOL.finditer(text):
        tool = m.group(1).lower()
        if tool in ("ld", "make", "c++") and not re.search(r"(?i)\b(?:ld ?:|ld returned|make\[|make ?:|c\+\+ ?:)",
                                                            text):
            continue  # short words: only when the tool itself speaks
        out.add("tool:" + tool)
    for m in _ENV.finditer(text):
        name = m.group(1)
        if name in BOILERPLATE_ENV or len(name) < 5:
            continue
        if "_" in name and any(c.isalpha() for c in name):
            out.add("env:" + name)
            fam = name.split("_", 1)[0].lower()
            if fam in ("nccl", "rccl", "nvshmem", "gloo", "ucx"):
                out.add("coll:nccl" if fam == "rccl" else "coll:" + fam)
            elif fam in ("vllm", "sglang", "torch", "cuda", "triton", "flashinfer"):
                out.add("envfam:" + fam)
    for m in _ARCH_SM.finditer(text):
        out.add("arch:" + normalise_arch(m.group(1), None, m.group(2)))
    for m in _ARCH_CC.finditer(text):
        major, minor = m.group(1), m.group(2)
        if minor is None and len(major) == 1:
            out.add("arch:" + normalise_arch(major, "0"))
        elif minor is not None:
            out.add("arch:" + normalise_arch(major, minor))
    for m in _ARCH_GFX.finditer(text):
        out.add("arch:" + m.group(1).lower())
    for m in _DEV.finditer(text):
        out.add("dev:" + m.group(1))
    if _GPU_COUNT_WORDS.search(text):
        out.add("count:gpus")
    for m in _COUNT.finditer(text):
        key = m.group(1).lower().replace("tensor_parallel", "tp").replace("data_parallel", "dp").replace(
            "pipeline_parallel", "pp").replace("nranks", "world").replace("num_gpus", "ngpus").replace("n_gpus", "ngpus")
        out.add(f"count:{key}={int(m.group(2))}")
    for m in _MODEL.finditer(text):
        name = next((g for g in m.groups() if g), None)
        if name and len(name) > 2:
            out.add("model:" + _norm(name))
    for m in _QUANT_RE.finditer(text):
        q = m.group(1).lower().replace("-", "_")
        out.add("quant:" + {"bfloat16": "bf16", "float16": "fp16"}.get(q, q))
    for m in _BACKEND_RE.finditer(text):
        b = BACKENDS[m.group(1).lower()]
        out.add("backend:" + b)
        if b in ATTENTION_BACKENDS:
            out.add("backend:attention")
    if "attention" in low or "_attn" in low or "attn_" in low:
        out.add("backend:attention")
    for m in _COLL_RE.finditer(text):
        out.add("coll:" + COLLECTIVES[m.group(1).lower()])
    for m in _CPP_OP.finditer(text):
        ns, op = _norm(m.group(1)), _norm(m.group(2))
        if ns not in GENERIC and ns not in ("std", "c10", "at", "torch"):
            out.add("mod:" + ns)
        if len(op) > 3 and op not in GENERIC:
            out.add("mod:" + op)
    for m in _ADDR.finditer(text):
        out.add(f"addr:{m.group(1) or m.group(3)}:{m.group(2) or m.group(4)}")
        out.add(f"port:{m.group(2) or m.group(4)}")
    in_bytes = "byte" in low
    for m in _BIGNUM.finditer(text):
        out.add("num:" + m.group(1))
        if in_bytes and int(m.group(1)) >= 1 << 20:
            out.add(f"qty:{int(m.group(1)) / (1 << 30):.2f}GiB")  # a byte count printed raw
    for m in _QTY.finditer(text):
        gib = float(m.group(1)) * _UNIT_GIB[m.group(2)]
        if m.group(2) == "bytes" and gib < 1e-3:
            continue
        out.add(f"qty:{gib:.2f}GiB")
    return frozenset(out)


def subject_value(s: str) -> str:
    return s.split(":", 1)[1]


def quantities_gib(text: str) -> list[float]:
    return [float(m.group(1)) * _UNIT_GIB[m.group(2)] for m in _QTY.finditer(text)]


# --------------------------------------------------------------------------
# Candidates: non-fatal lines that read as warnings (collected while the log
# streams, bounded; linked only when the incident failed).
# --------------------------------------------------------------------------
WARN_LEVELS = frozenset({"WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"})
# A level written into the text by loggers the envelope does not know (TGI's
# " WARN ", NCCL's "NCCL WARN", glog "W0412", "warning:", Python warnings).
_TEXT_LEVEL = re.compile(r"(?:^|[\s\]|:-])(?:WARN(?:ING)?|ERROR|CRITICAL|FATAL)(?=[\s:\]|-])|^[WE]\d{4} \d\d:|"
                         r"\b(?:User|Future|Deprecation|Runtime|Resource|Import)Warning\b|^\s*(?i:warning|error):")
# Wording that means "something is not as it should be" whatever the level.
CUE_RE = re.compile(
    r"(?i)warn|error|fail|fall(?:ing)? ?back|not installed|not (?:be )?compatible|incompatible|not set|disabled|"
    r"exceed|deprecat|could not|couldn't|cannot|can't|unable|retry|retrying|not supported|unsupported|not found|"
    r"not available|missing|mismatch|lower than|older than|newer than|too (?:old|new|small|large|low|high|many)|"
    r"insufficient|negative|set by environment|overrid|is not|was not|no platform|ignor|skipp|requested for|"
    r"does not support|only supported|below|requires?\b")
# The streaming check: plain substrings (C speed) that every CUE_RE / ARITH_RE
# match contains; the regexes confirm at link time.
CUE_WORDS = ("warn", "error", "fail", "fall", "not ", "incompatible", "disabled", "exceed", "deprecat", "could",
             "couldn't", "cannot", "can't", "unable", "retry", "unsupported", "missing", "mismatch", "lower than",
             "older than", "newer than", "too ", "insufficient", "negative", "set by environment", "overrid",
             "ignor", "skipp", "requested for", "does not", "only supported", "below", "require", "no platform")
ARITH_WORDS = ("took", "load weight end", "kv cache", "memory pool end", "avail", "blocks", "maximum concurrency",
               "max_total_num_tokens", "gpu #", "gpu_id=", "free memory")
# Numbers that resource arithmetic reads, whatever the level.
ARITH_RE = re.compile(
    r"(?i)(?:model loading took|loading model weights took|weights took|load weight end|kv cache memory|"
    r"kv cache is allocated|memory pool end|avail(?:able)? mem|# ?(?:gpu|cuda) blocks|gpu kv cache size|"
    r"maximum concurrency|max_total_num_tokens|starting at gpu #|gpu_id=|free memory on device)")
# Context facts (counts, budgets) that arithmetic needs; read from any line.
FACT_RE = re.compile(
    r"(?i)(?:gpu_memory_utilization|mem_fraction_static)['\"]?\s*[=:]\s*(0?\.\d+|1\.0)|"
    r"(?:tensor_parallel_size|tp_size)['\"]?\s*[=:]\s*(\d+)|CUDA_VISIBLE_DEVICES['\"]?\s*[=:]\s*['\"]?([\d,]+)|"
    r"total (?:gpu )?memory[^\d-]{0,20}(\d+(?:\.\d+)?)\s?(GiB|GB)|total capacity of (\d+(?:\.\d+)?)\s?(GiB|GB)|"
    r"Free memory on device \((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) GiB\)|\bnGpus:? (\d+)|"
    r"(?:data_parallel_size|dp_size)['\"]?\s*[=:]\s*(\d+)")
_FACT_HINT = ("utilization", "mem_fraction", "tp_size", "tensor_parallel", "CUDA_VISIBLE", "total", "nGpus",
              "Free memory", "dp_size", "data_parallel")
_NOISE = re.compile(r"^\W*$|\d+%\|[^|]*\|\s*\d+/\d+|\bit/s\]|s/it\]|[█▏▎▍▌▋▊▉]{2,}|^\s*\^+\s*$|^\s*warnings\.warn\(")
_FAST_KEY = re.compile(r"\d+")  # the streaming dedupe key: digits masked (template() runs only at link time)
MAX_TEMPLATES = 400  # distinct templates kept per incident (start-up first)
PER_TEMPLATE = 4  # occurrences kept per template naming a GPU index (DP0..DP3 start at different GPUs)
RECENT = 128  # the latest candidates, whatever the cap
MAX_HANDLED = 16  # distinct handled tracebacks considered per failure


def text_level(ev: Event) -> str | None:
    """The level an event carries, from its prefix or, failing that, its text
    (TGI's `` WARN ``, ``NCCL WARN``, glog ``W0412``, ``warning:``, Python warnings)."""
    lvl = (ev.level or "").upper()
    if lvl in ("ERROR", "CRITICAL", "FATAL"):
        return "ERROR"
    if lvl in ("WARNING", "WARN"):
        return "WARNING"
    m = _TEXT_LEVEL.search(ev.text[:160])
    if m is None:
        return lvl or None
    tok = m.group(0).strip(" :]|-\t").upper()
    if tok.startswith(("ERROR", "CRITICAL", "FATAL")) or re.match(r"E\d{4}", tok):
        return "ERROR"
    return "WARNING"


_KV_PAIR = re.compile(r"\w['\"]?\s?(?:=|: )")


def _is_config_dump(text: str) -> bool:
    """``server_args=ServerArgs(...)``, ``non-default args: {...}``, engine
    config lines: facts for arithmetic, not warnings."""
    return len(text) > 300 and len(_KV_PAIR.findall(text[:3000])) >= 10


_ALNUM = re.compile(r"[^\W_]")
_NOISE_HINTS = ("|", "it/s", "s/it", "█", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "^", "warnings.warn(")


def is_noise(text: str) -> bool:
    """Blank lines, progress bars, caret underlines: never a warning."""
    stripped = text.strip()
    if not stripped:
        return True
    if any(map(text.__contains__, _NOISE_HINTS)) or not _ALNUM.search(stripped[:40]):
        return bool(_NOISE.search(text))  # looks like a bar or punctuation only: let the pattern decide
    return False


@dataclass
class Candidate:
    event: Event
    level: str | None
    count: int = 1


@dataclass
class Notes:
    """What an incident keeps for early warnings (bounded)."""

    templates: OrderedDict = field(default_factory=OrderedDict)  # template -> list[Candidate]
    recent: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    failure: tuple | None = None  # (label, fail_line, fail_ts, evidence) of the last link(), for relink()

    def candidates(self) -> Iterator[Candidate]:
        seen: set[int] = set()
        for cands in self.templates.values():
            for c in cands:
                seen.add(id(c))
                yield c
        for c in self.recent:
            if id(c) not in seen:
                yield c


def template(text: str) -> str:
    """The masked form of a line (numbers, paths, versions, hex -> tokens)."""
    from forensics.diagnosis.features import mask

    return mask(text[:240]).lower()


_COARSE = _lazy(r"['\"`][^'\"`]{1,120}['\"`]|\b[A-Za-z_]\w*(?:\.\w+)+\b|\b\w*\d\w*\b")


def coarse_template(text: str) -> str:
    """The shape of a line: also quoted names and dotted names masked, so the
    same message about another model or module is the same shape."""
    words = [w for w in _COARSE.sub(" q ", template(text)).replace("[", " ").replace("]", " ").split()
             if w not in _MASK_TOKENS and any(c.isalpha() for c in w)]
    return " ".join(words[:10])


_MASK_TOKENS = frozenset({"n", "path", "hex", "ver", "size", "smarch", "q", "(", ")", ":", "-", "info", "warning",
                          "warn", "error", "debug"})


def collect(inc: Any, ev: Event) -> None:
    """The streaming hook: keep ``ev`` on the incident when it may be an early
    warning, and remember the facts arithmetic needs. Cheap on the hot path:
    most lines fail the first checks."""
    kind = ev.kind
    marker = kind == K.PHASE_MARKER
    if kind not in (K.LOG, K.MESSAGE, K.PACKAGE_WALK_WARNING) and not marker:
        return
    text = ev.text
    notes = inc.ew_notes
    if notes is None:
        notes = inc.ew_notes = Notes()
    if any(map(text.__contains__, _FACT_HINT)):  # map over a bound method: no generator frame per line
        _read_facts(notes.facts, text)
    lvl = ev.level
    head = text[:400]  # what a line is about is said early; long lines (request dumps) cost no more
    if marker:
        # start-up progress lines (server args, weights loaded): only their numbers matter
        low = head.lower()
        if not any(map(low.__contains__, ARITH_WORDS)) or not ARITH_RE.search(head):
            return
        level: str | None = lvl
    elif lvl is not None and lvl not in ("INFO", "DEBUG") and lvl.upper() in WARN_LEVELS:
        level = "WARNING" if lvl.upper() in ("WARNING", "WARN") else "ERROR"
    elif kind == K.PACKAGE_WALK_WARNING:
        level = "WARNING"
    else:
        low = head.lower()
        if not any(map(low.__contains__, CUE_WORDS)) and not any(map(low.__contains__, ARITH_WORDS)) \
                and not _TEXT_LEVEL.search(text[:160]):
            return
        level = text_level(ev)
    if is_noise(head) or _is_config_dump(text):
        return
    key = _FAST_KEY.sub("N", text[:160])
    cands = notes.templates.get(key)
    if cands is not None:
        if len(cands) < PER_TEMPLATE and ("GPU #" in text or "gpu_id=" in text or "cuda:" in text) \
                and not any(c.event.text == text for c in cands):
            cands.append(Candidate(ev, level))  # the same line about another GPU index: arithmetic may need it
        else:
            cands[0].count += 1
        return
    cand = Candidate(ev, level)
    if len(notes.templates) < MAX_TEMPLATES:
        notes.templates[key] = [cand]
    else:
        notes.recent.append(cand)
        if len(notes.recent) > RECENT:
            del notes.recent[: len(notes.recent) - RECENT]


def _read_facts(facts: dict[str, Any], text: str) -> None:
    for m in FACT_RE.finditer(text):
        g = m.groups()
        if g[0]:
            facts["mem_fraction"] = float(g[0])
        elif g[1]:
            facts["tp"] = int(g[1])
        elif g[2]:
            facts["visible"] = len([x for x in g[2].split(",") if x.strip()])
        elif g[3]:
            facts["total_gib"] = float(g[3]) * _UNIT_GIB[g[4]]
        elif g[5]:
            facts["total_gib"] = float(g[5]) * _UNIT_GIB[g[6]]
        elif g[7]:
            facts["free_gib"], facts["total_gib"] = float(g[7]), float(g[8])
        elif g[9]:
            facts["visible"] = max(facts.get("visible", 0), int(g[9]))
        elif g[10]:
            facts["dp"] = int(g[10])


# --------------------------------------------------------------------------
# The healthy baseline (data, built from the project's healthy corpora)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Baseline:
    templates: frozenset[str]
    by_server: dict[str, frozenset[str]]
    df: dict[str, int]
    n_logs: int
    shapes: frozenset[str] = frozenset()

    def familiar(self, text: str) -> bool:
        """A healthy start-up printed a line of this shape (any server)."""
        return coarse_template(text) in self.shapes

    def usual(self, template: str, server: str | None = None) -> bool:
        if server and template in self.by_server.get(server, frozenset()):
            return True
        return template in self.templates

    def rarity(self, subject: str) -> float:
        """1.0 for a subject no healthy start-up mentions, towards 0 for one they all do."""
        if self.n_logs <= 0:
            return 1.0
        df = self.df.get(subject_value(subject), 0)
        return round(math.log1p(self.n_logs / (1.0 + df)) / math.log1p(self.n_logs), 4)


@lru_cache(maxsize=1)
def baseline(path: str | None = None) -> Baseline:
    p = Path(path) if path else BASELINE_PATH
    if not p.exists():
        return Baseline(frozenset(), {}, {}, 0)
    data = json.loads(p.read_text(encoding="utf-8"))
    by_server = {k: frozenset(v) for k, v in data.get("templates_by_server", {}).items()}
    allt = frozenset(t for v in by_server.values() for t in v)
    return Baseline(allt, by_server, dict(data.get("subject_df", {})), int(data.get("n_logs", 0)),
                    frozenset(data.get("shapes", ())))


# --------------------------------------------------------------------------
# Resource arithmetic
# --------------------------------------------------------------------------
_WEIGHTS = _lazy(r"(?i)(?:model loading took|loading model weights took|weights took|mem usage=)\s*"
                      r"(-?\d+(?:\.\d+)?)\s?(GiB|GB)")
_LEFT = _lazy(r"(?i)(?:available kv cache memory|kv cache memory|avail(?:able)? mem(?:ory)?)\s*[=:]?\s*"
                   r"(-?\d+(?:\.\d+)?)\s?(GiB|GB)")
_BLOCKS = _lazy(r"(?i)# ?(?:gpu|cuda) blocks:\s*(-?\d+)|gpu kv cache size:\s*(-?[\d,]+) tokens|"
                     r"maximum concurrency for [\d,]+ tokens per request:\s*(\d+(?:\.\d+)?)x|max_total_num_tokens=(-?\d+)")
_START_GPU = _lazy(r"(?i)(?:starting at gpu #|gpu_id=|cuda:|gpu #)(\d+)")


def arithmetic(text: str, facts: dict[str, Any], failure_text: str = "") -> str | None:
    """Why the numbers on this line predict a failure, or None."""
    ffacts: dict[str, Any] = {}
    _read_facts(ffacts, failure_text)
    total = facts.get("total_gib") or ffacts.get("total_gib")
    frac = facts.get("mem_fraction")
    m = _WEIGHTS.search(text)
    if m:
        w = float(m.group(1)) * _UNIT_GIB[m.group(2)]
        if total and frac and w > frac * total:
            return (f"weights take {w:.2f} GiB, above the memory budget {frac:g} x {total:.2f} GiB = "
                    f"{frac * total:.2f} GiB")
        if total and w > 0.9 * total:
            return f"weights take {w:.2f} GiB of {total:.2f} GiB on the GPU"
    m = _LEFT.search(text)
    if m:
        left = float(m.group(1)) * _UNIT_GIB[m.group(2)]
        if left <= 0:
            return f"the memory left is {left:.2f} GiB (negative or zero)"
        if "kv cache" in m.group(0).lower() and (left < 0.5 or (total and left < 0.02 * total)):
            # vLLM's KV-cache budget near zero; SGLang's "avail mem" after capture is small in healthy runs too
            return f"only {left:.2f} GiB left for the KV cache" + (f" of {total:.2f} GiB" if total else "")
    m = _BLOCKS.search(text)
    if m:
        vals = [g for g in m.groups() if g]
        v = float(vals[0].replace(",", "")) if vals else 1.0
        if not m.group(3) and v <= 0:  # (a concurrency below 1x still serves shorter requests)
            return f"the KV-cache budget is {vals[0]} (none left for a request)"
    visible = facts.get("visible")
    tp = facts.get("tp")
    for m in _START_GPU.finditer(text):
        idx = int(m.group(1))
        if visible is not None and idx >= visible:
            return f"GPU index {idx} is at or beyond the {visible} GPUs visible"
        if visible is None and tp and facts.get("dp") and tp * facts["dp"] > idx >= tp and \
                re.search(r"(?i)invalid device ordinal|device=\d+ .*out of range|no cuda gpus", failure_text):
            return f"GPU index {idx} with {tp} GPUs per replica, and the failure is an invalid device ordinal"
        if visible is None and idx > 0 and re.search(r"(?i)invalid device ordinal", failure_text):
            return f"GPU index {idx}, and the failure is an invalid device ordinal"
    return None


# --------------------------------------------------------------------------
# Linking (classify)
# --------------------------------------------------------------------------
KIND_WEIGHT = {"addr": 1.0, "port": 0.6, "num": 1.0, "pkg": 1.0, "mod": 1.0, "lib": 1.0, "tool": 1.0, "env": 1.0, "arch": 1.0, "model": 1.0, "qty": 0.9,
               "dev": 0.6, "count": 0.6, "quant": 0.6, "backend": 0.7, "coll": 0.5, "envfam": 0.3, "ver": 0.5}
KIND_WORD = {"addr": "address", "port": "port", "num": "number", "pkg": "package", "mod": "module", "lib": "library", "tool": "tool", "env": "environment variable",
             "arch": "GPU architecture", "model": "model type", "qty": "quantity", "dev": "GPU", "count": "count",
             "quant": "quantisation", "backend": "backend", "coll": "collective", "envfam": "settings"}
LIST_THRESHOLD = 1.7
MEMORY_LABELS = frozenset({"gpu.out-of-memory", "host.out-of-memory"})
STRONG = 5.0
MAX_LISTED = 3
MAX_STRONG = 6
FEW = 2  # this many distinct warnings before a failure or fewer: each is worth reading


@dataclass
class Failure:
    """What a failure is about: its label, line, time and text."""

    label: str | None
    line: int
    ts: Any
    text: str
    subjects: frozenset[str]
    rivals: tuple[str, ...] = ()  # candidate labels, when the label is unknown


def failure_context(inc: Any, label: str | None, fail_line: int, fail_ts: Any,
                    evidence: Iterable[dict[str, Any]]) -> Failure:
    """The failure's text and subjects: its evidence lines, the exception chain
    of the traceback that holds them, and the modules of its innermost frames."""
    texts = [str(e.get("text", "")) for e in evidence]
    lines = {int(e["line"]) for e in evidence if e.get("line") is not None}
    subs: set[str] = set()
    for ev, _phase, _after in getattr(inc, "tracebacks", ()):
        lo, hi = ev.line, ev.end_line or ev.line
        if not any(lo <= ln <= hi for ln in lines) and lo != fail_line:
            continue
        for exc in ev.data.get("chain") or ():
            texts.append(exc.rendered[:1500])
            for f in list(exc.frames)[-3:]:
                _add_module(subs, f.module)
        for f in list(ev.data.get("frames") or ())[-3:]:
            _add_module(subs, f.module)
    text = "\n".join(texts)
    subs |= subjects(text)
    subs |= {x for x in subjects(" ".join(subject_value(m) for m in subs if m.startswith("mod:")))
             if x.startswith(("coll:", "backend:"))}  # distributed_c10d -> c10d, ..._attention -> attention
    return Failure(label, fail_line, fail_ts, text, frozenset(subs))


_CALL_SITE = _lazy(r"[\w.-]+\.(?:py|cc|cpp|cu|h|c):\d+\]")


def _call_site(ev: Event) -> str | None:
    if ev.logger and ":" in ev.logger:
        return ev.logger
    m = _CALL_SITE.search(ev.text[:200])
    return m.group(0) if m else None


_TEXT_STAMP = _lazy(r"\b[WEIF]\d{4} \d\d:\d\d:\d\d\.\d+")


def record_key(ev: Event) -> tuple | None:
    """One logging call printed many lines (a compiler dump through glog, a
    multi-line vLLM error): the same call site at the same time. None when the
    line names no call site."""
    site = _call_site(ev)
    if site is None:
        return None
    stamp = _TEXT_STAMP.search(ev.text[:80])
    return (site, ev.ts, stamp.group(0) if stamp else None, ev.pid, ev.rank, ev.level)


def _handled_tracebacks(inc: Any, fail: Failure) -> Iterator[Candidate]:
    """Tracebacks before the failure that the process survived: warnings too
    (one per distinct message, the latest few: a serving log can hold dozens
    of request errors)."""
    latest: dict[str, tuple[Event, Any]] = {}
    for ev, _phase, _after in getattr(inc, "tracebacks", ()):
        end = ev.end_line or ev.line
        if end >= fail.line or ev.line == fail.line:
            continue
        chain = ev.data.get("chain") or ()
        if not chain:
            continue
        key = _FAST_KEY.sub("N", chain[-1].rendered[:160])
        latest.pop(key, None)
        latest[key] = (ev, chain[-1])
    for ev, exc in list(latest.values())[-MAX_HANDLED:]:
        view = Event(K.LOG, exc.line or ev.line, exc.rendered[:600], ev.ts, ev.host, ev.ident, ev.pid, ev.rank,
                     ev.level, ev.logger)
        yield Candidate(view, "TRACEBACK")


def _topic(label: str | None, subs: frozenset[str], text: str, rivals: tuple[str, ...] = ()) -> float:
    """How much a line is about the failure's label (or, when the label is
    unknown, about its candidate labels, at a discount)."""
    if (not label or label == "unknown") and rivals:
        return 0.7 * max(_topic(r, subs, text) for r in rivals)
    if not label or label not in LABEL_TOPICS:
        return 0.0
    if rivals:  # an uncertain label: its rivals' topics count half
        return max(_topic(label, subs, text), 0.5 * max(_topic(r, subs, text) for r in rivals if r != label)
                   if any(r != label for r in rivals) else 0.0)
    kinds, rx = LABEL_TOPICS[label]
    score = 0.0
    if any(s.split(":", 1)[0] in kinds for s in subs):
        score += 0.6
    if rx.search(text):
        score += 0.4
    return score


def _shared(fail: Failure, subs: frozenset[str], base: Baseline) -> tuple[float, list[str]]:
    fvals = {}
    for s in fail.subjects:
        fvals.setdefault(subject_value(s), s)
    scored = []
    for s in subs:
        v = subject_value(s)
        if v in fvals and v not in GENERIC:
            kind = s.split(":", 1)[0]
            w = KIND_WEIGHT.get(kind, 0.5) * base.rarity(s)
            scored.append((w, s))
    fq = [_qty_value(s) for s in fail.subjects if s.startswith("qty:")]
    for s in subs:
        if s.startswith("qty:") and subject_value(s) not in fvals:
            q = _qty_value(s)
            if q >= 0.1 and any(abs(q - f) <= 0.01 * max(q, f) for f in fq):
                scored.append((KIND_WEIGHT["qty"] * 0.9, s))  # the same amount, rounded differently
    scored.sort(reverse=True)
    best = scored[:2]
    total = sum(w for w, _ in best)
    names = [s for _, s in scored[:3]]
    if not scored:
        # Different values of the same measure: another architecture, GPU
        # index or amount than the failure names is still about the same thing.
        fkinds = {s.split(":", 1)[0] for s in fail.subjects}
        for kind in RELATED_KINDS:
            if kind in fkinds and any(s.startswith(kind + ":") for s in subs):
                total += 0.35
                names.append(f"{kind}~")
    return total, names


RELATED_KINDS = ("arch", "dev", "qty", "count")


def _qty_value(subject: str) -> float:
    try:
        return float(subject_value(subject)[:-3])
    except ValueError:
        return -1.0


def _why_shared(shared: list[str]) -> str:
    related = [s[:-1] for s in shared if s.endswith("~")]
    shared = [s for s in shared if not s.endswith("~")]
    out = [f"also about the {KIND_WORD.get(k, k)}, like the failure" for k in related]
    by_kind: dict[str, list[str]] = {}
    for s in shared:
        kind, val = s.split(":", 1)
        by_kind.setdefault(KIND_WORD.get(kind, kind), []).append(val)
    order = ["package", "library", "tool", "environment variable", "GPU architecture", "model type", "quantity",
             "GPU", "module"]
    kinds = sorted(by_kind, key=lambda k: order.index(k) if k in order else len(order))[:2]
    return "; ".join([f"same {k} as the failure: {', '.join(dict.fromkeys(by_kind[k]))}" for k in kinds] + out)


SEVERITY = {"ERROR": 0.5, "TRACEBACK": 0.4, "WARNING": 0.3, "INFO": 0.1, None: 0.1, "DEBUG": 0.0}


def score_candidate(cand: Candidate, fail: Failure, base: Baseline, facts: dict[str, Any],
                    server: str | None = None, foretold: bool = False) -> tuple[float, list[str], frozenset[str]]:
    """(score, reasons, subjects) of one candidate against one failure.
    ``foretold``: a precursor signature names the line and predicts this
    label -- prior knowledge that outweighs healthy runs printing it too."""
    text = cand.event.text
    subs = subjects(text)
    shared_w, shared = _shared(fail, subs, base)
    topic = _topic(fail.label, subs, text, fail.rivals)
    usual = base.usual(template(text), server)
    arith = arithmetic(text, facts, fail.text) if ARITH_RE.search(text) or _START_GPU.search(text) else None
    if arith is None and fail.label in MEMORY_LABELS and ARITH_RE.search(text) and quantities_gib(text):
        reasons_extra = ["memory figure before a memory failure"]
    else:
        reasons_extra = []
    cue = CUE_RE.search(text) is not None
    # A budget line (weights, KV cache, free memory) matters to a memory failure or when its numbers trip.
    resource = ARITH_RE.search(text) is not None and (arith is not None or fail.label in MEMORY_LABELS or any(
        r in MEMORY_LABELS for r in fail.rivals))
    level = cand.level if cand.level is not None or not cue else "WARNING"  # no level, but reads as trouble
    score = 2.0 * shared_w + 1.0 * topic + (0.0 if usual else 0.7) + SEVERITY.get(level, 0.1)
    if not cue and not resource:
        score -= 0.8  # an INFO line with no trouble wording and no resource numbers
    if usual and shared_w < 0.8 and not (resource and topic >= 0.6) and not foretold:
        score -= 1.5  # healthy start-ups print it: needs strong subject evidence (budget lines excepted)
    reasons = []
    if shared:
        reasons.append(_why_shared(shared))
    if arith:
        score += 2.5
        reasons.append(arith)
    reasons += reasons_extra
    if topic >= 0.6 and not shared and not reasons_extra and fail.label and fail.label != "unknown":
        reasons.append(f"about the topic of {fail.label}")
    elif topic >= 0.4 and not shared and not reasons_extra and fail.rivals:
        reasons.append(f"about the topic of {' or '.join(fail.rivals[:2])}")
    if not usual and not reasons:
        reasons.append("not printed by healthy start-ups")
    return round(score, 3), reasons, subs


def link(inc: Any, label: str | None, fail_line: int, fail_ts: Any, evidence: Iterable[dict[str, Any]],
         use_signatures: bool = True, base: Baseline | None = None,
         prior: list[dict[str, Any]] | None = None,
         rivals: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The early warnings of a failed incident, in line order: the ~3
    strongest, more only when they are strong. ``prior``: warnings the
    diagnosis already named (kept, completed with the same fields).
    When the cause was only logged as a warning and the process died at a
    later ``fatal`` line, that line is the failure and the warning a candidate."""
    base = base or baseline()
    evidence = list(evidence)
    fatal = [e for e in evidence if e.get("role") == "fatal" and e.get("line") is not None]
    if fatal:
        fail_line = max(fail_line, max(int(e["line"]) for e in fatal))
        evidence = [e for e in evidence if e.get("role") == "fatal"] + [
            e for e in evidence if e.get("role") != "fatal" and (e.get("line") or 0) >= fail_line]
    fail = failure_context(inc, label, fail_line, fail_ts, evidence)
    fail.rivals = tuple(c["label"] for c in rivals if c.get("label") not in (None, "unknown"))[:3]
    # The evidence lines are the failure itself, except a supporting one that a
    # precursor signature also names (it warned before it became evidence).
    precursor_lines = {h.line for h in getattr(inc, "precursor_hits", ())}
    ev_lines = {e.get("line") for e in evidence if e.get("line") not in precursor_lines
                or e.get("role") != "supporting"}
    ev_lines |= {h.line for h in getattr(inc, "wrapper_hits", ())}  # "EngineCore failed to start": the failure speaking
    notes: Notes | None = getattr(inc, "ew_notes", None)
    if notes is not None:
        notes.failure = (label, fail_line, fail_ts, evidence, list(rivals))
    facts = dict(notes.facts) if notes is not None else {}
    server = getattr(inc, "server", None)
    sig_by_line: dict[int, Any] = {}
    if use_signatures:
        for h in getattr(inc, "precursor_hits", ()):
            if h.line < fail_line and h.line not in sig_by_line:
                sig_by_line[h.line] = h
    scored: dict[int, dict[str, Any]] = {}
    seen_text: dict[str, int] = {}

    def consider(cand: Candidate) -> None:
        ev = cand.event
        if ev.line >= fail_line or ev.line in ev_lines or is_noise(ev.text):
            return
        text = ev.text.strip()[:300]
        key = text if _START_GPU.search(text) else _FAST_KEY.sub("N", text)  # GPU indices matter to arithmetic
        if key in seen_text:
            scored[seen_text[key]]["count"] += cand.count
            return
        hit = sig_by_line.pop(ev.line, None)
        foretold = hit is not None and label in hit.signature.predicts
        s, reasons, subs = score_candidate(cand, fail, base, facts, server, foretold)
        sig = None
        predicts: list[str] = []
        if hit is not None:
            sig = hit.signature.id
            predicts = list(hit.signature.predicts)
            if label in hit.signature.predicts:
                sg = hit.signature
                firm = sg.strength == "strong" and sg.status != "experimental" and sg.priority >= 40
                s += 5.0 if firm else 3.0  # a catch-all precursor (any NCCL WARN) is a weaker prior
                reasons.insert(0, f"precursor {sig} predicts {label}")
            else:
                s += 0.5
        rec = {"line": ev.line, "text": ev.text if len(ev.text) <= 600 else ev.text[:599] + "…",
               "why": "; ".join(reasons) or "reads as a warning", "subjects": sorted(subs)[:12],
               "score": round(s, 2), "lead_seconds": _lead(fail_ts, ev.ts), "signature": sig, "count": cand.count}
        if predicts:
            rec["predicts"] = predicts
        rec["_level"] = cand.level
        scored[ev.line] = rec
        seen_text[key] = ev.line

    if notes is not None:
        records: set[tuple] = set()
        for cand in sorted(notes.candidates(), key=lambda c: c.event.line):
            key = record_key(cand.event)
            if key is not None and (key[1] is not None or key[2] is not None):
                if key in records:
                    continue  # a multi-line message logged line by line: its first line speaks for it
                records.add(key)
            consider(cand)
    for cand in _handled_tracebacks(inc, fail):
        consider(cand)
    seen_sigs: set[str] = set()
    for line, hit in sorted(sig_by_line.items()):  # precursor lines the collector did not keep: once per signature
        if hit.signature.id in seen_sigs:
            continue
        seen_sigs.add(hit.signature.id)
        consider(Candidate(Event(K.LOG, hit.line, hit.text, hit.event.ts, level=hit.event.level), text_level(hit.event)))
    few = {template(w["text"]) for w in scored.values() if w.get("_level") in ("WARNING", "ERROR", "TRACEBACK")}
    if 0 < len(few) <= FEW:
        # A short excerpt with one or two warnings before the failure: what a
        # person reads first, so they need less to be listed.
        for w in scored.values():
            w["score"] = round(w["score"] + 0.4, 2)
            if w["why"] in ("reads as a warning", "not printed by healthy start-ups"):
                w["why"] = "one of the few warnings before the failure"
    ranked = []
    by_template: dict[str, dict[str, Any]] = {}
    for w in sorted(scored.values(), key=lambda w: (-w["score"], w["line"])):
        t = template(w["text"])
        if t in by_template:  # the same message again (other numbers, ranks): the strongest one speaks
            by_template[t]["count"] += w["count"]
            continue
        by_template[t] = w
        ranked.append(w)
    out = [w for w in ranked if w["score"] >= LIST_THRESHOLD][:MAX_LISTED]
    out += [w for w in ranked[MAX_LISTED:MAX_STRONG] if w["score"] >= STRONG and w not in out]
    for w in scored.values():
        w.pop("_level", None)
    lines = {w["line"] for w in out}
    for p in prior or ():
        if p["line"] in lines:
            continue
        rec = dict(p)
        known = scored.get(p["line"])
        if known:
            why = known["why"]
        elif p.get("learned"):
            why = f"the corpus shows this warning before {label} (lift {p.get('lift')})"
        else:
            why = f"precursor {p['signature']}" if p.get("signature") else "logged as the cause"
        rec.setdefault("why", why)
        rec.setdefault("subjects", sorted(subjects(p.get("text", "")))[:12])
        rec.setdefault("score", known["score"] if known else STRONG)
        rec.setdefault("signature", None)
        rec.setdefault("lead_seconds", None)
        out.append(rec)
    return sorted(out, key=lambda w: w["line"])


def relink(inc: Any, use_signatures: bool = False) -> list[dict[str, Any]] | None:
    """``link`` again for the failure last linked on ``inc`` (``forensics eval``
    scores linking without precursor signatures this way); None if none was."""
    notes: Notes | None = getattr(inc, "ew_notes", None)
    if notes is None or notes.failure is None:
        return None
    label, fail_line, fail_ts, evidence, rivals = notes.failure
    return link(inc, label, fail_line, fail_ts, evidence, use_signatures=use_signatures, rivals=rivals)
    # (``prior`` is left out on purpose: it holds what signatures decided.)


def _lead(fail_ts: Any, ts: Any) -> float | None:
    if fail_ts is None or ts is None:
        return None
    return round((fail_ts - ts).total_seconds(), 3)


# --------------------------------------------------------------------------
# Prospective warnings (watch)
# --------------------------------------------------------------------------
# Wording that says a failure will follow, not merely that something is off.
LIVE_CUE = _lazy(
    r"(?i)not compatible with|incompatible|no kernel image|not supported (?:on|by|for) (?:this|the current|your)|"
    r"only supported on|undefined symbol|cannot open shared object|no module named|exceeds? the|"
    r"lower than the required|requires? .{0,40} but found|no platform detected|failed to (?:import|load|initiali[sz]e)|"
    r"is not installed|not found in path|could not import|mismatch|negative|out of memory|ran out of memory")


def live_decision(ev: Event, signature_hit: Any = None, facts: dict[str, Any] | None = None,
                  server: str | None = None, base: Baseline | None = None) -> dict[str, Any] | None:
    """Should ``watch`` print this line now as an early warning? Pure: a
    precursor signature names it, or resource arithmetic trips, or it is
    unusual against the healthy baseline *and* about a failure topic."""
    text = ev.text
    kind = ev.kind
    if signature_hit is None and kind not in (K.LOG, K.MESSAGE, K.PACKAGE_WALK_WARNING, K.PHASE_MARKER):
        return None  # the cheap test first: watch asks this for every line
    if is_noise(text):
        return None
    if signature_hit is not None:
        if (base or baseline()).familiar(text):
            return None  # healthy start-ups print it too: it only matters once a failure names it
        return {"line": ev.line, "text": text, "why": f"precursor {signature_hit.signature.id}",
                "signature": signature_hit.signature.id, "predicts": list(signature_hit.signature.predicts),
                "subjects": sorted(subjects(text))[:12]}
    head = text[:400]
    arith = arithmetic(text, facts or {}) if any(map(head.lower().__contains__, ARITH_WORDS)) \
        and ARITH_RE.search(head) else None
    if arith is not None:
        return {"line": ev.line, "text": text, "why": arith, "signature": None, "predicts": ["gpu.out-of-memory"]
                if "GiB" in arith or "KV" in arith else ["config.invalid-argument"], "subjects": sorted(subjects(text))[:12]}
    if kind == K.PHASE_MARKER:
        return None
    level = text_level(ev)
    if level not in ("WARNING", "ERROR"):
        return None
    base = base or baseline()
    if base.usual(template(text), server) or base.familiar(text):
        return None
    m = LIVE_CUE.search(text)
    if m is None:
        return None
    subs = subjects(text)
    strong = [s for s in subs if s.split(":", 1)[0] in ("pkg", "mod", "lib", "tool", "arch", "env", "model")
              and base.rarity(s) >= 0.5]
    if not strong:
        return None
    topics = [lab for lab, (kinds, rx) in LABEL_TOPICS.items() if _topic(lab, subs, text) >= 1.0]
    if not topics:
        return None
    return {"line": ev.line, "text": text, "why": f"unusual for a healthy start-up; {m.group(0)!r} about "
            f"{', '.join(subject_value(s) for s in strong[:3])}", "signature": None, "predicts": topics[:3],
            "subjects": sorted(subs)[:12]}


def live_early_warnings(inc: Any, ev: Event, announced: set) -> list[dict[str, Any]]:
    """The early warnings ``watch`` prints for the event that just arrived
    (``announced`` remembers what was printed, so each is printed once)."""
    out = []
    hits = [h for h in getattr(inc, "precursor_hits", ())[-3:] if h.line >= ev.line]
    for h in hits:
        if h.signature.id in announced or f"line:{h.line}" in announced:
            continue  # one announcement per signature and per line (two signatures may name one line)
        announced.add(h.signature.id)
        announced.add(f"line:{h.line}")
        d = live_decision(ev if h.line == ev.line else Event(K.LOG, h.line, h.text, h.event.ts), h)
        if d is not None:
            out.append(d)
    if hits:
        return out
    notes: Notes | None = getattr(inc, "ew_notes", None)
    d = live_decision(ev, None, notes.facts if notes is not None else None, getattr(inc, "server", None))
    if d is not None:
        key = template(ev.text)
        if key not in announced:
            announced.add(key)
            out.append(d)
    return out
