"""Failure logs drawn from the message catalogue: the real wording of many
servers and releases, in the shapes people hand logs over.

The hand-written builders (``failures.py``) know SGLang's and vLLM's start-up
in depth, but speak their authors' vocabulary and only those two servers. This
module writes short failure logs ("pastes") whose every message is a
catalogue entry (mined from released wheels and sources, each with its
release): the failing message of a label, sometimes a warning of the same
label before it, the server's own start-up chatter around it, and the wrapper
and death lines its launcher, shell or container prints after it. Servers:
vLLM (V0 and the V1 engine), vLLM on Ascend, SGLang, text-generation-inference,
LMDeploy and Ray, each in its own log format (from its source: vLLM's and
SGLang's formatters, TGI's Rust ``tracing`` output, LMDeploy's ``_FORMAT``),
optionally behind docker compose's prefix.

The entries used are pinned in ``catalogue_pool.json.gz`` (rebuilt with
``python -m forensics.lab.generator.from_catalogue``), so a corpus is a function of
its seed and that file. A label is taught only by entries whose catalogue
label comes from a specific rule and whose text says so in the label's own
words (``POOL_RULES``): the catalogue's loose rules (any ValueError raised at
start-up) guess too much to teach.
"""
from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any

POOL_PATH = Path(__file__).with_name("catalogue_pool.json.gz")

# Which packages each server's log may show (its own, and the libraries it runs).
SERVERS: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm", "torch", "transformers", "flashinfer", "triton", "cuda-runtime", "nccl", "huggingface-hub",
             "python", "deepgemm", "ray", "glibc", "ptxas", "ninja"),
    "vllm-v1": ("vllm", "torch", "transformers", "flashinfer", "triton", "cuda-runtime", "nccl", "huggingface-hub",
                "python", "deepgemm", "glibc", "ptxas", "ninja"),
    "vllm-ascend": ("vllm-ascend", "vllm", "torch", "transformers", "python", "huggingface-hub"),
    "sglang": ("sglang", "sgl-kernel", "flashinfer", "triton", "torch", "transformers", "deepgemm", "cuda-runtime",
               "nccl", "ptxas", "ninja", "glibc", "python", "uvicorn", "huggingface-hub"),
    "tgi": ("tgi", "transformers", "torch", "huggingface-hub", "cuda-runtime", "nccl", "python", "flashinfer",
            "triton", "glibc"),
    "lmdeploy": ("lmdeploy", "transformers", "torch", "triton", "cuda-runtime", "nccl", "huggingface-hub", "python",
                 "glibc"),
    "ray": ("ray", "vllm", "torch", "cuda-runtime", "nccl", "python"),
}
SERVER_WEIGHTS = {"vllm": 2, "vllm-v1": 3, "vllm-ascend": 1, "sglang": 2, "tgi": 2, "lmdeploy": 2, "ray": 1}

# The words a message must contain to teach a label (on top of a specific
# catalogue rule): the label's own vocabulary, so a rule's near misses
# ("Export backend ... already registered" for a port in use) teach nothing.
POOL_RULES: dict[str, str] = {
    "env.module-missing": r"no module named|not installed|could not import|cannot import|is required to|"
                          r"please install|pip install|module .*not found|failed to import",
    "env.library-missing": r"\.so\b|shared (object|librar)|libcu|libnv|cannot open|not loaded|dlopen",
    "env.abi-mismatch": r"undefined symbol|\babi\b|version .*not found|compiled (with|against|for)|ptx .*toolchain|"
                        r"incompatib|mismatch",
    "env.gpu-arch-unsupported": r"sm_?\d|architecture|compute capability|\barch\b|not supported on|"
                                r"no kernel image|gpu|device|hopper|blackwell|ampere",
    "env.driver-too-old": r"driver|no (nvidia )?gpu|gpus? found|cuda gpu|no device",
    "toolchain.compiler-missing": r"not found|is required|no .*compiler|nvcc|ninja|cuda_home|toolkit|gcc|g\+\+",
    "toolchain.compile-failed": r"error|fail|compil|ptx|build|link|syntax|unsupported|expected",
    "gpu.out-of-memory": r"out of memory|\boom\b|not enough|insufficient|memory|kv cache",
    "gpu.illegal-access": r"illegal|misaligned|ecc|launch failure|device-side|fault|exception",
    "gpu.cuda-graph-capture": r"graph|captur",
    "dist.nccl": r"nccl|hccl|rccl|process ?group|collective|distributed|all_?reduce|rank|socket|ib\b|net",
    "config.model-load": r"model|checkpoint|config|tokenizer|architecture|weight|safetensors|remote_code|"
                         r"repo|revision|quantiz",
    "config.invalid-argument": r"must be|invalid|should be|not supported|unsupported|expected|exceeds|"
                               r"greater than|less than|cannot be|only .*supported|not allowed|argument",
    "net.port-in-use": r"already in use|address in use|\bport\b.*(not available|in use|occupied)|\bbind\b",
    "host.out-of-memory": r"host memory|cpu memory|can't allocate memory|cannot allocate memory|/dev/shm|"
                          r"shared memory|out of memory|oom|ram\b",
    "hang.timeout": r"time(d)? ?out|timeout|deadline|heartbeat|watchdog|hang|no response|not respond",
}
LOOSE_RULES = frozenset({"exc-invalid-launch", "package-nccl", "text-arguments"})
_SKIP_MODULES = re.compile(r"test|trainer|benchmark|example|training|_distill|fsdp|tensorboard|onnx|tflite")
POOL_MAX = {"failures": 160, "warnings": 40}
NOISE_PER_PACKAGE = 60


