"""The message catalogue: what the servers and libraries themselves print.

The data lives in ``signatures/catalogue/<package>.jsonl.gz`` (one entry per
distinct message template, with the releases it appears in) and
``signatures/catalogue/functions.json.gz`` (module + function -> phase). It is
mined from released wheels and public sources by
``python -m forensics.lab.catalogue_mine``; nothing here is written by hand
except the phase rules below, which are data over names.

Everything loads lazily on first use (``catalogue_index``; templates and their
index words: ``templates``) and uses only the standard library, so ``import
forensics.events.catalogue`` costs nothing. :func:`lookup` costs a few
microseconds per line: templates are indexed by their rarest literal word, and
only the few templates that share a word of the line are tried.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Iterable

from forensics.events.catalogue_index import CatalogueEntry, CatalogueIndex, catalogue_dir
from forensics.events.phases import PHASES

__all__ = [
    "CatalogueEntry", "PHASES", "PHASE_RULES", "phase_from_names",
    "lookup", "lookup_all", "phase_of_function", "phase_of_frames", "entries_for_label", "entries",
    "packages", "is_error_level", "catalogue_dir", "module_of_path",
]


# Phase from a function's qualified name and its module, first match wins.
# Ordered most specific first: "capture" beats "forward", "profile_run" beats
# "run". Each rule is (phase, regex over the lowercased qualname, regex over the
# lowercased dotted module or None). Why these words: they are the names the
# servers give the steps of their start-up (see taxonomy.md's phases).
PHASE_RULES: tuple[tuple[str, str, str | None], ...] = (
    ("cuda-graph-capture", r"cuda_?graph|graph_?runner|graphrunner|(^|[._])capture|capture_model|"
                           r"_dummy_run_graph|piecewise", None),
    ("cuda-graph-capture", r".*", r"cuda_graph|graph_runner|cudagraph"),
    ("warmup", r"warm_?up|_warmup|dummy_sampler_run|vision_tower_warmup", None),
    ("memory-plan", r"profile_run|determine_(available|num_available)_memory|available_memory|"
                    r"init_memory_pool|_init_cache|init_cache|initialize_cache|kv_?cache|"
                    r"num_gpu_blocks|get_num_blocks|profile_max|memory_profil|"
                    r"determine_num_available_blocks|_get_cache_block_size|token_to_kv_pool|"
                    r"alloc_kv|allocate_kv|check_enough_kv|_check_available_memory|"
                    r"get_available_gpu_memory|profile_num_available_blocks|mem_fraction|"
                    r"init_kv|_initialize_kv|max_total_num_tokens|max_num_tokens|memorypool|memory_pool|"
                    r"poolconfig|pool_config", None),
    ("memory-plan", r".*", r"kv_cache_utils|memory_pool|mem_cache|cache_engine|block_manager|"
                           r"kv_cache_manager|memory_profiler"),
    # resolving the model's config and tokenizer precedes loading its weights:
    # it is start-up (launch), whichever library does it
    ("launch", r"config\w*\.from_pretrained|tokenizer\w*\.from_pretrained|(^|[._])get_config(_|$)|"
               r"load_config|get_hf_text_config|(^|[._])get_tokenizer|get_hf_file|get_config_dict|"
               r"cached_files?$|hf_hub_download|try_get_generation_config|_get_model_architecture|"
               r"resolve_archs|inspect_model_cls|_normalize_archs|verify_and_update_config", None),
    ("launch", r".*", r"configuration_utils|tokenization_utils|transformers_utils\.config|"
                      r"transformers\.models\.auto\.(configuration|tokenization)_auto|huggingface_hub"),
    ("load-weights", r"load_model|load_weights|loadweights|modelloader|model_loader|"
                     r"load_checkpoint|_load_state_dict|load_state_dict|(^|[._])from_pretrained|"
                     r"safetensors|download_weights|weight_loader|load_(safetensor|pt|bin)|"
                     r"(^|[._])get_model$|_get_weights_iterator|hf_model_weights|"
                     r"load_lora|initialize_model\b|_load_pretrained_model|_prepare_weights", None),
    ("load-weights", r".*", r"model_loader|weight_utils|(^|\.)loader$|modeling_utils|safetensors"),
    ("kernel-jit", r"(^|[._])jit|build_and_load|load_cuda_ops|_jit_compile|compile_kernel|"
                   r"(^|[._])compile(_|$|\.)|_compile|cpp_extension|_write_ninja|_run_ninja|"
                   r"verify_ninja|get_cuda_arch|_get_cuda_arch_flags|build_extension|"
                   r"gen_\w*_module|get_\w*jit\w*_module|make_launcher|ptx_to_cubin|"
                   r"_build_(extension|kernel|module)|build_kernel|autotune|do_bench", None),
    ("kernel-jit", r".*", r"\.jit\b|jit_utils|cpp_extension|triton\.compiler|triton\.runtime|"
                          r"triton\.backends|deep_gemm\.jit|flashinfer\.jit|torch\._inductor"),
    # binding the port, starting the HTTP server, building the engine client:
    # start-up, though the API server module names them
    ("launch", r"serve_http|run_server|start_server|create_server|server_socket|setup_server|bind_socket|"
               r"(^|[._])bind$|launch_server|launch_engine|_launch_subprocesses|launch_core_engines|"
               r"wait_for_engine_startup|build_async_engine_client|engine_client|make_\w*client|"
               r"from_engine_args|from_vllm_config|run_scheduler_process|init_model_worker|"
               r"init_tp_model_worker|_init_model_runner|init_torch_distributed|"
               r"(^|\.)(scheduler|engine|llmengine|asyncllm|enginecore\w*|modelrunner|\w*worker)\.__init__$", None),
    ("serving", r"(^|[._])sample(_|$)|sampler|forward_decode|forward_extend|forward_batch|decode_step|"
                r"(^|[._])prefill(_|$)|execute_model|(^|[._])generate(_|$)|generate_request|handle_generate|"
                r"handle_request|_handle_batch|process_input_requests|event_loop|run_batch|"
                r"(^|[._])step(_|$)|engine_step|create_completion|create_chat_completion|chat_completion|"
                r"process_batch|recv_requests|detokeniz|_process_outputs|output_processor|process_outputs|"
                r"get_next_batch_to_run|(^|[._])schedule(_|$)", None),
    ("serving", r".*", r"serving_|sampling|sampler|detokenizer|output_processor"),
    ("shutdown", r"shutdown|terminate|_kill|kill_|cleanup|__del__|atexit|sigterm|"
                 r"signal_handler|graceful|close\b", None),
    ("launch", r"serverargs|server_args|engineargs|engine_args|__post_init__|argparse|"
               r"parse_args|add_cli_args|check_server_args|check_|_check|verify_|_verify|"
               r"validate|from_cli_args|_launch|create_engine_config|make_arg_parser|"
               r"cli_args|set_env|_set_envs|init_distributed|init_process_group|"
               r"initialize_model_parallel|ensure_model_parallel|set_device|get_device_capability|"
               r"_init_device|init_device|config\.__init__|config\.__post_init__", None),
    ("launch", r".*", r"server_args|arg_utils|\.cli\b|\.cli_args|launcher|envs\b|entrypoints\.cli"),
    ("ready", r"wait_for_server|_wait_and_warmup|health|ready", None),
)

_COMPILED_PHASE_RULES: list[tuple[str, re.Pattern[str], re.Pattern[str] | None]] = [
    (ph, re.compile(q), re.compile(m) if m else None) for ph, q, m in PHASE_RULES
]


# Helpers that turn a status code into an exception (cupy's check_status,
# torch's C10_CUDA_CHECK wrappers, ctypes' errcheck): every step of start-up and
# serving calls them, so the innermost frame being one says nothing about
# where the program was. Without this, "check_" (an argument check, launch)
# named every CUDA runtime error's phase.
NEUTRAL_NAMES = re.compile(
    r"(?:^|[._])(?:_?check_(?:status|error|errors|result|return|rc|call|cuda\w*|cu\w*|nccl\w*|hip\w*|"
    r"driver|runtime)|_?cuda_?check\w*|_?raise_?(?:error|exception|if\w*)?|errcheck|error_?check\w*|"
    r"handle_?error)$")


def phase_from_names(module: str | None, qualname: str) -> str | None:
    """The phase a function's name says it belongs to (None: its name says nothing)."""
    q = (qualname or "").lower()
    m = (module or "").lower()
    if NEUTRAL_NAMES.search(q):
        return None
    for phase, qre, mre in _COMPILED_PHASE_RULES:
        if mre is not None:
            if m and mre.search(m) and qre.search(q):
                return phase
        elif q and qre.search(q):
            return phase
    return None


