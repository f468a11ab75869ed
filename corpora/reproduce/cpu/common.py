"""Shared harness: wrap a REAL failing call in a server-like log.

Styles
  plain  : a few plain print() startup lines, then the exception propagates and
           CPython itself prints the traceback on stderr (exit code 1).
  sglang : logging '[%(asctime)s TP0] %(message)s' (datefmt %Y-%m-%d %H:%M:%S);
           the exception is logged exactly as SGLang's run_scheduler_process
           does: logger.error(f"Scheduler hit an exception: {traceback.format_exc()}")
           followed by the parent's 'Received sigquit ...' line.
  vllm   : logging '%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s'
           (datefmt %m-%d %H:%M:%S) with vLLM's NewLineFormatter behaviour (every
           newline of a record repeated with the header, '\r\n' line ends), the
           exception logged by logger.exception("EngineCore failed to start.").

Only the startup/context lines are written by this harness. Every failure line
(exception type, message, traceback, compiler/ninja output) comes from the real
program that failed: Python, torch, gcc, ninja, ld.so, numpy, ...
"""
import logging
import os
import sys
import time
import traceback

STARTUP = {
    # (phase) -> list of context lines in the style of each server
    "sglang": {
        "launch": [
            "server_args=ServerArgs(model_path='{model}', tokenizer_path='{model}', host='127.0.0.1', port={port}, tp_size=1, dtype='auto', mem_fraction_static=0.88, device='cpu', random_seed={seed})",
        ],
        "load-weights": [
            "Init torch distributed begin.",
            "Init torch distributed ends. mem usage=0.00 GB",
            "Load weight begin. avail mem={mem:.2f} GB",
        ],
        "memory-plan": [
            "Init torch distributed begin.",
            "Init torch distributed ends. mem usage=0.00 GB",
            "Load weight begin. avail mem={mem:.2f} GB",
            "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={mem2:.2f} GB, mem usage={use:.2f} GB.",
        ],
        "kernel-jit": [
            "Init torch distributed begin.",
            "Init torch distributed ends. mem usage=0.00 GB",
            "Load weight begin. avail mem={mem:.2f} GB",
            "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={mem2:.2f} GB, mem usage={use:.2f} GB.",
            "KV Cache is allocated. #tokens: 412345, K size: 3.15 GB, V size: 3.15 GB",
            "Memory pool end. avail mem={mem3:.2f} GB",
        ],
        "warmup": [
            "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem={mem2:.2f} GB, mem usage={use:.2f} GB.",
            "KV Cache is allocated. #tokens: 412345, K size: 3.15 GB, V size: 3.15 GB",
            "Memory pool end. avail mem={mem3:.2f} GB",
            "max_total_num_tokens=412345, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=32768, available_gpu_mem={mem3:.2f} GB",
        ],
        "serving": [
            "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem={mem2:.2f} GB, mem usage={use:.2f} GB.",
            "Memory pool end. avail mem={mem3:.2f} GB",
            "The server is fired up and ready to roll!",
            "Prefill batch [1], #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0",
            "Decode batch [12], #running-req: 1, #token: 40, token usage: 0.00, cuda graph: True, gen throughput (token/s): 41.02, #queue-req: 0",
        ],
    },
    "vllm": {
        "launch": [
            "vLLM API server version 0.9.2",
            "args: Namespace(model='{model}', host='127.0.0.1', port={port}, tensor_parallel_size=1, dtype='auto', seed={seed})",
        ],
        "load-weights": [
            "vLLM API server version 0.9.2",
            "Initializing a V1 LLM engine (v0.9.2) with config: model='{model}', speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, dtype=torch.bfloat16, max_seq_len=32768, seed={seed}",
            "Starting to load model {model}...",
        ],
        "memory-plan": [
            "vLLM API server version 0.9.2",
            "Starting to load model {model}...",
            "Loading weights took 3.41 seconds",
            "Model loading took {use:.4f} GiB and 3.912 seconds",
        ],
        "kernel-jit": [
            "vLLM API server version 0.9.2",
            "Starting to load model {model}...",
            "Loading weights took 3.41 seconds",
            "Model loading took {use:.4f} GiB and 3.912 seconds",
            "Using max model len 32768",
        ],
        "warmup": [
            "vLLM API server version 0.9.2",
            "Model loading took {use:.4f} GiB and 3.912 seconds",
            "GPU KV cache size: 412,336 tokens",
            "Maximum concurrency for 32,768 tokens per request: 12.58x",
        ],
        "serving": [
            "vLLM API server version 0.9.2",
            "Model loading took {use:.4f} GiB and 3.912 seconds",
            "Starting vLLM API server 0 on http://127.0.0.1:{port}",
            "Avg prompt throughput: 12.4 tokens/s, Avg generation throughput: 38.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%",
        ],
    },
}
STARTUP["plain"] = {}

