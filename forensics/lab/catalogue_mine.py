"""Rebuild the message catalogue from released wheels and public sources.

    python -m forensics.lab.catalogue_mine --out signatures/catalogue \\
        [--wheel-dir DIR] [--mirror-root DIR] [--only PKG ...]

For each package and release it reads the Python sources (from the wheel,
without unpacking it to disk, or from a git tag of a fetched repository) and
walks them with :mod:`ast`: every raised exception message, assertion message,
logger call, ``warnings.warn`` and ``print(..., file=sys.stderr)``, with its
level, exception type, module, enclosing function and line. C/C++/CUDA and Rust
sources are scanned with regexes for the messages that reach logs (torch's
``TORCH_CHECK`` family in its headers, NCCL's ``WARN``/``INFO`` and error
strings, DeepGEMM's host assertions, TGI's and mistral.rs's ``tracing`` macros and
error enums, llama.cpp's and ggml's log macros, aborts and asserts, Triton
Inference Server's log streams and status messages), Go sources (Ollama,
LocalAI) for their ``slog``/zerolog calls and error strings,
and the CUDA runtime's error names and strings are read from its own
``libcudart`` (``cudaGetErrorName``/``cudaGetErrorString``) for every code of
the ``cudaError`` enum in its ``driver_types.h``; ROCm's HIP runtime's from the
switch statements of CLR's ``hip_error.cpp``. torch_npu (Ascend) adds the
sentences of ``libtorch_npu.so``, its headers' ``TORCH_CHECK`` family, the ACL
error codes' explanations it prints and its own ``ERRxxxxx`` suffixes.

Only message strings and facts about them (where, which level, which release)
are kept; no code is copied. The output is one ``<package>.jsonl.gz`` per
package (one entry per distinct template), ``functions.json.gz`` (module ->
function -> phase, over every function seen) and ``README.md``.
"""
from __future__ import annotations

import argparse
import ast
import ctypes
import datetime as _dt
import gzip
import hashlib
import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from forensics.events.catalogue import phase_from_names
from forensics.events.catalogue_index import INDEX_FILE, INDEX_NL, INDEX_SEP
from forensics.events.templates import index_keys, literal_keys, literal_size
from forensics.lab.catalogue_rules import advice_of, guess_label

# ----------------------------------------------------------------- sources
# Releases chosen to span each project's history (vLLM: the V0 engine in 0.6.x,
# both engines in 0.8.x, V1 only from 0.10.x). Wheel names and hashes of what
# was read are written to README.md.
def _under(*prefixes: str, exclude: tuple[str, ...] = ()) -> Callable[[str], bool]:
    def ok(path: str) -> bool:
        return path.startswith(prefixes) and not any(x in path for x in exclude)
    return ok


def _transformers(path: str) -> bool:
    # Per-model modelling code is re-implemented by the servers; what reaches a
    # server's log from transformers is loading: configs, tokenizers, hub,
    # quantizers, modeling_utils. So models/* keeps configuration_/tokenization_ only.
    if not path.startswith("transformers/"):
        return False
    if path.startswith("transformers/models/"):
        base = path.rsplit("/", 1)[-1]
        return base.startswith(("configuration_", "tokenization_", "auto_factory", "__init__"))
    return not path.startswith(("transformers/commands/", "transformers/data/", "transformers/onnx/"))


WHEELS = {
    # sglang's multimodal_gen is its diffusion server, not an LLM server: left out.
    "sglang": ("sglang", ["0.4.6.post5", "0.5.2", "0.5.10", "0.5.23"],
               _under("sglang/", exclude=("/test/", "sglang/multimodal_gen/", "sglang/bench", "/benchmark/"))),
    "vllm": ("vllm", ["0.6.6.post1", "0.7.3", "0.8.5.post1", "0.9.2", "0.10.2", "0.11.0", "0.14.1", "0.23.0",
                      "0.33.0"],
             _under("vllm/", exclude=("/tests/", "vllm/benchmarks/"))),
    "lmdeploy": ("lmdeploy", ["0.6.5", "0.9.2", "0.18.0"], _under("lmdeploy/")),
    "transformers": ("transformers", ["4.46.3", "4.51.3", "4.57.6", "5.24.0"], _transformers),
    # torch: the layers a server runs through (not onnx/export/quantization tooling/tests).
    "torch": ("torch", ["2.5.1", "2.8.0", "2.13.0"],
              _under("torch/", exclude=("torch/testing/", "/_vendor/", "torch/include/", "torch/onnx/",
                                        "torch/ao/", "torch/_numpy/", "torch/package/", "torch/export/",
                                        "torch/_export/", "torch/masked/", "torch/utils/benchmark/",
                                        "torch/utils/tensorboard/", "torch/_refs/", "torch/_prims/",
                                        "torch/_decomp/", "torch/fx/experimental/", "torch/distributed/_tensor/",
                                        "torch/distributed/tensor/", "torch/distributed/checkpoint/",
                                        "torch/distributed/_shard/", "torch/distributed/pipelining/",
                                        "torch/distributed/fsdp/", "torch/_higher_order_ops/", "torch/mtia/",
                                        "torch/xpu/", "torch/mps/", "torch/_lazy/", "torch/nn/quantized/",
                                        "torch/quantization/", "torch/signal/", "torch/sparse/",
                                        "torch/_functorch/", "torch/func/", "torch/_strobelight/",
                                        "torch/_logging/", "torch/profiler/", "torch/autograd/profiler"))),
    # flashinfer's experimental/ and *train* backends are research kernels no server calls.
    "flashinfer": ("flashinfer-python", ["0.5.3", "0.6.4", "0.7.4"],
                   _under("flashinfer/", exclude=("flashinfer/experimental/", "train_backend", "/cake"))),
    "triton": ("triton", ["3.1.0", "3.3.1", "3.5.1"], _under("triton/", exclude=("/third_party/", "/tools/"))),
    # What the servers run on and through: vLLM's Ascend platform plugin, SGLang's
    # kernel package, Ray (vLLM's multi-node executor; how actors and workers
    # die), uvicorn (the HTTP server: bind errors), huggingface_hub (downloads).
    "vllm-ascend": ("vllm-ascend", ["0.9.1", "0.11.0", "0.13.0"], _under("vllm_ascend/", exclude=("/tests/",))),
    "sgl-kernel": ("sgl-kernel", ["0.1.4", "0.3.9.post2", "0.3.21"], _under("sgl_kernel/")),
    "ray": ("ray", ["2.40.0", "2.49.2", "2.60.0"],
            _under("ray/_private/", "ray/exceptions.py", "ray/actor.py", "ray/worker.py", "ray/remote_function.py",
                   "ray/util/", "ray/_common/", "ray/runtime_env/", "ray/experimental/", "ray/dag/",
                   "ray/_raylet.py", "ray/cluster_utils.py", "ray/scripts/",
                   exclude=("/tests/", "ray/util/dask/", "ray/util/spark/", "ray/util/joblib/",
                            "ray/util/multiprocessing/", "ray/_private/thirdparty/"))),
    "uvicorn": ("uvicorn", ["0.30.6", "0.34.0", "0.54.0"], _under("uvicorn/")),
    "huggingface-hub": ("huggingface-hub", ["0.26.5", "0.35.3", "1.33.0"],
                        _under("huggingface_hub/", exclude=("huggingface_hub/inference/", "/templates/"))),
    # Xinference: its own supervisor, workers and model launchers (not the
    # third-party model code it ships, nor its web UI).
    "xinference": ("xinference", ["0.13.3", "1.6.0.post1", "4.1.0"],
                   _under("xinference/", exclude=("/tests/", "xinference/thirdparty/", "xinference/ui/",
                                                  "xinference/web/"))),
    # mlx-lm: its server, generation and loading (per-model code left out, as transformers')
    "mlx-lm": ("mlx-lm", ["0.19.3", "0.26.4", "0.32.2"], _under("mlx_lm/", exclude=("/tests/", "mlx_lm/models/"))),
    # Accelerators' and servers' own layers (December 2026, issue 27). torch_npu: Ascend's
    # PyTorch backend (its Python, the TORCH_CHECK family of its headers, the sentences of
    # libtorch_npu.so, and its ERRxxxxx codes); not its generated op docs, torchair's
    # generated GE op table, ONNX export, profiler or tests.
    "torch-npu": ("torch-npu", ["2.1.0.post10", "2.5.1", "2.8.0"],
                  _under("torch_npu/", exclude=("torch_npu/testing/", "/tests/", "_op_plugin_docs.py",
                                                "auto_generated_ge_raw_ops", "torch_npu/onnx/",
                                                "torch_npu/profiler/", "torch_npu/include/"))),
    # NVIDIA Dynamo: its Python workers (vllm/sglang/trtllm back ends, planner, frontend) and
    # the Python layer of its runtime wheel (the Rust core is compiled in: its strings are not
    # NUL-terminated, so not read from the binary)
    "dynamo": ("ai-dynamo", ["0.3.2", "0.7.0", "1.0.0"], _under("dynamo/", exclude=("/tests/",))),
    "dynamo-runtime": ("ai-dynamo-runtime", ["0.7.0", "1.0.0"], _under("dynamo/", exclude=("/tests/",))),
    "kserve": ("kserve", ["0.11.2", "0.14.1", "0.17.0"],
               _under("kserve/", exclude=("/test/", "/tests/", "_pb2", "kserve/models/"))),
    # JAX (vLLM on TPU runs through it) and tpu-inference, vLLM's TPU platform
    # jax: what a server meets of it (backends and devices, compilation, dispatch, distributed
    # start-up, TPU init, memory), not the numerics' argument checks (a user program's)
    "jax": ("jax", ["0.4.30", "0.6.2", "0.8.1"],
            _under(*(f"jax/_src/{m}" for m in ("xla_bridge.py", "compiler.py", "dispatch.py", "distributed.py",
                                                "clusters/", "cloud_tpu_init.py", "config.py", "lib/",
                                                "compilation_cache", "interpreters/pxla.py", "hardware_utils.py",
                                                "mesh_utils.py", "errors.py", "profiler.py", "array.py",
                                                "pjit.py", "stages.py", "sharding_impls.py", "mesh.py",
                                                "xla_metadata.py", "error_check.py", "cache_key.py")),
                   exclude=("/tests/",))),
    "tpu-inference": ("tpu-inference", ["0.11.1", "0.13.3", "0.32.0"], _under("tpu_inference/", exclude=("/tests/",))),
}
CUDA_RUNTIME = ("nvidia-cuda-runtime-cu12", ["12.1.105", "12.4.127", "12.8.90", "12.9.79"])

# Repositories read through git (fetched mirrors): package -> (owner/name, releases).
# A release is a tag, or "git-<sha>" for an untagged commit.
REPOS: dict[str, tuple[str, list[str]]] = {
    "tgi": ("huggingface/text-generation-inference", ["v2.0.4", "v2.4.1", "v3.0.2", "v3.3.7"]),
    "nccl": ("NVIDIA/nccl", ["v2.21.5-1", "v2.23.4-1", "v2.26.2-1", "v2.30.7-1"]),
    "deepgemm": ("deepseek-ai/DeepGEMM", ["git-b4ecf9c", "v2.1.0", "v2.1.1.post3", "git-54e2261"]),
    # Ollama's own Go (its vendored llama.cpp/ggml is package llama.cpp's)
    "ollama": ("ollama/ollama", ["v0.1.32", "v0.3.14", "v0.12.5", "v0.24.0"]),
    # Triton Inference Server: the server's front ends, and its core (the model
    # repository, backends' loading, scheduling) at the release branch of the same month.
    "tritonserver": ("triton-inference-server/server", ["v2.24.0", "v2.41.0", "v2.49.0", "v2.71.0"]),
    "text-generation-webui": ("oobabooga/text-generation-webui", ["v1.16", "v2.8.1", "v3.10", "v4.7.3"]),
    # LocalAI: its Go server (zerolog, then xlog) and the Python backends it starts
    "localai": ("mudler/LocalAI", ["v1.40.0", "v2.25.0", "v3.12.1", "v4.9.0"]),
    "mistral.rs": ("EricLBuehler/mistral.rs", ["v0.3.1", "v0.6.0", "v0.9.2"]),
    # tabbyAPI has no tags: a commit of early 2025 and the newest
    "tabbyapi": ("theroyallab/tabbyAPI", ["git-f088843", "git-e632af4"]),
    # ROCm's HIP runtime (CLR): hipGetErrorName/hipGetErrorString, read off their switch statements
    "hip-runtime": ("ROCm/clr", ["rocm-5.6.0", "rocm-6.0.0", "rocm-6.2.2"]),
}
# Repositories read by file type alone (Python, Go, Rust): package -> which paths.
_SKIP_DIRS = ("tests/", "test/", "docs/", "examples/", "vendor/", "integration/", "benchmarks/")


