"""SGLang's start-up story: launch, weights, memory plan, kernel JIT, CUDA graph
capture, warmup, ready and serving, in the wording of its releases."""

from __future__ import annotations

import time
from random import Random

from ..catalog import Ctx, pick
from ..records import RunParts
from .noise import noise_lines


def server_args_line(c: Ctx, r: Random) -> str:
    mp = c.model.hf
    fields = [f"model_path='{mp}'", f"tokenizer_path='{mp}'", "tokenizer_mode='auto'", "skip_tokenizer_init=False", "load_format='auto'",
              "trust_remote_code=False", "dtype='auto'", "kv_cache_dtype='auto'", "quantization=None", f"context_length={pick(r, ['None', '32768', '131072'])}",
              "device='cuda'", f"served_model_name='{mp}'", "chat_template=None", "is_embedding=False", "revision=None", f"host='{pick(r, ['0.0.0.0', '127.0.0.1'])}'",
              f"port={c.port}", f"mem_fraction_static={pick(r, [0.88, 0.85, 0.9, 0.8, 0.7])}", "max_running_requests=None", "max_total_tokens=None",
              f"chunked_prefill_size={pick(r, [8192, 4096, 16384])}", "max_prefill_tokens=16384", "schedule_policy='fcfs'", "schedule_conservativeness=1.0",
              "cpu_offload_gb=0", f"tp_size={c.tp}", "stream_interval=1", f"random_seed={r.randint(1, 10**9)}", "constrained_json_whitespace_pattern=None",
              f"watchdog_timeout={pick(r, [300, 300, 600])}", "download_dir=None", "base_gpu_id=0", "log_level='info'", "log_level_http=None", "log_requests=False",
              "show_time_cost=False", "enable_metrics=False", "decode_log_interval=40", "api_key=None", "file_storage_path='sglang_storage'",
              "enable_cache_report=False", f"dp_size={c.tp if c.dp_attn else 1}", "load_balance_method='round_robin'", "ep_size=1", "dist_init_addr=None", "nnodes=1", "node_rank=0",
              "json_model_override_args='{}'", "lora_paths=None", "max_loras_per_batch=8", f"attention_backend={pick(r, ['None', repr('flashinfer'), repr('fa3'), repr('triton')])}",
              "sampling_backend='flashinfer'", "grammar_backend='xgrammar'", "speculative_algorithm=None", "disable_radix_cache=False", "disable_cuda_graph=False",
              "disable_cuda_graph_padding=False", "enable_nccl_nvls=False", "disable_outlines_disk_cache=False", "disable_custom_all_reduce=False", "disable_mla=False",
              "disable_overlap_schedule=False", "enable_mixed_chunk=False", f"enable_dp_attention={c.dp_attn}", "enable_ep_moe=False", "enable_torch_compile=False",
              "torch_compile_max_bs=32", f"cuda_graph_max_bs={pick(r, [160, 256, 512, 80])}", "cuda_graph_bs=None", "torchao_config=''", "enable_nan_detection=False",
              "enable_p2p_check=False", "triton_attention_reduce_in_fp32=False", "triton_attention_num_kv_splits=8", "num_continuous_decode_steps=1",
              "delete_ckpt_after_loading=False", "enable_memory_saver=False", "allow_auto_truncate=False", "enable_custom_logit_processor=False", "tool_call_parser=None",
              "enable_hierarchical_cache=False", "enable_flashinfer_mla=False", "flashinfer_mla_disable_ragged=False", "warmups=None", "debug_tensor_dump_output_folder=None"]
    n = len(fields) if r.random() < 0.15 else r.randint(18, 45)
    return "server_args=ServerArgs(" + ", ".join(fields[:n]) + ")"


