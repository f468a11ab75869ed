#!/usr/bin/env python3
"""Build the journald fixture set in corpora/journald/ with REAL systemd tools.

1. Compose a realistic SGLang service history on host `gpu-node-7` as journal
   export-format input (binary-safe fields), exactly as journald would have
   stored it: service stdout/stderr split on `\\n`, trailing whitespace
   stripped, empty lines dropped; one _PID per writing process.
2. `systemd-journal-remote -o fixture.journal fixture.export-input`
3. `TZ=UTC SYSTEMD_COLORS=0 journalctl --file fixture.journal --no-pager -o MODE`
   for every mode -> fixture.<mode>.log (+ one TZ=America/New_York short-iso).
4. expected.json: facts a test can assert.

Rerun: python3 corpora/reproduce/journald/build_fixtures.py   (needs Debian
package systemd-journal-remote of the same version as systemd).
"""
from __future__ import annotations

import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jexport import build_journal, frame, journalctl, tool_versions, write_export  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "corpora" / "journald"

HOST = "gpu-node-7"
MACHINE_ID = "5b1f0e9d8c7a46b3a2f1e0d9c8b7a695"
BOOT_A = "3c1e7a2b9d8f4e6a8b0c1d2e3f405162"
BOOT_B = "7d2f9a1c4b3e48d6a5f0e1d2c3b4a596"
UNIT = "sglang.service"
DESC = "SGLang server"
VENV = "/opt/sglang/venv/lib/python3.11/site-packages"
CMDLINE = ("/opt/sglang/venv/bin/python3 -m sglang.launch_server --model-path "
           "Qwen/Qwen2.5-7B-Instruct --tp-size 2 --host 0.0.0.0 --port 30000")

# boot A started at 2026-03-14 07:53:20 UTC, boot B at 09:19:05 UTC
BOOT_START = {
    BOOT_A: int(datetime(2026, 3, 14, 7, 53, 20, tzinfo=timezone.utc).timestamp() * 1_000_000),
    BOOT_B: int(datetime(2026, 3, 14, 9, 19, 5, tzinfo=timezone.utc).timestamp() * 1_000_000),
}
INVOCATION = {1: "a41c0e6f2b7d4c39a1f0e2d3c4b5a697", 2: "b52d1f7a3c8e4d40b2a1f3e4d5c6b7a8",
              3: "c63e2a8b4d9f4e51c3b2a4f5e6d7c8b9"}

MSGID = {
    "starting": "7d4958e842da4a758f6c1cdc7b36dcc5",
    "started": "39f53479d3a045ac8e11786248231fbf",
    "stopped": "9d1aaa27d60140bd96365438aad20286",
    "exit": "98e322203f7a4ed290d09fe03c09fe15",
    "result": "d9b373ed55a64feb8242e02dbe79a49c",
    "restart": "5eb03494b6584870a536b337290809b3",
    "oom": "fe6faa94e7774663a0da52717891d8ef",
    "resources": "ae8f7b866b0347b9af31fe1c80b127c0",
}


def ts(hms: str, us: int = 0) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    return int(datetime(2026, 3, 14, h, m, s, tzinfo=timezone.utc).timestamp() * 1_000_000) + us