def module_of_path(path: str) -> str | None:
    """``/x/site-packages/vllm/v1/engine/core.py`` -> ``vllm.v1.engine.core``."""
    p = path.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        i = p.rfind(marker)
        if i >= 0:
            p = p[i + len(marker):]
            break
    else:
        # a source checkout: keep from the first known top-level package
        m = _TOP_PACKAGE.search(p)
        if not m:
            return None
        p = p[m.start(1):]
    if p.endswith(".py"):
        p = p[:-3]
    p = p.replace("/", ".")
    if p.endswith(".__init__"):
        p = p[: -len(".__init__")]
    return p or None


_TOP_PACKAGE = re.compile(r"(?:^|/)((?:sglang|vllm|lmdeploy|transformers|torch|flashinfer|triton|"
                          r"deep_gemm|text_generation_server|sgl_kernel|vllm_ascend|ray|uvicorn|huggingface_hub)/)")


_ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "FATAL", "EXCEPTION"})
_ERROR_KINDS = frozenset({"raise", "assert", "check", "error-string", "panic"})


def is_error_level(entry: CatalogueEntry) -> bool:
    """True for messages a program prints when something failed: raised
    exceptions, failed assertions and checks, runtime error strings, and log
    calls at error level or above. A warning is not an error even when it
    predicts one."""
    if entry.kind in _ERROR_KINDS:
        return True
    return (entry.level or "").upper() in _ERROR_LEVELS