def _repo_path_ok(package: str, path: str) -> bool:
    if path.endswith("_test.go") or path.startswith(_SKIP_DIRS) or "/tests/" in path or "/test/" in path:
        return False
    if package == "ollama":  # its vendored llama.cpp/ggml is package llama.cpp's
        return path.endswith(".go") and not path.startswith(("llama/llama.cpp/", "ml/backend/ggml/ggml/"))
    if package == "text-generation-webui":
        return path.endswith(".py") and (path.startswith(("modules/", "extensions/openai/"))
                                         or path in ("server.py", "one_click.py", "download-model.py"))
    if package == "localai":
        return path.endswith(".go") or (path.startswith("backend/python/") and path.endswith(".py"))
    if package == "mistral.rs":
        return path.endswith(".rs") and path.startswith("mistralrs") and "/src/" in path
    if package == "tabbyapi":
        return path.endswith(".py")
    return False
TRITON_CORE = ("triton-inference-server/core",
               {"v2.24.0": "r22.07", "v2.41.0": "r23.12", "v2.49.0": "r24.08", "v2.71.0": "r26.06"})

# Source distributions read without unpacking: package -> (dist, versions).
# llama.cpp itself is too large to fetch whole; llama-cpp-python's sdist
# vendors one llama.cpp commit in full (ggml, the library, common, the server).
SDISTS: dict[str, tuple[str, list[str]]] = {
    "llama.cpp": ("llama-cpp-python", ["0.2.90", "0.3.16", "0.3.36"]),
}
_LLAMA_DIRS = re.compile(r"^(src|common|ggml/src|tools/server|examples/server|tools/mtmd|examples/llava|tools/main|"
                         r"examples/main|tools/run|examples/run)/")

# --------------------------------------------------------------- records
@dataclass
class Record:
    package: str
    release: str
    kind: str
    template: str
    level: str | None
    exc_type: str | None
    module: str | None
    function: str | None
    source: str  # path:line


@dataclass
class Mined:
    records: list[Record] = field(default_factory=list)
    # module -> bare function name -> qualnames seen
    functions: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    provenance: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


# --------------------------------------------------- Python: strings → templates
_PRINTF = re.compile(r"%(?:\(([A-Za-z_]\w*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|L|z|j|t|q)?"
                     r"([diouxXeEfFgGcrsap%])")
_FMT_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def _esc(s: str) -> str:
    return s.replace("{", "{{").replace("}", "}}")