def _usable(e: Any) -> bool:
    """An entry that prints something a reader of a log would see as one line."""
    t = e.template
    literal = re.sub(r"\{[^}]*\}", "", t)
    return (len(literal.strip()) >= 16 and " " in literal.strip() and "\n" not in t.strip() and len(t) < 400
            and not _SKIP_MODULES.search(e.module or ""))


# A compiler's or build tool's message is about building (or the target
# architecture), whatever other words it uses ("Illegal Addressing Mode").
# An argument check teaches config.invalid-argument where it checks the
# configuration (argument parsers, config classes, entry points), not a
# kernel's tensor shapes.
_CONFIG_MODULES = re.compile(r"config|arg|cli|entrypoint|launch|server")
_TOOL_LABELS = ("toolchain.compile-failed", "toolchain.compiler-missing", "env.gpu-arch-unsupported")


def _teaches(e: Any) -> bool:
    rx = POOL_RULES.get(e.label or "")
    if e.package in ("ptxas", "ninja") and e.label not in _TOOL_LABELS:
        return False
    if e.label_rule in LOOSE_RULES and not (e.label == "config.invalid-argument" and _CONFIG_MODULES.search(e.module or "")):
        return False
    return bool(rx and _usable(e) and re.search(rx, e.template, re.I))


def _slim(e: Any) -> dict[str, Any]:
    src = (e.source or "").split(":")
    return {"package": e.package, "kind": e.kind, "template": e.template, "level": e.level, "exc_type": e.exc_type,
            "module": e.module, "function": e.function, "label": e.label, "phase": e.phase,
            "release": (e.releases or ("",))[-1], "file": src[1] if len(src) > 1 else "", "id": e.id}


def _sample(items: list[Any], n: int, rng: Random) -> list[Any]:
    items = sorted(items, key=lambda e: e.id)
    return items if len(items) <= n else rng.sample(items, n)


# A warning that logs the exception it caught ("Could not import Flash
# Attention enabled models: {e}"): filled with a failure's message, it carries
# that failure's words into a warning, as the program prints it.
_CARRIER = re.compile(r"(import|load|initiali[sz])[^{}]*:\s*\{(e|err|error|exc|exception|ex)\}\.?$", re.I)
CARRIED_LABELS = ("env.module-missing", "env.library-missing", "env.abi-mismatch", "env.driver-too-old")


def build_pool(seed: int = 13) -> dict[str, Any]:
    """The entries the generator draws from: per label its failures and its
    warnings, per package the start-up chatter (info and warning log calls
    that teach no label), and the entries the servers' wrappers print."""
    from forensics.events import catalogue

    rng = Random(seed)
    every = catalogue.entries()
    fails: dict[str, list[Any]] = {}
    warns: dict[str, list[Any]] = {}
    noise: dict[str, list[Any]] = {}
    for e in every:
        if e.label and _teaches(e):
            (fails if catalogue.is_error_level(e) or e.kind == "binary-string" else warns).setdefault(
                e.label, []).append(e)
        elif not e.label and e.kind in ("log", "native-log") and (e.level or "") in ("INFO", "WARNING") and _usable(e):
            noise.setdefault(e.package, []).append(e)
    carriers = [e for e in every if e.kind == "log" and (e.level or "") in ("WARNING", "ERROR") and _usable(e)
                and _CARRIER.search(e.template)]
    runtime: dict[str, list[Any]] = {}
    for e in every:
        if e.package == "cuda-runtime" and e.label and _usable(e):
            runtime.setdefault(e.label, []).append(e)
    return {
        "runtime": {k: [_slim(e) for e in sorted(v, key=lambda e: e.id)] for k, v in sorted(runtime.items())},
        "carriers": [_slim(e) for e in _sample(carriers, 80, rng)],
        "failures": {k: [_slim(e) for e in _sample(v, POOL_MAX["failures"], rng)] for k, v in sorted(fails.items())},
        "warnings": {k: [_slim(e) for e in _sample(v, POOL_MAX["warnings"], rng)] for k, v in sorted(warns.items())},
        "noise": {k: [_slim(e) for e in _sample(v, NOISE_PER_PACKAGE, rng)] for k, v in sorted(noise.items())},
        "wrappers": _wrapper_entries(catalogue),
    }


