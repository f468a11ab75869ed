"""Run facts (forensics.incidents.facts): versions, GPU, arguments and environment as servers print them.

The single lines below are what the programs print (release noted); the real-log tests read
../shared/corpora-real at test time and check the extraction against an independent reading.
"""
from __future__ import annotations

import re

import pytest

from conftest import CORPORA, REAL, REPO, needs_real
from forensics.incidents.facts import facts_of_text, guess_gpu, parse_kwargs, parse_vllm_dict, split_top_level


# vLLM, several releases (message formats of vllm/entrypoints/openai/api_server.py and engine init).
VLLM_LINES = [
    # 0.6.x: version, then the whole Namespace
    ("INFO 10-30 10:00:00 api_server.py:528] vLLM API server version 0.6.3.post1\n"
     "INFO 10-30 10:00:00 api_server.py:529] args: Namespace(host=None, port=8000, uvicorn_log_level='info', "
     "model='facebook/opt-125m', tokenizer=None, dtype='auto', max_model_len=None, tensor_parallel_size=2, "
     "gpu_memory_utilization=0.9, enforce_eager=False, disable_log_stats=False)",
     {"server": "vllm", "server_version": "0.6.3.post1", "arg.model": "facebook/opt-125m", "arg.tensor_parallel_size": "2",
      "arg.host": "None", "arg.gpu_memory_utilization": "0.9"}),
    # 0.8 / 0.9: bracketed file:line, Namespace with subparser
    ("INFO 05-12 09:00:00 [api_server.py:1043] vLLM API server version 0.8.5.post1\n"
     "INFO 05-12 09:00:00 [api_server.py:1044] args: Namespace(subparser='serve', model_tag='Qwen/Qwen2.5-7B-Instruct', "
     "config='', host='0.0.0.0', port=8000, max_model_len=32768, tensor_parallel_size=1, dispatch_function=<function ServeSubcommand.cmd at 0x7f>)",
     {"server_version": "0.8.5.post1", "arg.model_tag": "Qwen/Qwen2.5-7B-Instruct", "arg.max_model_len": "32768",
      "arg.dispatch_function": "<function ServeSubcommand.cmd at 0x7f>"}),
    # 0.10 / 0.11: process prefix, non-default args as a dict, V1 engine config
    ("(APIServer pid=1) INFO 08-20 12:00:00 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
     "(APIServer pid=1) INFO 08-20 12:00:00 [utils.py:326] non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'host': '0.0.0.0', "
     "'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192, 'enforce_eager': True, 'limit_mm_per_prompt': {'image': 2}}\n"
     "(EngineCore_0 pid=90) INFO 08-20 12:00:05 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: "
     "model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B', skip_tokenizer_init=False, "
     "tokenizer_mode=auto, revision=None, dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, seed=0",
     {"server_version": "0.10.1.1", "arg.max_model_len": "8192", "arg.enforce_eager": "True",
      "arg.limit_mm_per_prompt": "{'image': 2}", "engine.tokenizer_mode": "auto", "engine.dtype": "torch.bfloat16"}),
    # 0.11 built against a named torch
    ("INFO 10-01 10:00:00 [core.py:77] Initializing a V1 LLM engine (v0.11.0+torch271) with config: model='/m', seed=0",
     {"server": "vllm", "server_version": "0.11.0+torch271", "engine.model": "/m"}),
]