def _hint(node: ast.AST) -> str:
    """A placeholder name from the expression printed there (its last name)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Call):
            node = node.func
            continue
        if isinstance(node, ast.Subscript):
            node = node.value
            continue
        return ""


def _printf_to_template(s: str, args: list[ast.AST] | None) -> str:
    out: list[str] = []
    pos = 0
    i = 0
    for m in _PRINTF.finditer(s):
        out.append(_esc(s[pos:m.start()]))
        if m.group(2) == "%":
            out.append("%")
        else:
            name = m.group(1) or (_hint(args[i]) if args and i < len(args) else "")
            i += 1
            out.append("{" + name + "}")
        pos = m.end()
    out.append(_esc(s[pos:]))
    return "".join(out)


def _format_to_template(s: str, args: list[ast.AST] | None = None,
                        kwargs: dict[str, ast.AST] | None = None) -> str:
    """A ``str.format`` / Rust ``format!`` string: keep fields as ``{name}``."""
    out: list[str] = []
    pos = 0
    auto = 0
    for m in _FMT_FIELD.finditer(s):
        out.append(s[pos:m.start()])
        tok = m.group(0)
        if tok in ("{{", "}}"):
            out.append(tok)
        else:
            spec = m.group(1).split(":", 1)[0].split("!", 1)[0].strip()
            if spec.isdigit():
                idx = int(spec)
                name = _hint(args[idx]) if args and idx < len(args) else ""
            elif spec == "":
                name = _hint(args[auto]) if args and auto < len(args) else ""
                auto += 1
            else:
                name = spec if re.fullmatch(r"[A-Za-z_]\w*", spec) else ""
            out.append("{" + name + "}")
        pos = m.end()
    out.append(s[pos:])
    return "".join(out)


class _StrResolver:
    """Turns a message expression into a template, resolving simple local names
    (``msg = f"..."; raise ValueError(msg)``)."""

    def __init__(self, assigns: dict[str, ast.AST]) -> None:
        self.assigns = assigns

    def const_str(self, node: ast.AST, depth: int = 0) -> str | None:
        """The literal string a name or gettext call stands for, if any."""
        if depth > 4:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.assigns:
            return self.const_str(self.assigns[node.id], depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "gettext", "N_") \
                and node.args:
            return self.const_str(node.args[0], depth + 1)
        return None

    def template(self, node: ast.AST | None, depth: int = 0) -> str | None:
        if node is None or depth > 4:
            return None
        if isinstance(node, ast.Constant):
            return _esc(node.value) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    parts.append(_esc(v.value))
                elif isinstance(v, ast.FormattedValue):
                    parts.append("{" + _hint(v.value) + "}")
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a = self.template(node.left, depth + 1)
            b = self.template(node.right, depth + 1)
            if a is None and b is None:
                return None
            return (a if a is not None else "{" + _hint(node.left) + "}") + \
                   (b if b is not None else "{" + _hint(node.right) + "}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            fmt = self.const_str(node.left)
            if fmt is not None:
                args = list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
                return _printf_to_template(fmt, args)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            return _format_to_template(node.func.value.value, list(node.args),
                                       {k.arg: k.value for k in node.keywords if k.arg})
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
                and node.args:
            return None
        if isinstance(node, ast.Name) and node.id in self.assigns:
            return self.template(self.assigns[node.id], depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "gettext", "N_") \
                and node.args:
            return self.template(node.args[0], depth + 1)  # gettext: the message itself
        return None


_LOG_METHODS = {
    "debug": "DEBUG", "info": "INFO", "warning": "WARNING", "warn": "WARNING", "error": "ERROR",
    "exception": "ERROR", "critical": "CRITICAL", "fatal": "CRITICAL",
    "warning_once": "WARNING", "info_once": "INFO", "debug_once": "DEBUG", "warn_once": "WARNING",
    "error_once": "ERROR", "print_warning_once": "WARNING", "success": "INFO", "trace": "DEBUG",
}
_LOGGER_NAME = re.compile(r"^_*(logger|log|logging|lg|lgr|loguru|_logger)\w*$|\w*_logger$|^LOGGER$|^LOG$", re.I)


def _receiver_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):  # logging.getLogger(__name__).warning(...)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("getLogger", "get_logger", "init_logger"):
            return "logger"
        if isinstance(f, ast.Name) and f.id in ("getLogger", "get_logger", "init_logger"):
            return "logger"
    return ""


_EXC_CTOR = re.compile(r"^[A-Z]\w*(Error|Exception|Exit|Failure)$")
_MSG_CONST = re.compile(r"(^|_)(MSG|MESSAGE|ERROR_MSG|ERR_MSG|WARNING_MSG|HINT|ERROR_MESSAGE|WARNING)S?$", re.I)


def _exc_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Walker(ast.NodeVisitor):
    def __init__(self, emit: Callable[..., None], module: str, on_function: Callable[[str, str], None]) -> None:
        self.emit = emit
        self.module = module
        self.on_function = on_function
        self.stack: list[str] = []
        self.resolvers: list[_StrResolver] = [_StrResolver({})]
        self.warn_names = {"warn"}  # names bound to warnings.warn by "from warnings import warn"
        self.exc_classes: set[str] = set()  # exception classes this module defines

    # scope
    def _func(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.stack.append(node.name)
        self.on_function(node.name, ".".join(self.stack))
        assigns: dict[str, ast.AST] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                assigns.setdefault(sub.targets[0].id, sub.value)
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value is not None:
                assigns.setdefault(sub.target.id, sub.value)
        self.resolvers.append(_StrResolver(assigns))
        self.generic_visit(node)
        self.resolvers.pop()
        self.stack.pop()

    visit_FunctionDef = _func
    visit_AsyncFunctionDef = _func

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        # BASE_ERROR_MSG = "The actor died unexpectedly ...", CUDA_GRAPH_CAPTURE_FAILED_MSG = (...):
        # messages kept in constants and printed by code that only names them
        if len(self.resolvers) == 1 and len(node.targets) == 1:
            t = node.targets[0]
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if _MSG_CONST.search(name):
                msg = self._t(node.value)
                if msg:
                    self.emit("message-constant", msg, None, None, self.qualname, node.lineno)
        self.generic_visit(node)

    @property
    def qualname(self) -> str:
        return ".".join(self.stack) or "<module>"

    def _t(self, node: ast.AST | None) -> str | None:
        return self.resolvers[-1].template(node)

    # messages
    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call):
            name = _exc_name(exc)
            msg = self._t(exc.args[0]) if exc.args else None
            if msg is None:
                for k in exc.keywords:
                    if k.arg in ("msg", "message", "detail", "reason"):
                        msg = self._t(k.value)
            if name and msg:
                self.emit("raise", msg, None, name, self.qualname, node.lineno)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        if node.msg is not None:
            msg = self._t(node.msg)
            if msg:
                self.emit("assert", msg, None, "AssertionError", self.qualname, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        recv = _receiver_name(f.value) if isinstance(f, ast.Attribute) else ""
        if isinstance(f, ast.Attribute) and f.attr == "error" and node.args and \
                (re.search(r"parser$", recv or "", re.I) or (recv == "self" and "Parser" in self.qualname)):
            # argparse's parser.error(msg): "prog: error: msg", then exit 2
            msg = self._t(node.args[0])
            if msg:
                self.emit("log", msg, "ERROR", None, self.qualname, node.lineno)
        elif isinstance(f, ast.Attribute) and f.attr in _LOG_METHODS and node.args:
            if recv == "warnings" and f.attr == "warn":
                self._warn(node)
            elif _LOGGER_NAME.match(recv or ""):
                first = node.args[0]
                rest = node.args[1:]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    msg = _printf_to_template(first.value, rest) if rest else _esc(first.value)
                else:
                    msg = self._t(first)
                if msg:
                    self.emit("log", msg, _LOG_METHODS[f.attr], None, self.qualname, node.lineno)
        elif isinstance(f, ast.Name) and f.id in self.warn_names and node.args:
            self._warn(node)
        elif (_EXC_CTOR.search(_exc_name(f) or "") or _exc_name(f) in self.exc_classes) and node.args:
            # an exception built and handed on (set_exception(...), raised later)
            msg = self._t(node.args[0])
            if msg:
                self.emit("raise", msg, None, _exc_name(f), self.qualname, node.lineno)
        elif _exc_name(f) in ("tqdm", "trange", "tqdm_asyncio", "Progress", "add_task") or \
                any(k.arg == "desc" for k in node.keywords):
            # a progress bar's description: the phase a server is in when it stops
            for k in node.keywords:
                if k.arg in ("desc", "description"):
                    msg = self._t(k.value)
                    if msg:
                        self.emit("progress", msg, "INFO", None, self.qualname, node.lineno)
        elif isinstance(f, ast.Name) and f.id == "print" and node.args:
            for k in node.keywords:
                if k.arg == "file" and isinstance(k.value, ast.Attribute) and k.value.attr == "stderr":
                    msg = self._t(node.args[0])
                    if msg:
                        self.emit("print", msg, None, None, self.qualname, node.lineno)
        self.generic_visit(node)

    def _warn(self, node: ast.Call) -> None:
        msg = self._t(node.args[0])
        cat = None
        if len(node.args) > 1:
            cat = _exc_name(node.args[1])
        for k in node.keywords:
            if k.arg == "category":
                cat = _exc_name(k.value)
        if msg:
            self.emit("warn", msg, "WARNING", cat or "UserWarning", self.qualname, node.lineno)


def _exception_classes(tree: ast.AST) -> set[str]:
    """Classes of the module that derive (as far as the module shows) from an
    exception: their names need not end in Error (BrokenProcessPool)."""
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    known: set[str] = set()
    changed = True
    while changed:
        changed = False
        for c in classes:
            if c.name in known:
                continue
            for b in c.bases:
                bn = _exc_name(b) or ""
                if bn in known or re.search(r"(Error|Exception|Warning|Exit|Executor|Failure)$", bn):
                    known.add(c.name)
                    changed = True
                    break
    return known


def module_name(relpath: str) -> str:
    p = relpath[:-3] if relpath.endswith(".py") else relpath
    p = p.replace("/", ".")
    return p[: -len(".__init__")] if p.endswith(".__init__") else p


def mine_python(text: str | bytes, relpath: str, package: str, release: str, out: Mined) -> None:
    try:
        tree = ast.parse(text, filename=relpath)
    except (SyntaxError, ValueError):
        return
    module = module_name(relpath)

    def emit(kind: str, template: str, level: str | None, exc: str | None, func: str, line: int) -> None:
        out.records.append(Record(package, release, kind, template, level, exc, module, func, f"{relpath}:{line}"))

    def on_function(name: str, qual: str) -> None:
        out.functions[module][name].add(qual)

    walker = _Walker(emit, module, on_function)
    walker.exc_classes = _exception_classes(tree)
    walker.visit(tree)


# ------------------------------------------------------ C/C++/CUDA and Rust
def _scan_call_args(text: str, start: int) -> tuple[list[str], int] | None:
    """Split the arguments of a call whose '(' is at ``start``: top-level
    commas only, string and char literals skipped. Returns (args, end)."""
    depth = 0
    i = start
    n = len(text)
    args: list[str] = []
    cur = start + 1
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur:i])
                return args, i
        elif c == "," and depth == 1:
            args.append(text[cur:i])
            cur = i + 1
        i += 1
        if i - start > 4000:
            return None
    return None


_C_STR = re.compile(r'(?:u8|L|R)?"((?:[^"\\\n]|\\.)*)"')
_C_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "0": ""}


def _c_unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _C_ESC.get(m.group(1), m.group(1)), s)


def _c_message(args: list[str], printf: bool) -> str | None:
    """Concatenate the message arguments: string literals as text, anything
    else as a placeholder. ``printf``: the first literal is a format string."""
    parts: list[str] = []
    got = False
    for a in args:
        # "%" PRIu64 "": the inttypes macros are conversion letters between literals
        a = re.sub(r"\bPRI[diouxX]\w*\b", '"d"', a.strip())
        lits = _C_STR.findall(a)
        if lits and _C_STR.sub("", a).strip() == "":
            s = _c_unescape("".join(lits))
            parts.append(_printf_to_template(s, None) if printf else _esc(s))
            got = True
        elif a:
            if printf and got:
                continue  # printf arguments fill the format's own placeholders
            name = re.findall(r"[A-Za-z_]\w*", a)
            parts.append("{" + (name[-1] if name else "") + "}")
    return "".join(parts) if got else None


_C_FUNC = re.compile(r"^(?:[\w:<>\*&,~]+[ \t\*&]+)+\**([A-Za-z_~][\w:~]*)\s*\([^;]*$")


def _macro_calls(text: str, rx: re.Pattern[str]) -> Iterator[tuple[re.Match[str], list[str], int]]:
    """Each call of a C/C++ macro that ``rx`` finds (its ``#define`` skipped):
    the match, the call's arguments and its line number."""
    for m in rx.finditer(text):
        if text[max(0, m.start() - 8):m.start()].rstrip().endswith("define"):
            continue
        got = _scan_call_args(text, m.end() - 1)
        if not got:
            continue
        yield m, got[0], text.count("\n", 0, m.start()) + 1


def _c_function_at(lines: list[str], lineno: int) -> str | None:
    for i in range(lineno - 1, max(-1, lineno - 400), -1):
        ln = lines[i]
        if ln[:1] not in (" ", "\t", "#", "/", "}", "{", "") and "(" in ln:
            m = _C_FUNC.match(ln)
            if m and m.group(1) not in ("if", "for", "while", "switch", "return"):
                return m.group(1)
    return None


# name -> (kind, exc_type, level, first message argument, printf)
_TORCH_MACROS = {
    "TORCH_CHECK": ("check", "RuntimeError", 1),
    "TORCH_CHECK_VALUE": ("check", "ValueError", 1),
    "TORCH_CHECK_TYPE": ("check", "TypeError", 1),
    "TORCH_CHECK_INDEX": ("check", "IndexError", 1),
    "TORCH_CHECK_NOT_IMPLEMENTED": ("check", "NotImplementedError", 1),
    "TORCH_CHECK_LINALG": ("check", "RuntimeError", 1),
    "TORCH_INTERNAL_ASSERT": ("check", "RuntimeError", 1),
    "TORCH_INTERNAL_ASSERT_DEBUG_ONLY": ("check", "RuntimeError", 1),
    "AT_ERROR": ("check", "RuntimeError", 0),
    "TORCH_WARN": ("warn", "UserWarning", 0),
    "TORCH_WARN_ONCE": ("warn", "UserWarning", 0),
}
_TORCH_MACRO_RX = re.compile(r"\b(" + "|".join(sorted(_TORCH_MACROS, key=len, reverse=True)) + r")\s*\(")


def mine_torch_cpp(text: str, relpath: str, release: str, out: Mined, package: str = "torch") -> None:
    lines = text.split("\n")
    for m, args, line in _macro_calls(text, _TORCH_MACRO_RX):
        kind, exc, first = _TORCH_MACROS[m.group(1)]
        msg = _c_message(args[first:], printf=False)
        if not msg or literal_size(msg) < 4:
            continue
        level = "WARNING" if kind == "warn" else None
        out.records.append(Record(package, release, kind, msg, level, exc, relpath.rsplit(".", 1)[0].replace("/", "."),
                                  _c_function_at(lines, line - 1), f"{relpath}:{line}"))


# torch_npu: the ACL error codes' explanations it prints after "error code is N"
# ("\n[Error]: <message>", NPUErrorCodes.h), named by the runtime's own constants
# (rt_error_codes.h), and its own "ERR<submodule><code> <SUBMODULE> <message>" suffix.
_NPU_CODE_MSG = re.compile(r'\{\s*(\d{6})\s*,\s*"((?:[^"\\]|\\.|\\\n)*)"\s*\}')
_NPU_RT_CODE = re.compile(r"\b(ACL_ERROR_\w+)\s*=\s*(\d{6})\s*;")
NPU_CODES_H = "torch_npu/include/torch_npu/csrc/core/npu/NPUErrorCodes.h"
NPU_RT_CODES_H = "torch_npu/include/third_party/acl/inc/acl/error_codes/rt_error_codes.h"


def mine_npu_error_codes(z: zipfile.ZipFile, release: str, out: Mined) -> None:
    names = set(z.namelist())
    if NPU_CODES_H not in names:
        return
    rt = z.read(NPU_RT_CODES_H).decode("utf-8", "replace") if NPU_RT_CODES_H in names else ""
    code_names = {int(v): n for n, v in _NPU_RT_CODE.findall(rt)}
    text = z.read(NPU_CODES_H).decode("utf-8", "replace")
    for m in _NPU_CODE_MSG.finditer(text):
        code = int(m.group(1))
        msg = _c_unescape(m.group(2).replace("\\\n", ""))
        msg = "\n".join(ln.strip() for ln in msg.split("\n") if ln.strip())
        line = text.count("\n", 0, m.start()) + 1
        out.records.append(Record("torch-npu", release, "error-string", "[Error]: " + _esc(msg), "ERROR",
                                  code_names.get(code, f"ACL error {code}"), "c10_npu.acl", "AclErrorCode",
                                  f"{NPU_CODES_H}:{line}"))


def mine_npu_errcode_py(text: bytes, relpath: str, release: str, out: Mined) -> None:
    """Every "ERR<ss><ccc> <SUBMODULE> <message>" that torch_npu's _format_error_msg can print."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    enums: dict[str, list[tuple[str, ast.AST]]] = {}
    for c in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        enums[c.name] = [(a.targets[0].id, a.value) for a in c.body
                         if isinstance(a, ast.Assign) and isinstance(a.targets[0], ast.Name)]
    subs = [(n, v.value) for n, v in enums.get("_SubModuleID", enums.get("SubModuleID", []))
            if isinstance(v, ast.Constant) and isinstance(v.value, int) and n != "UNKNOWN"]
    for name, v in enums.get("ErrCode", []):
        if not (isinstance(v, ast.Tuple) and len(v.elts) == 2 and all(isinstance(e, ast.Constant) for e in v.elts)):
            continue
        code, msg = v.elts[0].value, v.elts[1].value
        if not isinstance(code, int) or not isinstance(msg, str) or code == 0:
            continue
        for sub, sid in subs:
            out.records.append(Record("torch-npu", release, "error-string", _esc(f"ERR{sid:0>2d}{code:0>3d} {sub} {msg}"),
                                      "ERROR", f"ErrCode.{name}", module_name(relpath), "_format_error_msg",
                                      f"{relpath}:{v.lineno}"))


_NCCL_RX = re.compile(r"\b(WARN|INFO|TRACE)\s*\(")


def mine_nccl(text: str, relpath: str, release: str, out: Mined) -> None:
    lines = text.split("\n")
    for m, args, line in _macro_calls(text, _NCCL_RX):
        which = m.group(1)
        if which == "TRACE":
            continue
        fmt_args = args if which == "WARN" else args[1:]
        msg = _c_message(fmt_args, printf=True)
        if not msg or literal_size(msg) < 4:
            continue
        level = "WARNING" if which == "WARN" else "INFO"
        out.records.append(Record("nccl", release, "native-log", msg, level, None, relpath, _c_function_at(lines, line - 1),
                                  f"{relpath}:{line}"))
    # ncclGetErrorString: "case ncclX: return "...";"
    for m in re.finditer(r"case\s+(nccl[A-Z]\w*)\s*:\s*return\s*\"((?:[^\"\\]|\\.)*)\"", text):
        line = text.count("\n", 0, m.start()) + 1
        out.records.append(Record("nccl", release, "error-string", _esc(_c_unescape(m.group(2))), "ERROR", m.group(1),
                                  relpath, "ncclGetErrorString", f"{relpath}:{line}"))


_DG_RX = re.compile(r"\b(DG_HOST_ASSERT|DG_HOST_UNREACHABLE|DG_CUDA_RUNTIME_CHECK|DG_NVRTC_CHECK|DG_CUDA_DRIVER_CHECK)\s*\(")


def mine_deepgemm_cpp(text: str, relpath: str, release: str, out: Mined) -> None:
    lines = text.split("\n")
    for m, args, line in _macro_calls(text, _DG_RX):
        if not args:
            continue
        arg = " ".join(args[0].split())
        if m.group(1) == "DG_HOST_ASSERT":
            # DGException: "<name> error (<file>:<line>): <the condition's text>"
            tmpl = "Assertion error ({file}:{line}): " + _esc(arg)
        elif m.group(1) == "DG_HOST_UNREACHABLE":
            lits = _C_STR.findall(arg)
            if not lits:
                continue
            tmpl = "Assertion error ({file}:{line}): " + _esc(_c_unescape("".join(lits)))
        else:
            continue
        out.records.append(Record("deepgemm", release, "check", tmpl, None, "RuntimeError", relpath,
                                  _c_function_at(lines, line - 1), f"{relpath}:{line}"))


_RUST_LOG = re.compile(r"\b(?:tracing::)?(error|warn|info|debug|panic|unreachable|bail|anyhow)!\s*\(")
_RUST_LEVEL = {"error": "ERROR", "warn": "WARNING", "info": "INFO", "debug": "DEBUG"}
_RUST_STR = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"', re.S)


def mine_rust(text: str, relpath: str, package: str, release: str, out: Mined) -> None:
    lines = text.split("\n")

    def fn_at(line: int) -> str | None:
        for i in range(line - 1, max(-1, line - 400), -1):
            mm = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)", lines[i])
            if mm:
                return mm.group(1)
        return None

    module = relpath.rsplit(".", 1)[0].replace("/", "::")
    for m in _RUST_LOG.finditer(text):
        got = _scan_call_args(text, m.end() - 1)
        if not got:
            continue
        args = got[0]
        fmt_i = next((i for i, a in enumerate(args) if _RUST_STR.match(a)), None)
        if fmt_i is None:
            continue
        s = _RUST_STR.match(args[fmt_i]).group(1)  # type: ignore[union-attr]
        tmpl = _format_to_template(_c_unescape(s), [_rust_expr(a) for a in args[fmt_i + 1:]])
        line = text.count("\n", 0, m.start()) + 1
        which = m.group(1)
        kind = "native-log" if which in _RUST_LEVEL else "panic"
        out.records.append(Record(package, release, kind, tmpl, _RUST_LEVEL.get(which, "ERROR"), None, module,
                                  fn_at(line - 1), f"{relpath}:{line}"))
    # thiserror: #[error("...")] above an enum variant: the text the error prints
    for m in re.finditer(r'#\[error\(\s*"((?:[^"\\]|\\.)*)"', text):
        line = text.count("\n", 0, m.start()) + 1
        variant = None
        for ln in lines[line:line + 4]:
            vm = re.match(r"\s*([A-Z]\w*)", ln)
            if vm:
                variant = vm.group(1)
                break
        out.records.append(Record(package, release, "error-string", _format_to_template(_c_unescape(m.group(1))),
                                  "ERROR", variant, module, None, f"{relpath}:{line}"))
    for m in re.finditer(r'\.expect\(\s*"((?:[^"\\]|\\.)*)"\s*\)', text):
        line = text.count("\n", 0, m.start()) + 1
        out.records.append(Record(package, release, "panic", _esc(_c_unescape(m.group(1))), "ERROR", None, module,
                                  fn_at(line - 1), f"{relpath}:{line}"))


def _rust_expr(a: str) -> ast.AST:
    names = re.findall(r"[A-Za-z_]\w*", a.split("=", 1)[-1])
    return ast.Name(id=names[-1] if names else "")


# ------------------------------------------- llama.cpp / ggml (C/C++), printf
# The logging macros of llama.cpp, ggml and llama.cpp's server, and how each
# prints: (kind, level, index of the format argument, printf or a literal
# message, what the macro puts before the format). GGML_ABORT prints
# "<file>:<line>: <message>"; SRV_*/SLT_* put the server's "srv <func>: " and
# "slot <func>: id <n> | task <n> | " before theirs. The old server (2024)
# logged LOG_ERROR/LOG_WARNING/LOG_INFO(message, json) with a literal message.
_LLAMA_MACROS = {
    "LLAMA_LOG_ERROR": ("native-log", "ERROR", 0, True, ""),
    "LLAMA_LOG_WARN": ("native-log", "WARNING", 0, True, ""),
    "LLAMA_LOG_INFO": ("native-log", "INFO", 0, True, ""),
    "GGML_LOG_ERROR": ("native-log", "ERROR", 0, True, ""),
    "GGML_LOG_WARN": ("native-log", "WARNING", 0, True, ""),
    "GGML_LOG_INFO": ("native-log", "INFO", 0, True, ""),
    "LOG_ERR": ("native-log", "ERROR", 0, True, ""),
    "LOG_WRN": ("native-log", "WARNING", 0, True, ""),
    "LOG_INF": ("native-log", "INFO", 0, True, ""),
    "LOG_TEE": ("native-log", None, 0, True, ""),
    "SRV_ERR": ("native-log", "ERROR", 0, True, "srv {func}: "),
    "SRV_WRN": ("native-log", "WARNING", 0, True, "srv {func}: "),
    "SRV_INF": ("native-log", "INFO", 0, True, "srv {func}: "),
    "SLT_ERR": ("native-log", "ERROR", 1, True, "slot {func}: id {id} | task {task} | "),
    "SLT_WRN": ("native-log", "WARNING", 1, True, "slot {func}: id {id} | task {task} | "),
    "SLT_INF": ("native-log", "INFO", 1, True, "slot {func}: id {id} | task {task} | "),
    "LOG_ERROR": ("native-log", "ERROR", 0, False, ""),
    "LOG_WARNING": ("native-log", "WARNING", 0, False, ""),
    "LOG_INFO": ("native-log", "INFO", 0, False, ""),
    "GGML_ABORT": ("panic", "ERROR", 0, True, "{file}:{line}: "),
    "fprintf": ("print", None, 1, True, ""),
}
_LLAMA_RX = re.compile(r"\b(" + "|".join(sorted(_LLAMA_MACROS, key=len, reverse=True)) + r")\s*\(")
_GGML_ASSERT_RX = re.compile(r"\bGGML_ASSERT\s*\(")
_CPP_THROW = re.compile(r"\bthrow\s+(?:std::)?(runtime_error|invalid_argument|out_of_range|logic_error|length_error)\s*\(")
_C_PRINTF = re.compile(r"%[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?(?:hh|h|ll|l|L|z|j|t|q)?([diouxXeEfFgGcsap%])")
_FORMAT_CALL = re.compile(r"^\s*(?:std::)?(?:string_)?format\s*\(")


def _c_printf(fmt: str, args: list[str], func: str | None) -> str:
    """A C printf format as a template: each conversion a placeholder named by
    its argument's last identifier, ``__func__`` as the function's own name
    (it is printed as that literal text)."""
    out: list[str] = []
    pos = 0
    i = 0
    for m in _C_PRINTF.finditer(fmt):
        out.append(_esc(fmt[pos:m.start()]))
        pos = m.end()
        if m.group(3) == "%":
            out.append("%")
            continue
        i += (m.group(1) == "*") + (m.group(2) == "*")  # a '*' width or precision takes an argument
        a = args[i].strip() if i < len(args) else ""
        i += 1
        if a in ("__func__", "__FUNCTION__") and func:
            out.append(_esc(func.rsplit("::", 1)[-1]))
        else:
            names = re.findall(r"[A-Za-z_]\w*", a)
            out.append("{" + (names[-1] if names else "") + "}")
    out.append(_esc(fmt[pos:]))
    return "".join(out)


def _c_literal(arg: str) -> str | None:
    """The text of an argument made only of adjacent string literals (with
    the inttypes macros between them as a conversion letter), else None."""
    a = re.sub(r"\bPRI[diouxX]\w*\b", '"d"', arg.strip())
    lits = _C_STR.findall(a)
    if lits and _C_STR.sub("", a).strip() == "":
        return _c_unescape("".join(lits))
    return None


def _split_top(expr: str, sep: str) -> list[str]:
    """``expr`` split at ``sep`` outside brackets and string literals."""
    parts: list[str] = []
    depth = 0
    cur = 0
    i = 0
    while i < len(expr):
        c = expr[i]
        if c in "\"'":
            j = i + 1
            while j < len(expr) and expr[j] != c:
                j += 2 if expr[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and expr.startswith(sep, i):
            parts.append(expr[cur:i])
            i += len(sep)
            cur = i
            continue
        i += 1
    parts.append(expr[cur:])
    return parts


def _c_expr_message(expr: str, func: str | None) -> str | None:
    """A C++ string expression as a template: ``"a" + x + "b"``,
    ``std::string("a") + x``, ``format("a %s", x)``, ``(...).c_str()``."""
    e = re.sub(r"\.c_str\(\)\s*$", "", expr.strip())
    if _FORMAT_CALL.match(e):
        got = _scan_call_args(e, e.index("("))
        if got and got[0]:
            fmt = _c_literal(got[0][0])
            return _c_printf(fmt, got[0][1:], func) if fmt is not None else None
        return None
    while e.startswith("(") and e.endswith(")"):
        whole = _scan_call_args(e, 0)
        if whole is None or whole[1] != len(e) - 1:
            break
        e = e[1:-1].strip()
    parts: list[str] = []
    any_literal = False
    for p in _split_top(e, "+"):
        p = p.strip()
        m = re.match(r"^(?:std::)?string\s*\((.*)\)$", p, re.DOTALL)
        lit = _c_literal(m.group(1) if m else p)
        if lit is not None:
            parts.append(_esc(lit))
            any_literal = True
        elif p:
            names = re.findall(r"[A-Za-z_]\w*", p)
            parts.append("{" + (names[-1] if names else "") + "}")
    return "".join(parts) if any_literal else None


_CPP_FUNC = re.compile(r"^(?:[\w:<>\*&,~]+[ \t\*&]+)+\**([A-Za-z_~][\w:~]*)\s*\([^;]*$")
_NOT_FUNC = {"if", "for", "while", "switch", "return", "else", "catch", "sizeof", "defined", "throw", "new", "case",
             "delete", "co_return", "goto"}
# Google style (Triton): the return type on its own line, the name at column 0 below it
_CPP_NAME_AT_0 = re.compile(r"^([A-Za-z_~][\w:~]*)\s*\(")
_CPP_TYPE_LINE = re.compile(r"^[\w:<>\*&, ]+$")


def _cpp_function_at(lines: list[str], lineno: int) -> str | None:
    """The function a line is in: the nearest signature above it at the top
    level or one indent in (methods defined in a struct's body)."""
    for i in range(lineno - 1, max(-1, lineno - 600), -1):
        ln = lines[i]
        indent = len(ln) - len(ln.lstrip(" "))
        if indent > 4 or "(" not in ln or ln.lstrip()[:1] in ("#", "/", "*", "}", "{", "") or ln.rstrip().endswith(";"):
            continue
        m = _CPP_FUNC.match(ln.lstrip())
        if m and m.group(1) not in _NOT_FUNC and ln.split(None, 1)[0] not in _NOT_FUNC:
            return m.group(1)
        m = _CPP_NAME_AT_0.match(ln)
        if m and i and _CPP_TYPE_LINE.match(lines[i - 1].strip() or ";") and m.group(1) not in _NOT_FUNC:
            return m.group(1)
    return None


def _says_something(msg: str) -> bool:
    """A native message worth an entry: two words besides placeholders, eight
    letters in all ("load", "{err}: {}" say nothing a lookup could use)."""
    words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\{[^{}]*\}", " ", msg))
    return len(words) >= 2 and literal_size(msg) >= 8


def _native_module(relpath: str) -> str:
    return relpath.rsplit(".", 1)[0].replace("/", ".")


def mine_llama_cpp(text: str, relpath: str, package: str, release: str, out: Mined) -> None:
    """llama.cpp's, ggml's and the server's log macros, aborts, asserts and throws."""
    lines = text.split("\n")
    module = _native_module(relpath)
    for m, args, line in _macro_calls(text, _LLAMA_RX):
        kind, level, fi, printf, prefix = _LLAMA_MACROS[m.group(1)]
        if m.group(1) == "fprintf" and (not args or args[0].strip() != "stderr"):
            continue
        fmt = _c_literal(args[fi]) if len(args) > fi else None
        if fmt is None:
            continue
        func = _cpp_function_at(lines, line - 1)
        msg = prefix + (_c_printf(fmt, args[fi + 1:], func) if printf else _esc(fmt))
        if not _says_something(msg[len(prefix):]):
            continue
        out.records.append(Record(package, release, kind, msg, level, None, module, func, f"{relpath}:{line}"))
    for m, args, line in _macro_calls(text, _GGML_ASSERT_RX):
        if args and args[0].strip():
            tmpl = "{file}:{line}: GGML_ASSERT(" + _esc(" ".join(args[0].split())) + ") failed"
            out.records.append(Record(package, release, "assert", tmpl, "ERROR", None, module,
                                      _cpp_function_at(lines, line - 1), f"{relpath}:{line}"))
    for m, args, line in _macro_calls(text, _CPP_THROW):
        func = _cpp_function_at(lines, line - 1)
        thrown = _c_expr_message(args[0], func) if args else None
        if thrown and _says_something(thrown):
            out.records.append(Record(package, release, "raise", thrown, None, f"std::{m.group(1)}", module, func,
                                      f"{relpath}:{line}"))


# --------------------------------------------------------------- Go (Ollama)
# slog's message is a literal and its attributes follow as key, value pairs
# (printed ``level=ERROR source=... msg="..." key=value``); errors are built
# with fmt.Errorf (Go's verbs) or errors.New and printed wherever they end.
# LocalAI logs through xlog (slog's shape) and, before 3.x, zerolog
# (``log.Error().Err(err).Msg("...")``: the message is the chain's last call).
_GO_CALL = re.compile(r"\b((?:slog|xlog)\.(?:Error|Warn|Info)|log\.(?:Printf|Println|Fatalf|Fatal|Panicf)|"
                      r"fmt\.Errorf|errors\.New)\s*\(")
_ZEROLOG = re.compile(r"\blog\.(Error|Warn|Info|Fatal)\(\)")
_ZEROLOG_LEVEL = {"Error": "ERROR", "Warn": "WARNING", "Info": "INFO", "Fatal": "CRITICAL"}
_GO_KIND = {"slog.Error": ("native-log", "ERROR"), "slog.Warn": ("native-log", "WARNING"),
            "slog.Info": ("native-log", "INFO"), "xlog.Error": ("native-log", "ERROR"),
            "xlog.Warn": ("native-log", "WARNING"), "xlog.Info": ("native-log", "INFO"),
            "log.Printf": ("native-log", None), "log.Println": ("native-log", None),
            "log.Fatalf": ("native-log", "CRITICAL"), "log.Fatal": ("native-log", "CRITICAL"),
            "log.Panicf": ("panic", "ERROR"), "fmt.Errorf": ("raise", None), "errors.New": ("raise", None)}
_GO_VERB = re.compile(r"%[#0\- +]*(?:\d+)?(?:\.\d+)?([vwqTtbcdoOxXeEfFgGsUp%])")
_GO_STR = re.compile(r'^\s*(?:"((?:[^"\\\n]|\\.)*)"|`([^`]*)`)\s*$', re.DOTALL)
_GO_FUNC = re.compile(r"^func\s+(?:\(\s*\w*\s*\*?(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)")


def _go_printf(fmt: str, args: list[str]) -> str:
    out: list[str] = []
    pos = 0
    i = 0
    for m in _GO_VERB.finditer(fmt):
        out.append(_esc(fmt[pos:m.start()]))
        pos = m.end()
        if m.group(1) == "%":
            out.append("%")
            continue
        names = re.findall(r"[A-Za-z_]\w*", args[i]) if i < len(args) else []
        i += 1
        out.append("{" + (names[-1] if names else "") + "}")
    out.append(_esc(fmt[pos:]))
    return "".join(out)


def _go_function_at(lines: list[str], lineno: int) -> str | None:
    for i in range(lineno - 1, max(-1, lineno - 800), -1):
        m = _GO_FUNC.match(lines[i])
        if m:
            return f"{m.group(1)}.{m.group(2)}" if m.group(1) else m.group(2)
    return None


def mine_go(text: str, relpath: str, package: str, release: str, out: Mined) -> None:
    lines = text.split("\n")
    module = relpath.rsplit(".", 1)[0].replace("/", ".")
    for m, args, line in _macro_calls(text, _GO_CALL):
        sm = _GO_STR.match(args[0]) if args else None
        if sm is None:
            continue
        raw = _c_unescape(sm.group(1)) if sm.group(1) is not None else sm.group(2)
        kind, level = _GO_KIND[m.group(1)]
        printf = m.group(1).endswith("f")
        msg = _go_printf(raw, args[1:]) if printf else _esc(raw)
        if not _says_something(msg):
            continue
        out.records.append(Record(package, release, kind, msg, level, None, module,
                                  _go_function_at(lines, line - 1), f"{relpath}:{line}"))
    for m in _ZEROLOG.finditer(text):
        got = _zerolog_message(text, m.end())
        if got is not None and _says_something(got):
            line = text.count("\n", 0, m.start()) + 1
            out.records.append(Record(package, release, "native-log", got, _ZEROLOG_LEVEL[m.group(1)], None, module,
                                      _go_function_at(lines, line - 1), f"{relpath}:{line}"))


def _zerolog_message(text: str, pos: int) -> str | None:
    """The message of a zerolog chain starting at ``pos`` (after ``log.Error()``):
    the argument of its ``.Msg``/``.Msgf`` call, as a template."""
    for _ in range(12):
        m = re.compile(r"\s*\.\s*(\w+)\s*\(").match(text, pos)
        if not m:
            return None
        got = _scan_call_args(text, m.end() - 1)
        if not got:
            return None
        args, pos = got[0], got[1] + 1
        if m.group(1) in ("Msg", "Msgf"):
            sm = _GO_STR.match(args[0]) if args else None
            if sm is None:
                return None
            raw = _c_unescape(sm.group(1)) if sm.group(1) is not None else sm.group(2)
            return _go_printf(raw, args[1:]) if m.group(1) == "Msgf" else _esc(raw)
    return None


# ------------------------------------------- Triton Inference Server (C++)
# Its logs are streams (``LOG_ERROR << "failed to load " << name;``, printed
# ``E1205 10:00:00.123 1 file.cc:123] failed to load ...``); its errors are
# ``Status(Status::Code::X, msg)`` (core) and ``TRITONSERVER_ErrorNew(code,
# msg)``, printed as "<code name>: msg" in whatever line reports them.
_TRITON_LOG = re.compile(r"\bLOG_(ERROR|WARNING|INFO)\s*<<")
_TRITON_LEVEL = {"ERROR": "ERROR", "WARNING": "WARNING", "INFO": "INFO"}
_TRITON_ERR = re.compile(r"\b(?:Status|TRITONSERVER_ErrorNew)\s*\(\s*(?:Status::Code::|TRITONSERVER_ERROR_)(\w+)\s*,")


def _stream_end(text: str, start: int) -> int:
    """Where the statement starting at ``start`` ends (its ';' outside literals)."""
    i = start
    while i < len(text) and i - start < 4000:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == ";":
            return i
        i += 1
    return -1


def mine_triton_server(text: str, relpath: str, package: str, release: str, out: Mined) -> None:
    lines = text.split("\n")
    module = _native_module(relpath)
    for m in _TRITON_LOG.finditer(text):
        end = _stream_end(text, m.end())
        if end < 0:
            continue
        msg = _c_expr_message(" + ".join(_split_top(text[m.end():end], "<<")), None)
        line = text.count("\n", 0, m.start()) + 1
        if msg and _says_something(msg):
            out.records.append(Record(package, release, "native-log", msg, _TRITON_LEVEL[m.group(1)], None, module,
                                      _cpp_function_at(lines, line - 1), f"{relpath}:{line}"))
    for m in _TRITON_ERR.finditer(text):
        got = _scan_call_args(text, text.index("(", m.start()))
        if not got or len(got[0]) < 2:
            continue
        msg = _c_expr_message(got[0][1], None)
        line = text.count("\n", 0, m.start()) + 1
        if msg and _says_something(msg):
            out.records.append(Record(package, release, "raise", msg, None, m.group(1), module,
                                      _cpp_function_at(lines, line - 1), f"{relpath}:{line}"))


# torch's C++ messages that surface in Python (the CUDA caching allocator's
# "CUDA out of memory. Tried to allocate", ProcessGroupNCCL's watchdog and
# errors) live in .cpp files that the wheel does not ship; their string
# literals are in the shared libraries. A literal that reads like a sentence is
# kept; code-like literals (stringified conditions, descriptors) are not.
# A string starts after a non-printable byte and is taken whole (possessive):
# long printable runs without a NUL (embedded PTX, tables) cost linear time.
_SO_STR = re.compile(rb"(?<![\x20-\x7e])[\x20-\x7e]{14,400}+(?=\x00)")
_SENTENCE = re.compile(r"^[A-Za-z][^\x00]*?\s\S+\s\S+")
_CODEY = re.compile(r"::|->|\(\)|static_cast|reinterpret_cast|CUDNN_BACKEND|CUDNN_ATTR|\.data_ptr|"
                    r"\bconst\b|\btemplate\b|[{};]\s*$|^\s*#|%[0-9.]*[a-z]|\bstd\b|\w\(\w+\s*[<>=!]=")
TORCH_LIBS = re.compile(r"torch/lib/(libtorch_cuda|libc10_cuda|libc10|libtorch_cuda_linalg)\.so$")
NPU_LIBS = re.compile(r"torch_npu/lib/libtorch_npu\.so$")
_ARG_LIST = re.compile(r"[\w.\[\]]+(,\s*[\w.\[\]]+)+,?")


def mine_torch_binaries(z: zipfile.ZipFile, release: str, out: Mined, package: str = "torch",
                        libs: re.Pattern[str] = TORCH_LIBS) -> None:
    for n in z.namelist():
        if not libs.search(n):
            continue
        with z.open(n) as fh:
            data = fh.read()
        lib = n.rsplit("/", 1)[-1]
        seen: set[str] = set()
        for m in _SO_STR.finditer(data):
            s = m.group().decode("ascii")
            if package != "torch":  # " NPU function error: ": a c10::str piece after a value
                s = s.strip()
                if _ARG_LIST.fullmatch(s):  # an op's argument names ("self, other, alpha, out")
                    continue
            if s in seen or not _SENTENCE.match(s) or _CODEY.search(s) or s.startswith(("_Z", "GCC", "GLIBC")):
                continue
            seen.add(s)
            tmpl = _esc(s.strip())
            if s.endswith((" ", ":", "(", "=")):
                tmpl += (" " if s.endswith(" ") else "") + "{}"  # a c10::str piece: a value follows
            out.records.append(Record(package, release, "binary-string", tmpl, None, None, lib.split(".")[0],
                                      None, f"{n}"))
        del data


# ------------------------------------------------------------------- CUDA
_CUDA_ENUM = re.compile(r"\b(cudaError\w*)\s*=\s*(\d+)\s*,?")


def mine_cuda_runtime(wheel: Path, release: str, out: Mined) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        hdr = next((n for n in names if n.endswith("include/driver_types.h")), None)
        lib = next((n for n in names if re.search(r"lib/libcudart\.so\.\d+$", n)), None)
        if hdr is None:
            return
        header = z.read(hdr).decode("utf-8", "replace")
        enum_start = header.find("enum __device_builtin__ cudaError")
        enum_end = header.find("};", enum_start)
        body = header[enum_start:enum_end] if enum_start >= 0 else header
        codes = [(n, int(v)) for n, v in _CUDA_ENUM.findall(body) if n.startswith("cudaError")]
        lines_before = header.count("\n", 0, max(enum_start, 0))
        strings: dict[int, tuple[str, str]] = {}
        if lib is not None:
            with tempfile.TemporaryDirectory() as td:
                p = Path(td) / "libcudart.so"
                p.write_bytes(z.read(lib))  # a tmp copy to dlopen
                try:
                    cudart = ctypes.CDLL(str(p))
                    cudart.cudaGetErrorString.restype = ctypes.c_char_p
                    cudart.cudaGetErrorName.restype = ctypes.c_char_p
                    for _n, v in codes:
                        s = cudart.cudaGetErrorString(ctypes.c_int(v))
                        nm = cudart.cudaGetErrorName(ctypes.c_int(v))
                        if s and nm:
                            strings[v] = (nm.decode(), s.decode())
                except OSError as exc:
                    print(f"catalogue: cannot load {lib}: {exc}", file=sys.stderr)
    for name, v in codes:
        nm, s = strings.get(v, (name, ""))
        line = lines_before + body.count("\n", 0, body.find(name)) + 1
        src = f"{hdr}:{line}"
        out.records.append(Record("cuda-runtime", release, "error-string", _esc(nm), "ERROR", nm, "cudart",
                                  "cudaGetErrorName", src))
        if s and s != "unrecognized error code":
            out.records.append(Record("cuda-runtime", release, "error-string", _esc(s), "ERROR", nm, "cudart",
                                      "cudaGetErrorString", src))
            # torch's and most servers' wrapping of it
            out.records.append(Record("cuda-runtime", release, "error-string", "CUDA error: " + _esc(s), "ERROR", nm,
                                      "cudart", "cudaGetErrorString", src))


# ROCm's HIP runtime: hipGetErrorName/hipGetErrorString are switch statements
# (ihipGetErrorName/ihipGetErrorString) of CLR's hip_error.cpp; each string also as
# torch's ROCm build prints it ("HIP error: <string>").
HIP_ERROR_SRC = "hipamd/src/hip_error.cpp"
_HIP_CASE = re.compile(r"case\s+(hip\w+)\s*:\s*return\s*\"((?:[^\"\\]|\\.)*)\"\s*;")


def mine_hip_errors(text: str, relpath: str, release: str, out: Mined) -> None:
    start = text.find("ihipGetErrorString")
    if start < 0:
        return
    for m in _HIP_CASE.finditer(text, start):
        name, msg = m.group(1), _c_unescape(m.group(2))
        if name == "hipSuccess":
            continue
        src = f"{relpath}:{text.count(chr(10), 0, m.start()) + 1}"
        out.records.append(Record("hip-runtime", release, "error-string", _esc(name), "ERROR", name, "amdhip64",
                                  "hipGetErrorName", src))
        if msg and msg != "unknown error":
            for t in (msg, "HIP error: " + msg):
                out.records.append(Record("hip-runtime", release, "error-string", _esc(t), "ERROR", name, "amdhip64",
                                          "hipGetErrorString", src))


_HIP_LOG = re.compile(r"\b(LogPrintfError|LogPrintfWarning|LogError|LogWarning)\s*\(")


def mine_hip_logs(text: str, relpath: str, release: str, out: Mined) -> None:
    """The HIP runtime's own error and warning logs (``LogPrintfError("%s", "hipErrorNoBinaryForGpu: ...")``)."""
    lines = text.split("\n")
    for m, args, line in _macro_calls(text, _HIP_LOG):
        fmt = _c_literal(args[0]) if args else None
        if fmt is None:
            continue
        rest = args[1:]
        if fmt.strip() == "%s" and rest and _c_literal(rest[0]) is not None:
            fmt, rest = _c_literal(rest[0]) or "", rest[1:]  # the message handed to "%s"
        func = _cpp_function_at(lines, line - 1)
        msg = _c_printf(fmt.strip(), rest, func)
        if literal_size(msg) < 8:
            continue
        level = "ERROR" if "Error" in m.group(1) else "WARNING"
        out.records.append(Record("hip-runtime", release, "native-log", msg, level, None, _native_module(relpath), func,
                                  f"{relpath}:{line}"))


# ------------------------------------------------------------ the C library
# The dynamic loader's own messages end ImportErrors of compiled extensions
# ("cannot open shared object file", "undefined symbol", "version `GLIBCXX_…'
# not found"). Read from this machine's loader (its Debian package version is
# the release).
GLIBC_LOADERS = ("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2")
_ELF_STR = re.compile(rb"(?<![\x20-\x7e])[\x20-\x7e]{10,300}+(?=\x00)")


def glibc_release() -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libc6"], capture_output=True, text=True)
        return out.stdout.strip() or None
    except OSError:
        return None


def mine_elf_strings(data: bytes, package: str, release: str, module: str, source: str, out: Mined,
                     min_words: int = 2) -> None:
    """Sentence-like printf strings of a native program (kind binary-string)."""
    seen: set[str] = set()
    for m in _ELF_STR.finditer(data):
        s = m.group().decode("ascii")
        if s in seen or not re.match(r"^[A-Za-z%'\"][^\x00]*?(\s\S+){" + str(min_words - 1) + "}", s) or \
                re.search(r"[{};\[\]]|^\s|\\|==|!=|>=|<=|->|&&|\|\||^_Z|^GLIBC|^GCC|\.(c|cc|cpp|h)$", s):
            continue
        seen.add(s)
        out.records.append(Record(package, release, "binary-string", _printf_to_template(s.strip(), None), None, None,
                                  module, None, source))


def mine_loader(path: Path, release: str, out: Mined) -> None:
    mine_elf_strings(path.read_bytes(), "glibc", release, path.name, str(path), out)


# Build tools whose own error lines prove a JIT build failed: ninja (the
# ninja wheel's binary) and ptxas (the nvidia-cuda-nvcc wheels' assembler).
TOOL_WHEELS: dict[str, tuple[str, list[str], str]] = {
    "ninja": ("ninja", ["1.10.2.4", "1.11.1.4", "1.13.0"], r"(^|/)ninja$"),
    "ptxas": ("nvidia-cuda-nvcc-cu12", ["12.4.131", "12.8.93", "12.9.86"], r"/bin/ptxas$"),
}


def mine_tool_wheel(package: str, dist: str, version: str, member: str, wheel_dir: Path, out: Mined) -> None:
    whl = wheel_path(dist, version, wheel_dir)
    out.provenance[package].append(f"{version}: wheel `{whl.name}` sha256 `{sha256(whl)}`")
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if re.search(member, n):
                mine_elf_strings(z.read(n), package, version, n.rsplit("/", 1)[-1], n, out, min_words=3)


# ------------------------------------------------------------ Python itself
# The standard library's own messages reach servers' logs too: asyncio's
# "error while attempting to bind on address", argparse's "unrecognized
# arguments", concurrent.futures' "process pool was terminated abruptly",
# multiprocessing, subprocess, importlib. Read from installed interpreters.
STDLIB_KEEP = ("asyncio/", "subprocess.py", "multiprocessing/", "concurrent/", "importlib/", "socket.py",
               "ssl.py", "shutil.py", "signal.py", "threading.py", "argparse.py", "json/", "http/", "urllib/",
               "zipfile", "tempfile.py", "os.py", "ctypes/__init__.py", "ctypes/util.py", "selectors.py",
               "queue.py", "pickle.py", "logging/", "runpy.py", "site.py", "codecs.py", "pathlib", "socketserver.py")


def default_python_libs() -> list[Path]:
    import glob
    import sysconfig
    libs = {Path(p) for p in glob.glob("/root/.pyenv/versions/3.1[0-9]*/lib/python3.*") if Path(p, "os.py").is_file()}
    libs.add(Path(sysconfig.get_paths()["stdlib"]))
    return sorted(libs, key=lambda p: _vkey(p.name.replace("python", "")))


def python_release(lib: Path) -> str:
    import platform
    import sysconfig
    if lib.resolve() == Path(sysconfig.get_paths()["stdlib"]).resolve():
        return platform.python_version()
    m = re.search(r"versions/(\d+\.\d+\.\d+)", str(lib))
    return m.group(1) if m else lib.name.replace("python", "")


def mine_python_stdlib(lib: Path, release: str, out: Mined) -> None:
    for path in sorted(lib.rglob("*.py")):
        rel = path.relative_to(lib).as_posix()
        if rel.startswith(STDLIB_KEEP) and "/test" not in rel and "idlelib" not in rel:
            mine_python(path.read_bytes(), rel, "python", release, out)


def mine_errno(release: str, out: Mined) -> None:
    """The OS error strings as Python prints them ("[Errno 98] Address already
    in use"), each with the OSError subclass Python raises for it."""
    import errno
    import os
    for code, name in sorted(errno.errorcode.items()):
        text = os.strerror(code)
        if not text or text.startswith("Unknown error"):
            continue
        exc = type(OSError(code, text)).__name__
        out.records.append(Record("python", release, "error-string", f"[Errno {code}] " + _esc(text), "ERROR", exc,
                                  "errno", name, f"os.strerror({name})"))


# --------------------------------------------------------------- readers
def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wheel_path(dist: str, version: str, wheel_dir: Path) -> Path:
    norm = re.sub(r"[-_.]+", "_", dist).lower()

    def find() -> Path | None:
        for p in sorted(wheel_dir.glob("*.whl")):
            nm = p.name.lower()
            if nm.startswith(f"{norm}-{version.lower()}-") or nm.startswith(f"{norm}-{version.lower()}+"):
                return p
        return None

    p = find()
    if p is None:
        wheel_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        f"{dist}=={version}", "-d", str(wheel_dir)], check=True,
                       stdout=subprocess.DEVNULL)
        p = find()
    if p is None:
        raise FileNotFoundError(f"no wheel for {dist}=={version} in {wheel_dir}")
    return p


