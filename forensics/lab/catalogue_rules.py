"""Rules that guess a taxonomy label for a catalogue message (data, first match wins).

A guess, not a signature: it reads the exception type and the wording of a
message the program prints. Each rule has a stable id, recorded with the entry
as ``label_rule`` so a wrong guess can be traced to its rule. A message that no
rule fits keeps ``label: null``: the classifier, not a guess, decides those.
"""
from __future__ import annotations

import re
from typing import NamedTuple


class LabelRule(NamedTuple):
    id: str
    label: str
    exc: str | None       # regex over the exception type (bare class name), or None
    text: str | None      # regex over the template text, or None
    phase: str | None = None  # only for messages of this phase


LABEL_RULES: tuple[LabelRule, ...] = (
    LabelRule("exc-module-not-found", "env.module-missing", r"^ModuleNotFoundError$", None),
    LabelRule("text-no-module-named", "env.module-missing", None, r"no module named|cannot import name"),
    LabelRule("text-shared-object", "env.library-missing", None,
              r"cannot open shared object|lib[\w.+-]*\.so[\w.]*.{0,40}(not found|no such file|could not be (found|loaded))|"
              r"(could not|failed to|unable to) (load|find|open|dlopen) (the )?(shared )?librar|"
              r"libcuda\.so|libnvrtc|libcudart"),
    LabelRule("text-abi", "env.abi-mismatch", None,
              r"undefined symbol|glibcxx_|cxxabi_|version `.{0,40}' not found|(compiled|built) (against|with) .{0,60}(but|version)|abi (mismatch|incompatib)"),
    LabelRule("text-arch", "env.gpu-arch-unsupported", None,
              r"no kernel image is available|compute capability|\bsm_?\d{2,3}\b.{0,60}(not (supported|compatible)|unsupported|require)|"
              r"unsupported (gpu|sm|arch|architecture|device)|(requires|only supports?|needs) .{0,40}(ampere|hopper|blackwell|volta|turing|sm ?\d\d)|"
              r"not supported on (this|your|the current) (gpu|device|platform|hardware)|gpu architecture|arch(itecture)? .{0,20}not supported|"
              r"cudaErrorNoKernelImageForDevice|cudaErrorUnsupportedPtxVersion|kernel image is invalid|cudaErrorInvalidKernelImage|"
              r"not supported (in|on|by) this (gpu |device )?architecture|no binary for gpu|hipErrorNoBinaryForGpu"),
    LabelRule("text-driver", "env.driver-too-old", None,
              r"driver version is insufficient|driver .{0,30}too old|no nvidia driver|found no nvidia|"
              r"no cuda gpus are available|cuda driver initialization failed|"
              r"cudaErrorInsufficientDriver|cudaErrorNoDevice|nvidia-smi has failed|"
              r"cuda(error)?_?not_?initialized|cudaErrorCompatNotSupportedOnDevice|system not yet initialized|"
              r"failed to infer device type|no (cuda |nvidia )?(gpus?|devices?) (were |was )?(found|available|detected)|"
              r"forward compatibility was attempted"),
    LabelRule("text-toolchain-missing", "toolchain.compiler-missing", None,
              r"ninja is required|ninja.{0,20}not (found|installed|available)|\bnvcc\b.{0,40}(not found|no such file|not available|cannot be found|is required)|"
              r"cuda_home|cuda_path.{0,30}(not set|environment)|python\.h|(compiler|cxx|g\+\+|gcc|clang)\b.{0,40}(not found|not installed|no such file|is required)|"
              r"could not find (the )?(cuda|nvcc|compiler|ninja|cudnn)|cannot find (cuda|nvcc|ninja)"),
    LabelRule("exc-compilation", "toolchain.compile-failed", r"Compil\w*Error|BuildError|LinkError|PTXASError|CalledProcessError", None),
    LabelRule("text-compile-failed", "toolchain.compile-failed", None,
              r"(compil\w*|build\w*|jit|ptxas|nvrtc|linking) (failed|error)|failed to (compile|build|jit)|"
              r"error building extension|subcommand failed|ptxas (fatal|error)|nvrtc_error|cudaErrorJitCompilerNotFound|"
              r"cudaErrorInvalidPtx|cudaErrorUnsupportedPtxVersion|cudaErrorJitCompilationDisabled"),
    # torch's CPU allocator says "allocate" too: host memory, before the GPU rules
    LabelRule("text-cpu-alloc", "host.out-of-memory", None, r"defaultcpuallocator|can't allocate memory"),
    LabelRule("exc-oom", "gpu.out-of-memory", r"OutOfMemoryError|OutOfResources", None),
    LabelRule("text-cuda-oom", "gpu.out-of-memory", None,
              r"cuda out of memory|out of memory|not enough (gpu |device |kv |cache )?memory|insufficient (gpu |device )?memory|"
              r"mem[-_]fraction|gpu_memory_utilization|gpu-memory-utilization|no available memory for the cache|"
              r"(kv cache|cache blocks?|kv-cache).{0,60}(too small|not enough|insufficient|larger than|exceeds|no available|negative|must be positive)|"
              r"num_gpu_blocks|max_total_num_tokens|cudaErrorMemoryAllocation|ncclSystemError.{0,20}memory|"
              r"out of resources|exceeds? (the )?(available|free) (gpu )?memory|memory pool|increase --mem"),
    LabelRule("text-cuda-oom-detail", "gpu.out-of-memory", None,
              r"of the allocated memory|reserved by pytorch but unallocated|pytorch_cuda_alloc_conf|tried to allocate"),
    LabelRule("text-device-ordinal", "config.invalid-argument", None, r"invalid device ordinal|cudaErrorInvalidDevice\b"),
    LabelRule("text-illegal-access", "gpu.illegal-access", None,
              r"illegal memory access|illegal address|device-side assert|misaligned address|unspecified launch failure|"
              r"illegal instruction|cudaErrorIllegalAddress|cudaErrorAssert|cudaErrorLaunchFailure|cudaErrorMisalignedAddress|"
              r"cudaErrorIllegalInstruction|hardware stack error|\bxid\b|ecc error|uncorrectable|cudaErrorEccUncorrectable|"
              r"an exception occurred on the device|cudaErrorLaunchOutOfResources"),
    LabelRule("text-capture", "gpu.cuda-graph-capture", None,
              r"(cuda ?graph|stream) .{0,40}captur|captur\w* .{0,40}(cuda ?graph|stream|failed)|cudaErrorStreamCapture\w*|"
              r"operation not permitted when stream is capturing|cudaErrorCapturedEvent|graph capture"),
    LabelRule("exc-nccl", "dist.nccl", r"NCCL|DistBackendError|DistNetworkError|DistError", None),
    LabelRule("text-nccl", "dist.nccl", None,
              r"\bnccl|processgroupnccl|collective operation timeout|watchdog caught|all_?reduce .{0,30}(failed|timeout|timed out)|"
              r"(process group|processgroup|distributed|torch\.distributed).{0,60}(fail|error|timeout|timed out)|"
              r"\bgloo\b.{0,40}(fail|error|timeout)|rendezvous|c10d"),
    LabelRule("text-port", "net.port-in-use", None, r"address already in use|errno 98|error while attempting to bind|port .{0,40}(in use|already|occupied|not available)"),
    LabelRule("exc-host-oom", "host.out-of-memory", r"^MemoryError$", None),
    LabelRule("text-host-oom", "host.out-of-memory", None,
              r"cannot allocate memory|errno 12|(cpu|host|system|shared|pinned|swap) memory.{0,60}(not enough|insufficient|exceed|too small|out of)|"
              r"oom[- ]kill|not enough (cpu|host|system|shared) memory|/dev/shm"),
    LabelRule("text-model-load", "config.model-load", None,
              r"config\.json|safetensors|tokenizer|checkpoint|(model|weights?|architecture)s? .{0,60}(not (found|supported|exist)|unsupported|cannot be loaded|failed to load|is not a)|"
              r"(failed|unable|cannot|could not|error) (to )?(load|find|read|open|download) .{0,30}(model|weights?|checkpoint|config|tokenizer|files?)|"
              r"is not a (local folder|valid model)|repo(sitory)? not found|revision|huggingface|hf_hub|trust_remote_code|"
              r"unrecognized (configuration|model)|model type|quantization (method|config)|\barchitectures?\b|"
              r"(unexpected|missing) key|size mismatch|shape mismatch .{0,40}(weight|param|checkpoint)|param(eter)? .{0,40}(not found in|missing)"),
    LabelRule("exc-timeout", "hang.timeout", r"^TimeoutError$|Timeout", None),
    LabelRule("text-timeout", "hang.timeout", None, r"timed out|timeout (expired|reached|exceeded)|deadline exceeded|watchdog|(took|waited) (too long|more than)|heartbeat|hang\b|hung\b|not responding"),
    LabelRule("exc-argparse", "config.invalid-argument", r"ArgumentError|ArgumentTypeError|ArgumentParserError", None),
    LabelRule("text-arguments", "config.invalid-argument", None,
              r"unrecognized arguments|invalid (choice|value|argument)|must be (divisible|a multiple|greater|less|positive|one of|between|at least|at most|set|specified|an? )|"
              r"should be (divisible|a multiple|greater|less|positive|one of|between|at least|at most)|is not divisible|not divisible by|"
              r"(cannot|can't|can not) (be )?(used|set|enabled|specified|combined) (with|together|when|if|at the same time)|"
              r"(is|are) not supported (with|when|for|in|together|by)|(is|are) only supported (with|when|for|on)|mutually exclusive|--[a-z][a-z0-9-]+|"
              r"tensor[_ -]parallel|pipeline[_ -]parallel|tp[_ ]size|dp[_ ]size|(invalid|unsupported|unknown) (option|setting|configuration|config|mode|backend|dtype|value)"),
    LabelRule("exc-invalid-launch", "config.invalid-argument", r"^(ValueError|AssertionError)$", None, "launch"),
)