SGLANG_LINES = [
    # 0.4.x: ServerArgs repr with lists, dicts-as-strings and None
    ("[2025-03-08 10:00:00] server_args=ServerArgs(model_path='Qwen/QwQ-32B', tokenizer_path='Qwen/QwQ-32B', "
     "tokenizer_mode='auto', load_format='auto', trust_remote_code=False, dtype='auto', quantization=None, "
     "host='0.0.0.0', port=30000, mem_fraction_static=0.79, tp_size=4, json_model_override_args='{}', "
     "cuda_graph_bs=None, dist_init_addr='10.0.0.1:5000', chat_template='a, b=c')\n"
     "[2025-03-08 10:00:09 TP0] sglang is using nccl==2.21.5",
     {"server": "sglang", "arg.model_path": "Qwen/QwQ-32B", "arg.tp_size": "4", "arg.mem_fraction_static": "0.79",
      "arg.json_model_override_args": "{}", "arg.dist_init_addr": "10.0.0.1:5000", "arg.chat_template": "a, b=c",
      "nccl": "2.21.5"}),
    # 0.5.x: nested lists and dicts
    ("[2026-05-30 14:38:11] server_args=ServerArgs(model_path='/root/models/Kimi-K2.6', tp_size=8, "
     "cuda_graph_bs=[1, 2, 4, 8], model_loader_extra_config='{}', speculative_algorithm='EAGLE', "
     "hicache_storage_backend_extra_config=None, enable_lora=None, max_loras_per_batch=8)\n"
     "[2026-05-30 14:38:27 TP0] Load weight begin. avail mem=265.77 GB",
     {"arg.tp_size": "8", "arg.cuda_graph_bs": "[1, 2, 4, 8]", "arg.speculative_algorithm": "EAGLE",
      "gpu_free_gib": "265.77", "gpu (inferred from free memory)": "B300"}),
]

