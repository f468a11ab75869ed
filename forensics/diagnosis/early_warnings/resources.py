"""Resource arithmetic: lines with numbers predict failures even at INFO level."""
from __future__ import annotations

import re
from typing import Any

from forensics.diagnosis.early_warnings.candidates import STALL_PATTERN, _read_facts
from forensics.diagnosis.early_warnings.subjects import to_gib
from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.diagnosis.guarded import AsciiSet
from forensics.events.tables import joined, load_table

_RX = {name: _lazy(joined(rx)) for name, rx in load_table(__file__, "resources.yaml").items()}
_WEIGHTS, _LEFT, _BLOCKS, _START_GPU, _HOST_FREE, _NEED_KV, _NEED_VK, _DEVICES_SHORT, _ZERO, _OVER_TOTAL = (
    _RX[name] for name in ("weights", "memory_left", "kv_blocks", "start_gpu", "host_free", "need_key_value",
                           "need_value_key", "devices_short", "zero_count", "need_over_total"))
_STALLED = _lazy(STALL_PATTERN)
# Which of them can match a line, in one pass (RE2 on ASCII text; see guarded.AsciiSet)
_ARITH_SET = AsciiSet([rx._args for rx in (_WEIGHTS, _LEFT, _BLOCKS, _START_GPU, _HOST_FREE, _NEED_KV, _NEED_VK,
                                           _DEVICES_SHORT, _ZERO, _STALLED, _OVER_TOTAL)])
STALLED = "no tokens generated while requests run, report after report (the engine is stalled)"
STALLS = 2  # one report of no progress is a long prefill as often as not; two in a row are a stall
_HAVE_WORDS = ("available", "free", "usable")
_HOST_WORDS = re.compile(r"(?i)\bsystem\b|\bhost\b|\bRAM\b|\bCPU\b|\bswap\b")
# The wording of what a shortfall predicts: a count of zero is news only against the healthy baseline
# (vLLM's "Triton is installed but 0 active driver(s)" is printed by healthy API servers)
ZERO_COUNT = "none of what the start-up looks for was found"


AFTER_WEIGHTS_FREE = 0.05  # of the memory the weights left plus took
_OUT_OF_MEMORY = re.compile(r"(?i)out of memory|\bOOM\b|OutOfMemory|KV cache")
_FAILURE_FACTS: list[Any] = [None, {}]  # (failure text, its facts): every candidate of a failure asks


def _failure_facts(failure_text: str) -> dict[str, Any]:
    if _FAILURE_FACTS[0] != failure_text:
        ffacts: dict[str, Any] = {}
        _read_facts(ffacts, failure_text)
        _FAILURE_FACTS[:] = [failure_text, ffacts]
    return _FAILURE_FACTS[1]  # type: ignore[no-any-return]


def arithmetic(text: str, facts: dict[str, Any], failure_text: str = "") -> str | None:
    """Why the numbers on this line predict a failure, or None."""
    ffacts = _failure_facts(failure_text)
    total = facts.get("total_gib") or ffacts.get("total_gib")
    frac = facts.get("mem_fraction")
    live = _ARITH_SET.which(text)
    m = _WEIGHTS.search(text) if 0 in live else None
    w: float | None = None
    if m:
        w = to_gib(m.group(1), m.group(2))
        if total and frac and w > frac * total:
            return (f"weights take {w:.2f} GiB, above the memory budget {frac:g} x {total:.2f} GiB = "
                    f"{frac * total:.2f} GiB")
        if total and w > 0.9 * total:
            return f"weights take {w:.2f} GiB of {total:.2f} GiB on the GPU"
    m = _LEFT.search(text) if 1 in live else None
    if m:
        left = to_gib(m.group(1), m.group(2))
        said = m.group(0).lower()
        budget = "kv cache" in said or "explicitly" in said
        # SGLang's "avail mem" after its memory pool is what it left free on purpose: a small GPU
        # shows 0.00 GB (rounded) and serves; only a KV-cache budget of zero, or a negative figure, trips.
        if left < 0 or (left == 0 and budget):
            return f"the memory left is {left:.2f} GiB (negative or zero)"
        if w is not None and w > 0 and left < AFTER_WEIGHTS_FREE * (left + w):
            # SGLang's "Load weight end. ... avail mem=2.29 GB, mem usage=186.08 GB": nothing left
            # for the KV cache and the graphs (healthy start-ups keep 17% and more here)
            return f"only {left:.2f} GiB free after the weights took {w:.2f} GiB"
        if budget and (left < 0.5 or (total and left < 0.02 * total)):
            # vLLM's KV-cache budget near zero; SGLang's "avail mem" after capture is small in healthy runs too
            return f"only {left:.2f} GiB left for the KV cache" + (f" of {total:.2f} GiB" if total else "")
    m = _BLOCKS.search(text) if 2 in live else None
    if m:
        vals = [g for g in m.groups() if g]
        v = float(vals[0].replace(",", "")) if vals else 1.0
        if not m.group(3) and v <= 0:  # (a concurrency below 1x still serves shorter requests)
            return f"the KV-cache budget is {vals[0]} (none left for a request)"
        if m.group(3) and v < 1.0 and _OUT_OF_MEMORY.search(failure_text):
            # after the fact only (live, no failure text): a full-length request did not fit, and memory ran out
            return f"the KV cache holds {vals[0]}x of one full-length request, and the failure is out of memory"
    m = _HOST_FREE.search(text) if 4 in live else None
    if m and facts.get("cpu_weights_gib"):
        # the weights placed in host memory do not fit what the host has free: loading swaps
        # (a crawl that ends in a load timeout) or the kernel's OOM killer ends it
        free, need = to_gib(m.group(1), m.group(2)), float(facts["cpu_weights_gib"])
        if need > free:
            return f"the weights on the CPU take {need:.2f} GiB, more than the {free:.2f} GiB of system memory free"
    short = _shortfall(text, live, facts)
    if short is not None:
        return short
    return _gpu_index(text, facts, failure_text) if 3 in live else None