class Journal:
    def __init__(self) -> None:
        self.entries: list[list[tuple[str, object]]] = []
        self.meta: list[dict] = []  # parallel facts for expected.json
        self.stream_ids: dict[int, str] = {}

    def _base(self, t: int, boot: str) -> list[tuple[str, object]]:
        return [("__REALTIME_TIMESTAMP", t),
                ("__MONOTONIC_TIMESTAMP", t - BOOT_START[boot]),
                ("_BOOT_ID", boot), ("_MACHINE_ID", MACHINE_ID), ("_HOSTNAME", HOST)]

    def _add(self, fields, **meta) -> None:
        self.entries.append(fields)
        self.meta.append(meta)

    def systemd(self, t: int, boot: str, msg: str, kind: str, run: int,
                priority: int = 6, extra: tuple = ()) -> None:
        f = self._base(t, boot) + [
            ("PRIORITY", priority), ("SYSLOG_FACILITY", 3), ("SYSLOG_IDENTIFIER", "systemd"),
            ("_UID", 0), ("_GID", 0), ("_TRANSPORT", "journal"), ("_CAP_EFFECTIVE", "1ffffffffff"),
            ("_PID", 1), ("_COMM", "systemd"), ("_EXE", "/usr/lib/systemd/systemd"),
            ("_CMDLINE", "/sbin/init"), ("_SYSTEMD_CGROUP", "/init.scope"),
            ("_SYSTEMD_UNIT", "init.scope"), ("_SYSTEMD_SLICE", "-.slice"),
            ("CODE_FILE", "src/core/unit.c" if kind not in ("starting", "started", "stopped") else "src/core/job.c"),
            ("CODE_FUNC", {"starting": "job_emit_start_message", "started": "job_emit_done_message",
                           "stopped": "job_emit_done_message"}.get(kind, "unit_log_" + kind)),
            ("MESSAGE_ID", MSGID[kind]), ("UNIT", UNIT), ("INVOCATION_ID", INVOCATION[run]),
            *extra,
            ("MESSAGE", msg),
            ("_SOURCE_REALTIME_TIMESTAMP", t - 37),
        ]
        self._add(f, pid=1, source="systemd", kind=kind, message=msg, boot=boot)

    def kernel(self, t: int, boot: str, msg: str, priority: int = 3) -> None:
        f = self._base(t, boot) + [
            ("_SOURCE_MONOTONIC_TIMESTAMP", t - BOOT_START[boot] - 211),
            ("_TRANSPORT", "kernel"), ("PRIORITY", priority), ("SYSLOG_FACILITY", 0),
            ("SYSLOG_IDENTIFIER", "kernel"), ("MESSAGE", msg.encode() if isinstance(msg, str) else msg),
        ]
        self._add(f, pid=None, source="kernel", message=msg, boot=boot)

    def stream(self, t: int, boot: str, pid: int, comm: str, text: bytes | str, role: str, run: int) -> int:
        """Service stdout/stderr as journald splits it: one entry per `\\n`-line,
        trailing whitespace stripped, empty lines dropped.  Returns #entries."""
        if isinstance(text, str):
            text = text.encode()
        sid = self.stream_ids.setdefault(pid, f"{pid:08x}" + "e3b0c44298fc1c149afbf4c8996fb924"[:24])
        n = 0
        for raw in text.split(b"\n"):
            line = raw.rstrip(b" \t\r\n")
            if not line:
                continue
            f = self._base(t + n * 7, boot) + [
                ("PRIORITY", 6), ("SYSLOG_FACILITY", 3), ("SYSLOG_IDENTIFIER", "python3"),
                ("_UID", 0), ("_GID", 0), ("_TRANSPORT", "stdout"), ("_STREAM_ID", sid),
                ("_CAP_EFFECTIVE", "1ffffffffff"), ("_SYSTEMD_SLICE", "system.slice"),
                ("_SYSTEMD_CGROUP", f"/system.slice/{UNIT}"), ("_SYSTEMD_UNIT", UNIT),
                ("_SYSTEMD_INVOCATION_ID", INVOCATION[run]),
                ("_PID", pid), ("_COMM", comm), ("_EXE", "/usr/bin/python3.11"), ("_CMDLINE", CMDLINE),
                ("MESSAGE", line),
            ]
            self._add(f, pid=pid, source="stdout", role=role, run=run, message=line.decode("utf-8", "replace"), boot=boot)
            n += 1
        return n

    def native(self, t: int, boot: str, pid: int, ident: str, msg: str, role: str, run: int,
               extra: tuple = ()) -> None:
        f = self._base(t, boot) + [
            ("PRIORITY", 6), ("SYSLOG_IDENTIFIER", ident), ("_UID", 0), ("_GID", 0),
            ("_TRANSPORT", "journal"), ("_PID", pid), ("_COMM", ident[:15]),
            ("_EXE", "/usr/bin/python3.11"), ("_CMDLINE", f"/usr/bin/python3 /usr/local/bin/{ident}"),
            ("_SYSTEMD_SLICE", "system.slice"), ("_SYSTEMD_CGROUP", f"/system.slice/{UNIT}"),
            ("_SYSTEMD_UNIT", UNIT), ("_SYSTEMD_INVOCATION_ID", INVOCATION[run]),
            *extra, ("MESSAGE", msg), ("_SOURCE_REALTIME_TIMESTAMP", t - 120),
        ]
        self._add(f, pid=pid, source="journal", role=role, run=run, message=msg, boot=boot)