_INDEX: CatalogueIndex | None = None
_LOCK = threading.Lock()


_INDEX_ENV: str | None = None


def _index() -> CatalogueIndex:
    """The loaded index; reloaded only when $FORENSICS_CATALOGUE changes (tests)."""
    global _INDEX, _INDEX_ENV
    idx = _INDEX
    env = os.environ.get("FORENSICS_CATALOGUE")
    if idx is None or env != _INDEX_ENV:
        with _LOCK:
            idx = _INDEX
            if idx is None or env != _INDEX_ENV:
                idx = _INDEX = CatalogueIndex(catalogue_dir())
                _INDEX_ENV = env
    return idx


_EXC_PREFIX = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning|Interrupt|Exit|"
                         r"Failure|Fault))\s*:\s*(.*)$", re.S)


def lookup_all(message: str, limit: int = 5) -> list[CatalogueEntry]:
    """The catalogue entries whose template occurs in ``message``, best first
    (most literal text matched, then the same exception type, then most releases)."""
    if not message:
        return []
    idx = _index()
    if not idx.size:
        return []
    exc = None
    m = _EXC_PREFIX.match(message)
    if m:
        exc = m.group(1).rsplit(".", 1)[-1]
    scored: list[tuple[tuple[int, int, int], int]] = []
    cands, keys = idx.candidates(message)
    for i in cands:
        size, words, runs = idx.words(i)
        # every whole word and every literal run of the template must be in
        # the line (its regex matches each verbatim): tests that spare most
        # candidates compiling and running their regex
        if not words <= keys or not all(r in message for r in runs):
            continue
        rx = idx.regex(i)
        if rx is None or rx.search(message) is None:
            continue
        e = idx.entry(i)  # parsed only when it matches
        et = e.exc_type
        same_exc = 1 if exc and et and et.rsplit(".", 1)[-1] == exc else 0
        scored.append(((size, same_exc, len(e.releases)), i))
    scored.sort(reverse=True)
    return [idx.entry(i) for _s, i in scored[:limit]]


def lookup(message: str) -> CatalogueEntry | None:
    """The catalogue entry a log message (or an ``ExcType: message`` line) comes
    from, or None. Call it on candidate lines only (errors, warnings, the last
    lines of a traceback): it costs microseconds, not nothing."""
    found = lookup_all(message, limit=1)
    return found[0] if found else None


def phase_of_function(module: str | None, function: str) -> str | None:
    """The phase a function belongs to: from the catalogue's table of the
    functions seen in the mined sources (keyed by module and bare name, so a
    traceback frame's ``in capture`` finds ``CudaGraphRunner.capture``), else
    from the function's and module's names alone. ``module`` may be a dotted
    name or a frame's file path."""
    if not function:
        return None
    mod = module
    if mod and ("/" in mod or mod.endswith(".py")):
        mod = module_of_path(mod)
    if mod:
        ph = _index().functions.get(mod, {}).get(function)
        if ph:
            return ph
    return phase_from_names(mod, function)


# Which phase a stack of frames is in: the step of start-up that called the
# code that failed, not the innermost name (capture and profile_run call the
# model's forward, which by its name alone would be serving). Start-up steps,
# outermost first, beat kernel JIT, which beats serving, which beats launch.
_STEP_PHASES = ("load-weights", "memory-plan", "cuda-graph-capture", "warmup")
_FRAME_PRECEDENCE = ("kernel-jit", "serving", "shutdown", "ready", "launch")


def phase_of_frames(frames: Iterable[tuple[str | None, str]]) -> str | None:
    """The phase of a traceback from its frames, ``(module or file path,
    function)`` outermost first (as a traceback prints them); None when no
    frame's name says."""
    phases = [phase_of_function(m, f) for m, f in frames]
    for ph in phases:  # outermost start-up step
        if ph in _STEP_PHASES:
            return ph
    for want in _FRAME_PRECEDENCE:
        if want in phases:
            return want
    return None


def entries(package: str | None = None) -> list[CatalogueEntry]:
    """All entries (of one package). Parses the whole catalogue: for the lab
    and tests, not for per-line use."""
    files = _index().files
    if package:
        return files[package].all() if package in files else []
    return [e for pf in files.values() for e in pf.all()]


def packages() -> dict[str, set[str]]:
    """package -> the releases the catalogue covers."""
    return {p: set(r) for p, r in _index().releases.items()}


def entries_for_label(label: str, error_only: bool = False) -> list[CatalogueEntry]:
    """The entries whose guessed label is ``label`` (for the corpus generator);
    ``error_only``: only those printed when something failed (:func:`is_error_level`)."""
    return [e for e in entries() if e.label == label and (not error_only or is_error_level(e))]
