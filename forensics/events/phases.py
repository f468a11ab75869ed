"""Phase markers: the lines that say where in start-up a server is.

Data, not code: (marker, phase, regex) rows in phases.yaml. SGLang and vLLM changed these
strings between versions; each regex matches the stable core of every
variant listed in reference/log-formats.md §5.3 and §6.4.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import cast

from forensics.events.tables import joined, load_table
from forensics.events.types import share_data

PHASES = ("launch", "load-weights", "memory-plan", "kernel-jit", "cuda-graph-capture", "warmup",
          "ready", "serving", "shutdown")
PHASE_ORDER = {p: i for i, p in enumerate(PHASES)}

_TABLE = load_table(__file__, "phases.yaml")
# (marker name, phase, regex), from phases.yaml.
MARKERS: list[tuple[str, str, str]] = [(row["name"], row["phase"], cast(str, joined(row["regex"]))) for row in _TABLE]
# Markers that count only for lines of one program's logger (marker name -> logger regex).
LOGGER_OF: dict[str, re.Pattern[str]] = {row["name"]: re.compile(row["logger"]) for row in _TABLE if row.get("logger")}

PHASE_OF = {name: phase for name, phase, _ in MARKERS}
# Markers a program prints on a timer while it is up (periodic: true): they say it is still up, so
# once it serves they are no step back to ready.
PERIODIC: frozenset[str] = frozenset(row["name"] for row in _TABLE if row.get("periodic"))

# One alternation of plain literals rejects ordinary lines cheaply (a mixed
# alternation defeats re's literal-prefix scan and costs ~15 us a line);
# only lines that contain a keyword try the marker regexes one by one.
_KEYWORDS = (
    "server_args=", "ServerArgs(", "non-default args", "vLLM API server version", "args: Namespace(", "Initializing a",
    "Args {", "Init torch distributed", "Init parallel begin", "Initializing distributed environment", "world_size=",
    "Load weight", "Starting to load model", "Loading safetensors", "Multi-thread loading", "Loading weights",
    "Loading model weights", "Loading the model ", "download process", "Starting shard", "Waiting for shard", "Starting model backend",
    "Model artifacts downloaded", "will fit in available VRAM", "msg=offload", "msg=\"offload", "msg=\"\" architecture=", "download_artifacts", "Downloading shards", "Copying contents of", "ModelServer at", "Exporting HTTP/REST API at", "loading: ", "TRITONBACKEND_Model", "llama_model_loader: loaded",
    "loading model", "llm_load_", "load_tensors: ", "print_info: ", "Using model weights format", "repeating layer", "Model weights are loaded", "| READY",
    "Model loading took", "Loaded engine size: ", "TRTGptModel max", "Fetching ", "checkpoint shards", "Some weights of ", "Reading SavedModel", "kv self size", "Successfully loaded huggingface model", "starting llama server", "starting runner", "llama runner to start", "starting llama runner", "_model_load", "Loading ", "ready in ", "successfully loaded", "KV Cache is allocated",
    "Memory pool end", "# GPU blocks", "Initial profiling/warmup run", "may waste at most", "Registering KV_Caches", "profiled value", "KV cache token capacity", "Estimated KVCacheConfig", "KV buffer size", "GPU KV cache size", "Available KV cache memory", "Maximum concurrency",
    "# cpu blocks", "memory capacity is unbalanced", "[MemUsageChange] Allocated", "IExecutionContext creation", ": n_ctx", "graph splits = ", "ummy run", "in memory usage profiling", "Peak memory during", "Estimated max memory in KV", "CUDA graph instances", "CUDA graph warmup", "constructing llama_context", "whisper_init_state: ", "DeepGEMM",
    "Compiling num tokens", "Compilation finished in", "Engine generation completed", "Autotuning process", "Dynamo bytecode", "torch.compile takes", "Compiling a graph", "Building extension module",
    "Emitting ninja build file", "FlashInfer JIT", "flashinfer.jit", "aptur", "Graph capturing finished",
    "Application startup complete", "Uvicorn running on", "Started server process", "Waiting for application startup",
    "-- Deployed ", "model_info HTTP", "Starting vLLM", "Available routes are:", "Supported tasks: [", "warmup completed in ",
    "startup warmup", "warming up the model with an empty run", "send_error: task id = ", "Warmup ended", "init engine (profile", "Start warmup", "warmup requests completed",
    "Starting warmup", "Warming up", "fired up and ready", "Started HTTPService at", "Started GRPCInferenceService at", "Started GRPCService at",
    "Connected", "Ready", "server is listening on", "HTTP server listening", "Listening on", "Deployed app",
    "is ready at ", "Starting HTTP service on", "The server is running on port", "in a browser for detailed api usage",
    "llama runner started", "llama_server: listening on", "server is ready", "-server: listening on", "Serving on ", "cleaning up before exit", "Received second interrupt", "^C", "Shutdown initiated (timeout=", "Starting HTTP(S) service", "Router ready | workers", "BentoServer from",
    "Please connect to custom endpoint", "API is listening!", "bound on host ", "Starting Xinference at endpoint", "Running on local URL", "ModelActor(", "LocalAI is started and running", "Running on http", "Ctrl-c to exit", "erver listening on http", "Starting httpd at", "whisper server listening at", "llama server listening at", "status=200", "Start mindie server", "Start endpoint success", "Daemon start success", "Serving router on", "lightllm_req_id", "Server started on http", "-> WORKER_STARTED", "req.cmd LOAD", "-> WORKER_MODEL_LOADED", "Send heart beat", "fastapi/routing.py:", "Preparing model workspace", " OK ", "Request serving ", "Benchmark complete.", "Stopping LLM backend.", "Collecting last responses", "Output generated in", "Successful requests:", "tasks: [", "Processed prompts", "eval time = ", "Processing audio with duration", "print_timings] ", "slot is processing task", " ± ", "Listening at: ", "completion request", "Received request ", "Added request ", "LM STUDIO SERVER", "gen_config=", "Throughput (T/s)", "Adding requests", "method=POST", "method=\"POST", "method=GET", "method=\"GET", "method=HEAD", "method=\"HEAD", "\"method\":\"GET\"", "\"method\":\"HEAD\"", "\"method\":\"POST\"", "Processed requests", "Prefill. latency: ", "preprocess_ms: ", "{parameters=", "{total_time=",
    "{default_return_full_text=", "processing task", "log_server_r:", "selected slot by", "sampler params:", "Decode out of memory happened", "Dequeued prefill request", "[GIN]", "POST /", "PUT /", "CALL __call__", "Decode batch", "Prefill batch",
    "Avg prompt throughput", "Shutting down", "SIGTERM", "Finished server process", "[shutdown]", "Gracefully stopping",
    "Stopping gracefully", "Terminating process group", "Terminating local vLLM worker", "Closing engine stats scraper", "Closing service discovery module", "resource_tracker: There appear", "CANCELLED",
    "destroy_process_group() was not called", "starting graceful shutdown", "Signal (", "in-flight requests",
)
MARKER_KEYWORDS = _KEYWORDS  # literals, one of which every phase-marker line contains
_TRIGGER_RX = "|".join(re.escape(k) for k in _KEYWORDS)
_BATCH = re.compile(dict((name, rx) for name, _, rx in MARKERS)["batch_stats"])


@lru_cache(maxsize=1)
def _fallback() -> tuple[re.Pattern[str], list[tuple[str, re.Pattern[str]]]]:
    """The trigger and the marker regexes for ``re``: compiled only when there
    is no RE2 set (they cost a process ~4 ms)."""
    return re.compile(_TRIGGER_RX), [(name, re.compile(rx)) for name, _, rx in MARKERS]


def _marker_set():  # type: ignore[no-untyped-def]
    """All marker regexes and the keyword trigger in one RE2 set (one pass a
    line instead of up to 15 searches), or None without google-re2. ``\\d``
    becomes ``\\p{Nd}``: Python's ``\\d`` on text is every Unicode digit."""
    try:
        import re2
    except ImportError:
        return None
    o = re2.Options()
    o.log_errors = False
    s = re2.Set.SearchSet(o)
    try:
        for _, _, rx in MARKERS:
            s.Add(rx.replace(r"\d", r"\p{Nd}"))
        s.Add(_TRIGGER_RX)
        s.Compile()
    except re2.error:
        return None
    return s._set.Match


