"""Server-style wrapper lines for the early-warning captures (issue 12) and good/bad pairs (issue 19).

Only the *wrapper* lines come from here: SGLang- or vLLM-shaped phase lines
(server_args=ServerArgs(...), Load weight begin/end, KV cache, cuda graph,
ready), and the way those servers report an exception. Every warning and every
error they wrap is what torch / JAX / NCCL / nvcc / numpy / the loader printed.
Versions in these lines are the real ones of the machine (torch, CUDA, GPU);
the server version is marked '+repro' because no real server ran.
"""
import logging
import os
import socket
import sys
import time
import traceback

SGLANG_CAPTURE_FAILED_MSG = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    "3. disable torch compile by not using --enable-torch-compile\n"
    "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
)


def gib(n):
    return n / (1 << 30)


def _fmt_args(d):
    return ", ".join(f"{k}={v!r}" for k, v in d.items())


SGLANG_DEFAULTS = dict(
    model_path="meta-llama/Llama-3.1-8B-Instruct", tokenizer_path="meta-llama/Llama-3.1-8B-Instruct",
    tokenizer_mode="auto", skip_tokenizer_init=False, load_format="auto", trust_remote_code=False,
    dtype="auto", kv_cache_dtype="auto", quantization=None, context_length=None, device="cuda",
    served_model_name="meta-llama/Llama-3.1-8B-Instruct", is_embedding=False, revision=None,
    host="127.0.0.1", port=30000, mem_fraction_static=0.88, max_running_requests=None,
    max_total_tokens=None, chunked_prefill_size=8192, max_prefill_tokens=16384,
    schedule_policy="fcfs", schedule_conservativeness=1.0, cpu_offload_gb=0, page_size=1,
    tp_size=1, pp_size=1, stream_interval=1, stream_output=False, random_seed=42,
    watchdog_timeout=300, dist_timeout=None, download_dir=None, base_gpu_id=0, gpu_id_step=1,
    log_level="info", log_requests=False, show_time_cost=False, enable_metrics=False,
    dp_size=1, load_balance_method="round_robin", dist_init_addr=None, nnodes=1, node_rank=0,
    attention_backend=None, sampling_backend="flashinfer", grammar_backend="xgrammar",
    disable_radix_cache=False, disable_cuda_graph=False, disable_cuda_graph_padding=False,
    enable_nccl_nvls=False, disable_custom_all_reduce=False, enable_torch_compile=False,
    torch_compile_max_bs=32, cuda_graph_max_bs=None, cuda_graph_bs=None, enable_p2p_check=False,
)


class SGLang:
    """SGLang's formats: main process '[%Y-%m-%d %H:%M:%S] msg', scheduler '[... TP0] msg'."""

    def __init__(self, tp_rank=0, **server_args):
        fmt = "%Y-%m-%d %H:%M:%S"
        self.main = logging.getLogger("sglang.srt.entrypoints.http_server")
        self.main.propagate = False
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("[%(asctime)s] %(message)s", datefmt=fmt))
        self.main.handlers[:] = [h]
        self.main.setLevel(logging.INFO)
        self.log = logging.getLogger("sglang.srt.managers.scheduler")
        self.log.propagate = False
        h2 = logging.StreamHandler()
        h2.setFormatter(logging.Formatter(f"[%(asctime)s TP{tp_rank}] %(message)s", datefmt=fmt))
        self.log.handlers[:] = [h2]
        self.log.setLevel(logging.INFO)
        self.args = dict(SGLANG_DEFAULTS)
        if "model_path" in server_args:
            self.args["tokenizer_path"] = self.args["served_model_name"] = server_args["model_path"]
        self.args.update(server_args)
        self.t0 = time.time()

    def start(self):
        self.main.info(f"server_args=ServerArgs({_fmt_args(self.args)})")

    def init_dist(self, torch=None):
        self.log.info("Init torch distributed begin.")
        used = 0.0
        if torch is not None and torch.cuda.is_available():
            free, total = torch.cuda.mem_get_info()
            used = gib(total - free)
        self.log.info(f"Init torch distributed ends. mem usage={used:.2f} GB")

    def load_begin(self, torch):
        self.log.info(f"Load weight begin. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")

    def load_end(self, torch, before, arch="LlamaForCausalLM"):
        free = torch.cuda.mem_get_info()[0]
        self.log.info(f"Load weight end. type={arch}, dtype=torch.bfloat16, avail mem={gib(free):.2f} GB, mem usage={gib(before - free):.2f} GB.")

    def kv(self, torch, tokens, kbytes):
        self.log.info(f"KV Cache is allocated. #tokens: {tokens}, K size: {gib(kbytes):.2f} GB, V size: {gib(kbytes):.2f} GB")
        self.log.info(f"Memory pool end. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")

    def graph_begin(self, torch):
        self.log.info(f"Capture cuda graph begin. This can take up to several minutes. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")

    def graph_end(self, torch, t):
        self.log.info(f"Capture cuda graph end. Time elapsed: {time.time() - t:.2f} s. mem usage=0.05 GB. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB.")

    def ready(self, tokens=500000):
        a = self.args
        self.log.info(f"max_total_num_tokens={tokens}, chunked_prefill_size={a['chunked_prefill_size']}, max_prefill_tokens={a['max_prefill_tokens']}, max_running_requests=4096, context_len=131072, available_gpu_mem=12.31 GB")
        pid = os.getpid()
        self.main.info(f"INFO:     Started server process [{pid}]")
        self.main.info("INFO:     Waiting for application startup.")
        self.main.info("INFO:     Application startup complete.")
        self.main.info(f"INFO:     Uvicorn running on http://{a['host']}:{a['port']} (Press CTRL+C to quit)")
        self.main.info("INFO:     127.0.0.1:49822 - \"GET /get_model_info HTTP/1.1\" 200 OK")
        self.log.info("Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ")
        self.main.info("INFO:     127.0.0.1:49838 - \"POST /generate HTTP/1.1\" 200 OK")
        self.main.info("The server is fired up and ready to roll!")

    def fail(self):
        """What SGLang's run_scheduler_process does with an exception."""
        self.log.error(f"Scheduler hit an exception: {traceback.format_exc()}")
        self.main.error("Received sigquit from a child process. It usually means the child failed.")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


