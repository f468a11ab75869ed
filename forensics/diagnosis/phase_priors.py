"""Where a failure happened when the excerpt has no phase marker, no frames
that say so and no wording that does: where failures of its kind happen.

Two facts decide: the label (host RAM runs out while weights are read into
memory; a JIT toolchain fails while kernels compile) and whether the log says
that start-up itself failed (then a kernel fault happened in the first forward
pass of start-up, the memory profile run, not while serving).
"""
from __future__ import annotations

import re
from typing import Iterable

# What servers print when start-up (not serving) failed. Exact wording from
# the programs' sources (the message catalogue, signatures/catalogue/):
# vLLM 0.6-0.33 (core.py run_engine_core, multiproc_executor worker_main,
# core_client wait_for_engine_startup, build_async_engine_client), vLLM 0.7.3
# BackgroundProcHandle, TGI v2-v3 launcher spawn_shards / spawn_webserver.
STARTUP_FAILED = re.compile(
    r"EngineCore(?:Proc)? failed to start|WorkerProc failed to start|Engine core initialization failed|"
    r"Engine process failed to start|\b\w+ initialization failed\. See root cause above|"
    r"Shard \d+ failed to start|Failed to start webserver")

# label -> (phase when nothing says where, phase when start-up is known to have failed)
TYPICAL_PHASE: dict[str, tuple[str | None, str | None]] = {
    # Host RAM peaks while checkpoint shards are read into memory.
    "host.out-of-memory": ("load-weights", "load-weights"),
    # Kernels fault where kernels run: serving; during start-up the first
    # forward pass is the memory profile run (vLLM profile_run, SGLang's
    # memory pool sizing comes right after the weights).
    "gpu.illegal-access": ("serving", "memory-plan"),
    # The weights are start-up's first and largest device allocation; the memory plan (KV cache
    # sized to what is left) comes right after them, so a failed start-up ran out there.
    "gpu.out-of-memory": ("load-weights", "memory-plan"),
    # The label is a model, its config, weights or tokenizer that could not be loaded
    # (taxonomy): that is the loading step.
    "config.model-load": ("load-weights", "load-weights"),
    # A compiler is only run by a JIT build.
    "toolchain.compiler-missing": ("kernel-jit", "kernel-jit"),
    "toolchain.compile-failed": ("kernel-jit", "kernel-jit"),
    "gpu.cuda-graph-capture": ("cuda-graph-capture", "cuda-graph-capture"),
}


# A device runtime's answer to a kernel launch: the GPU holds no code for the kernel (no image for
# its architecture, a HIP/ROCm "invalid device function", PTX newer than the driver can JIT, an
# image the driver refuses). It is found when a kernel is first launched, so the program was
# computing, not parsing arguments or importing: the same place as a kernel's fault.
KERNEL_LAUNCHED = re.compile(
    r"(?i)\bno kernel image is available for execution on the device|"
    r"\b(?:hip|rocm|cuda) error: invalid device function|"
    r"\bthe provided PTX was compiled with an unsupported toolchain|"
    r"\bdevice kernel image is invalid")


# ... inside a forward pass the failing lines name: ggml's graph compute, which runs the model's forward
# (ggml_cuda_compute_forward, ggml_backend_sched_graph_compute, llama_context::graph_compute). Without
# it the launch may be a start-up check's (a distributed set-up's first collective, a device probe),
# which public and visible labels call launch.
FORWARD_RAN = re.compile(r"\b\w*(?:compute_forward|graph_compute)\w*\b")


# A supervisor saying its model-server child died or timed out before it was up, the child saying
# nothing of its step (Lemonade's "llama-server failed to start within timeout" and "whisper-server
# process has terminated with exit code", Ollama's "llama runner exited with error" and msg="llama
# runner terminated", DeepSpeed-MII's "server crashed for some reason, unable to proceed", GPUStack's
# "Timeout waiting for model instance to be initializing"): what such a child does before it is up
# is load its model. A prior, read after the label (the words are not the step itself: the child may
# have died of its arguments), only where nothing else in the excerpt says where. (The server's name
# is bounded: an unbounded run tried from every word boundary of a long dashed line is quadratic.)
CHILD_DIED_STARTING = re.compile(
    r"\b[\w.-]{1,80}-server (?:failed to start within timeout|process has terminated with exit code)\b|"
    r"\bllama runner exited with error\b|msg=\"llama runner terminated\"|"
    r"\bserver crashed for some reason, unable to proceed\b|\bTimeout waiting for model instance to be initializing\b")


def child_died_starting(texts: Iterable[str]) -> bool:
    """The failing lines are a supervisor's report that its model server died before it was up."""
    return any(CHILD_DIED_STARTING.search(t[:4000]) for t in texts if t)


def kernel_launched(texts: Iterable[str]) -> bool:
    """The failing lines are a device runtime's refusal of a kernel launch (KERNEL_LAUNCHED) in a
    forward pass they name (FORWARD_RAN)."""
    heads = [t[:4000] for t in texts if t]
    return any(KERNEL_LAUNCHED.search(t) for t in heads) and any(FORWARD_RAN.search(t) for t in heads)


def forward_ran(texts: Iterable[str]) -> bool:
    """The failing lines name a ggml forward pass (FORWARD_RAN): the model was computing."""
    return any(FORWARD_RAN.search(t[:4000]) for t in texts if t)


def startup_failed(texts: Iterable[str]) -> bool:
    """The failing lines (and the wrapper printed with them) say start-up failed."""
    return any(STARTUP_FAILED.search(t[:4000]) for t in texts if t)


def typical_phase(label: str | None, during_startup: bool, texts: Iterable[str] = ()) -> str | None:
    """Where a failure of ``label`` happens, when the log says nothing more; a kernel launch the
    runtime refused (``texts``: the failing lines) happened where kernels run, whatever its label;
    a model server that died before it was up was loading its model."""
    texts = tuple(texts)  # read twice below: a generator would be spent by the first
    known = TYPICAL_PHASE.get(label or "")
    if known is None and kernel_launched(texts):
        known = TYPICAL_PHASE["gpu.illegal-access"]
    if known is None and child_died_starting(texts):
        return "load-weights"
    if known is None:
        return None
    return known[1] if during_startup else known[0]
