"""vLLM's start-up story (0.6 / 0.9 / 0.10-0.11 / 0.33 formats): launch, weights,
kernel JIT, memory plan, CUDA graph capture, warmup, ready and serving."""

from __future__ import annotations


from ..catalog import pick
from ..records import RunParts
from .noise import noise_lines


class VllmStory(RunParts):
    """The vLLM phases of :class:`~forensics.lab.generator.run.Run`."""

    def wproc(self, i: int = 0):
        c = self.c
        if c.gen == "v06":
            return ("w", i) if i > 0 else None
        if c.tp > 1:
            return ("w", i)
        return "core"

    def vlog_ranks(self, level: str, file: str, fn, ranks=None) -> None:
        c, r = self.c, self.r
        ranks = list(range(c.tp)) if ranks is None else ranks
        order = ranks[:]
        r.shuffle(order)
        for i in order:
            p = self.wproc(i)
            if p is None:
                self.em.add(self.em.vheader(level, file, "core") + fn(i), pid=self.st.core_pid, stream="stdout")
            else:
                self.em.vl(level, file, fn(i), p)

    def vllm_launch(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        noise_lines(em, "launch")
        if c.gen != "v06":
            em.vl("INFO", "__init__.py", "Automatically detected platform cuda.", "api")
        em.adv(1, 8)
        if c.gen == "v033":
            em.vl("INFO", "utils.py", f"vLLM server version {c.version}, serving model {c.model.hf}", "api")
        else:
            em.vl("INFO", "api_server.py", f"vLLM API server version {c.version}", "api")
        args = {"model": c.model.hf, "tensor_parallel_size": c.tp, "gpu_memory_utilization": pick(r, [0.9, 0.92, 0.85, 0.95]), "max_model_len": pick(r, [8192, 32768, c.model.max_len])}
        if r.random() < 0.5:
            args["host"] = "0.0.0.0"
        em.vl("INFO", "utils.py" if c.gen != "v06" else "api_server.py", (f"non-default args: {args}" if c.gen != "v06" else f"args: Namespace(model='{c.model.hf}', tensor_parallel_size={c.tp}, port={c.port})"), "api")
        if partial and self.failure and self.failure.scope in ("main", "argparse") and r.random() < 0.5:
            return
        em.adv(2, 20)
        if c.gen in ("v011", "v033"):
            em.vl("INFO", "model.py", f"Resolved architecture: {c.model.arch}", "api")
        em.vl("INFO", "model.py" if c.gen != "v06" else "config.py", f"Using max model len {args['max_model_len']}", "api")
        if c.gen != "v06":
            em.vl("INFO", "scheduler.py", f"Chunked prefill is enabled with max_num_batched_tokens={pick(r, [2048, 8192, 16384])}.", "api")
        if partial and self.failure and self.failure.scope in ("main",):
            return
        em.adv(3, 15)
        if c.gen in ("v011", "v033"):
            em.vl("INFO", "core.py", "Waiting for init message from front-end.", "core")
        eng = f"Initializing a V1 LLM engine (v{c.version}) with config: model='{c.model.hf}', speculative_config=None, tokenizer='{c.model.hf}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len={args['max_model_len']}, download_dir=None, load_format=auto, tensor_parallel_size={c.tp}, pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name={c.model.hf}, enable_prefix_caching=True, chunked_prefill_enabled=True"
        if c.gen == "v06":
            eng = eng.replace("Initializing a V1 LLM engine", "Initializing an LLM engine")
        em.vl("INFO", "core.py" if c.gen != "v06" else "llm_engine.py", eng, "core")
        if c.tp > 1:
            em.adv(2, 10)
            if c.gen != "v06":
                em.vl("INFO", "multiproc_executor.py" if c.gen != "v09" else "shm_broadcast.py", f"Connected to 127.0.0.1:{r.randint(30000, 65000)}", "core")
            self.vlog_ranks("INFO", "parallel_state.py", lambda i: f"rank {i} in world size {c.tp} is assigned as DP rank 0, PP rank 0, TP rank {i}, EP rank {i}")
            for _ in range(r.randint(1, 3)):
                em.bare(f"[Gloo] Rank {r.randrange(c.tp)} is connected to {c.tp - 1} peer ranks. Expected number of connected peer ranks is : {c.tp - 1}")
            self.vlog_ranks("INFO", "utils.py" if c.gen != "v06" else "utils.py", lambda i: f"vLLM is using nccl=={pick(r, ['2.21.5', '2.26.2', '2.27.3'])}", [0] if r.random() < 0.5 else None)
        em.adv(0.5, 4)

    def vllm_load_weights(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        self.vlog_ranks("INFO", "gpu_model_runner.py" if c.gen != "v06" else "model_runner.py", lambda i: f"Starting to load model {c.model.hf}...", [0] if r.random() < 0.5 else None)
        self.vlog_ranks("INFO", "weight_utils.py", lambda i: "Using model weights format ['*.safetensors']", [0])
        em.adv(1, 30)
        secs = r.uniform(3, 150)
        proc = self.wproc(0)
        if partial:
            if r.random() < 0.5:
                em.tqdm("Loading safetensors checkpoint shards", c.model.shards, secs * 0.4, proc=proc, steps=r.randint(1, 3))
            return
        em.tqdm("Loading safetensors checkpoint shards", c.model.shards, secs, proc=proc)
        self.vlog_ranks("INFO", "default_loader.py" if c.gen != "v06" else "loader.py", lambda i: f"Loading weights took {secs + r.uniform(0, 2):.2f} seconds", [0] if r.random() < 0.5 else None)
        w = min(c.model.weights_gib / c.tp, c.gpu.total_gib * 0.7)
        if c.gen == "v033":
            self.vlog_ranks("INFO", "gpu_model_runner.py", lambda i: f"Model loading took {w:.2f} GiB memory and {secs + r.uniform(1, 30):.6f} seconds")
        else:
            self.vlog_ranks("INFO", "gpu_model_runner.py" if c.gen != "v06" else "model_runner.py", lambda i: f"Model loading took {w:.4f} GiB and {secs + r.uniform(1, 30):.6f} seconds")

    def vllm_kernel_jit(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        if c.gen == "v06":
            em.adv(1, 5)
            return
        h = r.randbytes(5).hex()
        self.vlog_ranks("INFO", "backends.py", lambda i: f"Using cache directory: /root/.cache/vllm/torch_compile_cache/{h}/rank_{i}_0/backbone for vLLM's torch.compile", [0] if r.random() < 0.5 else None)
        t1 = r.uniform(3, 30)
        self.vlog_ranks("INFO", "backends.py", lambda i: f"Dynamo bytecode transform time: {t1:.2f} s", [0])
        em.adv(t1, t1 + 5)
        if partial:
            return
        t2 = r.uniform(10, 90)
        self.vlog_ranks("INFO", "backends.py", lambda i: f"Compiling a graph for dynamic shape takes {t2:.2f} s", [0])
        em.adv(t2 * 0.5, t2)
        self.vlog_ranks("INFO", "monitor.py", lambda i: f"torch.compile takes {t1 + t2:.2f} s in total", [0])

    def vllm_memory_plan(self, partial: bool) -> None:
        if self.step_cut_short(1, 10, partial):
            return
        em, c, r = self.em, self.c, self.r
        kv = r.uniform(1.5, 80)
        self.vlog_ranks("INFO", "gpu_worker.py" if c.gen != "v06" else "worker.py", lambda i: f"Available KV cache memory: {kv:.2f} GiB" if c.gen != "v06" else f"Memory profiling takes {r.uniform(1, 9):.2f} seconds", [0] if r.random() < 0.5 else None)
        n = r.randint(30000, 3000000)
        mx = pick(r, [8192, 32768, c.model.max_len])
        if c.gen == "v033":
            em.vl("INFO", "kv_cache_utils.py", f"GPU KV cache size: {n:,} tokens, Maximum concurrency for {mx:,} tokens per request: {n / mx:.2f}x", "core")
        elif c.gen == "v06":
            em.vl("INFO", "distributed_gpu_executor.py" if c.tp > 1 else "gpu_executor.py", f"# GPU blocks: {n // 16}, # CPU blocks: {r.randint(1000, 9000)}", "core")
            em.vl("INFO", "distributed_gpu_executor.py" if c.tp > 1 else "gpu_executor.py", f"Maximum concurrency for {mx} tokens per request: {n / mx:.2f}x", "core")
        else:
            em.vl("INFO", "kv_cache_utils.py", f"GPU KV cache size: {n:,} tokens", "core")
            em.vl("INFO", "kv_cache_utils.py", f"Maximum concurrency for {mx:,} tokens per request: {n / mx:.2f}x", "core")

    def vllm_cuda_graph_capture(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        proc = self.wproc(0)
        if c.gen == "v06":
            self.vlog_ranks("INFO", "model_runner.py", lambda i: "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI. If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage.", [0] if r.random() < 0.5 else None)
        n = r.randint(11, 67)
        if partial:
            em.tqdm("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)" if c.gen != "v06" else "Capturing CUDA graph shapes", n, r.uniform(1, 20), proc=proc, style="bar", steps=r.randint(1, 4))
            return
        em.tqdm("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)" if c.gen != "v06" else "Capturing CUDA graph shapes", n, r.uniform(2, 40), proc=proc, style="bar")
        if c.gen in ("v011", "v033") and r.random() < 0.6:
            em.tqdm("Capturing CUDA graphs (decode, FULL)", r.randint(11, 35), r.uniform(1, 15), proc=proc, style="bar")
        if c.tp > 1 and c.gen in ("v09", "v011"):
            k = r.randint(1000, 9000)
            self.vlog_ranks("INFO", "custom_all_reduce.py", lambda i: f"Registering {k} cuda graph addresses")
        self.vlog_ranks("INFO", "gpu_model_runner.py" if c.gen != "v06" else "model_runner.py", lambda i: f"Graph capturing finished in {r.randint(3, 60)} secs, took {r.uniform(0.1, 2.5):.2f} GiB", [0] if r.random() < 0.6 else None)

    def vllm_warmup(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        if partial:
            em.adv(0.5, 3)
            return
        if c.gen != "v06":
            em.vl("INFO", "core.py", f"init engine (profile, create kv cache, warmup model) took {r.uniform(20, 400):.2f} seconds", "core")

    def vllm_ready(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        em.adv(0.5, 5)
        if c.gen == "v033":
            em.vl("INFO", "api_server.py", f"Starting vLLM server on http://0.0.0.0:{c.port}", "api")
        else:
            em.vl("INFO", "api_server.py", f"Starting vLLM API server {'0 ' if c.gen == 'v011' else ''}on http://0.0.0.0:{c.port}", "api")
        em.vl("INFO", "launcher.py", "Available routes are:", "api")
        for rt, m in r.sample([("/openapi.json", "GET, HEAD"), ("/docs", "GET, HEAD"), ("/health", "GET"), ("/load", "GET"), ("/ping", "POST"), ("/tokenize", "POST"),
                               ("/v1/models", "GET"), ("/version", "GET"), ("/v1/chat/completions", "POST"), ("/v1/completions", "POST"), ("/metrics", "GET")], r.randint(3, 8)):
            em.vl("INFO", "launcher.py", f"Route: {rt}, Methods: {m}", "api")
        em.uv("INFO", f"Started server process [{self.st.api_pid}]")
        em.uv("INFO", "Waiting for application startup.")
        if partial:
            return
        em.uv("INFO", "Application startup complete.", tag="ready")

    def vllm_serving(self, partial: bool) -> None:
        self.serving_loop(partial)