OTHER_LINES = [
    ("|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |\n"
     "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |",
     {"gpu": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0"}),
    ("vm:5725:5725 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens9f0np0\n"
     "vm:5725:5725 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
     {"env.NCCL_SOCKET_IFNAME": "ens9f0np0", "nccl": "2.28.9"}),
    ("torch 2.11.0+cu130 cuda 13.0 triton 3.6.0 ngpu 1 NVIDIA H200 (9, 0)\nPython 3.12.3",
     {"torch": "2.11.0+cu130", "cuda": "13.0", "triton": "3.6.0", "python": "3.12.3"}),
    ("export TORCH_CUDA_ARCH_LIST=\"9.0;10.0\"\n+ env CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO python3 -m sglang.launch_server",
     {"env.TORCH_CUDA_ARCH_LIST": "9.0;10.0", "env.CUDA_VISIBLE_DEVICES": "0,1", "env.NCCL_DEBUG": "INFO"}),
    ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
     {"compute_capability": "12.0"}),
    ("Triton version 3.4.0 and use MoE kernel config device_name=NVIDIA_H100_80GB_HBM3.json",
     {"triton": "3.4.0", "gpu": "NVIDIA H100 80GB HBM3"}),
]


@pytest.mark.parametrize("text,want", VLLM_LINES + SGLANG_LINES + OTHER_LINES,
                         ids=[f"vllm{i}" for i in range(len(VLLM_LINES))] + [f"sglang{i}" for i in range(len(SGLANG_LINES))]
                         + [f"other{i}" for i in range(len(OTHER_LINES))])
def test_extracts_what_servers_print(text, want):
    got = facts_of_text(text)
    for k, v in want.items():
        assert got.get(k) == v, (k, got.get(k), v)


def test_hints_and_errors_are_not_settings():
    # "consider passing CUDA_LAUNCH_BLOCKING=1" and "CUDA out of memory" name no environment or version.
    got = facts_of_text("For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB.\n"
                        "FA2 is only supported on devices with compute capability >= 8\n"
                        "Compiling a graph (torch.compile takes 8.21 s in total)")
    assert not [k for k in got if k.startswith("env.")]
    assert "cuda" not in got and "compute_capability" not in got and "torch" not in got


def test_split_respects_quotes_and_brackets():
    assert split_top_level("a=1, b=[1, 2], c='x, y', d={'k': (1, 2)}") == ["a=1", "b=[1, 2]", "c='x, y'", "d={'k': (1, 2)}"]
    assert parse_kwargs("x='a=b', y=None") == {"x": "a=b", "y": "None"}
    assert parse_vllm_dict("{'model': 'm', 'n': 2, 'e': <Enum.A: 1>}") == {"model": "m", "n": "2", "e": "<Enum.A: 1>"}


def test_gpu_guess_from_free_memory():
    assert guess_gpu("265.77") == "B300"
    assert guess_gpu("90.52") == "RTX PRO 6000 Blackwell"
    assert guess_gpu("3.0") is None and guess_gpu("x") is None


def _real_logs():
    return sorted(REAL.glob("*/*.log")) if REAL.is_dir() else []


@needs_real
def test_vllm_versions_in_real_logs_match_an_independent_reading():
    rx = re.compile(r"vLLM API server version (\S+)")
    seen = set()
    for p in _real_logs():
        text = p.read_text(errors="replace")
        m = rx.search(text)
        if not m:
            continue
        assert facts_of_text(text).get("server_version") == m.group(1), p
        seen.add(m.group(1))
    assert len(seen) >= 8, seen  # several releases, 0.5 to 0.13 and later


@needs_real
def test_sglang_server_args_in_real_logs():
    rx_tp = re.compile(r"server_args=ServerArgs\(.*?\btp_size=(\d+)")
    rx_model = re.compile(r"server_args=ServerArgs\(model_path='([^']*)'")
    n = 0
    for p in _real_logs():
        text = p.read_text(errors="replace")
        m = rx_tp.search(text)
        if not m:
            continue
        got = facts_of_text(text)
        assert got.get("server") == "sglang", p
        assert got.get("arg.tp_size") == m.group(1), p
        mm = rx_model.search(text)
        if mm:
            assert got.get("arg.model_path") == mm.group(1), p
        n += 1
    assert n >= 6


def test_sglang_and_vllm_releases_of_the_generated_corpus():
    # The generator renders each release's own line shapes (SGLang 0.4.6 to 0.5.23, vLLM 0.6 to 0.3x).
    import csv

    rows = list(csv.DictReader(open(CORPORA / "generated" / "labels.csv", encoding="utf-8")))
    seen: dict[str, set] = {"sglang": set(), "vllm": set()}
    for r in rows[:400]:
        server = re.search(r"server=(sglang|vllm)-(\S+?);", r["note"])
        if not server:
            continue
        text = (CORPORA / "generated" / f"{r['id']}.log").read_text(errors="replace")
        got = facts_of_text(text)
        first = re.search(r"server_args=ServerArgs\([^\n]*", text)  # facts are per lifetime: the first one
        m = re.search(r"\btp_size=(\d+)", first.group(0)) if first else None
        if m:
            assert got.get("server") == "sglang" and got.get("arg.tp_size") == m.group(1), r["id"]
            seen["sglang"].add(server.group(2))
        m = re.search(r"vLLM API server version (\d[\w.+]*\w)", text)
        if m:
            assert got.get("server_version") == m.group(1), r["id"]
            seen["vllm"].add(server.group(2))
    assert len(seen["sglang"]) >= 5 and len(seen["vllm"]) >= 3, seen


@needs_real
def test_vllm_args_in_real_logs():
    n = 0
    for p in _real_logs():
        text = p.read_text(errors="replace")
        m = re.search(r"non-default args: \{'(\w+)': '([^']*)'", text)
        if not m:
            continue
        assert facts_of_text(text).get(f"arg.{m.group(1)}") == m.group(2), p
        n += 1
    assert n >= 10


def test_own_captures_record_the_one_change():
    # The twin of each env-var scenario differs in exactly the variable that broke it.
    good = facts_of_text((CORPORA / "gpu-pairs" / "gpu-pair-nccl-ifname-good.log").read_text())
    bad = facts_of_text((CORPORA / "gpu-pairs" / "gpu-pair-nccl-ifname-bad.log").read_text())
    assert (good["env.NCCL_SOCKET_IFNAME"], bad["env.NCCL_SOCKET_IFNAME"]) == ("lo", "ens9f0np0")
    assert (REPO / "examples").is_dir()