def mine_wheel(package: str, dist: str, version: str, keep: Callable[[str], bool], wheel_dir: Path,
               out: Mined) -> None:
    whl = wheel_path(dist, version, wheel_dir)
    out.provenance[package].append(f"{version}: wheel `{whl.name}` sha256 `{sha256(whl)}`")
    with zipfile.ZipFile(whl) as z:
        if package == "torch":
            mine_torch_binaries(z, version, out)
        if package == "torch-npu":
            mine_torch_binaries(z, version, out, "torch-npu", NPU_LIBS)
            mine_npu_error_codes(z, version, out)
        for info in z.infolist():
            n = info.filename
            if n.endswith(".py") and keep(n):
                mine_python(z.read(n), n, package, version, out)
                if package == "torch-npu" and re.search(r"torch_npu/utils/_?error_code\.py$", n):
                    mine_npu_errcode_py(z.read(n), n, version, out)
            elif package == "torch-npu" and n.startswith("torch_npu/include/torch_npu/") and n.endswith((".h", ".hpp")):
                mine_torch_cpp(z.read(n).decode("utf-8", "replace"), n[len("torch_npu/include/"):], version, out,
                               "torch-npu")
            elif package == "torch" and n.startswith("torch/include/") and n.endswith((".h", ".cuh", ".hpp")) \
                    and re.search(r"torch/include/(c10|ATen)/", n) and info.file_size < 2_000_000:
                mine_torch_cpp(z.read(n).decode("utf-8", "replace"), n[len("torch/include/"):], version, out)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def git_files(repo: Path, rev: str, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    names = [n for n in git(repo, "ls-tree", "-r", "--name-only", rev).splitlines() if keep(n)]
    if not names:
        return
    proc = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"],
                          input="".join(f"{rev}:{n}\n" for n in names).encode(), capture_output=True, check=True)
    buf = io.BytesIO(proc.stdout)
    for n in names:
        header = buf.readline().split()
        if len(header) < 3:
            continue
        size = int(header[2])
        data = buf.read(size)
        buf.read(1)
        yield n, data


