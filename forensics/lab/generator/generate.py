"""Deterministic, seeded generator of synthetic SGLang / vLLM service logs.

``python -m forensics.lab.generator.generate --seed 7 --per-label 40 --healthy 110 --out corpora/generated``

Each log is one service run (sometimes a failed run, a restart and a second
run) rendered as a plain file, through journald (``journalctl -o ...``),
docker or Kubernetes wrappers, and sometimes cut (``tail``, ``head -c``,
``grep``).  ``labels.csv`` records the root cause, phase, the proving
substring and the early-warning substring (both verified to survive the
rendering and the cut).  Pure standard library; the same seed gives
byte-identical output.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from forensics.report.atomic import atomic_write_bytes, atomic_write_text

from . import catalog as K
from .catalog import Ctx, Failure, Precursor, pick
from .failures import BUILDERS, LABELS
from .wording import reword

PHASES = ["launch", "load-weights", "memory-plan", "kernel-jit", "cuda-graph-capture", "warmup", "ready", "serving", "shutdown"]
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
RENDERERS = ["plain", "short", "short-iso", "short-iso-precise", "short-precise", "short-unix", "short-monotonic", "short-full", "cat", "json",
             "docker-compose", "docker-ts", "k8s-cri"]
RENDER_WEIGHTS = [30, 12, 8, 6, 4, 3, 3, 3, 4, 4, 8, 6, 6]
JOURNALD = {"short", "short-iso", "short-iso-precise", "short-precise", "short-unix", "short-monotonic", "short-full", "cat", "json"}


# ---------------------------------------------------------------------------- records


@dataclass
class Rec:
    t: float
    text: str
    src: str = "app"          # app | systemd | kernel
    pid: int = 0
    phase: str = ""
    tag: str = ""             # fatal | early | ready | serving
    boot: int = 0
    stream: str = "stderr"


@dataclass
class LogState:
    c: Ctx
    t: float
    boot: int = 0
    boot_t0: float = 0.0       # realtime of boot (for monotonic)
    recs: list[Rec] = field(default_factory=list)
    phase: str = "launch"
    main_pid: int = 0
    child_pids: list[int] = field(default_factory=list)
    core_pid: int = 0
    api_pid: int = 0
    tqdm_nl: bool = False
    ms: bool = False
    tty: bool = False
    unit: str = "sglang.service"
    unit_desc: str = "SGLang server"


def ts_sg(st: LogState, t: float) -> str:
    base = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    if st.ms:
        base += f".{int((t % 1) * 1000):03d}"
    return base


def ts_vl(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


class Emitter:
    """Writes the lines one server process family would write."""

    def __init__(self, st: LogState):
        self.st = st
        self.c = st.c
        self.r = st.c.rng
        c = self.c
        if c.server == "sglang":
            tags = []
            for i in range(c.tp):
                parts = []
                if c.dp_attn:
                    parts.append(f"DP{i}")
                if c.tp > 1 or c.dp_attn:
                    parts.append(f"TP{i}")
                if c.ep and c.gen != "old":
                    parts.append(f"EP{i}")
                tags.append((" " + " ".join(parts)) if parts else "")
            self.rank_tags = tags

    # -- basic
    def adv(self, lo: float, hi: float) -> None:
        self.st.t += self.r.uniform(lo, hi)

    def add(self, text: str, *, src: str = "app", tag: str = "", pid: int | None = None, stream: str = "stderr") -> Rec:
        st = self.st
        rec = Rec(st.t, text, src, pid if pid is not None else st.main_pid, st.phase, tag, st.boot, stream)
        st.recs.append(rec)
        st.t += self.r.uniform(0.0, 0.004)
        return rec

    def rank_pid(self, rank: int | None) -> int:
        if rank is None or not self.st.child_pids:
            return self.st.main_pid
        return self.st.child_pids[rank % len(self.st.child_pids)]

    # -- SGLang lines
    def sg(self, msg: str, rank: int | None = None, tag: str = "") -> Rec:
        pfx = "" if rank is None else self.rank_tags[rank]
        return self.add(f"[{ts_sg(self.st, self.st.t)}{pfx}] {msg}", tag=tag, pid=self.rank_pid(rank))

    def sg_ranks(self, fn, ranks: list[int] | None = None, tag: str = "") -> None:
        ranks = list(range(self.c.tp)) if ranks is None else ranks
        order = ranks[:]
        if len(order) > 1 and self.r.random() < 0.7:
            self.r.shuffle(order)
        for i in order:
            self.sg(fn(i), i, tag)
            self.st.t += self.r.uniform(0, 0.05)

    def uv(self, level: str, msg: str, tag: str = "", proc: str = "api") -> Rec:
        lp = f"{level}:".ljust(9) + " "
        if self.st.tty:
            col = {"INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31m"}.get(level, "")
            lp = f"{col}{level}\x1b[0m:".ljust(9 + len(col) + 4) + " "
        if self.c.server == "sglang":
            if self.c.gen == "old":
                return self.add(f"{lp}{msg}", tag=tag)
            return self.add(f"[{ts_sg(self.st, self.st.t)}] {lp}{msg}", tag=tag)
        return self.add(self.vbare(proc) + f"{lp}{msg}", tag=tag, pid=self.vpid(proc), stream="stdout")

    # -- vLLM lines
    def vname(self, proc) -> str | None:
        c = self.c
        if proc == "api":
            return "APIServer" if c.gen in ("v011", "v033") else None
        if proc == "core":
            return "EngineCore_DP0" if c.gen in ("v011", "v033") else None
        if isinstance(proc, tuple):
            r = proc[1]
            if c.gen == "v06":
                return "VllmWorkerProcess" if r > 0 else None
            if c.gen == "v09":
                return f"VllmWorker rank={r}"
            return f"Worker_TP{r}" if c.tp > 1 else "Worker"
        return None

    def vpid(self, proc) -> int:
        if proc == "api":
            return self.st.api_pid
        if proc == "core":
            return self.st.core_pid
        return self.rank_pid(proc[1])

    def vbare(self, proc) -> str:
        """Prefix a bare (non-logger) line gets from the stream wrapper (<=0.11)."""
        name = self.vname(proc)
        if name is None or self.c.gen == "v033":
            return ""
        return f"\x1b[1;36m({name} pid={self.vpid(proc)})\x1b[0;0m "

    def vheader(self, level: str, file: str, proc) -> str:
        c = self.c
        ln = c.lineno(file, "log") % 2200 + 20
        ts = ts_vl(self.st.t)
        lvl = level
        if self.st.tty and c.gen == "v033":
            lvl = {"INFO": "\x1b[32mINFO\x1b[0m", "WARNING": "\x1b[33mWARNING\x1b[0m", "ERROR": "\x1b[31mERROR\x1b[0m"}.get(level, level)
        if c.gen == "v06":
            h = f"{lvl} {ts} {file}:{ln}] "
        else:
            h = f"{lvl} {ts} [{file}:{ln}] "
        if c.gen == "v033":
            name = self.vname(proc)
            if name:
                h = f"({name} pid={self.vpid(proc)}) " + h
        return h

    def vl(self, level: str, file: str, msg: str, proc="core", tag: str = "") -> Rec:
        return self.add(self.vbare(proc) + self.vheader(level, file, proc) + msg, tag=tag, pid=self.vpid(proc), stream="stdout")

    def vl_multi(self, level: str, file: str, lines: list[str], proc="core", tag_line: str = "", tag: str = "fatal") -> None:
        h = self.vheader(level, file, proc)
        pfx = self.vbare(proc)
        for i, ln in enumerate(lines):
            last = i == len(lines) - 1
            tg = tag if tag_line and tag_line in ln else ""
            self.add(pfx + h + ln + ("" if last else "\r"), tag=tg, pid=self.vpid(proc), stream="stdout")

    def bare(self, text: str, proc=None, tag: str = "", rank: int | None = None) -> Rec:
        if self.c.server == "vllm" and proc is not None:
            return self.add(self.vbare(proc) + text, tag=tag, pid=self.vpid(proc))
        return self.add(text, tag=tag, pid=self.rank_pid(rank))

    # -- tqdm
    def tqdm(self, desc: str, total: int, secs: float, proc=None, rank0: int | None = 0, steps: int | None = None, style: str = "pct") -> None:
        r = self.r
        steps = steps or min(total, r.randint(4, 9))
        pts = sorted(set([0] + [max(1, round(total * (i + 1) / steps)) for i in range(steps)]))
        segs = []
        for k in pts:
            el = secs * k / total
            rate = (k / el) if el > 0 else 0
            rem = (secs - el)
            if style == "pct":
                pct = int(100 * k / total)
                if k == 0:
                    segs.append(f"{desc}:   0% Completed | 0/{total} [00:00<?, ?it/s]")
                else:
                    rs = f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"
                    segs.append(f"{desc}: {pct:3d}% Completed | {k}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}<{int(rem) // 60:02d}:{int(rem) % 60:02d}, {rs}]")
            else:
                pct = int(100 * k / total)
                fill = int(10 * k / total)
                bar = "\u2588" * fill + (" " * (10 - fill))
                if k == 0:
                    segs.append(f"{desc}:   0%|          | 0/{total} [00:00<?, ?it/s]")
                else:
                    segs.append(f"{desc}: {pct:3d}%|{bar}| {k}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}<{int(rem) // 60:02d}:{int(rem) % 60:02d}, {max(rate, 0.01):5.2f}it/s]")
        pid = self.rank_pid(rank0)
        if self.st.tqdm_nl or style == "pct" and r.random() < 0.5:
            for s in segs:
                self.bare(s, proc=proc, rank=rank0)
                self.st.t += secs / len(segs)
            if style == "pct" and r.random() < 0.5:
                self.bare("", proc=proc, rank=rank0)
        else:
            self.add((self.vbare(proc) if proc is not None and self.c.server == "vllm" else "") + "\r".join(segs), pid=pid)
            self.st.t += secs


# ---------------------------------------------------------------------------- context


def make_ctx(rng: Random, label: str | None, renderer: str) -> Ctx:
    server = "sglang" if rng.random() < 0.6 else "vllm"
    if server == "sglang":
        version = pick(rng, K.SGLANG_VERSIONS)
        gen = "old" if version.startswith("0.4") else ("new" if version == "0.5.23" else "mid")
    else:
        version = pick(rng, K.VLLM_VERSIONS)
        gen = {"0.6": "v06", "0.9": "v09", "0.1": "v011", "0.3": "v033"}[version[:3]]
    gpu = pick(rng, K.GPUS)
    tp = rng.choices([1, 2, 4, 8], weights=[45, 30, 17, 8])[0]
    if label == "dist.nccl" and tp == 1:
        tp = rng.choice([2, 4, 8])
    model = pick(rng, K.MODELS)
    py = rng.choice(["3.10", "3.11", "3.12", "3.12", "3.12"])
    user = pick(rng, K.USERS)
    sp = pick(rng, K.SITE_ROOTS).format(py=py, user=user)
    torch = pick(rng, K.TORCH_BUILDS)
    cuda = {"cu124": "12.4", "cu126": "12.6", "cu128": "12.8", "cu129": "12.9", "cu130": "13.0"}[torch.split("+")[1]]
    return Ctx(rng=rng, server=server, version=version, gen=gen, gpu=gpu, tp=tp,
               dp_attn=server == "sglang" and tp > 1 and rng.random() < 0.15,
               ep=server == "sglang" and tp > 1 and rng.random() < 0.2 and "Moe" in model.arch,
               model=model, py=py, sp=sp, torch=torch, cuda=cuda, host=pick(rng, K.HOSTNAMES),
               port=30000 if server == "sglang" and rng.random() < 0.7 else (8000 if server == "vllm" and rng.random() < 0.7 else rng.randint(8001, 40000)),
               journald=renderer in JOURNALD, user=user)


# ---------------------------------------------------------------------------- noise


def noise_lines(em: Emitter, where: str) -> None:
    """Harmless warnings that real logs carry; inserted at phase boundaries."""
    c, r = em.c, em.r
    if r.random() > 0.45:
        return
    if c.server == "sglang":
        opts = []
        if where == "launch":
            opts += [lambda: [em.bare(f"{c.sp}/torch/cuda/__init__.py:{r.choice([61, 63])}: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you."),
                              em.bare("  import pynvml  # type: ignore[import]")],
                     lambda: em.sg("Using default HuggingFace chat template with detected content format: string"),
                     lambda: em.sg_ranks(lambda i: "Attention backend not explicitly specified. Use flashinfer backend by default."),
                     lambda: em.bare(f"{c.sp}/transformers/utils/hub.py:{r.randint(100, 130)}: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead."),
                     lambda: em.sg(f"Unexpected error during package walk: cutlass.cute.{pick(r, ['experimental', 'runtime'])}"),
                     lambda: em.sg_ranks(lambda i: "please use at least NVCC 12.9 for the best DeepGEMM performance") if r.random() < 0.3 else None]
        if where == "load-weights":
            mod, err = pick(r, K.IGNORED_MODEL_IMPORTS)
            opts += [lambda: em.sg_ranks(lambda i: f"Ignore import error when loading sglang.srt.models.{mod}: {err}"),
                     lambda: em.sg_ranks(lambda i: "Custom allreduce is disabled because this process group spans across nodes.") if c.tp > 1 else None,
                     lambda: em.sg("Using KV cache dtype: torch.bfloat16", 0),
                     lambda: em.sg(f"Found local HF snapshot for {c.model.hf} at /root/.cache/huggingface/hub/models--{c.model.hf.replace('/', '--')}/snapshots/{r.randbytes(20).hex()}; skipping download.", 0)]
        if where in ("memory-plan", "kernel-jit"):
            opts += [lambda: em.bare(f"{c.sp}/torch/_dynamo/variables/functions.py:{r.randint(600, 1500)}: UserWarning: Dynamo does not know how to trace the builtin `time.perf_counter.` This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind)."),
                     lambda: em.sg_ranks(lambda i: "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead to less accurate results!")]
    else:
        opts = []
        if where == "launch":
            opts += [lambda: em.vl("INFO", "__init__.py", "Automatically detected platform cuda.", "api"),
                     lambda: em.bare("`torch_dtype` is deprecated! Use `dtype` instead!", proc="api"),
                     lambda: em.bare("The argument `trust_remote_code` is to be used with Auto classes. It has no effect here and is ignored.", proc="api"),
                     lambda: em.vl("WARNING", "model.py", "Default sampling parameters have been overridden by the model's Hugging Face generation config recommended from the model creator. If this is not intended, please relaunch vLLM instance with `--generation-config vllm`.", "api"),
                     lambda: em.vl("WARNING", "__init__.py", "Unexpected error during package walk: cutlass.cute.experimental", "core") if r.random() < 0.3 else None]
        if where == "load-weights":
            opts += [lambda: em.vl("WARNING", "topk_topp_sampler.py", "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.", "core"),
                     lambda: em.vl("WARNING", "custom_all_reduce.py", "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.", ("w", 0)) if c.tp > 2 else None,
                     lambda: em.vl("INFO", "cuda.py", "Using Flash Attention backend on V1 engine.", "core")]
        if where in ("memory-plan", "kernel-jit"):
            opts += [lambda: em.bare(f"[rank0]:W{time.strftime('%m%d %H:%M:%S', time.gmtime(em.st.t))}.{r.randint(0, 999999):06d} {em.st.core_pid} torch/_inductor/utils.py:1436] [0/0] Not enough SMs to use max_autotune_gemm mode", proc="core")]
    if opts:
        pick(r, opts)()


# ---------------------------------------------------------------------------- startup


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


class Run:
    """One process lifetime of the server."""

    def __init__(self, st: LogState, failure: Failure | None, stop_at: str | None, precursor: Precursor | None):
        self.st, self.c, self.r = st, st.c, st.c.rng
        self.em = Emitter(st)
        self.failure = failure
        self.stop_at = stop_at           # healthy "starting": stop before this phase
        self.precursor = precursor
        self.pre_done = precursor is None
        self.outcome = "running"
        st.main_pid = self.r.randint(1200, 3999000) if self.r.random() < 0.3 else self.r.randint(900, 99000)
        st.child_pids = [st.main_pid + 60 + i * self.r.randint(1, 40) for i in range(self.c.tp)]
        st.api_pid, st.core_pid = st.main_pid, st.main_pid + self.r.randint(100, 400)

    # -- precursor
    def maybe_precursor(self, phase: str, before_failure: bool = False) -> None:
        p = self.precursor
        if self.pre_done or p is None:
            return
        if p.phase != phase and not before_failure:
            return
        em, c = self.em, self.c
        if before_failure:
            pass
        self.pre_done = True
        lines = p.lines
        style = p.style
        if c.server == "vllm" and style == "log":
            style = "vlog"
        if c.server == "sglang" and style == "vlog":
            style = "log"
        first = lines[0]
        if style == "log":
            if first.startswith("Unexpected error during package walk"):
                em.bare(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(self.st.t))},{self.r.randint(0, 999):03d} - CUTE_DSL - WARNING - [handle_import_error] - {first}", rank=0, tag="early")
                em.sg(first, None if self.r.random() < 0.5 else 0)
            elif first.startswith("Health check failed") or first.startswith("port "):
                em.sg(first, None, tag="early")
            else:
                ranks = [0] if self.r.random() < 0.6 or first.startswith("KV cache pool") else None
                em.sg_ranks(lambda i: first, ranks, tag="early")
            for extra in lines[1:]:
                em.bare(extra)
        elif style == "vlog":
            proc = "api" if p.vfile in ("arg_utils.py", "config.py") or "platform" in first else ("core" if c.tp == 1 or c.gen == "v06" else ("w", 0))
            if p.vfile in ("scheduler.py",):
                proc = "core"
            em.vl(p.level, p.vfile, first, proc, tag="early")
        elif style in ("raw", "nccl"):
            proc = ("w", 0) if c.server == "vllm" else None
            if c.server == "vllm" and (c.tp == 1 or c.gen == "v09"):
                proc = "core" if c.gen != "v06" else None
            for i, ln in enumerate(lines):
                em.bare(ln, proc=proc, tag="early" if i == 0 or p.substring in ln else "", rank=0)
        elif style == "kernel":
            if c.journald:
                em.add(first, src="kernel", tag="early")
            else:
                self.precursor = None
        elif style == "systemd":
            if c.journald:
                for ln in lines:
                    em.add(f"{self.st.unit}: {ln}", src="systemd", tag="early" if p.substring in ln else "", pid=1)
            else:
                self.precursor = None

    # -- main flow
    def run(self) -> str:
        c = self.c
        for ph in PHASES[:-1]:
            if self.stop_at == ph:
                self.outcome = "starting"
                return self.outcome
            if ph == "kernel-jit" and not self.wants_jit():
                continue
            if ph == "shutdown":
                break
            self.st.phase = ph
            self.maybe_precursor(ph)
            if self.failure and self.failure.phase == ph:
                getattr(self, f"{c.server}_{ph.replace('-', '_')}")(partial=True)
                self.fail()
                return self.outcome
            getattr(self, f"{c.server}_{ph.replace('-', '_')}")(partial=False)
            if ph != "serving":
                noise_lines(self.em, ph)
        self.outcome = "ready"
        return self.outcome

    def wants_jit(self) -> bool:
        f = self.failure
        if f and f.phase == "kernel-jit":
            return True
        if self.precursor and self.precursor.phase == "kernel-jit":
            return True
        return self.r.random() < 0.35

    # ------------------------------------------------------------------ SGLang phases
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
            em.sg(f"sglang is using nccl=={pick(r, K.__dict__.get('NCCL', ['2.21.5', '2.26.2', '2.27.3', '2.27.5']))}", 0)
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
        em, c, r = self.em, self.c, self.r
        em.adv(0.2, 3)
        if partial:
            return
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

    # ------------------------------------------------------------------ vLLM phases
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
        em, c, r = self.em, self.c, self.r
        em.adv(1, 10)
        if partial:
            return
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

    # ------------------------------------------------------------------ serving
    def serving_loop(self, partial: bool) -> None:
        em, c, r = self.em, self.c, self.r
        n = r.randint(3, 14) if not partial else r.randint(3, 10)
        benign = self.failure is None and r.random() < 0.35
        pre_at = r.randint(0, max(0, n - 2)) if (self.precursor and not self.pre_done and self.precursor.phase == "serving") else -1
        for k in range(n):
            em.adv(0.5, 40)
            if k == pre_at:
                self.maybe_precursor("serving")
                em.adv(*self.precursor.lead) if self.precursor else None
            x = r.random()
            if x < 0.45:
                for _ in range(r.randint(1, 3)):
                    em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST {pick(r, ['/v1/chat/completions', '/v1/chat/completions', '/v1/completions', '/generate'])} HTTP/1.1\" 200 OK", tag="serving")
            elif x < 0.8:
                run = r.randint(1, 120)
                if c.server == "sglang":
                    em.sg((f"Decode batch. #running-req: {run}" if c.gen != "new" else f"Decode batch [{r.randint(40, 90000)}], #running-req: {run}") +
                          f", #token: {r.randint(100, 90000)}, token usage: {r.uniform(0, 0.95):.2f}, cuda graph: {r.random() < 0.8}, gen throughput (token/s): {r.uniform(20, 4000):.2f}, #queue-req: {r.randint(0, 5)}, ", 0, tag="serving")
                else:
                    em.vl("INFO", "loggers.py" if c.gen != "v06" else "metrics.py", f"{'Engine 000: ' if c.gen != 'v06' else ''}Avg prompt throughput: {r.uniform(0, 9000):.1f} tokens/s, Avg generation throughput: {r.uniform(0, 3000):.1f} tokens/s, Running: {run} reqs, Waiting: 0 reqs, GPU KV cache usage: {r.uniform(0, 90):.1f}%, Prefix cache hit rate: {r.uniform(0, 80):.1f}%", "api", tag="serving")
            elif x < 0.9:
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"GET {pick(r, ['/health', '/health', '/metrics', '/v1/models'])} HTTP/1.1\" 200 OK", tag="serving")
            elif c.server == "sglang":
                em.sg(f"Prefill batch. #new-seq: {r.randint(1, 9)}, #new-token: {r.randint(8, 9000)}, #cached-token: {r.randint(0, 9000)}, token usage: {r.uniform(0, 0.9):.2f}, #running-req: {r.randint(0, 60)}, #queue-req: 0", 0, tag="serving")
            if benign and r.random() < 0.25:
                self.benign_error()
        if not self.pre_done and self.precursor and self.precursor.phase == "serving":
            self.maybe_precursor("serving")
            em.adv(*self.precursor.lead)

    def benign_error(self) -> None:
        em, c, r = self.em, self.c, self.r
        k = r.randrange(3)
        if k == 0:
            em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"{pick(r, ['POST /v1/chat/completions', 'GET /v1/models/foo', 'POST /v1/embeddings', 'GET /favicon.ico'])} HTTP/1.1\" {pick(r, ['400 Bad Request', '404 Not Found', '422 Unprocessable Entity'])}")
        elif k == 1:
            if c.server == "vllm":
                lines = ["Error in preprocessing prompt inputs", "Traceback (most recent call last):"] + c.frames([
                    ("vllm/entrypoints/openai/serving_chat.py", "create_chat_completion", "request_prompts, engine_prompts = await self._preprocess_chat(", True),
                    ("vllm/entrypoints/openai/serving_engine.py", "_validate_input", "raise ValueError(")]) + [
                    f"ValueError: This model's maximum context length is {c.model.max_len} tokens. However, you requested {c.model.max_len + r.randint(10, 9000)} tokens in the messages, Please reduce the length of the messages."]
                em.vl_multi("ERROR", "serving_chat.py", lines, "api", tag="")
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request")
            else:
                em.sg(f"Error in request: Input length ({c.model.max_len + r.randint(10, 9000)} tokens) exceeds the maximum allowed length ({c.model.max_len} tokens). Use a shorter input or enable --allow-auto-truncate.")
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request")
        else:
            em.uv("ERROR", "Exception in ASGI application")
            lines = ["Traceback (most recent call last):"] + c.frames([
                (f"{c.sp}/uvicorn/protocols/http/httptools_impl.py", "run_asgi", "result = await app(  # type: ignore[func-returns-value]", True),
                (f"{c.sp}/starlette/routing.py", "app", "response = await f(request)"),
                ("sglang/srt/entrypoints/http_server.py" if c.server == "sglang" else "vllm/entrypoints/openai/api_server.py", "openai_v1_chat_completions" if c.server == "sglang" else "create_chat_completion",
                 "request_json = await raw_request.json()" if c.server == "sglang" else "json_body = await raw_request.json()"),
                (f"{c.sp}/starlette/requests.py", "json", "self._json = json.loads(body)"),
                (f"{c.sp.rsplit('/', 2)[0]}/json/decoder.py", "raw_decode", "raise JSONDecodeError(\"Expecting value\", s, err.value) from None")]) + [
                "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"]
            for ln in lines:
                em.bare(ln, proc="api" if c.server == "vllm" else None)

    # ------------------------------------------------------------------ failure
    def fail(self) -> None:
        f = self.failure
        assert f is not None
        em, c, r, st = self.em, self.c, self.r, self.st
        self.outcome = "failed"
        if not self.pre_done:
            self.maybe_precursor(f.phase, before_failure=True)
            if self.precursor:
                em.adv(*self.precursor.lead)
        em.adv(0.2, 20)
        exc = list(f.exc)
        if c.server == "sglang" and f.capture_wrap and f.phase == "cuda-graph-capture" and f.scope == "ranks" and exc and r.random() < 0.75:
            exc = self.wrap_capture(exc)
        scope = f.scope
        # -- raw pre lines (compiler output, device asserts, NCCL glog)
        if f.pre and scope not in ("log",):
            reps = c.tp if f.pre_scope == "ranks" else 1
            for rep in range(min(reps, 4)):
                for ln in f.pre:
                    tag = "fatal" if f.fatal in ln and scope == "cxx" else ""
                    em.bare(ln, proc=("w", rep) if c.server == "vllm" and c.gen != "v06" and c.tp > 1 else ("core" if c.server == "vllm" else None), tag=tag, rank=rep)
        if scope in ("ranks", "rank0"):
            ranks = list(range(c.tp)) if scope == "ranks" else [0]
            if scope == "ranks" and f.label == "dist.nccl" and r.random() < 0.5:
                ranks = sorted(r.sample(ranks, r.randint(1, len(ranks))))
            if len(ranks) > 2 and r.random() < 0.5:
                ranks = ranks[:r.randint(1, 3)]
            self.emit_rank_tracebacks(exc, ranks)
        elif scope == "main":
            for ln in exc:
                self.tagged_bare(ln, f.fatal, proc="api")
        elif scope == "argparse":
            for ln in exc:
                self.tagged_bare(ln, f.fatal, proc="api")
        elif scope == "warmup":
            em.sg("Initialization failed. warmup error: " + exc[0])
            for ln in exc[1:]:
                self.tagged_bare(ln, f.fatal)
        elif scope == "cxx":
            for ln in f.cxx:
                self.tagged_bare(ln, f.fatal, proc=("w", 0) if c.server == "vllm" and c.tp > 1 else "core")
            if c.server == "sglang" and c.gen == "new":
                em.sg(f"Subprocess scheduler_{r.randrange(c.tp)} (pid={r.choice(st.child_pids)}) crashed with exit code -6. Triggering SIGQUIT for cleanup...")
        elif scope == "log":
            for ln in f.pre:
                if c.server == "sglang":
                    em.sg(ln, 0 if not ln.startswith(("Pyspy", "py-spy", "port ")) else None)
            if f.log_level:
                em.uv(f.log_level, f.log_line, tag="fatal")
                if c.server == "sglang":
                    em.uv("INFO", "Waiting for application shutdown.")
                    em.uv("INFO", "Application shutdown complete.")
            else:
                rank = 0 if "atchdog" in f.log_line else None
                em.sg(f.log_line, rank, tag="fatal")
        elif scope == "kernel":
            if c.journald:
                for i, ln in enumerate(f.kernel):
                    em.add(ln, src="kernel", tag="fatal" if f.fatal in ln else "")
                    em.st.t += r.uniform(0, 0.01)
            if c.server == "sglang":
                if c.gen == "new":
                    em.sg("Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.")
                elif c.gen == "mid" and f.phase != "serving":
                    em.sg("Rank 0 scheduler is dead. Please check if there are relevant logs.")
                    em.sg("Exit code: -9")
            else:
                if c.tp > 1 and c.gen != "v06":
                    em.vl("ERROR", "multiproc_executor.py", f"Worker proc {'VllmWorker-0' if c.gen == 'v09' else 'Worker_TP0'} died unexpectedly, shutting down executor.", "core")
                else:
                    em.vl("ERROR", "core_client.py", "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", "api")
        elif scope == "systemd":
            pass
        self.after_failure()

    def tagged_bare(self, ln: str, fatal: str, proc=None) -> None:
        self.em.bare(ln, proc=proc if self.c.server == "vllm" else None, tag="fatal" if fatal and fatal in ln else "")

    def wrap_capture(self, exc: list[str]) -> list[str]:
        c = self.c
        # the last exception line(s) of the inner error become the outer message
        idx = max(i for i, ln in enumerate(exc) if ln and not ln.startswith(" ") and ":" in ln and not ln.startswith("Traceback") and not ln.startswith("CUDA kernel") and not ln.startswith("For debugging") and not ln.startswith("Compile with"))
        inner_type, _, inner_msg = exc[idx].partition(": ")
        trailer = exc[idx + 1:]
        outer = K.tb(c.frames([("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", "raise Exception(")]))
        if c.gen != "new":
            hd = K.sglang_sched_head(c, "cuda-graph-capture")
            cut = next((i for i, ln in enumerate(hd) if "cuda_graph_runner.py" in ln and ln.endswith("in __init__")), len(hd))
            outer = K.tb(hd[:cut] + c.frames([("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", "raise Exception(")]))
        hints = K.CAPTURE_HINTS_NEW if c.gen == "new" else K.CAPTURE_HINTS_OLD
        return exc + ["", "During handling of the above exception, another exception occurred:", ""] + outer + [f"Exception: Capture cuda graph failed: {inner_msg}"] + trailer + hints

    def emit_rank_tracebacks(self, exc: list[str], ranks: list[int]) -> None:
        em, c, r, f = self.em, self.c, self.r, self.failure
        if c.server == "sglang":
            blocks = []
            for i in ranks:
                blk = [(f"[{ts_sg(self.st, self.st.t)}{self.rank_tags_of(i)}] Scheduler hit an exception: {exc[0]}", i)] + [(ln, i) for ln in exc[1:]] + [("", i)]
                blocks.append(blk)
            self.interleave(blocks)
            return
        # vLLM
        if c.gen == "v06":
            if c.tp > 1 and f.phase not in ("launch",) and r.random() < 0.5:
                for i in ranks[:3]:
                    if i == 0:
                        continue
                    em.vl_multi("ERROR", "multiproc_worker_utils.py", [f"Exception in worker VllmWorkerProcess while processing method {pick(r, ['load_model', 'determine_num_available_blocks', 'initialize_cache'])}."] + exc, ("w", i), tag_line=f.fatal)
            em.bare("Process SpawnProcess-1:")
            for ln in exc:
                self.tagged_bare(ln, f.fatal)
            return
        if c.tp > 1 and f.phase != "launch":
            msg = "WorkerProc failed to start." if f.phase != "serving" else "WorkerProc hit an exception."
            wexc = worker_traceback(c, exc, f.phase)
            if r.random() < 0.6:
                ranks = ranks[:r.randint(1, 2)]
            for i in ranks[:4]:
                em.vl_multi("ERROR", "multiproc_executor.py", [msg] + wexc, ("w", i), tag_line=f.fatal)
            if f.phase == "serving":
                em.vl_multi("ERROR", "core.py", ["EngineCore encountered a fatal error."] + K.tb(K.vllm_core_head(c, "serving")[:10] + c.frames([("vllm/v1/executor/multiproc_executor.py", "get_response", "raise RuntimeError(")])) +
                            [f"RuntimeError: Worker failed with error '{exc[-1].split(': ', 1)[-1][:120]}', please check the stack trace above for the root cause"], "core", tag_line="")
            else:
                em.vl_multi("ERROR", "core.py", ["EngineCore failed to start."] + K.tb(K.vllm_core_head(c, "launch")[:6] + c.frames([("vllm/v1/executor/multiproc_executor.py", "wait_for_ready", "raise e from None")])) +
                            ["Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause."], "core", tag_line="")
        else:
            msg = "EngineCore failed to start." if f.phase != "serving" else "EngineCore encountered a fatal error."
            em.vl_multi("ERROR", "core.py", [msg] + exc, "core", tag_line=f.fatal)

    def rank_tags_of(self, i: int) -> str:
        return self.em.rank_tags[i]

    def interleave(self, blocks: list[list[tuple[str, int]]]) -> None:
        r, em = self.r, self.em
        f = self.failure
        if len(blocks) > 1 and r.random() < 0.25:
            # chunks of several lines from each rank torn into each other
            queues = [list(b) for b in blocks]
            while any(queues):
                q = pick(r, [q for q in queues if q])
                for _ in range(min(len(q), r.randint(1, 6))):
                    ln, i = q.pop(0)
                    em.add(ln, tag="fatal" if f.fatal in ln else "", pid=em.rank_pid(i))
        else:
            for b in blocks:
                for ln, i in b:
                    em.add(ln, tag="fatal" if f.fatal in ln else "", pid=em.rank_pid(i))
                em.st.t += r.uniform(0, 0.3)

    def after_failure(self) -> None:
        """Wrapper lines and shutdown noise that follow the cause."""
        em, c, r, st, f = self.em, self.c, self.r, self.st, self.failure
        em.adv(0.05, 1.5)
        self.exit_kind = "exit-code"
        if f.scope == "systemd":
            em.add(f"{st.unit}: {f.systemd[0]}", src="systemd", pid=1, tag="fatal")
            if c.server == "sglang":
                em.adv(0.1, 2)
                if r.random() < 0.5:
                    em.sg("Received sigquit from a child process. It usually means the child failed.")
            self.exit_kind = "timeout"
            return
        if c.server == "sglang":
            if f.scope in ("ranks", "rank0", "cxx", "kernel", "warmup") or (f.scope == "log" and not f.log_level and "atchdog" in f.log_line):
                if c.gen == "new" and f.phase in ("serving",) and r.random() < 0.5:
                    em.sg(f"SIGQUIT received. signum=3, frame=<frame at 0x7f{r.randint(10**9, 10**10):x}, file '{c.sp}/sglang/srt/entrypoints/http_server.py', line {r.randint(900, 1500)}, code launch_server>. It usually means one child failed.")
                else:
                    em.sg("Received sigquit from a child process. It usually means the child failed.")
                self.exit_kind = "signal"
                if f.scope == "kernel":
                    self.exit_kind = "oom-kill"
                if not c.journald and r.random() < 0.45:
                    em.add("Killed")
            elif f.scope == "log" and f.log_level:
                self.exit_kind = "exit-code"
        else:
            if f.scope in ("ranks", "rank0", "cxx") and f.phase != "serving":
                if c.gen == "v06":
                    lines = K.tb(K.import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "raise RuntimeError(")])) + [
                        "RuntimeError: Engine process failed to start. See stack trace for the root cause."]
                else:
                    fc = "{'EngineCore_DP0': 1}" if c.gen in ("v011", "v033") else "{}"
                    lines = K.tb(K.import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)"),
                                                                        ("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "async_llm = AsyncLLM.from_vllm_config(", True),
                                                                        ("vllm/v1/engine/core_client.py", "__init__", "with launch_core_engines(vllm_config, executor_class,"),
                                                                        ("vllm/v1/engine/utils.py", "wait_for_engine_startup", "raise RuntimeError(\"Engine core initialization failed. \"")])) + [
                        f"RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {fc}"]
                em.adv(0.5, 3)
                for ln in lines:
                    em.bare(ln, proc="api")
            elif f.phase == "serving" or f.scope in ("kernel", "cxx"):
                em.vl_multi("ERROR", "async_llm.py", ["AsyncLLM output_handler failed."] + K.tb(c.frames([("vllm/v1/engine/async_llm.py", "output_handler", "outputs = await engine_core.get_output_async()"),
                                                                                                        ("vllm/v1/engine/core_client.py", "get_output_async", "raise self._format_exception(outputs) from None")])) +
                            ["vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause."], "api", tag_line="")
                for _ in range(r.randint(0, 3)):
                    em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error")
                em.uv("INFO", "Shutting down")
                em.uv("INFO", "Waiting for application shutdown.")
                em.uv("INFO", "Application shutdown complete.")
                em.uv("INFO", f"Finished server process [{st.api_pid}]")
            if r.random() < 0.35:
                em.bare(f"/usr/lib/python{c.py}/multiprocessing/resource_tracker.py:{r.choice([254, 279, 301])}: UserWarning: resource_tracker: There appear to be {r.randint(1, 3)} leaked shared_memory objects to clean up at shutdown")
                em.bare("  warnings.warn('resource_tracker: There appear to be %d '")
            self.exit_kind = "oom-kill" if f.scope == "kernel" else "exit-code"
        if f.label == "hang.timeout" and r.random() < 0.3 and f.scope != "systemd":
            em.adv(1, 30)
            em.bare("^CTraceback (most recent call last):" if not c.journald else "Traceback (most recent call last):", proc="api")
            for ln in c.frames([(f"{c.sp}/sglang/srt/entrypoints/http_server.py" if c.server == "sglang" else f"{c.sp}/vllm/entrypoints/cli/serve.py", "launch_server" if c.server == "sglang" else "cmd", "uvicorn.run(" if c.server == "sglang" else "uvloop.run(run_server(args))"),
                                (f"/usr/lib/python{c.py}/threading.py", "wait", "signaled = self._cond.wait(timeout)")]) + ["KeyboardInterrupt"]:
                em.bare(ln, proc="api")


def worker_traceback(c: Ctx, exc: list[str], phase: str) -> list[str]:
    """The same error as seen from a vLLM multiproc worker: the frames above
    the GPU worker come from ``WorkerProc`` instead of the engine core."""
    cut = next((i for i, ln in enumerate(exc) if "vllm/v1/worker/gpu_worker.py" in ln), None)
    if cut is None or not exc or not exc[0].startswith("Traceback"):
        return exc
    if phase == "serving":
        top = c.frames([("vllm/v1/executor/multiproc_executor.py", "worker_busy_loop", "output = func(*args, **kwargs)", True)])
    else:
        call = next((ln.strip() for ln in exc[cut - 4:cut] if "collective_rpc(" in ln), 'self.collective_rpc("load_model")')
        meth = call.split('"')[1] if '"' in call else "load_model"
        top = c.frames([("vllm/v1/executor/multiproc_executor.py", "worker_main", "worker = WorkerProc(*args, **kwargs)", True),
                        ("vllm/v1/executor/multiproc_executor.py", "__init__", f"self.worker.{meth}()")])
    return [exc[0]] + top + exc[cut:]


# ---------------------------------------------------------------------------- systemd wrapper


def sd(em: Emitter, st: LogState, text: str, unit_prefix: bool = True, tag: str = "") -> None:
    em.add(f"{st.unit}: {text}" if unit_prefix else text, src="systemd", pid=1, tag=tag)


def build_log(rng: Random, label: str | None, renderer: str, healthy_end: str = "") -> tuple[LogState, dict]:
    c = make_ctx(rng, label, renderer)
    st = LogState(c=c, t=rng.uniform(1740787200, 1777507200))
    st.boot_t0 = st.t - rng.uniform(60, 3e6)
    st.tqdm_nl = rng.random() < 0.35
    st.ms = c.server == "sglang" and c.gen == "new" and rng.random() < 0.2
    st.tty = renderer in ("plain", "docker-compose") and rng.random() < 0.12
    st.unit = rng.choice(["sglang.service", "sglang-server.service", "llm.service"]) if c.server == "sglang" else rng.choice(["vllm.service", "vllm-openai.service", "llm.service"])
    st.unit_desc = {"sglang": rng.choice(["SGLang server", "SGLang inference server", "LLM inference (SGLang)"]),
                    "vllm": rng.choice(["vLLM OpenAI server", "vLLM server", "LLM inference (vLLM)"])}[c.server]
    unit_fmt = rng.choice(["combined", "combined", "description", "name"])
    unit_name = {"combined": f"{st.unit} - {st.unit_desc}", "description": st.unit_desc, "name": st.unit}[unit_fmt]
    em0 = Emitter(st)
    info: dict = {"ctx": c, "runs": 1}
    # Half the failures speak the programs' own wording (catalogue, signature examples).
    failure = reword(c, BUILDERS[label](c), 0.5) if label else None
    precursor = None
    if failure and failure.precursor and rng.random() < 0.85:
        precursor = failure.precursor
        if precursor.style in ("kernel", "systemd") and not c.journald:
            precursor = None
    info["failure"] = failure
    info["precursor"] = precursor
    stop_at = None
    if healthy_end == "starting":
        stop_at = rng.choice(["load-weights", "memory-plan", "cuda-graph-capture", "warmup", "ready", "serving"][:6])
    if c.journald:
        sd(em0, st, f"Starting {unit_name}...", unit_prefix=False)
        st.t += rng.uniform(0.01, 0.3)
        if failure and precursor and precursor.style == "systemd":
            pass
        sd(em0, st, f"Started {unit_name}.", unit_prefix=False)
    run = Run(st, failure, stop_at, precursor)
    if failure and precursor and precursor.style == "systemd":
        run.maybe_precursor("launch")
    outcome = run.run()
    em = run.em
    info["outcome"] = outcome
    if outcome == "failed":
        # systemd's view of the death
        kind = getattr(run, "exit_kind", "exit-code")
        if c.journald:
            em.adv(0.05, 2)
            if kind == "oom-kill":
                for s in failure.systemd:
                    sd(em, st, s, tag="fatal" if failure.fatal in s else "")
                sd(em, st, "Main process exited, code=killed, status=9/KILL")
                sd(em, st, "Failed with result 'oom-kill'.", tag="fatal" if "oom-kill" in failure.fatal else "")
            elif kind == "signal":
                sd(em, st, "Main process exited, code=killed, status=9/KILL")
                sd(em, st, "Failed with result 'signal'.")
            elif kind == "timeout":
                sd(em, st, f"Killing process {st.main_pid} (python3) with signal SIGKILL.") if rng.random() < 0.4 else None
                sd(em, st, "Failed with result 'timeout'.")
                sd(em, st, f"Failed to start {unit_name}.", unit_prefix=False)
            else:
                sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
                sd(em, st, "Failed with result 'exit-code'.")
            if rng.random() < 0.4:
                sd(em, st, f"Consumed {rng.randint(0, 40)}min {rng.uniform(0, 59):.3f}s CPU time.")
        # restart and a second run
        if rng.random() < 0.22 and c.tp <= 2 and renderer != "json":
            info["runs"] = 2
            em.adv(5, 30)
            if c.journald:
                reboot = rng.random() < 0.25
                if reboot:
                    st.boot += 1
                    em.adv(60, 600)
                    st.boot_t0 = st.t - rng.uniform(20, 60)
                    sd(em, st, f"Starting {unit_name}...", unit_prefix=False)
                    info["reboot"] = True
                else:
                    sd(em, st, "Scheduled restart job, restart counter is at 1.")
                    sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
                sd(em, st, f"Started {unit_name}.", unit_prefix=False)
            second_fails = rng.random() < 0.6
            run2 = Run(st, failure if second_fails else None, None if second_fails else rng.choice(["load-weights", "memory-plan", "cuda-graph-capture"]), None)
            run2.pre_done = True
            o2 = run2.run()
            if o2 == "failed" and c.journald:
                k2 = getattr(run2, "exit_kind", "exit-code")
                em.adv(0.05, 2)
                if k2 == "signal":
                    sd(em, st, "Main process exited, code=killed, status=9/KILL")
                    sd(em, st, "Failed with result 'signal'.")
                elif k2 == "oom-kill":
                    sd(em, st, "Main process exited, code=killed, status=9/KILL")
                    sd(em, st, "Failed with result 'oom-kill'.")
                else:
                    sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
                    sd(em, st, "Failed with result 'exit-code'.")
    elif outcome == "ready" and healthy_end == "shutdown":
        em.adv(30, 3000)
        st.phase = "shutdown"
        if c.journald:
            sd(em, st, f"Stopping {unit_name}...", unit_prefix=False)
        em.adv(0.01, 0.5)
        if c.server == "sglang":
            em.uv("INFO", "Shutting down")
            em.uv("INFO", "Waiting for application shutdown.")
            em.uv("INFO", "Application shutdown complete.")
            em.uv("INFO", f"Finished server process [{st.main_pid}]")
        else:
            em.uv("INFO", "Shutting down")
            em.uv("INFO", "Waiting for application shutdown.")
            em.uv("INFO", "Application shutdown complete.")
            if c.tp > 1 and c.gen != "v06":
                run.vlog_ranks("INFO", "multiproc_executor.py", lambda i: "Parent process exited, terminating worker", [1] if c.tp > 1 else [0])
        if c.journald:
            em.adv(0.5, 5)
            sd(em, st, "Deactivated successfully.")
            sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
            if rng.random() < 0.6:
                sd(em, st, f"Consumed {rng.randint(1, 600)}min {rng.uniform(0, 59):.3f}s CPU time.")
        info["outcome"] = "ready"
    return st, info


# ---------------------------------------------------------------------------- rendering


def journald_split(recs: list[Rec]) -> list[Rec]:
    """What journald stores: trailing whitespace stripped, empty lines dropped."""
    out = []
    for rc in recs:
        t = rc.text.rstrip(" \t\r\n")
        if not t:
            continue
        out.append(Rec(rc.t, t, rc.src, rc.pid, rc.phase, rc.tag, rc.boot, rc.stream))
    return out


def fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    for unit, div in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3)):
        if n < div * 1024 or unit == "G":
            return f"{n / div:.1f}{unit}"
    return f"{n}B"


def printable(s: str) -> bool:
    for ch in s:
        o = ord(ch)
        if (o < 32 and ch not in "\n\t") or o == 127 or 0xDC80 <= o <= 0xDCFF:
            return False
    return True


def render(st: LogState, renderer: str, rng: Random) -> tuple[list[str], list[Rec]]:
    """Returns output lines (without newline) and, per line, the record it came from."""
    c = st.c
    recs = st.recs
    ident = rng.choice(["python3", "python3", "python", f"python{c.py}", "sglang" if c.server == "sglang" else "vllm"])
    per_child_pid = rng.random() < 0.3
    lines: list[str] = []
    owners: list[Rec] = []
    if renderer == "plain":
        for rc in recs:
            if rc.src != "app":
                continue
            lines.append(rc.text)
            owners.append(rc)
        return lines, owners
    if renderer in ("docker-compose", "docker-ts", "k8s-cri"):
        svc = rng.choice(["sglang-1", "sglang_1", "llm-1", "sglang-server-1"]) if c.server == "sglang" else rng.choice(["vllm-1", "vllm_1", "backend-vllm-openai-1", "vllm-openai-1"])
        pad = max(len(svc), rng.choice([len(svc), len(svc) + 2]))
        zone = rng.choice(["Z", "+00:00", "+08:00", "+02:00"])
        off = {"Z": 0, "+00:00": 0, "+08:00": 8 * 3600, "+02:00": 7200}[zone]
        for rc in recs:
            if rc.src != "app":
                continue
            body = rc.text
            if renderer == "docker-compose":
                lines.append(f"{svc.ljust(pad)}  | {body}")
            else:
                ns = int((rc.t % 1) * 1e9)
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(rc.t + off)) + f".{ns:09d}"
                if renderer == "docker-ts":
                    lines.append(f"{stamp}Z {body}")
                else:
                    lines.append(f"{stamp}{zone} {rc.stream} F {body}")
            owners.append(rc)
        return lines, owners
    jrecs = journald_split(recs)
    boot_ids = [rng.randbytes(16).hex() for _ in range(max(r.boot for r in jrecs) + 2)] if jrecs else []
    if renderer == "json":
        machine = rng.randbytes(16).hex()
        stream_id = rng.randbytes(16).hex()
        inv = rng.randbytes(16).hex()
        seq = rng.randint(10 ** 5, 10 ** 7)
        full_fields = rng.random() < 0.3
        for rc in jrecs:
            seq += 1
            rt = int(rc.t * 1e6)
            mono = int((rc.t - st.boot_t0) * 1e6)
            bid = boot_ids[rc.boot]
            msg = rc.text
            raw = msg.encode("utf-8", "surrogateescape")
            if len(b"MESSAGE") + 1 + len(raw) >= 4096:
                mval = None
            elif not printable(msg) or "\x1b" in msg:
                mval = list(raw)
            else:
                mval = msg
            o = {"__CURSOR": f"s={stream_id};i={seq:x};b={bid};m={mono:x};t={rt:x};x={rng.randbytes(8).hex()}",
                 "__REALTIME_TIMESTAMP": str(rt), "__MONOTONIC_TIMESTAMP": str(mono), "_BOOT_ID": bid, "_HOSTNAME": c.host}
            if full_fields:
                o["_MACHINE_ID"] = machine
            if rc.src == "kernel":
                o.update({"_TRANSPORT": "kernel", "SYSLOG_IDENTIFIER": "kernel", "SYSLOG_FACILITY": "0", "PRIORITY": rng.choice(["3", "4", "6"]), "MESSAGE": mval,
                          "_SOURCE_MONOTONIC_TIMESTAMP": str(mono - rng.randint(1, 999))})
            elif rc.src == "systemd":
                o.update({"_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "_COMM": "systemd", "_EXE": "/usr/lib/systemd/systemd",
                          "_SYSTEMD_UNIT": "init.scope", "UNIT": st.unit, "SYSLOG_FACILITY": "3", "PRIORITY": rng.choice(["6", "5", "4"]), "CODE_FILE": "src/core/unit.c",
                          "_UID": "0", "_GID": "0", "MESSAGE": mval})
            else:
                pid = rc.pid if per_child_pid else st.main_pid
                o.update({"_TRANSPORT": "stdout", "SYSLOG_IDENTIFIER": ident, "_PID": str(pid), "_COMM": ident[:15],
                          "_SYSTEMD_UNIT": st.unit, "_STREAM_ID": stream_id, "PRIORITY": "6", "SYSLOG_FACILITY": "3", "_UID": "0", "MESSAGE": mval})
                if full_fields:
                    o.update({"_EXE": f"/usr/bin/python{c.py}", "_SYSTEMD_CGROUP": f"/system.slice/{st.unit}", "_SYSTEMD_SLICE": "system.slice",
                              "_SYSTEMD_INVOCATION_ID": inv, "_GID": "0"})
            keys = list(o)
            rng.shuffle(keys)
            lines.append(json.dumps({k: o[k] for k in keys}, ensure_ascii=False, separators=(",", ":")))
            owners.append(rc)
        return lines, owners
    if renderer == "cat":
        for rc in jrecs:
            lines.append(rc.text)
            owners.append(rc)
        return lines, owners
    # short family
    iso_colon = rng.random() < 0.5
    prev_boot = jrecs[0].boot if jrecs else 0
    header_old = rng.random() < 0.15
    if header_old and jrecs:
        t0, t1 = jrecs[0].t - rng.uniform(1e4, 1e7), jrecs[-1].t
        f = lambda t: time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
        lines.append(rng.choice([f"-- Logs begin at {f(t0)}, end at {f(t1)}. --", f"-- Journal begins at {f(t0)}, ends at {f(t1)}. --"]))
        owners.append(Rec(0, "", "marker"))
    for rc in jrecs:
        if rc.boot != prev_boot:
            lines.append(f"-- Boot {boot_ids[rc.boot]} --")
            owners.append(Rec(rc.t, "", "marker"))
            prev_boot = rc.boot
        t = rc.t
        us = int(round((t % 1) * 1e6)) % 1000000
        if renderer == "short":
            stamp = time.strftime("%b %d %H:%M:%S", time.gmtime(t))
        elif renderer == "short-precise":
            stamp = time.strftime("%b %d %H:%M:%S", time.gmtime(t)) + f".{us:06d}"
        elif renderer == "short-iso":
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ("+00:00" if iso_colon else "+0000")
        elif renderer == "short-iso-precise":
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{us:06d}" + ("+00:00" if iso_colon else "+0000")
        elif renderer == "short-full":
            stamp = time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
        elif renderer == "short-unix":
            stamp = f"{int(t)}.{us:06d}"
        else:  # short-monotonic
            m = t - st.boot_t0
            stamp = f"[{int(m):5d}.{int((m % 1) * 1e6):06d}]"
        if rc.src == "kernel":
            who = "kernel"
        elif rc.src == "systemd":
            who = "systemd[1]"
        else:
            who = f"{ident}[{rc.pid if per_child_pid else st.main_pid}]"
        msg = ANSI_RE.sub("", rc.text).replace("\t", "        ")
        raw = rc.text.encode("utf-8", "surrogateescape")
        if not printable(msg):
            msg = f"[{fmt_bytes(len(raw))} blob data]"
        lines.append(f"{stamp} {c.host} {who}: {msg}")
        owners.append(rc)
    return lines, owners


# ---------------------------------------------------------------------------- decoding (for survival checks)


def decoded_lines(data: bytes, renderer: str) -> list[str]:
    text = data.decode("utf-8", "replace")
    out = []
    for ln in text.split("\n"):
        if renderer == "json" and ln.startswith("{"):
            try:
                o = json.loads(ln)
                m = o.get("MESSAGE")
                if isinstance(m, list):
                    m = bytes(m).decode("utf-8", "replace")
                ln = m or ""
            except ValueError:
                pass
        out.append(ANSI_RE.sub("", ln))
    return out


def survives(sub: str, data: bytes, renderer: str) -> bool:
    if not sub:
        return False
    return any(sub in ln for ln in decoded_lines(data, renderer))


# ---------------------------------------------------------------------------- cuts

MAX_BYTES = 16000
GREP_RE = re.compile(r"error|assert|traceback|fatal", re.I)


def apply_cut(lines: list[str], owners: list[Rec], rng: Random, fatal: str, failed: bool, renderer: str = "") -> tuple[bytes, str, list[Rec]]:
    n = len(lines)
    choice = rng.choices(["none", "tail", "head-c", "grep"], weights=[62, 20, 10, 8] if failed else [75, 18, 7, 0])[0]
    fatal_idx = [i for i, o in enumerate(owners) if o.tag == "fatal"]
    if renderer == "json":
        choice = "tail"     # `journalctl -o json -n N`: JSON exports are usually windows
    if choice == "tail":
        k = rng.randint(30, 200) if renderer != "json" else rng.randint(20, 35)
        if failed and fatal_idx:
            k = max(k, n - fatal_idx[0] + rng.randint(0, 20))
        if k < n:
            sel = lines[-k:]
            return ("\n".join(sel) + "\n").encode("utf-8", "surrogateescape"), f"tail-n{k}", owners[-k:]
    if choice == "grep" and failed:
        idx = [i for i, ln in enumerate(lines) if GREP_RE.search(ln)]
        if idx and any(fatal in lines[i] for i in idx):
            return ("\n".join(lines[i] for i in idx) + "\n").encode("utf-8", "surrogateescape"), "grep-iE", [owners[i] for i in idx]
    full = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    if choice == "head-c":
        if failed:
            last_f = max(fatal_idx) if fatal_idx else n - 1
            start = len(("\n".join(lines[:last_f + 1]) + "\n").encode("utf-8", "surrogateescape"))
            if start < len(full) - 10:
                cut = rng.randint(start + 5, len(full) - 2)
                return full[:cut], f"head-c{cut}", owners
        else:
            cut = rng.randint(len(full) // 3, len(full) - 2)
            # keep track of owners whose line starts before the cut
            pos, keep = 0, []
            for ln, o in zip(lines, owners):
                if pos >= cut:
                    break
                keep.append(o)
                pos += len(ln.encode("utf-8", "surrogateescape")) + 1
            return full[:cut], f"head-c{cut}", keep
    return full, "none", owners


# ---------------------------------------------------------------------------- real exception splicing


def load_real_blocks(roots: list[Path], seed: int) -> dict[str, list[dict]]:
    """Exception blocks from reproduced real failures (TRAIN split only)."""
    out: dict[str, list[dict]] = {}
    for root in roots:
        lab = root / "labels.csv"
        if not lab.exists():
            continue
        with lab.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            split = row.get("split") or ("train" if split_of(seed, f"{root.name}/{row.get('id')}", 0.75) else "test")
            if split != "train" or not row.get("root_cause") or not row.get("fatal_substring"):
                continue
            p = root / f"{row['id']}.log"
            if not p.exists():
                continue
            text = ANSI_RE.sub("", p.read_bytes().decode("utf-8", "replace"))
            lns = [ln.rstrip("\r") for ln in text.split("\n")]
            hit = next((i for i, ln in enumerate(lns) if row["fatal_substring"] in ln), None)
            if hit is None:
                continue
            start = hit
            for j in range(hit, max(-1, hit - 80), -1):
                if "Traceback (most recent call last)" in lns[j]:
                    start = j
                    break
            end = hit + 1
            while end < len(lns) and end < hit + 6 and lns[end].strip() and not lns[end].startswith("["):
                end += 1
            block = lns[start:end][-70:]
            out.setdefault(row["root_cause"], []).append({"src": f"{root.parent.name}/{root.name}/{row['id']}", "lines": block, "fatal": row["fatal_substring"]})
    return out


def split_of(seed: int, key: str, frac: float) -> bool:
    h = int(hashlib.sha256(f"{seed}|{key}".encode()).hexdigest()[:12], 16)
    return (h % 10000) / 10000 < frac


# ---------------------------------------------------------------------------- corpus


def generate_one(seed: int, idx: int, label: str | None, healthy_end: str, real: dict[str, list[dict]] | None = None) -> tuple[bytes, dict]:
    for attempt in range(40):
        rng = Random(f"{seed}:{idx}:{attempt}")
        renderer = rng.choices(RENDERERS, weights=RENDER_WEIGHTS)[0]
        st, info = build_log(rng, label, renderer, healthy_end)
        spliced = ""
        f: Failure | None = info["failure"]
        if f and real and real.get(label) and info["precursor"] is None and rng.random() < 0.4:
            blk = pick(rng, real[label])
            spliced = blk["src"]
            fatal_recs = [i for i, rc in enumerate(st.recs) if rc.tag == "fatal"]
            if fatal_recs:
                pos = fatal_recs[-1] + 1
                t = st.recs[fatal_recs[-1]].t
                new = [Rec(t + 0.001 * k, ln, "app", st.main_pid, f.phase, "fatal" if blk["fatal"] in ln else "", st.recs[fatal_recs[-1]].boot) for k, ln in enumerate(blk["lines"])]
                st.recs[pos:pos] = new
                f.fatal = blk["fatal"]
        lines, owners = render(st, renderer, rng)
        if sum(1 for _ in lines) > 420 or len(lines) < 25:
            continue
        failed = info["outcome"] == "failed"
        data, cut, kept = apply_cut(lines, owners, rng, f.fatal if f else "", failed, renderer)
        if len(data) > (MAX_BYTES if renderer != "json" else 3 * MAX_BYTES) and attempt < 25:
            continue    # keep the corpus small: prefer another draw over a huge log
        c = st.c
        row = {"renderer": renderer, "cut": cut, "server": f"{c.server}-{c.version}", "tp": c.tp, "gpu": c.gpu.short, "runs": info["runs"]}
        if failed:
            if not survives(f.fatal, data, renderer):
                continue
            pre = info["precursor"]
            ew = pre.substring if pre else ""
            if ew and not survives(ew, data, renderer):
                ew = ""
            row.update(root_cause=f.label, phase=f.phase, early_warning_substring=ew, fatal_substring=f.fatal, verdict="failed", variant=f.variant)
        else:
            if label:
                continue
            phases = [o.phase for o in kept if o.src == "app" and o.phase]
            tags = {o.tag for o in kept}
            last = phases[-1] if phases else "launch"
            if any(o.phase == "shutdown" for o in kept):
                last = "shutdown"
            ready = bool(tags & {"ready", "serving"}) or last in ("serving", "shutdown")
            row.update(root_cause="", phase=last, early_warning_substring="", fatal_substring="", verdict="ready" if ready else "starting", variant=healthy_end)
        row["spliced"] = spliced
        row["attempt"] = attempt
        return data, row
    raise RuntimeError(f"could not generate log {idx} ({label})")


def generate_corpus(seed: int, count_per_label: int, healthy: int, out_dir: Path, splice_real: list[Path] | None = None) -> list[dict]:
    """Write ``<id>.log`` files and ``labels.csv`` into ``out_dir``; return the label rows."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.log"):
        old.unlink()
    real = load_real_blocks(splice_real, seed) if splice_real else None
    plan: list[tuple[str | None, str]] = []
    for lab in LABELS:
        plan += [(lab, "")] * count_per_label
    ends = ["ready"] * 0
    hr = Random(f"{seed}:healthy-plan")
    for i in range(healthy):
        x = i / max(1, healthy)
        ends.append("ready" if x < 0.55 else ("shutdown" if x < 0.78 else "starting"))
    hr.shuffle(ends)
    plan += [(None, e) for e in ends]
    Random(f"{seed}:order").shuffle(plan)
    rows = []
    for idx, (label, end) in enumerate(plan):
        data, row = generate_one(seed, idx, label, end, real)
        gid = f"g{seed}-{idx:04d}"
        atomic_write_bytes(out_dir / f"{gid}.log", data, fsync=False)
        row["id"] = gid
        rows.append(row)
    # stratified split by seeded hash
    by: dict[str, list[dict]] = {}
    for row in rows:
        by.setdefault(row["root_cause"] or "healthy", []).append(row)
    for grp in by.values():
        grp.sort(key=lambda rw: hashlib.sha256(f"{seed}|split|{rw['id']}".encode()).hexdigest())
        ntrain = round(len(grp) * 0.75)
        for k, rw in enumerate(grp):
            rw["split"] = "train" if k < ntrain else "test"
    cols = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note", "verdict", "split"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        note = (f"seed={seed}; renderer={row['renderer']}; cut={row['cut']}; server={row['server']}; tp={row['tp']}; gpu={row['gpu']}; runs={row['runs']}"
                + (f"; variant={row['variant']}" if row.get("variant") else "") + (f"; spliced={row['spliced']}" if row.get("spliced") else ""))
        row["provenance"] = "generated"
        row["note"] = note
        w.writerow([row["id"], row["root_cause"], row["phase"], row["early_warning_substring"], row["fatal_substring"], "generated", note, row["verdict"], row["split"]])
    atomic_write_text(out_dir / "labels.csv", buf.getvalue())
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.generator.generate", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-label", type=int, default=40)
    ap.add_argument("--healthy", type=int, default=110)
    ap.add_argument("--out", type=Path, default=Path("corpora/generated"))
    ap.add_argument("--splice-real", type=Path, nargs="*", default=None,
                    help="folders with <id>.log + labels.csv of reproduced real failures (e.g. corpora/cpu corpora/gpu); "
                         "exception blocks from their TRAIN split are spliced into some generated logs")
    a = ap.parse_args(argv)
    rows = generate_corpus(a.seed, a.per_label, a.healthy, a.out, a.splice_real)
    size = sum(p.stat().st_size for p in Path(a.out).glob("*.log"))
    print(f"wrote {len(rows)} logs ({size / 1e6:.2f} MB) and labels.csv to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