def server_args(port: int = 30000) -> str:
    """A realistic, very long ServerArgs repr (> 4096 bytes -> null in -o json)."""
    parts = [
        "model_path='Qwen/Qwen2.5-7B-Instruct'", "tokenizer_path='Qwen/Qwen2.5-7B-Instruct'",
        "tokenizer_mode='auto'", "tokenizer_worker_num=1", "skip_tokenizer_init=False",
        "load_format='auto'", "model_loader_extra_config='{}'", "trust_remote_code=False",
        "context_length=None", "is_embedding=False", "enable_multimodal=None", "revision=None",
        "model_impl='auto'", "host='0.0.0.0'", f"port={port}", "skip_server_warmup=False",
        "warmups=None", "nccl_port=None", "dtype='auto'", "quantization=None",
        "quantization_param_path=None", "kv_cache_dtype='auto'", "mem_fraction_static=0.871",
        "max_running_requests=None", "max_queued_requests=None", "max_total_tokens=None",
        "chunked_prefill_size=8192", "max_prefill_tokens=16384", "schedule_policy='fcfs'",
        "enable_priority_scheduling=False", "schedule_conservativeness=1.0",
        "page_size=1", "hybrid_kvcache_ratio=None", "swa_full_tokens_ratio=0.8",
        "disable_hybrid_swa_memory=False", "device='cuda'", "tp_size=2", "pp_size=1",
        "pp_max_micro_batch_size=None", "stream_interval=1", "stream_output=False",
        "random_seed=482910337", "constrained_json_whitespace_pattern=None",
        "watchdog_timeout=300", "dist_timeout=None", "download_dir=None", "base_gpu_id=0",
        "gpu_id_step=1", "sleep_on_idle=False", "log_level='info'", "log_level_http=None",
        "log_requests=False", "log_requests_level=2", "crash_dump_folder=None",
        "show_time_cost=False", "enable_metrics=False", "enable_metrics_for_all_schedulers=False",
        "bucket_time_to_first_token=None", "bucket_inter_token_latency=None",
        "bucket_e2e_request_latency=None", "collect_tokens_histogram=False",
        "decode_log_interval=40", "enable_request_time_stats_logging=False",
        "kv_events_config=None", "gc_warning_threshold_secs=0.0", "api_key=None",
        "served_model_name='Qwen/Qwen2.5-7B-Instruct'", "weight_version='default'",
        "chat_template=None", "completion_template=None", "file_storage_path='sglang_storage'",
        "enable_cache_report=False", "reasoning_parser=None", "tool_call_parser=None",
        "tool_server=None", "dp_size=1", "load_balance_method='round_robin'",
        "dist_init_addr=None", "nnodes=1", "node_rank=0", "json_model_override_args='{}'",
        "preferred_sampling_params=None", "enable_lora=None", "max_lora_rank=None",
        "lora_target_modules=None", "lora_paths=None", "max_loaded_loras=None", "max_loras_per_batch=8",
        "lora_backend='triton'", "attention_backend='flashinfer'", "decode_attention_backend=None",
        "prefill_attention_backend=None", "sampling_backend='flashinfer'", "grammar_backend='xgrammar'",
        "mm_attention_backend=None", "speculative_algorithm=None", "speculative_draft_model_path=None",
        "speculative_draft_model_revision=None", "speculative_num_steps=None",
        "speculative_eagle_topk=None", "speculative_num_draft_tokens=None",
        "speculative_accept_threshold_single=1.0", "speculative_accept_threshold_acc=1.0",
        "speculative_token_map=None", "speculative_attention_mode='prefill'",
        "ep_size=1", "moe_a2a_backend='none'", "moe_runner_backend='auto'",
        "flashinfer_mxfp4_moe_precision='default'", "enable_flashinfer_allreduce_fusion=False",
        "deepep_mode='auto'", "ep_num_redundant_experts=0", "ep_dispatch_algorithm='static'",
        "init_expert_location='trivial'", "enable_eplb=False", "eplb_algorithm='auto'",
        "eplb_rebalance_num_iterations=1000", "eplb_rebalance_layers_per_chunk=None",
        "expert_distribution_recorder_mode=None", "expert_distribution_recorder_buffer_size=1000",
        "enable_expert_distribution_metrics=False", "deepep_config=None", "moe_dense_tp_size=None",
        "enable_hierarchical_cache=False", "hicache_ratio=2.0", "hicache_size=0",
        "hicache_write_policy='write_through'", "hicache_io_backend='kernel'",
        "hicache_mem_layout='layer_first'", "hicache_storage_backend=None",
        "hicache_storage_prefetch_policy='best_effort'", "hicache_storage_backend_extra_config=None",
        "enable_lmcache=False", "enable_double_sparsity=False", "ds_channel_config_path=None",
        "ds_heavy_channel_num=32", "ds_heavy_token_num=256", "ds_heavy_channel_type='qk'",
        "ds_sparse_decode_threshold=4096", "cpu_offload_gb=0", "offload_group_size=-1",
        "offload_num_in_group=1", "offload_prefetch_step=1", "offload_mode='cpu'",
        "disable_radix_cache=False", "cuda_graph_max_bs=256", "cuda_graph_bs=None",
        "disable_cuda_graph=False", "disable_cuda_graph_padding=False",
        "enable_profile_cuda_graph=False", "enable_cudagraph_gc=False", "enable_nccl_nvls=False",
        "enable_symm_mem=False", "disable_flashinfer_cutlass_moe_fp4_allgather=False",
        "enable_tokenizer_batch_encode=False", "disable_outlines_disk_cache=False",
        "disable_custom_all_reduce=False", "enable_mscclpp=False", "disable_overlap_schedule=False",
        "enable_mixed_chunk=False", "enable_dp_attention=False", "enable_dp_lm_head=False",
        "enable_two_batch_overlap=False", "tbo_token_distribution_threshold=0.48",
        "enable_torch_compile=False", "torch_compile_max_bs=32", "torchao_config=''",
        "enable_nan_detection=False", "enable_p2p_check=False", "triton_attention_reduce_in_fp32=False",
        "triton_attention_num_kv_splits=8", "triton_attention_split_tile_size=None",
        "num_continuous_decode_steps=1", "delete_ckpt_after_loading=False",
        "enable_memory_saver=False", "allow_auto_truncate=False",
        "enable_custom_logit_processor=False", "flashinfer_mla_disable_ragged=False",
        "disable_shared_experts_fusion=False", "disable_chunked_prefix_cache=False",
        "disable_fast_image_processor=False", "enable_return_hidden_states=False",
        "scheduler_recv_interval=1", "numa_node=None", "debug_tensor_dump_output_folder=None",
        "debug_tensor_dump_input_file=None", "debug_tensor_dump_inject=False",
        "debug_tensor_dump_prefill_only=False", "disaggregation_mode='null'",
        "disaggregation_transfer_backend='mooncake'", "disaggregation_bootstrap_port=8998",
        "disaggregation_decode_tp=None", "disaggregation_decode_dp=None",
        "disaggregation_prefill_pp=1", "disaggregation_ib_device=None",
        "num_reserved_decode_tokens=512", "custom_weight_loader=[]",
        "weight_loader_disable_mmap=False", "enable_pdmux=False", "sm_group_num=3",
        "enable_ep_moe=False", "enable_deepep_moe=False", "enable_flashinfer_cutlass_moe=False",
        "enable_flashinfer_trtllm_moe=False", "enable_triton_kernel_moe=False",
        "enable_flashinfer_mxfp4_moe=False",
    ]
    return "server_args=ServerArgs(" + ", ".join(parts) + ")"