def _rev(release: str) -> str:
    return release[4:] if release.startswith("git-") else release


def mine_repo(package: str, repo: Path, releases: list[str], out: Mined) -> None:
    for rel in releases:
        rev = _rev(rel)
        try:
            commit = git(repo, "rev-parse", f"{rev}^{{commit}}").strip()
        except subprocess.CalledProcessError:
            print(f"catalogue: {package}: no {rel} in {repo}", file=sys.stderr)
            continue
        out.provenance[package].append(f"{rel}: commit `{commit}`")
        if package == "tgi":
            for n, data in git_files(repo, rev, lambda p: (p.startswith("server/text_generation_server/") and p.endswith(".py"))
                                     or (p.endswith(".rs") and p.startswith(("launcher/", "router/", "backends/")))):
                if n.endswith(".py"):
                    mine_python(data, n[len("server/"):], "tgi", rel, out)
                else:
                    mine_rust(data.decode("utf-8", "replace"), n, "tgi", rel, out)
        elif package == "nccl":
            for n, data in git_files(repo, rev, lambda p: p.startswith("src/") and p.endswith((".cc", ".cu", ".h", ".cpp"))):
                mine_nccl(data.decode("utf-8", "replace"), n, rel, out)
        elif package == "deepgemm":
            for n, data in git_files(repo, rev, lambda p: p.endswith((".py", ".hpp", ".cpp", ".cu", ".cuh", ".h"))
                                     and not p.startswith(("third-party/", "tests/"))):
                if n.endswith(".py"):
                    mine_python(data, n, "deepgemm", rel, out)
                else:
                    mine_deepgemm_cpp(data.decode("utf-8", "replace"), n, rel, out)
        elif package == "tritonserver":
            mine_triton_release(repo, rev, rel, out)
        elif package == "hip-runtime":
            for n, data in git_files(repo, rev, lambda p: p.startswith("hipamd/src/") and p.endswith((".cpp", ".hpp"))):
                text = data.decode("utf-8", "replace")
                if n == HIP_ERROR_SRC:
                    mine_hip_errors(text, n, rel, out)
                mine_hip_logs(text, n, rel, out)
        else:
            mine_by_type(package, repo, rev, rel, out)


