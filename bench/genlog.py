"""Deterministic generator of a large, realistic journald ``short-iso`` log of an
SGLang service (the benchmark input).

What it writes (``journalctl -u sglang.service -o short-iso`` shape, one physical
line per journal entry, blank traceback lines already dropped as journald does):

* systemd unit lifecycle lines (``Starting``/``Started``, ``Main process exited``,
  ``Failed with result``, ``Scheduled restart job``) from ``systemd[1]``;
* per process lifetime a realistic SGLang startup: ``server_args=ServerArgs(...)``
  (a ~5 KB line), the CUTLASS DSL ``Unexpected error during package walk:
  cutlass.cute.experimental`` warning (its own handler and the propagated copy),
  per TP rank ``Init torch distributed``, ``Load weight begin/end``, ``KV Cache is
  allocated``, ``Memory pool end``, ``Capture cuda graph begin/end``, rank 0's
  tqdm bars as ``[N.NK blob data]``, ``Registering 336 cuda graph addresses``,
  uvicorn startup, the warmup request and ``The server is fired up and ready to roll!``;
* the serving bulk: mostly ``Decode batch`` / ``Prefill batch`` statistics from the
  scheduler ranks (each rank its own pid) and uvicorn access lines from the main
  process, with a sprinkling of warnings (KV-cache retraction, invalid HTTP
  requests) and a few single-process ``Exception in ASGI application`` tracebacks;
* three process lifetimes (for logs of >= 5000 lines): the first ends with an
  ``illegal memory access`` ``Scheduler hit an exception`` on every rank, the
  ranks' unprefixed traceback lines interleaved; the second ends with a traceback
  cut short by SIGKILL (frames, no exception line); the last, at the very end of
  the log, with ``torch.OutOfMemoryError: CUDA out of memory`` on all ranks,
  ``Received sigquit from a child process``, and systemd's
  ``Main process exited, code=killed, status=9/KILL``.

The output is a pure function of the options (seeded ``random.Random``), written
streaming, so multi-gigabyte logs need no memory. Run as a script to write a file
or stdout::

    python bench/genlog.py --lines 1000000 -o bench/out/sglang-1M.log
    python bench/genlog.py --bytes 5e9 | forensics classify -
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Callable, Iterator

HOST = "gpu-node-7"
IDENT = "python3"
UNIT = "sglang.service"
UNIT_DESC = "sglang.service - SGLang server"
SITE = "/opt/sglang/venv/lib/python3.11/site-packages"
START_EPOCH = 1780120800  # 2026-05-30T06:00:00Z
MODEL = "Qwen/Qwen2.5-72B-Instruct"

SERVER_ARGS = (
    "server_args=ServerArgs(model_path='{m}', tokenizer_path='{m}', tokenizer_mode='auto', tokenizer_worker_num=1, "
    "skip_tokenizer_init=False, load_format='auto', model_loader_extra_config='{{}}', trust_remote_code=False, "
    "context_length=None, is_embedding=False, enable_multimodal=None, revision=None, model_impl='auto', "
    "host='0.0.0.0', port=30000, skip_server_warmup=False, warmups=None, nccl_port=None, dtype='auto', "
    "quantization=None, quantization_param_path=None, kv_cache_dtype='auto', mem_fraction_static=0.871, "
    "max_running_requests=None, max_queued_requests=None, max_total_tokens=None, chunked_prefill_size=8192, "
    "max_prefill_tokens=16384, schedule_policy='fcfs', enable_priority_scheduling=False, "
    "schedule_conservativeness=1.0, page_size=1, hybrid_kvcache_ratio=None, swa_full_tokens_ratio=0.8, "
    "disable_hybrid_swa_memory=False, device='cuda', tp_size={tp}, pp_size=1, pp_max_micro_batch_size=None, "
    "stream_interval=1, stream_output=False, random_seed={seed}, constrained_json_whitespace_pattern=None, "
    "watchdog_timeout=300, dist_timeout=None, download_dir=None, base_gpu_id=0, gpu_id_step=1, "
    "sleep_on_idle=False, log_level='info', log_level_http=None, log_requests=False, log_requests_level=2, "
    "crash_dump_folder=None, show_time_cost=False, enable_metrics=True, enable_metrics_for_all_schedulers=False, "
    "decode_log_interval=40, enable_request_time_stats_logging=False, kv_events_config=None, "
    "gc_warning_threshold_secs=0.0, api_key=None, served_model_name='{m}', weight_version='default', "
    "chat_template=None, completion_template=None, file_storage_path='sglang_storage', enable_cache_report=False, "
    "reasoning_parser=None, tool_call_parser=None, tool_server=None, dp_size=1, load_balance_method='round_robin', "
    "dist_init_addr=None, nnodes=1, node_rank=0, json_model_override_args='{{}}', preferred_sampling_params=None, "
    "enable_lora=None, max_lora_rank=None, lora_target_modules=None, lora_paths=None, max_loaded_loras=None, "
    "max_loras_per_batch=8, lora_backend='triton', attention_backend='flashinfer', decode_attention_backend=None, "
    "prefill_attention_backend=None, sampling_backend='flashinfer', grammar_backend='xgrammar', "
    "mm_attention_backend=None, speculative_algorithm=None, speculative_draft_model_path=None, "
    "speculative_num_steps=None, speculative_eagle_topk=None, speculative_num_draft_tokens=None, ep_size=1, "
    "moe_a2a_backend='none', moe_runner_backend='auto', enable_eplb=False, enable_hierarchical_cache=False, "
    "hicache_ratio=2.0, hicache_size=0, hicache_write_policy='write_through', enable_lmcache=False, "
    "cpu_offload_gb=0, disable_radix_cache=False, cuda_graph_max_bs=256, cuda_graph_bs=None, "
    "disable_cuda_graph=False, disable_cuda_graph_padding=False, enable_profile_cuda_graph=False, "
    "enable_nccl_nvls=False, enable_symm_mem=False, disable_custom_all_reduce=False, enable_mscclpp=False, "
    "disable_overlap_schedule=False, enable_mixed_chunk=False, enable_dp_attention=False, enable_dp_lm_head=False, "
    "enable_two_batch_overlap=False, enable_torch_compile=False, torch_compile_max_bs=32, torchao_config='', "
    "enable_nan_detection=False, enable_p2p_check=False, triton_attention_reduce_in_fp32=False, "
    "triton_attention_num_kv_splits=8, num_continuous_decode_steps=1, delete_ckpt_after_loading=False, "
    "enable_memory_saver=False, allow_auto_truncate=False, enable_custom_logit_processor=False, "
    "disaggregation_mode='null', disaggregation_transfer_backend='mooncake', disaggregation_bootstrap_port=8998, "
    "num_reserved_decode_tokens=512, custom_weight_loader=[], weight_loader_disable_mmap=False)"
)

PATHS = ["/v1/chat/completions"] * 14 + ["/v1/completions"] * 3 + ["/generate"] * 2 + [
    "/health", "/health_generate", "/v1/models", "/metrics", "/get_model_info"]
STATUS = ["200 OK"] * 60 + ["400 Bad Request", "422 Unprocessable Entity", "503 Service Unavailable"]

SCHED_FRAMES_HEAD = [
    (f"{SITE}/sglang/srt/managers/scheduler.py", 2920, "run_scheduler_process", "scheduler.event_loop_overlap()", None),
    (f"{SITE}/torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)",
     "           ^^^^^^^^^^^^^^^^^^^^^"),
    (f"{SITE}/sglang/srt/managers/scheduler.py", 1004, "event_loop_overlap", "batch_result = self.run_batch(batch)",
     "                   ^^^^^^^^^^^^^^^^^^^^^"),
    (f"{SITE}/sglang/srt/managers/scheduler.py", 1893, "run_batch",
     ") = self.tp_worker.forward_batch_generation(model_worker_batch)", None),
    (f"{SITE}/sglang/srt/managers/tp_worker.py", 240, "forward_batch_generation",
     "logits_output, can_run_cuda_graph = self.model_runner.forward(", None),
    (f"{SITE}/sglang/srt/model_executor/model_runner.py", 1720, "forward", "output = self._forward_raw(", None),
    (f"{SITE}/sglang/srt/model_executor/model_runner.py", 1771, "_forward_raw", "ret = self.forward_extend(", None),
    (f"{SITE}/sglang/srt/model_executor/model_runner.py", 1652, "forward_extend", "return self.model.forward(",
     None),
]
OOM_FRAMES_TAIL = [
    (f"{SITE}/sglang/srt/models/qwen2.py", 483, "forward", "return self.logits_processor(", None),
    (f"{SITE}/sglang/srt/layers/logits_processor.py", 332, "forward",
     "logits = self._get_logits(pruned_states, lm_head, logits_metadata)", None),
    (f"{SITE}/sglang/srt/layers/logits_processor.py", 471, "_get_logits",
     "logits = torch.matmul(hidden_states.to(lm_head.weight.dtype), lm_head.weight.T)",
     "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"),
]
IMA_FRAMES_TAIL = [
    (f"{SITE}/sglang/srt/models/qwen2.py", 470, "forward", "hidden_states = self.model(input_ids, positions, forward_batch)",
     None),
    (f"{SITE}/torch/nn/modules/module.py", 1773, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)",
     "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"),
    (f"{SITE}/sglang/srt/layers/attention/flashinfer_backend.py", 812, "forward_extend",
     "o = prefill_wrapper_paged.forward(", None),
]
ASGI_FRAMES = [
    (f"{SITE}/uvicorn/protocols/http/httptools_impl.py", 409, "run_asgi",
     "result = await app(  # type: ignore[func-returns-value]", None),
    (f"{SITE}/uvicorn/middleware/proxy_headers.py", 60, "__call__", "return await self.app(scope, receive, send)",
     "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"),
    (f"{SITE}/fastapi/applications.py", 1054, "__call__", "await super().__call__(scope, receive, send)", None),
    (f"{SITE}/starlette/routing.py", 73, "app", "response = await f(request)", None),
    (f"{SITE}/sglang/srt/entrypoints/http_server.py", 733, "openai_v1_chat_completions",
     "return await raw_request.app.state.openai_serving_chat.handle_request(", None),
    (f"{SITE}/sglang/srt/entrypoints/openai/serving_base.py", 48, "handle_request",
     "request_json = await raw_request.json()", None),
    ("/usr/lib/python3.11/json/decoder.py", 355, "raw_decode", "raise JSONDecodeError(\"Expecting value\", s, err.value) from None",
     None),
]


def _frames(frames) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for path, line, func, src, marker in frames:
        out.append(f'  File "{path}", line {line}, in {func}')
        out.append(f"    {src}")
        if marker:
            out.append(marker)
    return out


class LogWriter:
    """Buffers lines, writes them in ~1 MB chunks, counts lines and bytes."""

    def __init__(self, out, start: float) -> None:  # type: ignore[no-untyped-def]
        self.out = out
        self.buf: list[str] = []
        self.buf_chars = 0
        self.lines = 0
        self.bytes = 0
        self.t = start
        self._sec = -1
        self.jts = ""
        self.ats = ""
        self._tick()

    def _tick(self) -> None:
        s = int(self.t)
        if s != self._sec:
            self._sec = s
            tm = time.gmtime(s)
            self.ats = time.strftime("%Y-%m-%d %H:%M:%S", tm)
            self.jts = self.ats.replace(" ", "T") + "+0000"

    def advance(self, dt: float) -> None:
        self.t += dt
        if int(self.t) != self._sec:
            self._tick()

    def emit(self, ident_pid: str, msg: str) -> None:
        line = f"{self.jts} {HOST} {ident_pid}: {msg}\n"
        self.buf.append(line)
        self.buf_chars += len(line)
        self.lines += 1
        if self.buf_chars > 1 << 20:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            data = "".join(self.buf).encode("utf-8")
            self.bytes += len(data)
            self.out.write(data)
            self.buf = []
            self.buf_chars = 0

    @property
    def approx_bytes(self) -> int:
        return self.bytes + self.buf_chars


class Generator:
    def __init__(self, out, lines: int | None = None, nbytes: int | None = None, seed: int = 7, tp: int = 4,
                 lifetimes: int | None = None) -> None:  # type: ignore[no-untyped-def]
        if (lines is None) == (nbytes is None):
            raise ValueError("give exactly one of lines / nbytes")
        self.rng = random.Random(seed)
        self.seed = seed
        self.tp = tp
        self.target_lines = lines
        self.target_bytes = nbytes
        self.w = LogWriter(out, START_EPOCH + 0.25)
        small = (lines is not None and lines < 5000) or (nbytes is not None and nbytes < 1_000_000)
        self.lifetimes = lifetimes or (1 if small else 3)
        self.next_pid = 22280
        self.restarts = 0

    # -------------------------------------------------------------- progress
    def progress(self) -> float:
        w = self.w
        if self.target_lines is not None:
            return w.lines / self.target_lines
        return w.approx_bytes / self.target_bytes  # type: ignore[operator]

    # -------------------------------------------------------------- helpers
    def _pids(self) -> tuple[str, list[str]]:
        main = self.next_pid
        # scheduler children get pids a little above the main process
        ranks = [f"{IDENT}[{main + 68 + r}]" for r in range(self.tp)]
        self.next_pid += 1000 + self.rng.randrange(400)
        return f"{IDENT}[{main}]", ranks

    def _tp(self, r: int) -> str:
        return f" TP{r}" if self.tp > 1 else ""

    def systemd(self, msg: str) -> None:
        self.w.emit("systemd[1]", msg)

    def interleave(self, per_rank: list[tuple[str, list[str]]]) -> None:
        """Write several ranks' line lists interleaved at random (order within a
        rank kept), as concurrent writers reach the journal."""
        rng = self.rng
        w = self.w
        queues = [(pid, list(reversed(lines))) for pid, lines in per_rank]
        while queues:
            i = rng.randrange(len(queues))
            pid, q = queues[i]
            w.emit(pid, q.pop())
            if rng.random() < 0.3:
                w.advance(0.01)
            if not q:
                queues.pop(i)

    # -------------------------------------------------------------- phases
    def startup(self, main: str, ranks: list[str]) -> None:
        w, rng, tp = self.w, self.rng, self.tp
        self.systemd(f"Starting {UNIT_DESC}...")
        self.systemd(f"Started {UNIT_DESC}.")
        w.advance(3.2)
        w.emit(main, f"[{w.ats}] " + SERVER_ARGS.format(m=MODEL, tp=tp, seed=rng.randrange(10**9)))
        w.advance(1.7)
        ms = rng.randrange(1000)
        w.emit(main, f"{w.ats},{ms:03d} - CUTE_DSL - WARNING - [handle_import_error] - "
                     "Unexpected error during package walk: cutlass.cute.experimental")
        w.emit(main, f"[{w.ats}] Unexpected error during package walk: cutlass.cute.experimental")
        w.advance(2.5)
        per_rank: list[tuple[str, list[str]]] = []
        for r, pid in enumerate(ranks):
            p = f"[{w.ats}{self._tp(r)}] "
            lines = []
            if r == 0:
                lines.append(p + "Attention backend not explicitly specified. Use flashinfer backend by default.")
            lines.append(p + "Init torch distributed begin.")
            per_rank.append((pid, lines))
        self.interleave(per_rank)
        w.advance(1.1)
        self.interleave([(pid, [f"[{w.ats}{self._tp(r)}] Init torch distributed ends. mem usage=0.61 GB",
                                f"[{w.ats}{self._tp(r)}] Load weight begin. avail mem=78.21 GB"])
                         for r, pid in enumerate(ranks)])
        w.advance(0.8)
        w.emit(ranks[0], "[1.2K blob data]")  # tqdm "Loading safetensors checkpoint shards" (\r inside)
        w.advance(41.0 + rng.random() * 5)
        self.interleave([(pid, [
            f"[{w.ats}{self._tp(r)}] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, "
            f"avail mem=43.{17 + r:02d} GB, mem usage=35.04 GB.",
            f"[{w.ats}{self._tp(r)}] KV Cache is allocated. #tokens: 1031942, K size: 15.75 GB, V size: 15.75 GB",
            f"[{w.ats}{self._tp(r)}] Memory pool end. avail mem=9.{41 + r:02d} GB",
        ]) for r, pid in enumerate(ranks)])
        w.advance(0.4)
        self.interleave([(pid, [f"[{w.ats}{self._tp(r)}] Capture cuda graph begin. This can take up to several "
                                f"minutes. avail mem=9.{30 + r:02d} GB"]) for r, pid in enumerate(ranks)])
        w.emit(ranks[0], f"[{w.ats}{self._tp(0)}] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, "
                         "72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, "
                         "216, 224, 232, 240, 248, 256]")
        w.advance(14.6 + rng.random() * 3)
        w.emit(ranks[0], "[3.5K blob data]")  # tqdm "Capturing batches (bs=... avail_mem=...)"
        if tp > 1:
            w.emit(ranks[0], f"[{w.ats}{self._tp(0)}] Registering 336 cuda graph addresses")
        self.interleave([(pid, [f"[{w.ats}{self._tp(r)}] Capture cuda graph end. Time elapsed: 15.83 s. mem "
                                f"usage=1.37 GB. avail mem=7.{93 + r % 5} GB."]) for r, pid in enumerate(ranks)])
        w.emit(ranks[0], f"[{w.ats}{self._tp(0)}] max_total_num_tokens=1031942, chunked_prefill_size=8192, "
                         "max_prefill_tokens=16384, max_running_requests=4096, context_len=32768, "
                         "available_gpu_mem=7.93 GB")
        w.advance(1.3)
        mpid = main[len(IDENT) + 1:-1]
        for m in (f"INFO:     Started server process [{mpid}]", "INFO:     Waiting for application startup.",
                  "INFO:     Application startup complete.",
                  "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"):
            w.emit(main, f"[{w.ats}] {m}")
        w.advance(1.0)
        w.emit(main, f'[{w.ats}] INFO:     127.0.0.1:{40000 + rng.randrange(20000)} - "GET /get_model_info '
                     'HTTP/1.1" 200 OK')
        for r, pid in enumerate(ranks):
            w.emit(pid, f"[{w.ats}{self._tp(r)}] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, "
                        "token usage: 0.00, #running-req: 0, #queue-req: 0")
        w.advance(0.9)
        w.emit(main, f'[{w.ats}] INFO:     127.0.0.1:{40000 + rng.randrange(20000)} - "POST /generate '
                     'HTTP/1.1" 200 OK')
        w.emit(main, f"[{w.ats}] The server is fired up and ready to roll!")

    def serve(self, main: str, ranks: list[str], until: float, tail_reserve: int, asgi_tracebacks: int) -> None:
        """The bulk. Runs until progress() reaches ``until`` (minus ``tail_reserve``
        lines, in line mode) -- this loop is where the generator spends its time."""
        w, rng, tp = self.w, self.rng, self.tp
        emit, advance, random_ = w.emit, w.advance, rng.random
        randrange = rng.randrange
        tps = [self._tp(r) for r in range(tp)]
        if self.target_lines is not None:
            stop_lines = max(w.lines, int(until * self.target_lines) - tail_reserve)
            check: Callable[[], bool] = lambda: w.lines >= stop_lines  # noqa: E731
        else:
            stop_bytes = until * self.target_bytes - tail_reserve * 180  # type: ignore[operator]
            check = lambda: w.approx_bytes >= stop_bytes  # noqa: E731
        # ASGI tracebacks at random points of this lifetime
        asgi_at = sorted(rng.random() for _ in range(asgi_tracebacks))
        start_p = self.progress()
        running = 8
        usage = 0.02
        n = 0
        while True:
            if (n & 255) == 0:
                if check():
                    break
                if asgi_at and self.progress() >= start_p + asgi_at[0] * (until - start_p):
                    asgi_at.pop(0)
                    self._asgi_traceback(main, ranks)
            n += 1
            advance(0.004 + random_() * 0.09)
            x = random_()
            if x < 0.56:
                r = randrange(tp)
                running += randrange(-2, 3)
                if running < 1:
                    running = 1
                elif running > 96:
                    running = 90
                usage = running * 0.0041 + random_() * 0.01
                emit(ranks[r], f"[{w.ats}{tps[r]}] Decode batch. #running-req: {running}, #token: "
                               f"{running * 350 + randrange(400)}, token usage: {usage:.2f}, gen throughput "
                               f"(token/s): {running * 61 + random_() * 150:.2f}, #queue-req: {randrange(3) if running > 60 else 0}")
            elif x < 0.91:
                path = PATHS[randrange(len(PATHS))]
                method = "GET" if path in ("/health", "/health_generate", "/v1/models", "/metrics",
                                           "/get_model_info") else "POST"
                emit(main, f'[{w.ats}] INFO:     10.0.{randrange(4)}.{randrange(2, 250)}:{randrange(30000, 65000)}'
                           f' - "{method} {path} HTTP/1.1" {STATUS[randrange(len(STATUS))]}')
            elif x < 0.995:
                r = randrange(tp)
                newtok = randrange(16, 8192)
                emit(ranks[r], f"[{w.ats}{tps[r]}] Prefill batch. #new-seq: {randrange(1, 5)}, #new-token: {newtok}, "
                               f"#cached-token: {randrange(0, newtok)}, token usage: {usage:.2f}, "
                               f"#running-req: {running}, #queue-req: {randrange(2)}")
            elif x < 0.997:
                r = randrange(tp)
                emit(ranks[r], f"[{w.ats}{tps[r]}] KV cache pool is full. Retract requests. #retracted_reqs: "
                               f"{randrange(1, 4)}, #new_token_ratio: 0.{randrange(5000, 9000)} -> 1.0000")
            elif x < 0.998:
                emit(main, f"[{w.ats}] WARNING:  Invalid HTTP request received.")
            elif x < 0.999:
                r = randrange(tp)
                emit(ranks[r], f"[{w.ats}{tps[r]}] Cache flushed successfully!" if random_() < 0.2 else
                     f"[{w.ats}{tps[r]}] Receive: obj=GenerateReqInput(rid='{randrange(16**32):032x}', "
                     f"text_len={randrange(10, 9000)}, sampling_params={{'max_new_tokens': {randrange(16, 2048)}, "
                     f"'temperature': 0.{randrange(10)}}}, stream=True)")
            else:
                emit(main, f"[{w.ats}] INFO:     10.0.0.{randrange(2, 250)}:{randrange(30000, 65000)} - "
                           f'"GET /metrics HTTP/1.1" 200 OK')

    def _asgi_traceback(self, main: str, ranks: list[str]) -> None:
        """A request-level error in the main process (uvicorn logs it and keeps
        serving); scheduler ranks keep logging in between."""
        w, rng = self.w, self.rng
        tb = [f"[{w.ats}] ERROR:    Exception in ASGI application", "Traceback (most recent call last):"]
        tb += _frames(ASGI_FRAMES)
        tb.append(f"json.decoder.JSONDecodeError: Expecting value: line 1 column {rng.randrange(1, 80)} "
                  f"(char {rng.randrange(0, 79)})")
        noise = [f"[{w.ats}{self._tp(0)}] Decode batch. #running-req: 7, #token: 2514, token usage: 0.03, gen "
                 f"throughput (token/s): {400 + rng.random() * 100:.2f}, #queue-req: 0" for _ in range(3)]
        self.interleave([(main, tb), (ranks[0], noise)])

    def fatal_all_ranks(self, main: str, ranks: list[str], kind: str) -> None:
        w, rng = self.w, self.rng
        per_rank = []
        for r, pid in enumerate(ranks):
            lines = [f"[{w.ats}{self._tp(r)}] Scheduler hit an exception: Traceback (most recent call last):"]
            if kind == "oom":
                lines += _frames(SCHED_FRAMES_HEAD + OOM_FRAMES_TAIL)
                free = 0.3 + rng.random()
                lines.append(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.64 GiB. GPU {r} has a "
                             f"total capacity of 79.19 GiB of which {free:.2f} GiB is free. Including non-PyTorch "
                             f"memory, this process has {79.19 - free:.2f} GiB memory in use. Of the allocated memory "
                             "74.12 GiB is allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated. "
                             "If reserved but unallocated memory is large try setting "
                             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                             "documentation for Memory Management  "
                             "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
            else:
                lines += _frames(SCHED_FRAMES_HEAD + IMA_FRAMES_TAIL)
                lines += ["RuntimeError: CUDA error: an illegal memory access was encountered",
                          "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                          "stacktrace below might be incorrect.",
                          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                          "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
            per_rank.append((pid, lines))
        self.interleave(per_rank)
        w.advance(0.2)
        w.emit(main, f"[{w.ats}] Received sigquit from a child process. It usually means the child failed.")
        w.advance(0.3)
        self.systemd(f"{UNIT}: Main process exited, code=killed, status=9/KILL")
        self.systemd(f"{UNIT}: Failed with result 'signal'.")
        self.systemd(f"{UNIT}: Consumed {rng.randrange(2, 9)}h {rng.randrange(60)}min "
                     f"{rng.random() * 60:.3f}s CPU time.")

    def truncated_end(self, main: str, ranks: list[str]) -> None:
        """One rank starts a traceback and is SIGKILLed mid-write: frames, no
        exception line. The other ranks carry on for a few lines, then systemd."""
        w = self.w
        r = 1 % self.tp
        lines = [f"[{w.ats}{self._tp(r)}] Scheduler hit an exception: Traceback (most recent call last):"]
        lines += _frames(SCHED_FRAMES_HEAD)[:9]
        noise = [f"[{w.ats}{self._tp(0)}] Decode batch. #running-req: 31, #token: 11022, token usage: 0.13, gen "
                 f"throughput (token/s): 1810.{i}4, #queue-req: 0" for i in range(4)]
        self.interleave([(ranks[r], lines), (ranks[0], noise)])
        w.advance(0.5)
        self.systemd(f"{UNIT}: Main process exited, code=killed, status=9/KILL")
        self.systemd(f"{UNIT}: Failed with result 'signal'.")

    def restart(self) -> None:
        self.restarts += 1
        self.w.advance(10.0)
        self.systemd(f"{UNIT}: Scheduled restart job, restart counter is at {self.restarts}.")
        self.systemd(f"Stopped {UNIT_DESC}.")

    # -------------------------------------------------------------- whole log
    def run(self) -> None:
        n = self.lifetimes
        tail_reserve = 40 * self.tp + 10
        for i in range(n):
            main, ranks = self._pids()
            self.startup(main, ranks)
            last = i == n - 1
            until = (i + 1) / n if not last else 1.0
            self.serve(main, ranks, until, tail_reserve if last else 0, asgi_tracebacks=0 if n == 1 else 2)
            if last:
                self.fatal_all_ranks(main, ranks, "oom")
            elif i % 2 == 0:
                self.fatal_all_ranks(main, ranks, "illegal-access")
                self.restart()
            else:
                self.truncated_end(main, ranks)
                self.restart()
        self.w.flush()


def generate(out, lines: int | None = None, nbytes: int | None = None, seed: int = 7, tp: int = 4,
             lifetimes: int | None = None) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Write the log to the binary stream ``out``; return (lines, bytes)."""
    g = Generator(out, lines=lines, nbytes=nbytes, seed=seed, tp=tp, lifetimes=lifetimes)
    g.run()
    return g.w.lines, g.w.bytes


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = ap.add_mutually_exclusive_group(required=True)
    size.add_argument("--lines", type=int, help="approximate number of lines")
    size.add_argument("--bytes", type=float, help="approximate size in bytes (e.g. 5e9)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tp", type=int, default=4, help="tensor-parallel ranks (distinct pids)")
    ap.add_argument("--lifetimes", type=int, default=None, help="process lifetimes (default 3, 1 for tiny logs)")
    ap.add_argument("-o", "--output", default="-", help="file to write (default stdout)")
    a = ap.parse_args(argv)
    nbytes = int(a.bytes) if a.bytes is not None else None
    try:
        if a.output == "-":
            n, b = generate(sys.stdout.buffer, a.lines, nbytes, a.seed, a.tp, a.lifetimes)
        else:
            with open(a.output, "wb") as f:
                n, b = generate(f, a.lines, nbytes, a.seed, a.tp, a.lifetimes)
    except BrokenPipeError:
        sys.stderr.close()
        return
    print(f"genlog: {n} lines, {b} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