def no_memory_left(text: str) -> bool:
    """A memory plan that left nothing for the KV cache: a budget below zero ("Available KV cache
    memory: -2.14 GiB", "Explicitly set (-0.5/11.65) GiB for KV cache") or no cache blocks at all
    ("# GPU blocks: 0", "GPU KV cache size: 0 tokens"). Whatever program printed it, the memory-plan
    check that follows fails for want of device memory: weights and activations took it all."""
    live = _ARITH_SET.which(text)
    m = _LEFT.search(text) if 1 in live else None
    if m and to_gib(m.group(1), m.group(2)) < 0 and ("kv cache" in m.group(0).lower() or "explicitly" in m.group(0).lower()):
        return True
    m = _BLOCKS.search(text) if 2 in live else None
    vals = [g for g in m.groups() if g] if m and not m.group(3) else []
    return bool(vals) and float(vals[0].replace(",", "")) <= 0


def _gpu_index(text: str, facts: dict[str, Any], failure_text: str) -> str | None:
    """A GPU index at or beyond the GPUs there are (or that an invalid-ordinal failure names)."""
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


def _shortfall(text: str, live: Any, facts: dict[str, Any]) -> str | None:
    """A line that states what it needs against what it has (memory asked for vs available, devices
    required vs there), that none of what it looks for was found, or that an engine with requests
    running generated nothing, report after report (``facts['stalls']``: such reports so far)."""
    if 5 in live or 6 in live:
        need: list[float] = []
        have: list[float] = []
        for m in _NEED_KV.finditer(text) if 5 in live else ():
            (have if m.group(1).lower() in _HAVE_WORDS else need).append(to_gib(m.group(2), m.group(3)))
        for m in _NEED_VK.finditer(text) if 6 in live else ():
            (have if m.group(3).lower() in _HAVE_WORDS else need).append(to_gib(m.group(1), m.group(2)))
        if need and have and max(need) > max(have) > 0:
            where = "host" if _HOST_WORDS.search(text) else "device"
            return f"{max(need):.2f} GiB needed, {max(have):.2f} GiB available ({where} memory)"
    m = _OVER_TOTAL.search(text) if 10 in live else None
    need, total = (to_gib(m.group(1), m.group(2)), to_gib(m.group(3), m.group(4))) if m is not None else (0.0, 0.0)
    if need > total > 0:
        where = "host" if _HOST_WORDS.search(text) else "device"
        return f"{need:.2f} GiB needed, more than the {total:.2f} GiB of total {where} memory"
    m = _DEVICES_SHORT.search(text) if 7 in live else None
    if m is not None and (m.group(1) is None or int(m.group(1)) > int(m.group(2))):
        return "more devices required than are available"
    if 8 in live and _ZERO.search(text):
        return ZERO_COUNT
    if 9 in live and facts.get("stalls", 0) >= STALLS:
        return STALLED
    return None
