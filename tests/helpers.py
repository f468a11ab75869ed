"""Small helpers several stage folders use: realistic log lines built here and
the CLI's JSON and one-line-error checks."""
from __future__ import annotations

import json
import subprocess

from forensics.api import classify

from conftest import run_cli

VLLM_START = [
    "INFO 07-01 09:38:56 [api_server.py:1000] vLLM API server version 0.10.1",
    "INFO 07-01 09:38:58 [model.py:611] Resolved architecture: LlamaForCausalLM",
]
TGI_START = [
    "2025-02-11T17:03:00.000000Z  INFO text_generation_launcher: Args { model_id: \"m\", num_shard: Some(1) }",
    "2025-02-11T17:03:01.000000Z  INFO download: text_generation_launcher: Starting download process.",
    "2025-02-11T17:03:05.000000Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0",
]


def classify_lines(lines: list[str]) -> dict:
    return classify("\n".join(lines) + "\n")


def short_line(pid: int, text: str, sec: int = 1) -> str:
    """A journalctl -o short line of host gpu-node-7."""
    return f"Jun 01 12:00:{sec:02d} gpu-node-7 python3[{pid}]: {text}"


def traceback_lines(rank: int) -> list[str]:
    """An SGLang scheduler's CUDA OOM traceback on TP rank ``rank``."""
    return [
        f"[2025-06-01 12:00:01 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process',
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)",
        '  File "/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py", line 300, in load_model',
        "    self.model = get_model(model_config=self.model_config)",
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {rank} has a total capacity of 79.10 GiB",
    ]


def frames_traceback(frames: list[tuple[str, str]], exc: str,
                     site: str = "/usr/local/lib/python3.12/dist-packages") -> list[str]:
    """A Python traceback through ``frames`` ((path under ``site``, function) pairs), ending in ``exc``."""
    out = ["Traceback (most recent call last):"]
    for path, fn in frames:
        out += [f'  File "{site}/{path}", line 10, in {fn}', "    x = y()"]
    return out + [exc]


def one_line_error(proc: subprocess.CompletedProcess, needle: str) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert needle in err, err
    return err


def classify_json(*args: str, input: bytes | None = None) -> tuple[int, list[dict]]:
    proc = run_cli("classify", "--format", "json", *args, input=input)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return proc.returncode, [json.loads(ln) for ln in proc.stdout.decode().splitlines()]