def tqdm_bar(desc: str, total: int, times: list[str], rates: list[str], unit_fmt: str = "{n}/{total}") -> str:
    """tqdm on a non-TTY stream: every refresh is `\\r` + bar, final `\\n`."""
    out = []
    for n in range(total + 1):
        pct = int(100 * n / total)
        out.append(f"\r{desc}: {pct:3d}% Completed | {n}/{total} [{times[n]}, {rates[n]}]")
    return "".join(out) + "\n"


def capture_bar(bss: list[int], mem0: float) -> str:
    total = len(bss)
    out = []
    for i in range(total + 1):
        bs = bss[min(i, total - 1)]
        mem = mem0 - 0.02 * i
        pct = int(100 * i / total)
        filled = int(10 * i / total)
        bar = ("█" * filled + " " * (10 - filled)) if i < total else "█" * 10
        el = f"00:{int(i * 0.45):02d}"
        rem = f"00:{int((total - i) * 0.45):02d}" if i < total else "00:00"
        rate = "?it/s" if i == 0 else f"{2.2 + 0.01 * i:.2f}it/s"
        out.append(f"\rCapturing batches (bs={bs} avail_mem={mem:.2f} GB): {pct:3d}%|{bar}| {i}/{total} [{el}<{rem}, {rate}]")
    return "".join(out) + "\n"