class SglangStory(RunParts):
    """The SGLang phases of :class:`~forensics.lab.generator.run.Run`."""

    def sglang_launch(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        em.sg(server_args_line(c, r))
        noise_lines(em, "launch")
        em.adv(1, 6)
        if partial and self.failure and self.failure.scope in ("main", "argparse") and r.random() < 0.5:
            return
        if c.gen != "old" and r.random() < 0.5:
            em.sg_ranks(lambda i: "Attention backend not explicitly specified. Use flashinfer backend by default.")
        em.adv(2, 9)
        begin = "Init torch distributed begin." if c.gen != "new" else "Init parallel begin."
        em.sg_ranks(lambda i: begin)
        if partial and self.failure and self.failure.scope in ("main",):
            return
        if c.tp > 1:
            for _ in range(min(c.tp, r.randint(1, 4))):
                em.bare(f"[Gloo] Rank {r.randrange(c.tp)} is connected to {c.tp - 1} peer ranks. Expected number of connected peer ranks is : {c.tp - 1}")
            em.sg(f"sglang is using nccl=={pick(r, ['2.21.5', '2.26.2', '2.27.3', '2.27.5'])}", 0)
        em.adv(0.5, 3)
        if partial:
            return
        if c.gen != "new":
            em.sg_ranks(lambda i: f"Init torch distributed ends. mem usage={r.uniform(0.1, 1.4):.2f} GB")
        else:
            em.sg_ranks(lambda i: f"Init parallel ends. elapsed={r.uniform(0.4, 4):.2f} s")

    def sglang_load_weights(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        tot = c.gpu.total_gib
        self.avail = [round(tot * r.uniform(0.93, 0.99), 2) for _ in range(c.tp)]
        em.sg_ranks(lambda i: f"Load weight begin. avail mem={self.avail[i]:.2f} GB")
        em.adv(1, 15)
        shards = c.model.shards
        secs = r.uniform(3, 120)
        if partial:
            if r.random() < 0.5:
                em.tqdm("Loading safetensors checkpoint shards", shards, secs * r.uniform(0.1, 0.8), steps=r.randint(1, 4))
            return
        em.tqdm("Loading safetensors checkpoint shards", shards, secs)
        self.wt = min(c.model.weights_gib / c.tp, tot * 0.7)
        t = r.uniform(5, 150)
        if c.gen == "new":
            em.sg_ranks(lambda i: f"Load weight end. elapsed={t:.2f} s, type={c.model.arch}, dtype=torch.bfloat16, avail mem={self.avail[i] - self.wt:.2f} GB, mem usage={self.wt:.2f} GB.")
        else:
            em.sg_ranks(lambda i: f"Load weight end. type={c.model.arch}, dtype=torch.bfloat16, avail mem={self.avail[i] - self.wt:.2f} GB, mem usage={self.wt:.2f} GB.")

    def sglang_memory_plan(self, partial: bool) -> None:
        if self.step_cut_short(0.2, 3, partial):
            return
        em, c, r = self.em, self.c, self.r
        n = r.randint(20000, 2000000)
        kv = r.uniform(2, 60)
        if c.model.mla:
            em.sg_ranks(lambda i: f"KV Cache is allocated. #tokens: {n}, KV size: {kv:.2f} GB")
        elif c.gen == "new":
            em.sg_ranks(lambda i: f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {n}, K size: {kv / 2:.2f} GB, V size: {kv / 2:.2f} GB")
        else:
            em.sg_ranks(lambda i: f"KV Cache is allocated. #tokens: {n}, K size: {kv / 2:.2f} GB, V size: {kv / 2:.2f} GB")
        self.kv_tokens = n
        self.after_pool = r.uniform(1.5, 12)
        em.sg_ranks(lambda i: f"Memory pool end. avail mem={self.after_pool:.2f} GB")

    def sglang_kernel_jit(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        k = r.randrange(3)
        if k == 0 or "deepseek" in c.model.hf.lower():
            em.sg_ranks(lambda i: "Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is recommended to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for pre-compilation to reduce the overhead if you have not run it before. For example: `python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code`", [0] if r.random() < 0.5 else None)
            em.adv(5, 60)
            if not partial:
                em.tqdm("DeepGEMM warmup", r.randint(20, 200), r.uniform(10, 300), style="bar")
        elif k == 1:
            for op in r.sample(["norm", "rope", "sampling", "page", "activation", "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False"], 2):
                em.bare(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(self.st.t))},{r.randint(0, 999):03d} - INFO - flashinfer.jit: Loading JIT ops: {op}")
                em.adv(0.5, 40)
                if not partial or r.random() < 0.5:
                    em.bare(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(self.st.t))},{r.randint(0, 999):03d} - INFO - flashinfer.jit: Finished loading JIT ops: {op}")
        else:
            em.tqdm("Compiling num tokens (num_tokens=8192)" if c.gen == "new" else "Capturing num tokens (num_tokens=8192 avail_mem=%.2f GB)" % r.uniform(5, 60), r.randint(20, 58), r.uniform(20, 200), style="bar")
        em.adv(0.5, 5)

    def sglang_cuda_graph_capture(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        avail = getattr(self, "after_pool", r.uniform(2, 10))
        if c.gen == "new":
            em.sg_ranks(lambda i: f"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem={avail:.2f} GB")
        else:
            em.sg_ranks(lambda i: f"Capture cuda graph begin. This can take up to several minutes. avail mem={avail:.2f} GB")
        maxbs = pick(r, [8, 16, 32, 64, 160, 256, 512])
        bs = [1, 2, 4, 8] + list(range(16, maxbs + 1, 8 if maxbs <= 160 else 16))
        bs = [b for b in bs if b <= maxbs]
        if c.gen != "new" and r.random() < 0.6:
            em.sg(f"Capture cuda graph bs {bs}", 0)
        n = len(bs)
        if partial:
            k = r.randint(1, max(1, n - 1))
            em.tqdm(f"Capturing batches (bs={bs[-k]} avail_mem={avail - 0.05 * k:.2f} GB)", n, r.uniform(1, 30) * k / n, style="bar", steps=min(k, 4))
            return
        em.tqdm(f"Capturing batches (bs=1 avail_mem={avail - 0.6:.2f} GB)", n, r.uniform(3, 90), style="bar")
        if c.tp > 1 and r.random() < 0.85:
            k = r.randint(1000, 40000)
            if c.gen == "old":
                em.sg_ranks(lambda i: f"Registering {k} cuda graph addresses")
            else:
                em.sg(f"Registering {k} cuda graph addresses", 0)
        t = r.uniform(3, 120)
        mu = r.uniform(0.2, 3)
        if c.gen == "new":
            em.sg_ranks(lambda i: f"Capture target decode CUDA graph end. bs={bs}, elapsed={t:.2f} s, mem usage={mu:.2f} GB, avail mem={avail - mu:.2f} GB.")
        else:
            em.sg_ranks(lambda i: f"Capture cuda graph end. Time elapsed: {t:.2f} s. mem usage={mu:.2f} GB. avail mem={avail - mu:.2f} GB.")
        kvt = getattr(self, "kv_tokens", r.randint(20000, 900000))
        tail = f", available_gpu_mem={avail - mu:.2f} GB" if c.gen != "old" else ""
        em.sg(f"max_total_num_tokens={kvt}, chunked_prefill_size={pick(r, [8192, 4096, 16384])}, max_prefill_tokens=16384, max_running_requests={pick(r, [2048, 4096, 512, 256])}, context_len={c.model.max_len}{tail}", 0)

    def sglang_warmup(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        em.adv(0.5, 4)
        em.uv("INFO", f"Started server process [{self.st.main_pid}]")
        em.uv("INFO", "Waiting for application startup.")
        em.uv("INFO", "Application startup complete.")
        if self.failure and self.failure.scope == "log" and self.failure.phase == "ready":
            return      # the bind fails: uvicorn never reports that it is running
        em.uv("INFO", f"Uvicorn running on http://{pick(r, ['0.0.0.0', '127.0.0.1'])}:{c.port} (Press CTRL+C to quit)")
        em.adv(0.5, 2)
        em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"GET {'/model_info' if c.gen == 'new' else '/get_model_info'} HTTP/1.1\" 200 OK")
        if c.model.vlm and c.gen != "old" and r.random() < 0.5 and "Kimi" in c.model.hf:
            em.sg("Using a 512x512 image for Kimi VLM startup warmup ...")
        if c.gen == "old":
            em.sg(f"Prefill batch. #new-seq: 1, #new-token: {r.randint(6, 9)}, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0", 0)
        else:
            em.sg(f"Prefill batch, #new-seq: 1, #new-token: {r.randint(6, 9)}, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ", 0)
        if partial:
            return
        em.adv(0.3, 3)
        em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST {'/v1/chat/completions' if c.model.vlm else '/generate'} HTTP/1.1\" 200 OK")

    def sglang_ready(self, partial: bool) -> None:
        em = self.em
        if partial:
            return
        em.sg("The server is fired up and ready to roll!", tag="ready")

    def sglang_serving(self, partial: bool) -> None:
        self.serving_loop(partial)
