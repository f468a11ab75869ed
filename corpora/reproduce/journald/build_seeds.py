#!/usr/bin/env python3
"""Rebuild the two seed incidents (shared/seeds/*.txt) as full, realistic logs.

PROVENANCE: generated.  Every line is composed here from the seed write-ups
plus the string catalogue in shared/reference/log-formats.md; only the lines
the write-ups quote are copied from them.  Nothing was captured on a real
B300 or RTX PRO 6000 machine.

seed 1 (journald): the event list is written as journal export input, turned
into a real journal file by systemd-journal-remote and printed by the real
journalctl (-o short / short-iso / short-iso-precise / json).  The grep
fragment is the real pipeline from the seed:
  journalctl -u UNIT --no-pager -n 25 | grep -iE 'error|assert|traceback|fatal' | tail -10

seed 2 (plain nohup file, no journald): seed2.full.log, and seed2.tail30.log =
`tail -30` of the file at an instant when it ends mid-path, as in the seed.

Rerun: python3 corpora/reproduce/journald/build_seeds.py
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jexport import build_journal, frame, journalctl, write_export  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "corpora" / "seeds"

# ============================================================ seed 1 ======
HOST1 = "mild-hope-wilts-fin-03"
UNIT1 = "sglang-k26-ddtree.service"
DESC1 = "SGLang Kimi K2.6 DDTree server"
BOOT1 = "e4a19c07b2d84f3c9a6b15d0c8e7f213"
MID1 = "0c9f4e2a7b1d4e85a3f6c2b9d0e1f476"
INV1 = "61f0a2c9d8e74b13a5c4e9f0b1d2c3a4"
BOOT1_START = int(datetime(2026, 5, 30, 9, 12, 44, tzinfo=timezone.utc).timestamp() * 1e6)
SG1 = "/root/sglang/python/sglang"            # SGLang from a source tree (editable install)
FA1 = "/root/sglang/3rdparty/flash-attention/flash_attn"
VENV1 = "/root/venv/lib/python3.12/site-packages"
CMD1 = ("/root/venv/bin/python -m sglang.launch_server --model-path /root/models/Kimi-K2.6 "
        "--tp-size 8 --trust-remote-code --speculative-algorithm DDTREE --host 0.0.0.0 --port 30001")
MAIN1, TP_PIDS1 = 22201, {r: 22284 + r for r in range(8)}   # TP4 = 22288


def t1(hms: str, us: int = 0) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    return int(datetime(2026, 5, 30, h, m, s, tzinfo=timezone.utc).timestamp() * 1e6) + us


class J1:
    def __init__(self) -> None:
        self.entries: list = []

    def base(self, t):
        return [("__REALTIME_TIMESTAMP", t), ("__MONOTONIC_TIMESTAMP", t - BOOT1_START),
                ("_BOOT_ID", BOOT1), ("_MACHINE_ID", MID1), ("_HOSTNAME", HOST1)]

    def systemd(self, t, msg, msgid, prio=6, extra=()):
        self.entries.append(self.base(t) + [
            ("PRIORITY", prio), ("SYSLOG_FACILITY", 3), ("SYSLOG_IDENTIFIER", "systemd"),
            ("_UID", 0), ("_GID", 0), ("_TRANSPORT", "journal"), ("_PID", 1), ("_COMM", "systemd"),
            ("_EXE", "/usr/lib/systemd/systemd"), ("_CMDLINE", "/sbin/init"),
            ("_SYSTEMD_CGROUP", "/init.scope"), ("_SYSTEMD_UNIT", "init.scope"), ("_SYSTEMD_SLICE", "-.slice"),
            ("MESSAGE_ID", msgid), ("UNIT", UNIT1), ("INVOCATION_ID", INV1), *extra,
            ("MESSAGE", msg), ("_SOURCE_REALTIME_TIMESTAMP", t - 41)])

    def out(self, t, pid, text, comm="python"):
        """journald stream rules: split on \\n, strip trailing whitespace, drop empty lines."""
        n = 0
        for raw in (text.encode() if isinstance(text, str) else text).split(b"\n"):
            line = raw.rstrip(b" \t\r\n")
            if not line:
                continue
            self.entries.append(self.base(t + n * 9) + [
                ("PRIORITY", 6), ("SYSLOG_FACILITY", 3), ("SYSLOG_IDENTIFIER", "python"),
                ("_UID", 0), ("_GID", 0), ("_TRANSPORT", "stdout"), ("_STREAM_ID", f"{pid:08x}9b2e41d07c3a5f68e1d2c3b4"),
                ("_SYSTEMD_SLICE", "system.slice"), ("_SYSTEMD_CGROUP", f"/system.slice/{UNIT1}"),
                ("_SYSTEMD_UNIT", UNIT1), ("_SYSTEMD_INVOCATION_ID", INV1), ("_PID", pid), ("_COMM", comm),
                ("_EXE", "/usr/bin/python3.12"), ("_CMDLINE", CMD1), ("MESSAGE", line)])
            n += 1
        return t + n * 9


def seed1_server_args() -> str:
    parts = ["model_path='/root/models/Kimi-K2.6'", "tokenizer_path='/root/models/Kimi-K2.6'",
             "tokenizer_mode='auto'", "tokenizer_worker_num=1", "skip_tokenizer_init=False", "load_format='auto'",
             "model_loader_extra_config='{}'", "trust_remote_code=True", "context_length=None",
             "is_embedding=False", "enable_multimodal=None", "revision=None", "model_impl='auto'",
             "host='0.0.0.0'", "port=30001", "skip_server_warmup=False", "warmups=None", "nccl_port=None",
             "dtype='auto'", "quantization=None", "quantization_param_path=None", "kv_cache_dtype='auto'",
             "mem_fraction_static=0.85", "max_running_requests=64", "max_queued_requests=None",
             "max_total_tokens=None", "chunked_prefill_size=8192", "max_prefill_tokens=16384",
             "schedule_policy='fcfs'", "schedule_conservativeness=1.0", "page_size=64", "device='cuda'",
             "tp_size=8", "pp_size=1", "stream_interval=1", "random_seed=918273645", "watchdog_timeout=300",
             "download_dir=None", "base_gpu_id=0", "gpu_id_step=1", "log_level='info'", "log_requests=False",
             "decode_log_interval=40", "api_key=None", "served_model_name='/root/models/Kimi-K2.6'",
             "chat_template=None", "reasoning_parser='kimi_k2'", "tool_call_parser='kimi_k2'", "dp_size=1",
             "load_balance_method='round_robin'", "dist_init_addr=None", "nnodes=1", "node_rank=0",
             "attention_backend='trtllm_mla'", "decode_attention_backend=None", "prefill_attention_backend=None",
             "sampling_backend='flashinfer'", "grammar_backend='xgrammar'", "mm_attention_backend=None",
             "speculative_algorithm='DDTREE'", "speculative_draft_model_path='/root/models/Kimi-K2.6-ddtree-draft'",
             "speculative_num_steps=4", "speculative_eagle_topk=4", "speculative_num_draft_tokens=16",
             "speculative_accept_threshold_single=1.0", "speculative_accept_threshold_acc=1.0",
             "ep_size=1", "moe_a2a_backend='none'", "moe_runner_backend='flashinfer_trtllm'",
             "enable_eplb=False", "enable_hierarchical_cache=False", "disable_radix_cache=False",
             "cuda_graph_max_bs=64", "cuda_graph_bs=None", "disable_cuda_graph=False",
             "disable_cuda_graph_padding=False", "disable_custom_all_reduce=False",
             "disable_overlap_schedule=False", "enable_mixed_chunk=False", "enable_dp_attention=False",
             "enable_torch_compile=False", "torch_compile_max_bs=32", "enable_nan_detection=False",
             "enable_p2p_check=False", "triton_attention_num_kv_splits=8", "num_continuous_decode_steps=1",
             "enable_memory_saver=False", "allow_auto_truncate=False", "disable_shared_experts_fusion=False",
             "disable_chunked_prefix_cache=False", "disable_fast_image_processor=False",
             "enable_return_hidden_states=False", "disaggregation_mode='null'",
             "disaggregation_transfer_backend='mooncake'", "disaggregation_bootstrap_port=8998",
             "num_reserved_decode_tokens=512", "weight_loader_disable_mmap=False"]
    parts += [f"{k}=False" for k in (
        "enable_lora", "enable_lmcache", "enable_double_sparsity", "enable_two_batch_overlap",
        "enable_symm_mem", "enable_nccl_nvls", "enable_mscclpp", "enable_pdmux", "enable_deterministic_inference",
        "enable_flashinfer_allreduce_fusion", "enable_single_batch_overlap", "enable_dynamic_batch_tokenizer",
        "enable_metrics", "enable_metrics_for_all_schedulers", "enable_request_time_stats_logging",
        "enable_cache_report", "enable_priority_scheduling", "enable_profile_cuda_graph", "enable_cudagraph_gc",
        "enable_tokenizer_batch_encode", "enable_dp_lm_head", "enable_expert_distribution_metrics",
        "enable_custom_logit_processor", "enable_weights_cpu_backup", "enable_fp32_lm_head",
        "enable_piecewise_cuda_graph", "enable_torch_symm_mem", "enable_beta_spec")]
    parts += ["hicache_ratio=2.0", "hicache_size=0", "hicache_write_policy='write_through'",
              "hicache_io_backend='kernel'", "hicache_mem_layout='layer_first'", "hicache_storage_backend=None",
              "cpu_offload_gb=0", "offload_group_size=-1", "offload_num_in_group=1", "offload_prefetch_step=1",
              "offload_mode='cpu'", "tbo_token_distribution_threshold=0.48", "torchao_config=''",
              "scheduler_recv_interval=1", "numa_node=None", "sm_group_num=8", "mamba_ssm_dtype='float32'",
              "max_mamba_cache_size=None", "mamba_full_memory_ratio=0.9", "swa_full_tokens_ratio=0.8",
              "json_model_override_args='{}'", "preferred_sampling_params=None", "file_storage_path='sglang_storage'",
              "crash_dump_folder=None", "kv_events_config=None", "gc_warning_threshold_secs=0.0",
              "weight_version='default'", "custom_weight_loader=[]", "remote_instance_weight_loader_seed_instance_ip=None",
              "remote_instance_weight_loader_seed_instance_service_port=None",
              "remote_instance_weight_loader_send_weights_group_ports=None",
              "debug_tensor_dump_output_folder=None", "debug_tensor_dump_input_file=None",
              "debug_tensor_dump_inject=False", "debug_tensor_dump_prefill_only=False"]
    return "server_args=ServerArgs(" + ", ".join(parts) + ")"


def seed1_traceback(rank: int) -> str:
    """The vision-tower warmup failure as the scheduler logs it (Python 3.12)."""
    L = [f"[2026-05-30 14:47:53 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):"]
    L += frame(f"{SG1}/srt/layers/attention/flash_attn_cute.py", 24, "<module>",
               "from flash_attn.cute.interface import flash_attn_varlen_func as _fa4_varlen_func")
    L += frame(f"{FA1}/cute/__init__.py", 13, "<module>", "from .interface import (")
    L += frame(f"{FA1}/cute/interface.py", 38, "<module>",
               "from flash_attn.cute.flash_fwd_sm100 import FlashAttentionForwardSm100")
    L += frame(f"{FA1}/cute/flash_fwd_sm100.py", 27, "<module>",
               "from cutlass.cute.experimental import tcgen05_utils")
    L += ["ModuleNotFoundError: No module named 'cutlass.cute.experimental'", "",
          "The above exception was the direct cause of the following exception:", "",
          "Traceback (most recent call last):"]
    L += frame(f"{SG1}/srt/managers/scheduler.py", 3171, "run_scheduler_process", "scheduler.event_loop_overlap()")
    L += frame(f"{VENV1}/torch/utils/_contextlib.py", 124, "decorate_context",
               "return func(*args, **kwargs)", caret_from="func(")
    L += frame(f"{SG1}/srt/managers/scheduler.py", 1046, "event_loop_overlap",
               "batch_result = self.run_batch(batch)", caret_from="self.run_batch(")
    L += frame(f"{SG1}/srt/managers/scheduler.py", 2213, "run_batch",
               "batch_result = self.model_worker.forward_batch_generation(", caret_from="self.model_worker")
    L += frame(f"{SG1}/srt/speculative/ddtree_worker.py", 318, "forward_batch_generation",
               "target_result = self.target_worker.forward_batch_generation(", caret_from="self.target_worker")
    L += frame(f"{SG1}/srt/managers/tp_worker.py", 421, "forward_batch_generation",
               "logits_output, can_run_cuda_graph = self.model_runner.forward(", caret_from="self.model_runner")
    L += frame(f"{SG1}/srt/model_executor/model_runner.py", 2391, "forward",
               "output = self._forward_raw(", caret_from="self._forward_raw(")
    L += frame(f"{SG1}/srt/model_executor/model_runner.py", 2462, "_forward_raw",
               "ret = self.forward_extend(", caret_from="self.forward_extend(")
    L += frame(f"{SG1}/srt/model_executor/model_runner.py", 2318, "forward_extend",
               "return self.model.forward(", caret_from="self.model.forward(")
    L += frame(f"{VENV1}/torch/utils/_contextlib.py", 124, "decorate_context",
               "return func(*args, **kwargs)", caret_from="func(")
    L += frame(f"{SG1}/srt/models/kimi_k25.py", 702, "forward",
               "hidden_states = general_mm_embed_routine(", caret_from="general_mm_embed_routine(")
    L += frame(f"{SG1}/srt/managers/mm_utils.py", 1108, "general_mm_embed_routine",
               "inputs_embeds, other_info = embed_mm_inputs(", caret_from="embed_mm_inputs(")
    L += frame(f"{SG1}/srt/managers/mm_utils.py", 957, "embed_mm_inputs",
               "embedding, mask = get_embedding_and_mask(", caret_from="get_embedding_and_mask(")
    L += frame(f"{SG1}/srt/managers/mm_utils.py", 831, "get_embedding_and_mask",
               "embedding = _get_chunked_prefill_embedding(", caret_from="_get_chunked_prefill_embedding(")
    L += frame(f"{SG1}/srt/managers/mm_utils.py", 702, "_get_chunked_prefill_embedding",
               "embedding_per_req = data_embedding_func(embedding_items_per_req)",
               caret_from="data_embedding_func(")
    L += frame(f"{SG1}/srt/models/kimi_k25.py", 641, "get_image_feature",
               "image_features = self.vision_tower(pixel_values, grid_thws)", caret_from="self.vision_tower(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1775, "_wrapped_call_impl",
               "return self._call_impl(*args, **kwargs)", caret_from="self._call_impl(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1786, "_call_impl",
               "return forward_call(*args, **kwargs)", caret_from="forward_call(")
    L += frame(f"{SG1}/srt/models/kimi_k25_vit.py", 588, "forward",
               "hidden_states = self.encoder(hidden_states, grid_hws)", caret_from="self.encoder(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1775, "_wrapped_call_impl",
               "return self._call_impl(*args, **kwargs)", caret_from="self._call_impl(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1786, "_call_impl",
               "return forward_call(*args, **kwargs)", caret_from="forward_call(")
    L += frame(f"{SG1}/srt/models/kimi_k25_vit.py", 497, "forward",
               "hidden_states = block(", caret_from="block(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1775, "_wrapped_call_impl",
               "return self._call_impl(*args, **kwargs)", caret_from="self._call_impl(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1786, "_call_impl",
               "return forward_call(*args, **kwargs)", caret_from="forward_call(")
    L += frame(f"{SG1}/srt/models/kimi_k25_vit.py", 421, "forward",
               "attn_out = self.attn(", caret_from="self.attn(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1775, "_wrapped_call_impl",
               "return self._call_impl(*args, **kwargs)", caret_from="self._call_impl(")
    L += frame(f"{VENV1}/torch/nn/modules/module.py", 1786, "_call_impl",
               "return forward_call(*args, **kwargs)", caret_from="forward_call(")
    L += frame(f"{SG1}/srt/layers/attention/vision.py", 1012, "forward",
               "output = self.qkv_backend.forward(", caret_from="self.qkv_backend")
    L += frame(f"{SG1}/srt/layers/attention/vision.py", 559, "forward",
               "output = flash_attn_varlen_func(", caret_from="flash_attn_varlen_func(")
    L += frame(f"{SG1}/srt/layers/attention/flash_attn_cute.py", 61, "flash_attn_varlen_func",
               "raise ImportError(")
    L += ["ImportError: Vendored FlashAttention CUTE is not available (cannot import flash_attn.cute). "
          "Please check your source tree.", ""]
    return "\n".join(L) + "\n"


def seed1_warmup_error() -> str:
    L = ["[2026-05-30 14:47:53] Initialization failed. warmup error: Traceback (most recent call last):"]
    L += frame(f"{VENV1}/urllib3/connectionpool.py", 787, "urlopen", "response = self._make_request(",
               caret_from="self._make_request(")
    L += frame(f"{VENV1}/urllib3/connectionpool.py", 534, "_make_request", "response = conn.getresponse()",
               caret_from="conn.getresponse()")
    L += frame(f"{VENV1}/urllib3/connection.py", 565, "getresponse", "httplib_response = super().getresponse()",
               caret_from="super().getresponse()")
    L += frame("/usr/lib/python3.12/http/client.py", 1428, "getresponse", "response.begin()")
    L += frame("/usr/lib/python3.12/http/client.py", 331, "begin", "version, status, reason = self._read_status()",
               caret_from="self._read_status()")
    L += frame("/usr/lib/python3.12/http/client.py", 300, "_read_status",
               'raise RemoteDisconnected("Remote end closed connection without"')
    L += ["http.client.RemoteDisconnected: Remote end closed connection without response", "",
          "During handling of the above exception, another exception occurred:", "",
          "Traceback (most recent call last):"]
    L += frame(f"{SG1}/srt/entrypoints/http_server.py", 1712, "_execute_server_warmup",
               "res = requests.post(", caret_from="requests.post(")
    L += frame(f"{VENV1}/requests/api.py", 115, "post", 'return request("post", url, data=data, json=json, **kwargs)',
               caret_from="request(")
    L += frame(f"{VENV1}/requests/adapters.py", 682, "send", "raise ConnectionError(err, request=request)")
    L += ["requests.exceptions.ConnectionError: ('Connection aborted.', "
          "RemoteDisconnected('Remote end closed connection without response'))", ""]
    return "\n".join(L) + "\n"


def build_seed1() -> J1:
    j = J1()
    j.systemd(t1("14:38:02", 118_402), f"Starting {UNIT1} - {DESC1}...", "7d4958e842da4a758f6c1cdc7b36dcc5",
              extra=(("JOB_TYPE", "start"),))
    j.systemd(t1("14:38:02", 131_977), f"Started {UNIT1} - {DESC1}.", "39f53479d3a045ac8e11786248231fbf",
              extra=(("JOB_TYPE", "start"), ("JOB_RESULT", "done")))
    j.out(t1("14:38:11", 402_118), MAIN1, f"[2026-05-30 14:38:11] {seed1_server_args()}")
    j.out(t1("14:38:12", 9_551), MAIN1, "[2026-05-30 14:38:12] Using default HuggingFace chat template with detected content format: openai")

    def ranks(hms, us, msg, step=1_913, order=range(8)):
        t = t1(hms, us)
        for r in order:
            j.out(t, TP_PIDS1[r], f"[2026-05-30 {hms} TP{r}] {msg(r) if callable(msg) else msg}", comm="sglang::schedul")
            t += step

    ranks("14:38:24", 310_200, "Init torch distributed begin.")
    ranks("14:38:27", 88_415, "Init torch distributed ends. mem usage=1.41 GB", order=[3, 0, 1, 2, 5, 4, 7, 6])
    ranks("14:38:27", 912_004, "Load weight begin. avail mem=265.77 GB")
    shards = 64
    bar = "".join(f"\rLoading safetensors checkpoint shards: {int(100*n/shards):3d}% Completed | {n}/{shards} "
                  f"[{n*5//60:02d}:{n*5%60:02d}<{(shards-n)*5//60:02d}:{(shards-n)*5%60:02d}, "
                  f"{'?it/s' if n == 0 else f'{5.0+0.01*n:.2f}s/it'}]" for n in range(shards + 1)) + "\n"
    j.out(t1("14:43:49", 770_318), TP_PIDS1[0], bar, comm="sglang::schedul")
    ranks("14:43:51", 30_775, "Load weight end. type=KimiK25ForConditionalGeneration, dtype=torch.bfloat16, "
          "avail mem=191.46 GB, mem usage=74.31 GB.", order=[2, 0, 6, 1, 3, 7, 4, 5])
    ranks("14:44:06", 220_913, "Load weight begin. avail mem=191.46 GB")
    ranks("14:44:19", 705_118, "Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, "
          "avail mem=186.92 GB, mem usage=4.54 GB.")
    ranks("14:44:38", 401_551, "KV Cache is allocated. #tokens: 1821440, KV size: 119.46 GB")
    ranks("14:44:38", 760_004, "Memory pool end. avail mem=58.20 GB")
    ranks("14:46:09", 511_870, "Capture cuda graph begin. This can take up to several minutes. avail mem=57.88 GB")
    j.out(t1("14:46:09", 540_112), TP_PIDS1[0],
          "[2026-05-30 14:46:09 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]",
          comm="sglang::schedul")
    # the early warning: CUTLASS DSL's own handler, then propagated to SGLang's root handler, per rank
    t = t1("14:46:10", 123_000)
    for r in range(8):
        ms = 123 + r * 37
        j.out(t, TP_PIDS1[r], f"2026-05-30 14:46:10,{ms:03d} - CUTE_DSL - WARNING - [handle_import_error] - "
              "Unexpected error during package walk: cutlass.cute.experimental", comm="sglang::schedul")
        j.out(t + 310, TP_PIDS1[r], f"[2026-05-30 14:46:10 TP{r}] Unexpected error during package walk: "
              "cutlass.cute.experimental", comm="sglang::schedul")
        t += 37_000
    bss = [64, 56, 48, 40, 32, 24, 16, 12, 8, 4, 2, 1]
    cap = "".join(
        f"\rCapturing batches (bs={bss[min(i, 11)]} avail_mem={57.86 - 0.31 * i:.2f} GB): {int(100*i/12):3d}%|"
        f"{('█' * int(10*i/12)).ljust(10)}| {i}/12 [{int(i*7.8)//60:02d}:{int(i*7.8)%60:02d}<"
        f"{int((12-i)*7.8)//60:02d}:{int((12-i)*7.8)%60:02d}, {'?it/s' if i == 0 else f'{7.8+0.01*i:.2f}s/it'}]"
        for i in range(13)) + "\n"
    j.out(t1("14:47:42", 918_552), TP_PIDS1[0], cap, comm="sglang::schedul")
    j.out(t1("14:47:43", 208_117), TP_PIDS1[0], "[2026-05-30 14:47:43 TP0] Registering 336 cuda graph addresses",
          comm="sglang::schedul")
    ranks("14:47:44", 12_650, "Capture cuda graph end. Time elapsed: 94.62 s. mem usage=3.71 GB. avail mem=54.17 GB.",
          order=[0, 1, 2, 3, 4, 5, 6, 7])
    j.out(t1("14:47:44", 651_203), TP_PIDS1[0],
          "[2026-05-30 14:47:44 TP0] max_total_num_tokens=1821440, chunked_prefill_size=8192, max_prefill_tokens=16384, "
          "max_running_requests=64, context_len=262144, available_gpu_mem=54.17 GB", comm="sglang::schedul")
    for us, msg in ((411_020, "Started server process [22201]"), (411_518, "Waiting for application startup."),
                    (412_906, "Application startup complete."),
                    (413_770, "Uvicorn running on http://0.0.0.0:30001 (Press CTRL+C to quit)")):
        j.out(t1("14:47:46", us), MAIN1, f"[2026-05-30 14:47:46] INFO:     {msg}")
    j.out(t1("14:47:47", 430_119), MAIN1, '[2026-05-30 14:47:47] INFO:     127.0.0.1:52814 - "GET /get_model_info HTTP/1.1" 200 OK')
    j.out(t1("14:47:47", 433_870), MAIN1, "[2026-05-30 14:47:47] Using a 512x512 image for Kimi VLM startup warmup")
    ranks("14:47:49", 905_441, "Prefill batch [1], #new-seq: 1, #new-token: 1062, #cached-token: 0, "
          "token usage: 0.00, #running-req: 0, #queue-req: 0", order=[0])
    t = t1("14:47:53", 18_204)
    for r in (0, 1, 2, 3, 5, 6, 7):
        t = j.out(t, TP_PIDS1[r], seed1_traceback(r), comm="sglang::schedul") + 4_113
    t = j.out(t + 52_000, MAIN1, seed1_warmup_error())
    t = j.out(t + 9_870, TP_PIDS1[4], seed1_traceback(4), comm="sglang::schedul")
    j.out(t + 3_301, MAIN1, "[2026-05-30 14:47:53] Received sigquit from a child process. It usually means the child failed.")
    j.systemd(t1("14:47:54", 201_118), f"{UNIT1}: Main process exited, code=killed, status=9/KILL",
              "98e322203f7a4ed290d09fe03c09fe15", prio=4, extra=(("EXIT_CODE", "killed"), ("EXIT_STATUS", 9)))
    j.systemd(t1("14:47:54", 202_330), f"{UNIT1}: Failed with result 'signal'.",
              "d9b373ed55a64feb8242e02dbe79a49c", prio=4, extra=(("UNIT_RESULT", "signal"),))
    j.systemd(t1("14:47:54", 203_011), f"{UNIT1}: Consumed 1h 21min 7.442s CPU time.",
              "ae8f7b866b0347b9af31fe1c80b127c0", extra=(("CPU_USAGE_NSEC", 4867442000000),))
    return j


# ============================================================ seed 2 ======
VENV2 = "/root/venv/lib/python3.12/site-packages"
SG2 = f"{VENV2}/sglang"
FI2 = f"{VENV2}/flashinfer"
TORCH2 = f"{VENV2}/torch"


def s2(hms: str, msg: str) -> str:
    return f"[2026-05-21 {hms}] {msg}"


def seed2_traceback() -> str:
    L = ["Traceback (most recent call last):"]
    L += frame(f"{SG2}/srt/model_executor/cuda_graph_runner.py", 385, "__init__", "self.capture()")
    L += frame(f"{SG2}/srt/model_executor/cuda_graph_runner.py", 499, "capture",
               ") = self.capture_one_batch_size(bs, forward, stream_idx)", caret_from="self.capture_one_batch_size(")
    L += frame(f"{SG2}/srt/model_executor/cuda_graph_runner.py", 663, "capture_one_batch_size",
               "self.model_runner.attn_backend.init_forward_metadata_capture_cuda_graph(")
    L += frame(f"{SG2}/srt/layers/attention/hybrid_linear_attn_backend.py", 764,
               "init_forward_metadata_capture_cuda_graph", "attn_backend.init_forward_metadata_capture_cuda_graph(")
    L += frame(f"{SG2}/srt/layers/attention/flashinfer_backend.py", 589,
               "init_forward_metadata_capture_cuda_graph", "self.indices_updater_decode.update(")
    L += frame(f"{SG2}/srt/layers/attention/flashinfer_backend.py", 1021, "update_single_wrapper",
               "self.call_begin_forward(")
    L += frame(f"{SG2}/srt/layers/attention/flashinfer_backend.py", 1265, "call_begin_forward",
               "wrapper.begin_forward(")
    L += frame(f"{FI2}/decode.py", 1004, "plan", "self._cached_module = get_batch_decode_module(",
               caret_from="get_batch_decode_module(")
    L += frame(f"{FI2}/decode.py", 196, "get_batch_decode_module",
               "module = gen_batch_decode_module(*args).build_and_load()", caret_from="gen_batch_decode_module(")
    L += frame(f"{FI2}/jit/core.py", 245, "build_and_load", "self.build(verbose)")
    L += frame(f"{FI2}/jit/core.py", 232, "build", "torch_cpp_ext.load(")
    L += frame(f"{TORCH2}/utils/cpp_extension.py", 1681, "load", "return _jit_compile(", caret_from="_jit_compile(")
    L += frame(f"{TORCH2}/utils/cpp_extension.py", 2138, "_jit_compile", "_write_ninja_file_and_build_library(")
    L += frame(f"{TORCH2}/utils/cpp_extension.py", 2244, "_write_ninja_file_and_build_library",
               "verify_ninja_availability()")
    L += frame(f"{TORCH2}/utils/cpp_extension.py", 2311, "verify_ninja_availability", "raise RuntimeError(")
    L += ["RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)", "",
          "During handling of the above exception, another exception occurred:", "",
          "Traceback (most recent call last):"]
    L += frame(f"{SG2}/srt/managers/scheduler.py", 2894, "run_scheduler_process", "scheduler = Scheduler(",
               caret_from="Scheduler(")
    L += frame(f"{SG2}/srt/managers/scheduler.py", 312, "__init__", "self.tp_worker = TpModelWorker(",
               caret_from="TpModelWorker(")
    L += frame(f"{SG2}/srt/managers/tp_worker.py", 237, "__init__", "self._model_runner = ModelRunner(",
               caret_from="ModelRunner(")
    L += frame(f"{SG2}/srt/model_executor/model_runner.py", 323, "__init__", "self.initialize(min_per_gpu_memory)")
    L += frame(f"{SG2}/srt/model_executor/model_runner.py", 486, "initialize", "self.init_device_graphs()")
    L += frame(f"{SG2}/srt/model_executor/model_runner.py", 2047, "init_device_graphs",
               "self.graph_runner = graph_runners[self.device](self)", caret_from="graph_runners[")
    L += frame(f"{SG2}/srt/model_executor/cuda_graph_runner.py", 387, "__init__", "raise Exception(")
    L += ["Exception: Capture cuda graph failed: Ninja is required to load C++ extensions (pip install ninja to get it)",
          "Possible solutions:",
          "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
          "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
          "3. disable torch compile by not using --enable-torch-compile",
          "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
          "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ", ""]
    return "\n".join(L) + "\n"


def build_seed2() -> str:
    args = ("server_args=ServerArgs(model_path='/root/models/Qwen3.6-35B-A3B', tokenizer_path='/root/models/Qwen3.6-35B-A3B', "
            "tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, "
            "context_length=None, host='0.0.0.0', port=30000, dtype='auto', quantization=None, kv_cache_dtype='auto', "
            "mem_fraction_static=0.88, max_running_requests=64, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "schedule_policy='fcfs', page_size=1, device='cuda', tp_size=1, pp_size=1, random_seed=771203456, "
            "attention_backend='flashinfer', sampling_backend='flashinfer', mamba_scheduler_strategy='extra_buffer', "
            "mamba_ssm_dtype='float32', max_mamba_cache_size=None, cuda_graph_max_bs=64, disable_cuda_graph=False, "
            "enable_torch_compile=False, disable_custom_all_reduce=False, speculative_algorithm=None, "
            "served_model_name='/root/models/Qwen3.6-35B-A3B', log_level='info', watchdog_timeout=300)")
    shards = 14
    load_bar = "".join(
        f"\rLoading safetensors checkpoint shards: {int(100*n/shards):3d}% Completed | {n}/{shards} "
        f"[00:{n*3:02d}<00:{(shards-n)*3:02d}, {'?it/s' if n == 0 else f'{3.0+0.02*n:.2f}s/it'}]"
        for n in range(shards + 1)) + "\n"
    pynvml = (f"{TORCH2}/cuda/__init__.py:63: FutureWarning: The pynvml package is deprecated. Please install "
              "nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers "
              "of the package that installed pynvml for you.\n  import pynvml  # type: ignore[import]\n")
    gloo = "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0\n"
    lines = [
        "nohup: ignoring input\n",
        pynvml,                                   # main process import
        s2("03:12:40", args) + "\n",
        pynvml, pynvml,                           # scheduler and detokenizer processes import torch too
        s2("03:12:41", "Using default HuggingFace chat template with detected content format: string") + "\n",
        s2("03:12:49", "Init torch distributed begin.") + "\n",
        gloo, gloo,
        s2("03:12:49", "Init torch distributed ends. mem usage=0.00 GB") + "\n",
        gloo, gloo,
        s2("03:12:50", "Load weight begin. avail mem=93.87 GB") + "\n",
        load_bar,
        s2("03:13:36", "Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16, avail mem=27.41 GB, mem usage=66.46 GB.") + "\n",
        s2("03:13:37", "Mamba Cache is allocated. max_mamba_cache_size: 128, conv_state size: 0.38GB, ssm_state size: 9.42GB ") + "\n",
        s2("03:13:37", "KV Cache is allocated. #tokens: 412160, K size: 4.72 GB, V size: 4.72 GB") + "\n",
        s2("03:13:37", "Memory pool end. avail mem=7.98 GB") + "\n",
        s2("03:13:38", "Capture cuda graph begin. This can take up to several minutes. avail mem=7.61 GB") + "\n",
        s2("03:13:38", "Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]") + "\n",
        # tqdm's first refresh has no newline yet; the scheduler's log record lands on the same physical line
        "\rCapturing batches (bs=64 avail_mem=7.58 GB):   0%|          | 0/12 [00:00<?, ?it/s]",
        s2("03:13:39", "Scheduler hit an exception: ") + seed2_traceback() + "\n",
        s2("03:13:39", "Received sigquit from a child process. It usually means the child failed.") + "\n",
    ]
    return "".join(lines)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # ---- seed 1 through real systemd tools
    j = build_seed1()
    exp = OUT / "seed1.export-input"
    n = write_export(j.entries, exp)
    with tempfile.TemporaryDirectory() as td:
        jf = Path(td) / "seed1.journal"
        said = build_journal(exp, jf)
        unit = ["-u", UNIT1]
        for mode in ("short", "short-iso", "short-iso-precise", "json"):
            (OUT / f"seed1.{mode}.log").write_bytes(journalctl(jf, mode, extra=unit))
        grep = subprocess.run(
            f"TZ=UTC SYSTEMD_COLORS=0 journalctl --file '{jf}' -u {UNIT1} --no-pager -n 25 "
            "| grep -iE 'error|assert|traceback|fatal' | tail -10",
            shell=True, capture_output=True, check=True)
        (OUT / "seed1.grep.log").write_bytes(grep.stdout)
    print(f"seed1: {n} entries ({said})")
    # ---- seed 2: plain file + a truncated snapshot read with real tail
    full = build_seed2()
    (OUT / "seed2.full.log").write_text(full)
    anchor = f'  File "{SG2}/srt/layers/attention/flashinfer_backend.py", line 1021, in update_single_wrapper'
    cut = full.index(anchor) + len(f'  File "{SG2}/srt/layers/attention/flashinfe')
    with tempfile.TemporaryDirectory() as td:
        snap = Path(td) / "sglang.log"
        snap.write_text(full[:cut])
        tail = subprocess.run(["tail", "-30", str(snap)], capture_output=True, check=True).stdout
    (OUT / "seed2.tail30.log").write_bytes(tail)
    print("seed2: written")


if __name__ == "__main__":
    main()