FMT = {
    "sglang": ("[%(asctime)s TP0] %(message)s", "%Y-%m-%d %H:%M:%S"),
    "vllm": ("%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s", "%m-%d %H:%M:%S"),
}


class NewLineFormatter(logging.Formatter):
    """vLLM's vllm/logging_utils/formatter.py::NewLineFormatter behaviour."""

    def format(self, record):
        msg = logging.Formatter.format(self, record)
        if record.message != "":
            parts = msg.split(record.message)
            msg = msg.replace("\n", "\r\n" + parts[0])
        return msg


def _fill(line, ctx):
    return line.format(**ctx)


VLLM_SRC = [("api_server.py", 1043), ("core.py", 61), ("gpu_model_runner.py", 1329),
            ("default_loader.py", 272), ("gpu_model_runner.py", 1358), ("kv_cache_utils.py", 716),
            ("kv_cache_utils.py", 720), ("launcher.py", 29)]


class _VllmSource(logging.Filter):
    """Give records vLLM-like [file:line] sources (the real ones would be vLLM's)."""
    n = 0

    def filter(self, record):
        if record.levelno >= logging.ERROR:
            record.filename, record.lineno = "core.py", 390
        else:
            record.filename, record.lineno = VLLM_SRC[self.n % len(VLLM_SRC)]
            self.n += 1
        return True


class _SglangFormatter(logging.Formatter):
    """'[time TP0] msg' for scheduler records, '[time] msg' for the main process
    (server_args line, sigquit handler), as in SGLang."""

    def __init__(self):
        super().__init__("[%(asctime)s TP0] %(message)s", "%Y-%m-%d %H:%M:%S")
        self.main = logging.Formatter("[%(asctime)s] %(message)s", "%Y-%m-%d %H:%M:%S")

    def format(self, record):
        if record.name.startswith("sglang.srt.entrypoints"):
            return self.main.format(record)
        return super().format(record)


def setup_logger(style):
    fmt, datefmt = FMT[style]
    h = logging.StreamHandler(sys.stdout if style == "vllm" else sys.stderr)
    h.setFormatter(NewLineFormatter(fmt, datefmt) if style == "vllm" else _SglangFormatter())
    root = logging.getLogger()
    if style == "vllm":
        h.addFilter(_VllmSource())
    root.handlers[:] = [h]
    root.setLevel(logging.INFO)
    return logging.getLogger("sglang.srt.managers.scheduler" if style == "sglang" else "vllm.v1.engine.core")


def run(fn, style="plain", phase="launch", model="/models/Qwen2.5-7B-Instruct", port=30000,
        extra_lines=()):
    """Print server-like context lines for `phase`, then call fn() and report a
    failure the way `style` does. `extra_lines` are appended after the
    phase lines."""
    ctx = dict(model=model, port=port, seed=int(time.time()) % 1000,
               mem=78.5 - (os.getpid() % 17) / 10, mem2=62.1 - (os.getpid() % 13) / 10,
               mem3=8.9 + (os.getpid() % 7) / 10, use=15.23 + (os.getpid() % 5) / 10)
    lines = [_fill(l, ctx) for l in STARTUP[style].get(phase, [])] + list(extra_lines)
    if style == "plain":
        for l in lines:
            print(l, file=sys.stderr, flush=True)
        fn()
        print("unexpected: scenario did not fail", file=sys.stderr)
        sys.exit(3)
    log = setup_logger(style)
    for l in lines:
        if style == "sglang" and l.startswith("server_args="):
            logging.getLogger("sglang.srt.entrypoints.engine").info(l)
        else:
            log.info(l)
    try:
        fn()
    except SystemExit:
        raise  # e.g. uvicorn/argparse exit on their own after printing
    except BaseException:  # noqa: BLE001 - report like the servers do
        if style == "sglang":
            log.error(f"Scheduler hit an exception: {traceback.format_exc()}")
            # parent process line (SGLang 0.5.x launch_phase_sigquit_handler)
            plog = logging.getLogger("sglang.srt.entrypoints.engine")
            plog.error("Received sigquit from a child process. It usually means the child failed.")
        else:
            log.exception("EngineCore encountered a fatal error." if phase == "serving"
                          else "EngineCore failed to start.")
        sys.stdout.flush(); sys.stderr.flush()
        sys.exit(1)
    print("unexpected: scenario did not fail", file=sys.stderr)
    sys.exit(3)


WORK = os.environ.get("REPRO_WORK", "/tmp/repro-work")


def workdir(name):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    return d


def main(variants, **kw):
    """argv: VARIANT STYLE PHASE"""
    variant, style, phase = sys.argv[1], sys.argv[2], sys.argv[3]
    spec = variants[variant]
    if callable(spec):
        spec = {"fn": spec}
    opts = dict(kw)
    opts.update({k: v for k, v in spec.items() if k not in ("fn", "prep")})
    if "prep" in spec:
        spec["prep"]()
    run(spec["fn"], style=style, phase=phase, **opts)
