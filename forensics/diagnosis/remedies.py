"""Remediation for every label, as specific as the evidence allows.

Order of preference: a signature of the decided label that matched in this
incident (it knows the exact message); the message catalogue's entry for the
failing message, where it records advice; advice built from what the
message names (the missing tool, module, library, port); the label's
default. So an answer the classifier decided still says "install ninja into
the server's environment" when the failing line says ninja is missing.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable

# One default per taxonomy label (taxonomy v1): what to try first.
LABEL_REMEDIES: dict[str, str] = {
    "env.module-missing": (
        "Install the Python package that provides the missing module into the server's own environment "
        "(the same venv/conda env as the server; check with `python -c 'import MODULE'`), at the version "
        "this server release pins."),
    "env.library-missing": (
        "Install the system or CUDA library named in the error (apt/yum package or the matching "
        "`nvidia-*-cu12` wheel) and make sure its directory is on `LD_LIBRARY_PATH` for the service."),
    "env.abi-mismatch": (
        "A compiled extension was built against another torch/CUDA/Python/libstdc++: reinstall the "
        "extension (or the server wheel) built for the installed torch, or install the torch version it "
        "was built for; do not mix wheels from different releases."),
    "env.gpu-arch-unsupported": (
        "The installed kernels have no code for this GPU's architecture: use a build that lists this "
        "compute capability (check `torch.cuda.get_device_capability()`), pick another attention/quantisation "
        "backend that supports it, or serve a dtype/quantisation this GPU supports."),
    "env.driver-too-old": (
        "Upgrade the NVIDIA driver to one that supports the CUDA runtime in use (see `nvidia-smi`), or "
        "install a torch/server build for an older CUDA; inside containers make sure the GPU is passed "
        "through (`--gpus all`, the NVIDIA container toolkit)."),
    "toolchain.compiler-missing": (
        "Install the build tool the JIT needs into the server's environment (ninja: `pip install ninja`; "
        "nvcc: the CUDA toolkit matching torch's CUDA, with `CUDA_HOME` set; gcc/g++ and Python headers "
        "from the OS) and make sure the service's `PATH` finds it; or use prebuilt/AOT kernels."),
    "toolchain.compile-failed": (
        "Read the compiler's own first `error:` line in the build output; clear the JIT cache "
        "(~/.cache/flashinfer, ~/.triton, torch_extensions), and use a toolkit/compiler version supported "
        "by this release, or prebuilt kernels."),
    "gpu.out-of-memory": (
        "Give the server less to hold or more room: lower `--mem-fraction-static` / "
        "`--gpu-memory-utilization`, `--max-model-len`, batch size or CUDA-graph batch sizes; free the GPU "
        "of other processes (`nvidia-smi`); or use more GPUs (tensor parallel)."),
    "gpu.illegal-access": (
        "A kernel faulted: rerun with `CUDA_LAUNCH_BLOCKING=1` to find the kernel, try another attention "
        "backend or disable CUDA graphs to isolate it, check `dmesg` for Xid errors, and report it with the "
        "versions if it reproduces."),
    "gpu.cuda-graph-capture": (
        "Capture failed on an operation that is not capture-safe: disable CUDA graphs "
        "(`--disable-cuda-graph` / `--enforce-eager`) to confirm, lower the captured batch sizes, or switch "
        "the backend that runs inside capture."),
    "dist.nccl": (
        "Rerun with `NCCL_DEBUG=INFO`; check GPU peer access and the network (`NCCL_P2P_DISABLE=1`, "
        "`NCCL_IB_DISABLE=1`, `NCCL_SOCKET_IFNAME` to isolate), `/dev/shm` size in containers, and that "
        "every rank runs the same NCCL; look for the first rank that failed."),
    "config.model-load": (
        "Check the model path/repo id, that config.json, tokenizer and weights are complete and readable "
        "(and the HF token for gated repos), and that this server/transformers release supports the "
        "architecture."),
    "config.invalid-argument": (
        "Fix the argument the error names (see `--help` of this release): sizes must divide the model's "
        "heads/layers/quantisation blocks, devices must exist, and options must be compatible."),
    "net.port-in-use": (
        "Another process holds the port: stop it (`ss -ltnp | grep PORT`) or start the server on another "
        "`--port`."),
    "host.out-of-memory": (
        "The host ran out of RAM: check `dmesg` for the OOM killer, lower host-memory use (fewer parallel "
        "loaders, smaller `--swap-space`/CPU offload, larger container memory limit or /dev/shm), or use a "
        "machine with more RAM."),
    "hang.timeout": (
        "The process stopped making progress until a deadline fired: find what it waited for (a rank that "
        "never joined, a download, a lock), check the other ranks' logs for their first error, then raise "
        "the timeout only if the wait is legitimate."),
    "unknown": (
        "Read the evidence lines; if the traceback is cut short, collect the full log "
        "(journalctl -u UNIT --no-pager, without tail/grep) and rerun."),
}

Builder = Callable[[re.Match[str]], str]


def _tool(m: re.Match[str]) -> str:
    tool = m.group("tool")
    if tool == "ninja":
        return ("Install ninja into the server's environment (`pip install ninja` in the same venv) and make sure "
                "its `bin/` is on the service's `PATH`.")
    if tool == "nvcc":
        return ("Install the CUDA toolkit's nvcc matching torch's CUDA version (e.g. `pip install "
                "nvidia-cuda-nvcc-cu12`, or a `*-devel` image) and set `CUDA_HOME` so `$CUDA_HOME/bin/nvcc` exists.")
    return (f"Install `{tool}` into the server's environment (OS package or pip) and make sure the service's "
            f"`PATH` finds it.")


def _module(m: re.Match[str]) -> str:
    mod = m.group("mod")
    top = mod.split(".")[0]
    return (f"Install the package that provides `{mod}` into the server's environment (`pip install {top}` or the "
            f"distribution that ships it, at the version this server release pins).")


def _library(m: re.Match[str]) -> str:
    lib = m.group("lib")
    return (f"Install the library that provides `{lib}` (OS package, e.g. `apt-get install` the package that "
            f"ships it, or the matching `nvidia-*` wheel) and make sure its directory is on `LD_LIBRARY_PATH`.")


def _port(m: re.Match[str]) -> str:
    return LABEL_REMEDIES["net.port-in-use"]


# (label the advice fits, regex over the failing text, builder). Facts about
# what programs print when a tool, module or library is missing.
MESSAGE_REMEDIES: list[tuple[str, re.Pattern[str], Builder]] = [
    ("toolchain.compiler-missing", re.compile(
        r"No such file or directory: '(?:[^']*/)?(?P<tool>ninja|nvcc|gcc|g\+\+|cc|c\+\+|clang|cmake|make|git)'"), _tool),
    ("toolchain.compiler-missing", re.compile(r"(?P<tool>ninja|nvcc|gcc|g\+\+|cmake)(?::)? (?:command )?not found"), _tool),
    ("toolchain.compiler-missing", re.compile(r"Could not find (?P<tool>nvcc|ninja)\b"), _tool),
    ("toolchain.compiler-missing", re.compile(r"(?P<tool>Ninja) is required", re.I), lambda m: _tool_named("ninja")),
    ("env.module-missing", re.compile(r"No module named '(?P<mod>[\w.]+)'"), _module),
    ("env.module-missing", re.compile(r"cannot import name '\w+' from '(?P<mod>[\w.]+)'"), _module),
    ("env.library-missing", re.compile(r"(?P<lib>lib[\w.+\-]+\.so(?:\.[\d.]+)?): cannot open shared object file"), _library),
    ("net.port-in-use", re.compile(r"Address already in use"), _port),
]


def _tool_named(tool: str) -> str:
    return _tool(re.match(r"(?P<tool>.+)", tool))  # type: ignore[arg-type]


def from_message(label: str, texts: Iterable[str]) -> str | None:
    """Advice built from what the failing lines name, for ``label``."""
    texts = [t for t in texts if t]
    for fit, rx, build in MESSAGE_REMEDIES:
        if fit != label:
            continue
        for t in texts:
            m = rx.search(t[:4000])
            if m is not None:
                return build(m)
    return None


def from_catalogue(texts: Iterable[str]) -> str | None:
    try:
        from forensics.events import catalogue  # type: ignore[attr-defined]
    except ImportError:
        return None
    for t in texts:
        try:
            entry = catalogue.lookup(t)
        except Exception:  # noqa: BLE001 - optional knowledge never breaks a diagnosis
            return None
        if isinstance(entry, (list, tuple)):
            entry = entry[0] if entry else None
        if entry is None:
            continue
        advice = entry.get("remediation") if isinstance(entry, dict) else getattr(entry, "remediation", None)
        if advice:
            return str(advice)
    return None


def remediation_for(label: str | None, texts: list[str], hits: Iterable[Any] = ()) -> str | None:
    """The most specific remediation known for ``label`` given the failing
    texts and the signature hits of the incident."""
    if label is None:
        return None
    for h in hits:
        sig = h.signature
        if sig.root_cause == label and sig.remediation and sig.kind != "wrapper":
            return str(sig.remediation)
    return from_message(label, texts) or from_catalogue(texts) or LABEL_REMEDIES.get(label) or LABEL_REMEDIES["unknown"]