# What each server's wrapper prints after the cause (looked up in the catalogue
# by their words, so each is the program's own string with its release).
WRAPPER_WORDS: dict[str, tuple[str, ...]] = {
    "vllm": ("Worker failed",),
    "vllm-v1": ("EngineCore failed to start.", "Engine core initialization failed. See root cause above."),
    "vllm-ascend": ("EngineCore failed to start.", "Engine core initialization failed. See root cause above."),
    "sglang": ("Received sigquit from a child process. It usually means the child failed.",),
    "tgi": ("Error when initializing model", "Shard 0 failed to start"),
    "_build": ("ninja: build stopped: subcommand failed.",),
    "lmdeploy": (),
    "ray": (),
}


def _wrapper_entries(catalogue: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for server, words in WRAPPER_WORDS.items():
        pkgs = SERVERS[server][:1] if server in SERVERS else ("ninja",)
        for w in words:
            found = [e for e in catalogue.lookup_all(w) if e.package in pkgs or e.package == "vllm"]
            if found:
                out.setdefault(server, []).append(_slim(found[0]))
    return out


@lru_cache(maxsize=1)
def pool() -> dict[str, Any]:
    try:
        with gzip.open(POOL_PATH, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


# ------------------------------------------------------------------ values

_MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3", "mistralai/Mistral-7B-v0.3",
           "THUDM/glm-4-9b-chat", "internlm/internlm2_5-7b-chat", "/models/Qwen2.5-72B-Instruct-AWQ")
_WORDS = ("auto", "bfloat16", "fp8", "cuda:0", "flashinfer", "triton", "x", "default", "qwen3", "llama", "npu:0")


def _value(name: str, rng: Random, modules: tuple[str, ...]) -> str:
    """A plausible value for a placeholder, by its name."""
    n = name.lower()
    if "port" in n:
        return str(rng.randrange(20000, 60000))
    if any(k in n for k in ("module", "mod_name", "package", "pkg", "import")):
        return rng.choice(modules)
    if any(k in n for k in ("path", "dir", "file", "so_")):
        return rng.choice(("/models/Qwen3-8B", "/root/.cache/huggingface/hub", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                           "/tmp/torchinductor_root", "/opt/conda/lib/python3.11/site-packages"))
    if any(k in n for k in ("model", "repo", "name")):
        return rng.choice(_MODELS)
    if any(k in n for k in ("version", "ver")):
        return rng.choice(("2.5.1", "12.4", "0.6.4", "4.57.6", "535.104.05", "3.3.1"))
    if not n or any(k in n for k in ("size", "num", "count", "rank", "dim", "len", "id", "idx", "bytes", "gpu", "tp")):
        return str(rng.choice((0, 1, 2, 4, 8, 16, 64, 128, 4096, 32768)))
    return rng.choice(_WORDS)


def render_entry(d: dict[str, Any], rng: Random, modules: tuple[str, ...]) -> str:
    """A pooled entry as the program prints it, placeholders filled."""
    from forensics.events.templates import split_template

    out = []
    for lit, ph in split_template(d["template"]):
        out.append(lit)
        if ph is not None:
            out.append(_value(ph, rng, modules))
    return "".join(out).strip()


def main() -> None:
    """``python -m forensics.lab.generator.from_catalogue``: rebuild the pinned pool."""
    import io

    from forensics.atomic import atomic_write_bytes

    data = build_pool()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write((json.dumps(data, indent=0, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    atomic_write_bytes(POOL_PATH, buf.getvalue())
    n = {k: (len(v) if isinstance(v, list) else sum(len(x) for x in v.values())) for k, v in data.items()}
    print(f"{POOL_PATH}: {n}")


if __name__ == "__main__":
    main()