_COMPILED = [(r, re.compile(r.exc) if r.exc else None, re.compile(r.text, re.I) if r.text else None)
             for r in LABEL_RULES]


# Whole packages whose failures have one label whatever the wording: every
# warning or error NCCL prints is about collective communication.
PACKAGE_LABELS = {"nccl": ("package-nccl", "dist.nccl")}
# ... and packages whose error lines get a label when no wording rule fits:
# an error of ptxas or ninja is a failed build (ptxas's "Unsupported .target"
# is caught first by the architecture rule).
_TOOL_ERROR_WORDS = re.compile(r"error|fail|stopped|missing|unknown|bad|invalid|cannot|can't|duplicate|expected|"
                               r"not found|not defined|unsupported|illegal|conflict|too (many|large|big)|exceed", re.I)
PACKAGE_FALLBACK = {  # (rule id, label, words an error line of the tool has; its help text has none)
    "ptxas": ("package-ptxas", "toolchain.compile-failed", _TOOL_ERROR_WORDS),
    "ninja": ("package-ninja", "toolchain.compile-failed", _TOOL_ERROR_WORDS),
}


def guess_label(exc_type: str | None, template: str, phase: str | None, package: str | None = None,
                kind: str | None = None, level: str | None = None) -> tuple[str | None, str | None]:
    """(label, rule id) for a message, or (None, None) when no rule is sure enough."""
    if kind in ("log", "native-log") and level in ("INFO", "DEBUG"):
        return None, None  # progress and diagnostics, not a failure's wording
    exc = (exc_type or "").rsplit(".", 1)[-1]
    text = template.replace("{}", " ")
    if kind == "error-string" and exc_type:
        text += " " + exc_type  # a runtime's error name says as much as its string
    if package in PACKAGE_LABELS and (level in ("WARNING", "ERROR", "CRITICAL") or kind == "error-string"):
        rule_id, label = PACKAGE_LABELS[package]
        if not (package == "nccl" and template.lower().startswith("success")):
            return label, rule_id
    for rule, exc_rx, text_rx in _COMPILED:
        if rule.phase is not None and rule.phase != phase:
            continue
        if exc_rx is not None and not (exc and exc_rx.search(exc)):
            continue
        if text_rx is not None and not text_rx.search(text):
            continue
        return rule.label, rule.id
    if package in PACKAGE_FALLBACK:
        rule_id, label, words = PACKAGE_FALLBACK[package]
        if words.search(text):
            return label, rule_id
    return None, None


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_ADVICE = re.compile(r"^(please|try|consider|you (can|may|might|should|need|must|could)|set|use|install|make sure|"
                     r"ensure|run|increase|decrease|reduce|lower|raise|add|remove|upgrade|downgrade|update|"
                     r"check|specify|pass|enable|disable|export|rebuild|reinstall|switch|refer|see)\b|pip install|"
                     r"\bto fix\b|\bto resolve\b|\bto avoid\b|\bto use\b", re.I)


def advice_of(template: str) -> str | None:
    """The sentences of a message that tell the user what to do ("Please try
    to increase --mem-fraction-static", "pip install ninja"): remediation in
    the program's own words, or None."""
    out = [s.strip() for s in _SENTENCE_SPLIT.split(template) if s.strip() and _ADVICE.search(s.strip())]
    text = " ".join(out)
    return text[:400] if text else None