def mine_by_type(package: str, repo: Path, rev: str, rel: str, out: Mined) -> None:
    """A repository's Python, Go and Rust sources, each by its own miner."""
    for n, data in git_files(repo, rev, lambda p: _repo_path_ok(package, p)):
        if n.endswith(".py"):
            mine_python(data, n, package, rel, out)
        elif n.endswith(".go"):
            mine_go(data.decode("utf-8", "replace"), n, package, rel, out)
        elif n.endswith(".rs"):
            mine_rust(data.decode("utf-8", "replace"), n, package, rel, out)


def _triton_source(path: str) -> bool:
    return path.startswith("src/") and path.endswith((".cc", ".h")) and "/test" not in path and "test/" not in path[:9]


def mine_triton_release(repo: Path, rev: str, rel: str, out: Mined) -> None:
    """The server's sources at its tag and the core's at the release branch of the same month."""
    for n, data in git_files(repo, rev, _triton_source):
        mine_triton_server(data.decode("utf-8", "replace"), "server/" + n, "tritonserver", rel, out)
    core_repo, branches = TRITON_CORE
    core = repo.parent.parent / core_repo.replace("/", "+") / "repo"
    branch = branches.get(rel)
    if branch is None or not core.is_dir():
        print(f"catalogue: tritonserver {rel}: no core mirror/branch; server only", file=sys.stderr)
        return
    commit = git(core, "rev-parse", f"{branch}^{{commit}}").strip()
    out.provenance["tritonserver"].append(f"{rel}: core `{core_repo}` branch {branch} commit `{commit}`")
    for n, data in git_files(core, branch, _triton_source):
        mine_triton_server(data.decode("utf-8", "replace"), "core/" + n, "tritonserver", rel, out)