def first_run_traceback() -> str:
    hub, tr, sg = f"{VENV}/huggingface_hub", f"{VENV}/transformers", f"{VENV}/sglang"
    url = "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/resolve/main/tokenizer_config.json"
    lines = ["Traceback (most recent call last):"]
    lines += frame(f"{hub}/utils/_http.py", 409, "hf_raise_for_status", "response.raise_for_status()")
    lines += frame(f"{VENV}/requests/models.py", 1024, "raise_for_status",
                   "raise HTTPError(http_error_msg, response=self)")
    lines += [f"requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: {url}", "",
              "The above exception was the direct cause of the following exception:", "",
              "Traceback (most recent call last):"]
    lines += frame("<frozen runpy>", 198, "_run_module_as_main")
    lines += frame("<frozen runpy>", 88, "_run_code")
    lines += frame(f"{sg}/launch_server.py", 14, "<module>", "launch_server(server_args)")
    lines += frame(f"{sg}/srt/entrypoints/http_server.py", 1026, "launch_server",
                   "tokenizer_manager, template_manager, scheduler_info = _launch_subprocesses(",
                   caret_from="_launch_subprocesses(")
    lines += frame(f"{sg}/srt/entrypoints/engine.py", 842, "_launch_subprocesses",
                   "tokenizer_manager = TokenizerManager(server_args, port_args)", caret_from="TokenizerManager(")
    lines += frame(f"{sg}/srt/managers/tokenizer_manager.py", 251, "__init__",
                   "self.tokenizer = get_tokenizer(", caret_from="get_tokenizer(")
    lines += frame(f"{sg}/srt/hf_transformers_utils.py", 281, "get_tokenizer",
                   "tokenizer = AutoTokenizer.from_pretrained(", caret_from="AutoTokenizer")
    lines += frame(f"{tr}/models/auto/tokenization_auto.py", 1003, "from_pretrained",
                   "tokenizer_config = get_tokenizer_config(pretrained_model_name_or_path, **kwargs)",
                   caret_from="get_tokenizer_config(")
    lines += frame(f"{tr}/models/auto/tokenization_auto.py", 835, "get_tokenizer_config",
                   "resolved_config_file = cached_file(", caret_from="cached_file(")
    lines += frame(f"{tr}/utils/hub.py", 321, "cached_file",
                   "file = cached_files(path_or_repo_id=path_or_repo_id, filenames=[filename], **kwargs)",
                   caret_from="cached_files(")
    lines += frame(f"{tr}/utils/hub.py", 553, "cached_files", "raise OSError(")
    lines += ["OSError: There was a specific connection error when trying to load Qwen/Qwen2.5-7B-Instruct:",
              f"503 Server Error: Service Unavailable for url: {url}", ""]
    return "\n".join(lines) + "\n"