_SET_MATCH = _marker_set()
_NAMES = [name for name, _, _ in MARKERS]
_TRIGGER_ID = len(MARKERS)
_BATCH_ID = _NAMES.index("batch_stats")


# The serving bulk's lines start with these: batch_stats' regex matches at the
# start and the trigger finds its keyword, so the answer is batch_stats
# without a scan (checked against the table here; dropped if it disagrees).
BATCH_HEADS = tuple(f"{w} batch{c}" for w in ("Decode", "Prefill") for c in ". [,")
if not all(_BATCH.match(h) and any(k in h for k in _KEYWORDS) for h in BATCH_HEADS):  # the trigger, as literals
    BATCH_HEADS = ()


def match_marker(msg: str, logger: str | None = None) -> str | None:
    """Name of the phase marker in ``msg`` (a line of ``logger``), or None."""
    if msg.startswith(BATCH_HEADS):
        return "batch_stats"
    if _SET_MATCH is not None:
        try:
            found = _SET_MATCH(msg.encode("utf-8"))
        except UnicodeEncodeError:
            found = _SET_MATCH(msg.encode("utf-8", "replace"))
        if not found or _TRIGGER_ID not in found:
            return None
        if _BATCH_ID in found and "batch" in msg:
            return "batch_stats"
        for i in sorted(found):
            if i != _TRIGGER_ID and _logger_fits(_NAMES[i], logger):
                return _NAMES[i]
        return None
    trigger, compiled = _fallback()
    if trigger.search(msg) is None:
        return None
    if "batch" in msg and _BATCH.search(msg) is not None:  # by far the most frequent marker
        return "batch_stats"
    for name, rx in compiled:
        if rx.search(msg) is not None and _logger_fits(name, logger):
            return name
    return None


def _logger_fits(name: str, logger: str | None) -> bool:
    """A marker tied to one program's logger counts only on that logger's lines."""
    rx = LOGGER_OF.get(name)
    return rx is None or (logger is not None and rx.search(logger) is not None)

# One shared (never mutated) data dict per marker: events built per line reuse it.
MARKER_DATA = {name: share_data({"phase": phase, "marker": name}) for name, phase, _ in MARKERS}