def mine_sdist(package: str, dist: str, version: str, wheel_dir: Path, out: Mined) -> None:
    """A source distribution read in place (llama-cpp-python: its vendored llama.cpp)."""
    import tarfile

    path = sdist_path(dist, version, wheel_dir)
    out.provenance[package].append(f"{version}: sdist `{path.name}` sha256 `{sha256(path)}` (vendor/llama.cpp)")
    with tarfile.open(path, "r:gz") as tf:
        for info in tf:
            parts = info.name.split("/vendor/llama.cpp/", 1)
            if not info.isfile() or len(parts) != 2 or not _LLAMA_DIRS.match(parts[1]):
                continue
            if not parts[1].endswith((".c", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".m")) or "/test" in parts[1]:
                continue
            fh = tf.extractfile(info)
            if fh is not None and info.size < 4_000_000:
                mine_llama_cpp(fh.read().decode("utf-8", "replace"), parts[1], package, version, out)


def sdist_path(dist: str, version: str, wheel_dir: Path) -> Path:
    norm = re.sub(r"[-_.]+", "_", dist).lower()
    for p in sorted(wheel_dir.glob("*.tar.gz")):
        if p.name.lower() == f"{norm}-{version.lower()}.tar.gz":
            return p
    wheel_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary=:all:",
                    f"{dist}=={version}", "-d", str(wheel_dir)], check=True, stdout=subprocess.DEVNULL)
    return sdist_path(dist, version, wheel_dir)


# ------------------------------------------------------------ aggregation
def _vkey(release: str) -> tuple:
    """Sort key for releases: numbers compare as numbers; untagged commits last
    within their own ordering of appearance."""
    r = release.lstrip("v")
    if r.startswith("git-"):
        return (1, ())
    return (0, tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+-]|post", r) if x != ""))


def _norm_template(t: str) -> str:
    return " ".join(t.split()) if "\n" not in t.strip() else t.strip()


# A template whose literal text holds a single index word ("llg error: {c}",
# "{dir}/{f} has error, {e}") is tried on every line that has the word, and
# such words are the commonest in logs ("error", "failed"): in the packages
# added in December 2026 509 of 22,885 templates made 83% of their lookup
# candidates on the public corpus's error lines, and said next to nothing. They
# are left out, except in the packages mined before that (kept as mined, so an
# --only rebuild leaves their files byte-identical; a full rebuild may drop this list).
ONE_WORD_TEMPLATES_KEPT = frozenset({
    "cuda-runtime", "deepgemm", "flashinfer", "glibc", "huggingface-hub", "lmdeploy", "nccl", "ninja", "ptxas",
    "python", "ray", "sgl-kernel", "sglang", "tgi", "torch", "transformers", "triton", "uvicorn", "vllm",
    "vllm-ascend"})


def aggregate(mined: Mined, order: dict[str, list[str]]) -> dict[str, list[dict]]:
    """One entry per (package, kind, exc type, level, template), releases merged;
    module/function/source from the newest release."""
    rank = {pkg: {r: i for i, r in enumerate(rels)} for pkg, rels in order.items()}
    groups: dict[tuple, list[Record]] = defaultdict(list)
    for r in mined.records:
        t = _norm_template(r.template)
        if not t or literal_size(t) < 3:
            continue
        if r.package not in ONE_WORD_TEMPLATES_KEPT and len(set(literal_keys(t))) < 2:
            continue
        r.template = t
        groups[(r.package, r.kind, r.exc_type, r.level, t)].append(r)
    out: dict[str, list[dict]] = defaultdict(list)
    for (pkg, kind, exc, level, t), recs in groups.items():
        rk = rank.get(pkg, {})
        recs.sort(key=lambda r: (rk.get(r.release, -1), r.source), reverse=True)
        newest = recs[0]
        releases = sorted({r.release for r in recs}, key=lambda r: rk.get(r, -1))
        phase = phase_from_names(newest.module, newest.function or "")
        label, rule = guess_label(exc, t, phase, pkg, kind, level)
        # id, match and package are functions of these fields (and of the file
        # name): the loader derives them, so the files do not store them.
        out[pkg].append({
            "kind": kind, "template": t, "level": level, "exc_type": exc, "module": newest.module, "function": newest.function,
            "releases": releases, "source": f"{newest.release}:{newest.source}",
            "phase": phase, "label": label, "label_rule": rule, "advice": advice_of(t),
            "sites": len({(r.module, r.function) for r in recs if r.release == newest.release}),
        })
    for pkg in out:
        out[pkg].sort(key=lambda e: (e["kind"], e["template"], e["exc_type"] or "", e["level"] or ""))
    return out


def function_table(mined: Mined) -> dict[str, dict[str, str]]:
    """module -> bare function name -> phase, for every function seen whose
    qualified name (class included) or module names a phase."""
    table: dict[str, dict[str, str]] = {}
    for module, funcs in mined.functions.items():
        for name, quals in funcs.items():
            phases = Counter(p for p in (phase_from_names(module, q) for q in sorted(quals)) if p)
            if phases:
                table.setdefault(module, {})[name] = phases.most_common(1)[0][0]
    return {m: dict(sorted(v.items())) for m, v in sorted(table.items())}


def write_gz(path: Path, text: str) -> None:
    # mtime=0: the same input gives the same bytes (rebuilds diff cleanly)
    from forensics.atomic import atomic_open

    with atomic_open(path, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))


# The fixed part of the catalogue README: sources in words, the entry fields, how to rebuild.
README_TAIL = [
    "CUDA runtime: the `cudaError` enum of `include/driver_types.h` in each wheel, and for each code",
    "the name and string its own `libcudart.so.12` returns (`cudaGetErrorName` / `cudaGetErrorString`;",
    "no GPU needed); each string also as torch prints it (`CUDA error: <string>`).",
    "torch: besides its Python layer and the `TORCH_CHECK`-family messages of its C++ headers,",
    "the sentence-like string literals of `libtorch_cuda`/`libc10_cuda`/`libc10` (kind",
    "`binary-string`: the caching allocator's and ProcessGroupNCCL's messages live in .cpp files",
    "the wheel does not ship).",
    "python: the standard library modules servers run through (asyncio, argparse, subprocess,",
    "multiprocessing, concurrent.futures, importlib, ...) of each installed interpreter, and the",
    "errno strings as Python prints them (`[Errno 98] Address already in use`).",
    "ninja, ptxas: sentence-like printf strings of the `ninja` binary (ninja wheels) and of",
    "`ptxas` (nvidia-cuda-nvcc-cu12 wheels): a JIT build's own error lines.",
    "glibc: sentence-like strings of this machine's dynamic loader (`cannot open shared object file`,",
    "`undefined symbol`, `version ... not found`).",
    "llama.cpp: the C/C++ of the llama.cpp commit that each llama-cpp-python sdist vendors (ggml and",
    "its backends, the library, common, the server, mtmd): `LLAMA_LOG_*`, `GGML_LOG_*`, `LOG_ERR/WRN/INF`,",
    "the server's `SRV_*`/`SLT_*` (with their `srv <func>: ` / `slot <func>: id .. | task .. | ` prefixes),",
    "the 2024 server's `LOG_ERROR/WARNING/INFO`, `fprintf(stderr, ...)`, `GGML_ABORT` and `GGML_ASSERT` (as",
    "ggml prints them: `<file>:<line>: ...`), `throw std::runtime_error(...)`; `__func__` is written as the",
    "function's name, as it is printed. Ollama's vendored copy of llama.cpp is not mined again.",
    "Go (ollama, localai): `slog`/`xlog` `Error/Warn/Info` (the message; attributes follow it), zerolog",
    "chains (`log.Error()....Msg(...)`), `log.Printf/Fatalf`, `fmt.Errorf` and `errors.New` (kind `raise`).",
    "tritonserver: the server's front ends (`src/`) at its tag and `triton-inference-server/core` at the",
    "release branch of the same month: `LOG_ERROR/WARNING/INFO << ...` streams and the messages of",
    "`Status(Status::Code::X, ...)` / `TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_X, ...)` (exc_type `X`).",
    "mistral.rs: its crates' Rust, as TGI's (tracing macros, `bail!`/`anyhow!`, `.expect`, thiserror).",
    "torch-npu: the Python of each wheel, the `TORCH_CHECK`-family messages of its headers, the",
    "sentence-like strings of `libtorch_npu.so` (as torch's, argument-name lists left out), the ACL",
    "error codes' explanations of `NPUErrorCodes.h` as printed (`[Error]: <message>`, exc_type the",
    "runtime's constant from `rt_error_codes.h`), and every `ERR<ss><ccc> <SUBMODULE> <message>` its",
    "`_format_error_msg` can print (a suffix: rule `npu-error-code-suffix` gives it no label).",
    "hip-runtime: `ROCm/clr` at each tag: `hipGetErrorName`/`hipGetErrorString` (also as",
    "`HIP error: <string>`) and the runtime's `LogPrintfError/LogError/LogPrintfWarning/LogWarning`.",
    "dynamo, dynamo-runtime, kserve, jax, tpu-inference: Python of their wheels (jax: its backend,",
    "compilation, dispatch, distributed and TPU start-up modules only).",
    "Not mined: TensorRT-LLM (its wheels are not on PyPI for this platform and its repository is",
    "too large to fetch), Dynamo's Rust core (compiled; its strings are not NUL-terminated), CANN.",
    "Left out on purpose: per-model modelling code of transformers (servers reimplement it),",
    "SGLang's diffusion server (`multimodal_gen`), FlashInfer's `experimental/` and training",
    "backends, torch's export/ONNX/quantization tooling and tests, mlx-lm's per-model code, Xinference's",
    "bundled third-party model code and web UI.",
    "",
    "## Entry fields", "",
    "`template` (literal text, `{}`/`{name}` placeholders, literal braces doubled), `match` (regex",
    "for the template's first line), `kind` (raise, assert, log, warn, print, check, native-log,",
    "error-string, panic, binary-string, progress), `level`, `exc_type`, `module`, `function` (qualname), `releases`,",
    "`source` (newest release:file:line), `sites`, `phase` (from the function's and module's names,",
    "rules `PHASE_RULES` in `forensics/events/catalogue.py`), `label` and `label_rule` (a guess from",
    "the exception type and wording, rules in `forensics/lab/catalogue_rules.py`; null when unsure),",
    "`advice` (the message's own sentences that say what to do, e.g. `Please try to increase",
    "--mem-fraction-static`; null when it has none).",
    "",
    "## Rebuild", "",
    "```",
    "python -m forensics.lab.catalogue_mine --out signatures/catalogue \\",
    "    --wheel-dir /tmp/wheels --mirror-root /path/to/mirrors",
    "```",
    "Wheels missing from `--wheel-dir` are fetched with `pip download --no-deps --only-binary=:all:`,",
    "source distributions (llama-cpp-python) with `pip download --no-deps --no-binary=:all:`.",
    "Repositories are read with git from `<mirror-root>/<owner>+<name>/repo` (a bare clone with tags).",
    "`--python-lib DIR ...` names the standard libraries to read (default: the installed interpreters).",
    "`--only PKG ...` re-mines some packages and keeps the others' files; `--relabel` re-derives",
    "`phase`, `label` and `advice` of the stored entries after a rule change (no mining; the",
    "function table keeps the phases of its last mining).",
    "`lookup-index.gz` is derived from the entry files (templates and their key words) so that",
    "`lookup` loads one small file and parses an entry only when it matches.",
    ""]