def build() -> Journal:
    j = Journal()
    A, B = BOOT_A, BOOT_B
    # ---------------- run 1 (fails: exit 1) ----------------
    j.systemd(ts("09:00:00", 412_005), A, f"Starting {UNIT} - {DESC}...", "starting", 1,
              extra=(("JOB_TYPE", "start"),))
    j.native(ts("09:00:00", 988_114), A, 4230, "sglang-preflight",
             "GPU preflight OK\n  GPU0: NVIDIA H100 80GB HBM3, driver 570.133.20, 81559 MiB free\n"
             "  GPU1: NVIDIA H100 80GB HBM3, driver 570.133.20, 81559 MiB free\n  nvlink: 18 links up",
             role="preflight", run=1,
             extra=(("CODE_FILE", "/usr/local/bin/sglang-preflight"), ("CODE_LINE", 57),
                    ("CODE_FUNC", "main"), ("LOGGER", "preflight"), ("THREAD_NAME", "MainThread")))
    j.systemd(ts("09:00:01", 204_377), A, f"Started {UNIT} - {DESC}.", "started", 1,
              extra=(("JOB_TYPE", "start"), ("JOB_RESULT", "done")))
    main1, tp0_1, tp1_1 = 4242, 4310, 4311
    j.stream(ts("09:00:04", 611_020), A, main1, "python3", f"[2026-03-14 09:00:04] {server_args()}", "main", 1)
    j.stream(ts("09:00:09", 120_551), A, tp0_1, "sglang::schedul",
             "[2026-03-14 09:00:09 TP0] Attention backend not explicitly specified. Use flashinfer backend by default.", "TP0", 1)
    j.stream(ts("09:00:09", 131_870), A, tp0_1, "sglang::schedul", "[2026-03-14 09:00:09 TP0] Init torch distributed begin.", "TP0", 1)
    j.stream(ts("09:00:09", 133_402), A, tp1_1, "sglang::schedul", "[2026-03-14 09:00:09 TP1] Init torch distributed begin.", "TP1", 1)
    j.stream(ts("09:00:10", 702_118), A, tp1_1, "sglang::schedul", "[2026-03-14 09:00:10 TP1] Init torch distributed ends. mem usage=0.61 GB", "TP1", 1)
    j.stream(ts("09:00:10", 703_559), A, tp0_1, "sglang::schedul", "[2026-03-14 09:00:10 TP0] Init torch distributed ends. mem usage=0.61 GB", "TP0", 1)
    j.stream(ts("09:00:11", 40_771), A, tp0_1, "sglang::schedul", "[2026-03-14 09:00:11 TP0] Load weight begin. avail mem=78.21 GB", "TP0", 1)
    j.stream(ts("09:00:11", 41_003), A, tp1_1, "sglang::schedul", "[2026-03-14 09:00:11 TP1] Load weight begin. avail mem=78.21 GB", "TP1", 1)
    j.stream(ts("09:00:12", 318_662), A, main1, "python3", first_run_traceback(), "main-traceback", 1)
    j.systemd(ts("09:00:13", 4_510), A, f"{UNIT}: Main process exited, code=exited, status=1/FAILURE", "exit", 1,
              priority=5, extra=(("EXIT_CODE", "exited"), ("EXIT_STATUS", 1)))
    j.systemd(ts("09:00:13", 91_233), A, f"{UNIT}: Failed with result 'exit-code'.", "result", 1,
              priority=4, extra=(("UNIT_RESULT", "exit-code"),))
    j.systemd(ts("09:00:13", 92_008), A, f"{UNIT}: Consumed 21.417s CPU time.", "resources", 1,
              extra=(("CPU_USAGE_NSEC", 21417220000),))
    j.systemd(ts("09:00:23", 301_455), A, f"{UNIT}: Scheduled restart job, restart counter is at 1.", "restart", 1,
              extra=(("N_RESTARTS", 1),))
    j.systemd(ts("09:00:23", 305_911), A, f"Stopped {UNIT} - {DESC}.", "stopped", 1,
              extra=(("JOB_TYPE", "restart"), ("JOB_RESULT", "done")))
    j.systemd(ts("09:00:23", 306_120), A, f"Starting {UNIT} - {DESC}...", "starting", 2,
              extra=(("JOB_TYPE", "restart"),))
    j.native(ts("09:00:23", 870_402), A, 5090, "sglang-preflight",
             "GPU preflight OK\n  GPU0: NVIDIA H100 80GB HBM3, driver 570.133.20, 81559 MiB free\n"
             "  GPU1: NVIDIA H100 80GB HBM3, driver 570.133.20, 81559 MiB free\n  nvlink: 18 links up",
             role="preflight", run=2,
             extra=(("CODE_FILE", "/usr/local/bin/sglang-preflight"), ("CODE_LINE", 57),
                    ("CODE_FUNC", "main"), ("LOGGER", "preflight"), ("THREAD_NAME", "MainThread")))
    j.systemd(ts("09:00:24", 16_093), A, f"Started {UNIT} - {DESC}.", "started", 2,
              extra=(("JOB_TYPE", "restart"), ("JOB_RESULT", "done")))
    # ---------------- run 2 (reaches ready) ----------------
    m, t0, t1 = 5101, 5170, 5171
    S = "sglang::schedul"

    def both(hms, us, text0, text1=None):
        j.stream(ts(hms, us), A, t0, S, f"[2026-03-14 {hms} TP0] {text0}", "TP0", 2)
        j.stream(ts(hms, us + 1_337), A, t1, S, f"[2026-03-14 {hms} TP1] {text1 or text0}", "TP1", 2)

    j.stream(ts("09:00:27", 550_207), A, m, "python3", f"[2026-03-14 09:00:27] {server_args()}", "main", 2)
    j.stream(ts("09:00:32", 9_118), A, t0, S, "[2026-03-14 09:00:32 TP0] Attention backend not explicitly specified. Use flashinfer backend by default.", "TP0", 2)
    both("09:00:32", 20_440, "Init torch distributed begin.")
    both("09:00:33", 611_907, "Init torch distributed ends. mem usage=0.61 GB")
    both("09:00:34", 2_155, "Load weight begin. avail mem=78.21 GB")
    j.stream(ts("09:00:41", 880_312), A, t0, S,
             tqdm_bar("Loading safetensors checkpoint shards", 4,
                      ["00:00<?", "00:01<00:05", "00:03<00:03", "00:05<00:01", "00:06<00:00"],
                      ["?it/s", "1.71s/it", "1.66s/it", "1.64s/it", "1.58s/it"]), "TP0", 2)
    both("09:00:42", 17_023, "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=70.98 GB, mem usage=7.23 GB.")
    both("09:00:42", 450_876, "KV Cache is allocated. #tokens: 2147302, K size: 28.67 GB, V size: 28.67 GB")
    both("09:00:42", 452_001, "Memory pool end. avail mem=12.95 GB")
    both("09:00:43", 101_440, "Capture cuda graph begin. This can take up to several minutes. avail mem=12.62 GB")
    j.stream(ts("09:00:43", 102_777), A, t0, S,
             "[2026-03-14 09:00:43 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256]", "TP0", 2)
    bss = [256, 248, 240, 232, 224, 216, 208, 200, 192, 184, 176, 168, 160, 152, 144, 136, 128, 120, 112, 104, 96, 88, 80, 72, 64, 56, 48, 40, 32, 24, 16, 8, 4, 2, 1]
    j.stream(ts("09:00:59", 640_118), A, t0, S, capture_bar(bss, 12.60), "TP0", 2)
    j.stream(ts("09:00:59", 701_553), A, t0, S, "[2026-03-14 09:00:59 TP0] Registering 4410 cuda graph addresses", "TP0", 2)
    both("09:00:59", 980_114, "Capture cuda graph end. Time elapsed: 16.88 s. mem usage=0.91 GB. avail mem=11.71 GB.")
    j.stream(ts("09:01:00", 408_339), A, t0, S,
             "[2026-03-14 09:01:00 TP0] max_total_num_tokens=2147302, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=32768, available_gpu_mem=11.71 GB", "TP0", 2)
    esc = "\x1b[32mINFO\x1b[0m:     "
    for us, msg in ((911_020, "Started server process [5101]"), (911_318, "Waiting for application startup."),
                    (912_640, "Application startup complete."),
                    (913_802, "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)")):
        j.stream(ts("09:01:00", us), A, m, "python3", f"[2026-03-14 09:01:00] {esc}{msg}", "main-uvicorn", 2)
    j.stream(ts("09:01:01", 922_575), A, m, "python3", '[2026-03-14 09:01:01] INFO:     127.0.0.1:40712 - "GET /get_model_info HTTP/1.1" 200 OK', "main", 2)
    j.stream(ts("09:01:02", 31_004), A, t0, S, "[2026-03-14 09:01:02 TP0] Prefill batch [1], #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0", "TP0", 2)
    j.stream(ts("09:01:02", 760_220), A, m, "python3", '[2026-03-14 09:01:02] INFO:     127.0.0.1:40718 - "POST /generate HTTP/1.1" 200 OK', "main", 2)
    j.stream(ts("09:01:02", 761_918), A, m, "python3", "[2026-03-14 09:01:02] The server is fired up and ready to roll!", "main-ready", 2)
    j.stream(ts("09:02:31", 5_410), A, m, "python3",
             b"[2026-03-14 09:02:31] Stream chunk flushed early: \xe4\xb8\x96\xe7\x95 (incomplete multibyte tail)", "main-badutf8", 2)
    # ---------------- kernel OOM, then reboot ----------------
    j.kernel(ts("09:14:02", 118_201), A, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0", priority=4)
    j.kernel(ts("09:14:02", 120_945), A, "Out of memory: Killed process 5101 (python3) total-vm:121875412kB, anon-rss:118120036kB, file-rss:90112kB, shmem-rss:8192kB, UID:0 pgtables:233468kB oom_score_adj:0")
    j.kernel(ts("09:14:02", 311_006), A, "oom_reaper: reaped process 5101 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:8192kB", priority=6)
    j.systemd(ts("09:14:02", 330_512), A, f"{UNIT}: A process of this unit has been killed by the OOM killer.", "oom", 2, priority=4)
    j.systemd(ts("09:14:02", 871_004), A, f"{UNIT}: Main process exited, code=killed, status=9/KILL", "exit", 2,
              priority=4, extra=(("EXIT_CODE", "killed"), ("EXIT_STATUS", 9)))
    j.systemd(ts("09:14:02", 872_115), A, f"{UNIT}: Failed with result 'oom-kill'.", "result", 2,
              priority=4, extra=(("UNIT_RESULT", "oom-kill"),))
    # ---------------- boot B ----------------
    j.systemd(ts("09:19:41", 220_004), B, f"Started {UNIT} - {DESC}.", "started", 3,
              extra=(("JOB_TYPE", "start"), ("JOB_RESULT", "done")))
    j.stream(ts("09:19:45", 1_733), B, 1187, "python3", f"[2026-03-14 09:19:45] {server_args()}", "main", 3)
    j.stream(ts("09:19:50", 417_090), B, 1250, S, "[2026-03-14 09:19:50 TP0] Init torch distributed begin.", "TP0", 3)
    j.stream(ts("09:19:50", 418_555), B, 1251, S, "[2026-03-14 09:19:50 TP1] Init torch distributed begin.", "TP1", 3)
    return j


MODES = ["short", "short-iso", "short-iso-precise", "short-precise", "short-monotonic", "short-unix",
         "short-full", "cat", "json", "json-seq", "export", "verbose", "with-unit", "short-delta"]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    j = build()
    export_in = OUT / "fixture.export-input"
    n = write_export(j.entries, export_in)
    with tempfile.TemporaryDirectory() as td:
        jf = Path(td) / "fixture.journal"
        remote_log = build_journal(export_in, jf)
        for mode in MODES:
            (OUT / f"fixture.{mode}.log").write_bytes(journalctl(jf, mode))
        (OUT / "fixture.short-iso.America_New_York.log").write_bytes(journalctl(jf, "short-iso", tz="America/New_York"))
        # for expected.json: what real journalctl says about the entries
        js = [json.loads(l) for l in journalctl(jf, "json").decode().splitlines() if l.strip()]
    assert len(js) == n, (len(js), n)

    tb_meta = [(i, m) for i, m in enumerate(j.meta) if m.get("role") == "main-traceback"]
    tb_msgs = [m["message"] for _, m in tb_meta]
    pid_lines: dict[str, dict] = {}
    for i, m in enumerate(j.meta):
        key = "none" if m["pid"] is None else str(m["pid"])
        d = pid_lines.setdefault(key, {"role": m.get("role") or m["source"], "entries": 0, "first_message": m["message"][:120], "entry_indices": []})
        d["entries"] += 1
        d["entry_indices"].append(i)
    expected = {
        "description": "Facts about fixture.* (entry indices are 0-based, in journal order = json line order).",
        "host": HOST,
        "unit": UNIT,
        "n_entries": n,
        "n_boots": 2,
        "boot_ids": [BOOT_A, BOOT_B],
        "boot_marker_lines": [f"-- Boot {BOOT_B} --"],
        "first_entry_of_boot_b": next(i for i, m in enumerate(j.meta) if m["boot"] == BOOT_B),
        "runs": {
            "1": {"main_pid": 4242, "tp_pids": {"TP0": 4310, "TP1": 4311}, "outcome": "exit 1: status=1/FAILURE, result exit-code"},
            "2": {"main_pid": 5101, "tp_pids": {"TP0": 5170, "TP1": 5171}, "outcome": "ready, later kernel OOM kill: status=9/KILL, result oom-kill"},
            "3": {"main_pid": 1187, "tp_pids": {"TP0": 1250, "TP1": 1251}, "outcome": "boot B, still starting at end of log"},
        },
        "traceback": {
            "pid": 4242,
            "n_entries": len(tb_msgs),
            "first_entry_index": tb_meta[0][0],
            "last_entry_index": tb_meta[-1][0],
            "blank_lines_in_journal": 0,
            "exc_type": "OSError",
            "exc_message_first_line": "There was a specific connection error when trying to load Qwen/Qwen2.5-7B-Instruct:",
            "exc_message_lines": 2,
            "cause_exc_type": "requests.exceptions.HTTPError",
            "chain_separator": "The above exception was the direct cause of the following exception:",
            "messages": tb_msgs,
        },
        "restart": {"counter": 1, "line": f"{UNIT}: Scheduled restart job, restart counter is at 1.",
                    "previous_exit": "code=exited, status=1/FAILURE", "previous_result": "exit-code",
                    "stopped_line": f"Stopped {UNIT} - {DESC}.", "started_again_line": f"Started {UNIT} - {DESC}."},
        "ready": {"pid": 5101, "line_contains": "The server is fired up and ready to roll!", "run": 2},
        "kernel_oom": {"pid_field": None, "identifier": "kernel", "killed_pid": 5101,
                       "line_contains": "Out of memory: Killed process 5101 (python3)",
                       "short_prefix": f"{HOST} kernel: "},
        "systemd_results": ["exit-code", "oom-kill"],
        "json_null_messages": sum(1 for e in js if e.get("MESSAGE", "") is None),
        "json_null_entry_indices": [i for i, e in enumerate(js) if e.get("MESSAGE", "") is None],
        "json_bytearray_entry_indices": [i for i, e in enumerate(js) if isinstance(e.get("MESSAGE"), list)],
        "multiline_message_entry_indices": [i for i, m in enumerate(j.meta) if "\n" in m["message"]],
        "tqdm_blob_entry_indices": [i for i, m in enumerate(j.meta) if "\r" in m["message"]],
        "invalid_utf8_entry_indices": [i for i, m in enumerate(j.meta) if m.get("role") == "main-badutf8"],
        "ansi_entry_indices": [i for i, m in enumerate(j.meta) if "\x1b[" in m["message"]],
        "pids": pid_lines,
        "tools": tool_versions(),
        "systemd_journal_remote_said": remote_log,
    }
    (OUT / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {n} entries; {remote_log}")


if __name__ == "__main__":
    main()