class _NewLineFormatter(logging.Formatter):
    """Mirrors vllm/logging_utils/formatter.py::NewLineFormatter."""

    def format(self, record):
        msg = logging.Formatter.format(self, record)
        if record.message != "":
            parts = msg.split(record.message)
            msg = msg.replace("\n", "\r\n" + parts[0])
        return msg


class VLLM:
    """vLLM's default format, per-line header on multi-line records; EngineCore prefix for the engine."""

    def __init__(self, **nondefault):
        self.api = self._logger("vllm.api", "(APIServer pid=%d) " % os.getpid())
        self.eng = self._logger("vllm.engine", "(EngineCore_DP0 pid=%d) " % os.getpid())
        self.args = {"model": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 8192}
        self.args.update(nondefault)
        self.t0 = time.time()

    @staticmethod
    def _logger(name, prefix):
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(_NewLineFormatter(prefix + "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s", datefmt="%m-%d %H:%M:%S"))
        lg = logging.getLogger(name)
        lg.handlers[:] = [h]
        lg.setLevel(logging.INFO)
        lg.propagate = False
        return lg

    def start(self, torch=None):
        self.api.info("vLLM API server version 0.11.0+repro")
        self.api.info(f"non-default args: {self.args}")
        self.api.info("Resolved architecture: Qwen2ForCausalLM")
        self.api.info(f"Using max model len {self.args.get('max_model_len', 32768)}")
        self.eng.info(f"Initializing a V1 LLM engine (v0.11.0+repro) with config: model='{self.args['model']}', dtype=torch.bfloat16, max_seq_len={self.args.get('max_model_len')}, tensor_parallel_size=1, device_config=cuda, seed=0")

    def load(self, torch, fn):
        self.eng.info(f"Starting to load model {self.args['model']}...")
        t = time.time()
        before = torch.cuda.mem_get_info()[0]
        out = fn()
        used = before - torch.cuda.mem_get_info()[0]
        self.eng.info(f"Model loading took {gib(used):.4f} GiB and {time.time() - t:.6f} seconds")
        return out

    def kv(self, torch, tokens):
        self.eng.info(f"Available KV cache memory: {gib(torch.cuda.mem_get_info()[0]) * 0.8:.2f} GiB")
        self.eng.info(f"GPU KV cache size: {tokens:,} tokens")
        self.eng.info(f"Maximum concurrency for {self.args.get('max_model_len')} tokens per request: 61.04x")

    def ready(self):
        self.eng.info(f"init engine (profile, create kv cache, warmup model) took {time.time() - self.t0:.2f} seconds")
        self.api.info("Starting vLLM API server 0 on http://0.0.0.0:8000")
        self.api.info("Available routes are:")
        self.api.info("Route: /v1/chat/completions, Methods: POST")
        self.api.info("Route: /v1/completions, Methods: POST")
        print(f"(APIServer pid={os.getpid()}) INFO:     Started server process [{os.getpid()}]", flush=True)
        print(f"(APIServer pid={os.getpid()}) INFO:     Waiting for application startup.", flush=True)
        print(f"(APIServer pid={os.getpid()}) INFO:     Application startup complete.", flush=True)

    def fail(self):
        """EngineCore's report: 'EngineCore failed to start.' + traceback, then the API server's RuntimeError."""
        self.eng.error(f"EngineCore failed to start.\n{traceback.format_exc().rstrip()}")
        sys.stdout.flush()
        print("Traceback (most recent call last):", flush=True)
        print('  File "/usr/local/bin/vllm", line 10, in <module>\n    sys.exit(main())', flush=True)
        print("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}", flush=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p