def _readme_size_rows(entries: dict[str, list[dict]], order: dict[str, list[str]]) -> tuple[int, list[str]]:
    """The README's size table rows, one per package, and the total number of entries."""
    lines: list[str] = []
    err_kinds = {"raise", "assert", "check", "error-string", "panic"}  # as is_error_level
    total = 0
    for pkg in sorted(entries):
        es = entries[pkg]
        total += len(es)
        per = Counter(r for e in es for r in e["releases"])
        rels = ", ".join(f"{r} ({per.get(r, 0)})" for r in order.get(pkg, sorted(per)))
        n_err = sum(1 for e in es if e["kind"] in err_kinds or (e["level"] or "") in ("ERROR", "CRITICAL"))
        n_lab = sum(1 for e in es if e["label"])
        lines.append(f"| {pkg} | {len(es)} | {n_err} | {n_lab} | {rels} |")
    return total, lines


def write_readme(out_dir: Path, entries: dict[str, list[dict]], mined: Mined, order: dict[str, list[str]],
                 n_functions: int) -> None:
    lines = [
        "# Message catalogue",
        "",
        "What the servers and libraries themselves print: every message they raise, assert, log,",
        "warn or write to stderr, one entry per distinct template, with the releases it appears in.",
        "Facts about released programs (message text, level, exception type, module, function,",
        "file:line); no code. Read by `forensics.events.catalogue` (`lookup`, `phase_of_function`,",
        "`entries_for_label`).",
        "",
        f"Built {_dt.date.today().isoformat()} by `python -m forensics.lab.catalogue_mine --out signatures/catalogue`.",
        "",
        "## Size",
        "",
        "| package | entries | error-level | labelled | releases (entries present in each) |",
        "|---|---:|---:|---:|---|",
    ]
    total, size_rows = _readme_size_rows(entries, order)
    lines += size_rows
    lines += [f"| **all** | **{total}** | | | |", "",
              f"`functions.json.gz`: {n_functions} (module, function) pairs whose names give a phase,",
              "out of every function defined in the mined sources.", "",
              "## Where each part came from", ""]
    for pkg in sorted(mined.provenance):
        lines.append(f"- **{pkg}**")
        for p in mined.provenance[pkg]:
            lines.append(f"  - {p}")
    repos = sorted([*REPOS.items(), ("tritonserver", (TRITON_CORE[0], []))])
    lines += ["", "Repositories: " + ", ".join(f"{pkg} = github `{repo}`" for pkg, (repo, _r) in repos) + "."]
    lines += README_TAIL
    from forensics.atomic import atomic_write_text

    atomic_write_text(out_dir / "README.md", "\n".join(lines))


def _read_entries(out_dir: Path) -> dict[str, list[dict]]:
    return {f.name[: -len(".jsonl.gz")]: [json.loads(ln) for ln in gzip.decompress(f.read_bytes()).decode().splitlines() if ln]
            for f in sorted(out_dir.glob("*.jsonl.gz"))}


def write_entries(out_dir: Path, pkg: str, es: list[dict]) -> None:
    """One gzip member per block of entries, so a lookup reads one member (catalogue_blocks)."""
    from forensics.atomic import atomic_write_bytes
    from forensics.events.catalogue_blocks import gzip_blocks

    data, _starts = gzip_blocks([json.dumps(e, ensure_ascii=False, sort_keys=True).encode("utf-8") for e in es])
    atomic_write_bytes(out_dir / f"{pkg}.jsonl.gz", data)


def relabel(out_dir: Path) -> int:
    all_entries = _read_entries(out_dir)
    for pkg, es in all_entries.items():
        for e in es:
            e["phase"] = phase_from_names(e.get("module"), e.get("function") or "")
            e["label"], e["label_rule"] = guess_label(e.get("exc_type"), e["template"], e["phase"], pkg,
                                                      e.get("kind"), e.get("level"))
            e["advice"] = advice_of(e["template"])
        write_entries(out_dir, pkg, es)
    finish(out_dir, all_entries, {})
    return 0


def finish(out_dir: Path, all_entries: dict[str, list[dict]], order: dict[str, list[str]],
           provenance: dict[str, list[str]] | None = None) -> None:
    """Index, provenance and README over every package file present."""
    prov_path = out_dir / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.is_file() else {}
    prov.update(provenance or {})
    from forensics.atomic import atomic_write_text

    atomic_write_text(prov_path, json.dumps(prov, indent=1, sort_keys=True) + "\n")
    # release order: as configured here, else as an earlier run wrote it, else by version
    configured = {**{p: v[1] for p, v in WHEELS.items()}, **{p: v[1] for p, v in REPOS.items()},
                  **{p: v[1] for p, v in TOOL_WHEELS.items()}, **{p: v[1] for p, v in SDISTS.items()},
                  "cuda-runtime": CUDA_RUNTIME[1]}
    old_index = out_dir / INDEX_FILE
    if old_index.is_file():
        head = gzip.decompress(old_index.read_bytes()).split(b"\n", 1)[0]
        try:
            old = json.loads(head)["packages"]
        except (ValueError, KeyError):
            old = []
        if isinstance(old, dict):  # an earlier layout
            old = [[k, 0, v.get("releases")] for k, v in old.items()]
        configured.update({k: rel for k, _n, rel in old if rel and k not in configured})
    order = {**configured, **order}
    full_order = full_order_of(all_entries, order)
    write_index(out_dir, all_entries, full_order)
    full = Mined()
    full.provenance.update(prov)
    fpath = out_dir / "functions.json.gz"
    n_functions = sum(len(v) for v in json.loads(gzip.decompress(fpath.read_bytes())).values()) if fpath.is_file() else 0
    write_readme(out_dir, all_entries, full, full_order, n_functions)


def full_order_of(all_entries: dict[str, list[dict]], order: dict[str, list[str]]) -> dict[str, list[str]]:
    full = {pkg: sorted({r for e in es for r in e["releases"]}, key=_vkey) for pkg, es in all_entries.items()}
    for k, v in order.items():
        if k in full and set(v) >= set(full[k]):
            full[k] = [r for r in v if r in set(full[k])]
    return full


def write_index(out_dir: Path, all_entries: dict[str, list[dict]], order: dict[str, list[str]]) -> None:
    """The lookup index, laid out to load in a few C-speed splits: a JSON
    header line (packages, entry counts, releases), then three lines of
    fields separated by U+001F: every template (packages in name order,
    entries in file order), the distinct key words (by CRC-32: see
    ``catalogue_packed.KeyTable``), and for each key word the comma-separated
    numbers of its entries."""
    pkgs = sorted(all_entries)
    templates = [e["template"].replace(INDEX_SEP, " ").replace("\n", INDEX_NL) for p in pkgs for e in all_entries[p]]
    keys: dict[str, list[int]] = {}
    for i, k in enumerate(index_keys([e["template"] for p in pkgs for e in all_entries[p]])):
        if k:
            keys.setdefault(k, []).append(i)
    from forensics.events.catalogue_blocks import block_info
    from forensics.events.catalogue_packed import crc_order

    header = {"packages": [[p, len(all_entries[p]), order.get(p, [])] for p in pkgs],
              "blocks": {p: block_info(out_dir / f"{p}.jsonl.gz", len(all_entries[p])) for p in pkgs}}
    names = list(keys)
    words = [names[i] for i in crc_order(names)]  # the order KeyTable loads without sorting
    body = "\n".join([json.dumps(header, ensure_ascii=False, separators=(",", ":")),
                      INDEX_SEP.join(templates), INDEX_SEP.join(words),
                      INDEX_SEP.join(",".join(map(str, keys[w])) for w in words)])
    write_gz(out_dir / INDEX_FILE, body + "\n")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.catalogue_mine", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--wheel-dir", type=Path, default=Path(tempfile.gettempdir()) / "forensics-wheels")
    ap.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--python-lib", type=Path, nargs="*",
                    help="standard library folders to mine as package 'python' (default: the installed interpreters)")
    ap.add_argument("--only", nargs="*", help="packages to mine (default: all)")
    ap.add_argument("--relabel", action="store_true",
                    help="mine nothing: re-derive phase and label of the stored entries (after a rule change)")
    return ap


def _mine_wheels(args: argparse.Namespace, want: set[str], mined: Mined, order: dict[str, list[str]]) -> None:
    """The Python packages' wheels, the CUDA runtime's and the tools' (ninja, ptxas)."""
    for pkg, (dist, versions, keep) in WHEELS.items():
        if pkg not in want:
            continue
        order[pkg] = versions
        for v in versions:
            print(f"catalogue: {pkg} {v}", file=sys.stderr)
            mine_wheel(pkg, dist, v, keep, args.wheel_dir, mined)
    if "cuda-runtime" in want:
        dist, versions = CUDA_RUNTIME
        order["cuda-runtime"] = versions
        for v in versions:
            whl = wheel_path(dist, v, args.wheel_dir)
            mined.provenance["cuda-runtime"].append(f"{v}: wheel `{whl.name}` sha256 `{sha256(whl)}`")
            mine_cuda_runtime(whl, v, mined)
    for pkg, (dist, versions) in SDISTS.items():
        if pkg in want:
            order[pkg] = versions
            for v in versions:
                print(f"catalogue: {pkg} {v} (sdist)", file=sys.stderr)
                mine_sdist(pkg, dist, v, args.wheel_dir, mined)
    for pkg, (dist, versions, member) in TOOL_WHEELS.items():
        if pkg in want:
            order[pkg] = versions
            for v in versions:
                print(f"catalogue: {pkg} {v}", file=sys.stderr)
                mine_tool_wheel(pkg, dist, v, member, args.wheel_dir, mined)


def _mine_system(args: argparse.Namespace, want: set[str], mined: Mined, order: dict[str, list[str]]) -> None:
    """This machine's dynamic loader and the Python standard libraries (with errno strings)."""
    if "glibc" in want:
        loader = next((Path(p) for p in GLIBC_LOADERS if Path(p).is_file()), None)
        rel = glibc_release()
        if loader is not None and rel:
            order["glibc"] = [rel]
            mined.provenance["glibc"] = [f"{rel}: dynamic loader `{loader}` (Debian libc6 {rel})"]
            mine_loader(loader.resolve(), rel, mined)
    if "python" in want:
        libs = args.python_lib or default_python_libs()
        order["python"] = []
        for lib in libs:
            rel = python_release(lib)
            order["python"].append(rel)
            print(f"catalogue: python {rel} ({lib})", file=sys.stderr)
            mined.provenance["python"].append(f"{rel}: standard library at `{lib}`")
            mine_python_stdlib(lib, rel, mined)
        import platform
        mine_errno(platform.python_version(), mined)
        mined.provenance["python"].append(f"{platform.python_version()}: errno strings from os.strerror (glibc)")


def _mine_repos(args: argparse.Namespace, want: set[str], mined: Mined, order: dict[str, list[str]]) -> None:
    """The source repositories, read with git from their mirrors."""
    for pkg, (repo, releases) in REPOS.items():
        if pkg not in want:
            continue
        d = args.mirror_root / repo.replace("/", "+") / "repo"
        if not d.is_dir():
            print(f"catalogue: {pkg}: no mirror at {d}; skipped", file=sys.stderr)
            continue
        order[pkg] = releases
        print(f"catalogue: {pkg} {' '.join(releases)}", file=sys.stderr)
        mine_repo(pkg, d, releases, mined)


def _write_all(args: argparse.Namespace, mined: Mined, order: dict[str, list[str]]) -> None:
    """Entry files, the function table (merged with an earlier --only run's), index and README."""
    entries = aggregate(mined, order)
    args.out.mkdir(parents=True, exist_ok=True)
    for pkg, es in entries.items():
        write_entries(args.out, pkg, es)
    # Merge with what an earlier --only run wrote for other packages.
    fpath = args.out / "functions.json.gz"
    table = function_table(mined)
    if args.only and fpath.is_file():
        old = json.loads(gzip.decompress(fpath.read_bytes()))
        old.update(table)
        table = dict(sorted(old.items()))
    write_gz(fpath, json.dumps(table, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    all_entries = _read_entries(args.out)
    finish(args.out, all_entries, order, dict(mined.provenance))
    for pkg, es in sorted(entries.items()):
        print(f"catalogue: {pkg}: {len(es)} entries", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.relabel:
        return relabel(args.out)
    want = set(args.only or [*WHEELS, *REPOS, *SDISTS, *TOOL_WHEELS, "cuda-runtime", "python", "glibc"])
    mined = Mined()
    order: dict[str, list[str]] = {}
    _mine_wheels(args, want, mined, order)
    _mine_system(args, want, mined, order)
    _mine_repos(args, want, mined, order)
    _write_all(args, mined, order)
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
