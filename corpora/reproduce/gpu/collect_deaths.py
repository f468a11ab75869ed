"""Copy run_deaths.sh's logs into corpora/gpu, corpora/gpu-early-warning and corpora/gpu-pairs and add
their rows to labels.csv / pairs.csv (rows already there are left alone).

usage: python corpora/reproduce/gpu/collect_deaths.py LOGS
       LOGS: a folder with run d1's logs as d1-<id>.log and run d2's as d2-<id>.log (from the two
       deaths-logs.tar.gz), and each run's kernel log tail as d1-dmesg.txt / d2-dmesg.txt.
The labels below were written from reading the logs, before running forensics on them. Every
substring is checked: fatal and early warning in the failing log (the warning's line first), and
the fatal line not in the good twin. Logs are copied byte for byte; the two kernel logs are the
last whole lines of dmesg (see KMSG).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_jit import C, add_labels, check, copy_failures, write_pairs  # noqa: E402

SC = "corpora/reproduce/gpu/sc/"
H200 = "run d1 of run_deaths.sh on nvidia-h200 (1x H200 143771 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, NCCL 2.28.9, CUDA 13.0)"
H100 = "run d2 of run_deaths.sh on nvidia-h100-x1 (1x H100 80GB HBM3 81559 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, NCCL 2.28.9, CUDA 13.0)"
H100_D3 = H100.replace("run d2", "run d3")
RUN = {"d1": H200, "d2": H100, "d3": H100_D3}
# the kernel's own lines (dmesg tail) about the deaths of the runs: (source, corpus id, how many last lines)
KMSG = {"gpu-illegal-xid-kmsg-01": ("d1-dmesg.txt", 3), "host-oom-kmsg-01": ("d2-dmesg.txt", 6)}

# source log, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("d1-death-torchrun-record", "gpu", "config-torchrun-record-01", "config.invalid-argument", "launch", "",
     "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (3).",
     SC + "death_record_torchrun.py under torchrun --nproc-per-node 3: every worker's argument check raises, main() wrapped in "
     "torch.distributed.elastic's @record, so the ChildFailedError summary carries rank 0's traceback (exitcode 1; ranks 1, 2 -15)", "train"),
    ("d1-death-shell-notfound", "gpu", "env-shell-cmd-notfound-01", "env.module-missing", "launch", "", "vllm: command not found",
     SC + "start_server.sh (a deployment's start script) with SERVER_CMD='vllm serve ...' and a PATH without vllm: bash's "
     "'command not found', then the script's own 'server exited with status 127'; UNSURE: env.module-missing (the server's package "
     "or its entry point is not installed / not on PATH), alternative unknown", "test"),
    ("d2-death-shell-oomkill", "gpu", "host-oom-shell-killed-01", "host.out-of-memory", "load-weights", "",
     "line 6:   500 Killed                  $SERVER_CMD",
     SC + "start_server.sh running death_hostmem_sglang.py (8 x 1 GiB of host memory) in a cgroup v2 with memory.max=3G: the kernel's "
     "OOM killer SIGKILLs it at shard 3 (memory.events oom_kill 1; dmesg 'Memory cgroup out of memory: Killed process'), bash "
     "reports 'Killed', the script 'status 137'; UNSURE: the log itself shows only the SIGKILL, not who sent it", "train"),
    ("d2-death-torchrun-oomkill", "gpu", "host-oom-torchrun-sigkill-01", "host.out-of-memory", "load-weights", "",
     "Signal 9 (SIGKILL) received by PID 582",
     SC + "death_hostmem_sglang.py under torchrun --nproc-per-node 1, the whole launcher in a cgroup with memory.max=3G: the "
     "worker (largest RSS) is killed by the cgroup OOM killer (this run's dmesg: 'Killed process 582 (python3)'); ChildFailedError "
     "exitcode -9; UNSURE as host-oom-shell-killed-01: the log shows only the signal", "test"),
    ("d1-host-memerror-ulimit", "gpu", "host-oom-memerror-ulimit-01", "host.out-of-memory", "load-weights", "", "MemoryError",
     SC + "death_hostmem_sglang.py under `ulimit -v 4000000` (4 GB address space): Python's MemoryError at the 4th 1-GiB shard, "
     "reported as SGLang does (Scheduler hit an exception)", "train"),
    ("d1-cuda-init-ulimit", "gpu", "host-oom-cuda-init-ulimit-01", "host.out-of-memory", "load-weights", "",
     "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
     "that might have already set an error? Error 2: out of memory",
     SC + "cuda_init_ulimit_vllm.py under `ulimit -v 16000000`: CUDA's initialisation cannot reserve its virtual address range "
     "and torch reports 'Error 2: out of memory' from cudaGetDeviceCount on an empty GPU; vLLM-shaped wrapper; UNSURE: label "
     "host.out-of-memory (a host address-space limit), alternatives gpu.out-of-memory (the words) or env.driver-too-old (no "
     "GPU usable)", "train"),
    ("d1-death-mp-devassert", "gpu", "gpu-illegal-devassert-mp-01", "gpu.illegal-access", "serving", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered",
     SC + "death_mp_spawn.py MODE=devassert: two workers under torch.multiprocessing.spawn; worker 0's embedding gets token id "
     "32011 of a 32000-row table (128 'vectorized gather kernel index out of bounds' assert lines), the parent raises "
     "ProcessRaisedException with the worker's traceback; twin corpora/gpu-pairs/gpu-pair-mp-spawn-good.log", "train"),
    ("d1-death-mp-illegal", "gpu", "gpu-illegal-mp-01", "gpu.illegal-access", "serving", "",
     "torch.AcceleratorError: CUDA error: operation not supported on global/shared address space",
     SC + "death_mp_spawn.py MODE=illegal: worker 0 runs a Triton scatter with overflowed indices; the fault (cudaErrorInvalidAddressSpace, "
     "717) surfaces at the next .item(); the parent's ProcessRaisedException; the kernel logged Xid 13 and 31 for it "
     "(gpu-illegal-xid-kmsg-01); twin gpu-pair-mp-spawn-good.log", "test"),
    ("d2-death-torchrun-watchdog-bad", "gpu", "dist-gloo-barrier-timeout-01", "dist.nccl", "warmup", "",
     "Timed out waiting 30000ms for recv operation to complete",
     SC + "death_watchdog_torchrun.py MODE=bad, torchrun --nproc-per-node 2 on ONE GPU (gloo world group, one one-rank NCCL group "
     "per rank): rank 0's stream is busy in a 150 s kernel (torch.cuda._sleep) when its all_reduce is queued; torch 2.11's NCCL "
     "watchdog does NOT fire (run d1: 15 s NCCL timeout, 90 s kernel, nothing printed), rank 1's gloo barrier times out after 30 s, "
     "torchrun stops rank 0 (-15) and reports rank 1 (exitcode 1); UNSURE: dist.nccl (a collective timed out), alternative "
     "hang.timeout (rank 0 hung in a kernel); twin corpora/gpu-pairs/gpu-pair-torchrun-stuck-rank-good.log", "train"),
    ("d2-death-torchrun-initwait", "gpu", "hang-nccl-init-timeout-01", "hang.timeout", "launch", "",
     "timeout: sending signal TERM to command",
     SC + "death_watchdog_torchrun.py MODE=initwait under `timeout --verbose 100` and torchrun --nproc-per-node 2: one two-rank NCCL "
     "group, TORCH_NCCL_USE_COMM_NONBLOCKING=1, 20 s group timeout; rank 0 enters the first all_reduce (communicator init) while "
     "rank 1 is still 'loading weights' (300 s): nothing at all is printed for 90 s (no NCCL or torch timeout fired), then timeout's "
     "TERM, torchrun's 'Received 15 death signal' and SignalException", "test"),
    ("d2-death-torchrun-segv", "gpu", "unknown-segv-torchrun-01", "unknown", "launch", "", "Fatal Python error: Segmentation fault",
     SC + "death_segv_torchrun.py under torchrun --nproc-per-node 2: rank 1 reads address 0x10 through ctypes while 'Initializing "
     "custom all-reduce buffers' (standing for a native extension's bad handle); faulthandler's stack, rank 0's gloo barrier 'Connection "
     "closed by peer', ChildFailedError exitcode -11 (SIGSEGV); UNSURE: no taxonomy label names a host segfault (unknown); "
     "alternative env.abi-mismatch where an extension crashes on load", "train"),
    ("d2-hang-ext-lock-bad", "gpu", "hang-ext-lock-01", "hang.timeout", "kernel-jit", "", "timeout: sending signal TERM to command",
     SC + "hang_ext_lock_sglang.py STALE_LOCK=1 under `timeout --verbose 45`: the op's torch extension build folder holds the 'lock' "
     "of an earlier killed build, torch's FileBaton waits for it silently after 'Using ... as PyTorch extensions root...'; 45 s "
     "later timeout's TERM ends the start (rc 124); twin corpora/gpu-pairs/gpu-pair-ext-stale-lock-good.log", "train"),
    ("d2-gpu-oom-fragment-expandable", "gpu", "gpu-oom-fragment-02", "gpu.out-of-memory", "memory-plan",
     "Warm-up end. allocated=21.34 GB, reserved=63.03 GB",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 17.82 GiB.",
     SC + "oom_fragment_sglang.py with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (what torch's OOM message advises) and the "
     "same fragmenting warm-up as gpu-ew-oom-fragment: it still fails (the freed holes stay mapped), and the message still "
     "advises expandable_segments; early warning MODERATE (the warm-up's figures, printed by the wrapper from torch's "
     "memory_allocated/memory_reserved/mem_get_info: reserved 3x allocated, 15.63 GB free, then a 2 x 17.82 GB ask)", "test"),
    ("d2-arch-list-wgmma-90", "gpu", "tc-compile-ptxas-arch-list-01", "toolchain.compile-failed", "kernel-jit", "",
     "Instruction 'wgmma.fence' not supported on .target 'sm_90'",
     SC + "ew_arch_list_ext.py KERNEL=wgmma TORCH_CUDA_ARCH_LIST=9.0: a JIT-built op with a Hopper-only (sm_90a) instruction built for "
     "plain sm_90: ptxas error, ninja stops, 'Error building extension'; torch 2.11 printed no TORCH_CUDA_ARCH_LIST warning in any "
     "run (with the list unset it picked compute_90a itself: the twin builds); UNSURE: alternative config.invalid-argument (the arch "
     "list); twin corpora/gpu-pairs/gpu-pair-arch-list-sm90-good.log", "train"),
    ("d2-gpu-oom-fragment-bad", "gpu-early-warning", "gpu-ew-oom-fragment", "gpu.out-of-memory", "memory-plan",
     "Warm-up end. allocated=21.34 GB, reserved=69.97 GB",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 17.82 GiB.",
     SC + "oom_fragment_sglang.py MEM_FRAC=0.45: a warm-up leaves one live 6 MiB block in each 20 MiB segment (reserved 69.97 GB, "
     "allocated 21.34 GB, 8.69 GB free), then the KV pool asks 2 x 17.82 GB: OOM with '48.63 GiB is reserved by PyTorch but "
     "unallocated'; early warning MODERATE: the warm-up's figures (torch's, printed by the wrapper) against the KV budget; the twin "
     "(MEM_FRAC=0.08) prints the same figures and fits 2 x 3.17 GB: the budget decides; twin "
     "corpora/gpu-pairs/gpu-pair-oom-fragment-good.log", "train"),
    ("d3-ew-barrier-guess-bad", "gpu-early-warning", "gpu-ew-barrier-guess", "dist.nccl", "launch",
     "Guessing device ID based on global rank. This can cause a hang if rank to GPU mapping is heterogeneous",
     "NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60",
     SC + "ew_barrier_guess_torchrun.py under torchrun --nproc-per-node 2 on ONE GPU, NCCL_DEBUG=WARN: init_process_group('nccl') "
     "without device_id and no set_device, then barrier(): torch warns twice (c10d's UserWarning 'barrier(): using the device under "
     "current context', ProcessGroupNCCL's 'Guessing device ID based on global rank. This can cause a hang if rank to GPU mapping "
     "is heterogeneous'), both ranks guess GPU 0 and NCCL refuses them (ncclInvalidUsage, Duplicate GPU); early warning MODERATE: "
     "the twin (--nproc-per-node 1) prints the same warnings and passes; two ranks on one GPU decide; twin "
     "corpora/gpu-pairs/gpu-pair-barrier-guess-good.log", "test"),
]
# pair key, good source, bad source, root_cause, change, early-warning substring (new in bad), fatal substring, script
PAIRS = [
    ("torchrun-stuck-rank", "d2-death-torchrun-watchdog-good", "d2-death-torchrun-watchdog-bad", "dist.nccl",
     "MODE=bad (rank 0's stream busy in a 150 s kernel before its all_reduce) vs MODE=good; torchrun --nproc-per-node 2, one GPU", "",
     "Timed out waiting 30000ms for recv operation to complete", "death_watchdog_torchrun.py"),
    ("mp-devassert", "d1-death-mp-good", "d1-death-mp-devassert", "gpu.illegal-access",
     "MODE=devassert (token id 32011 in worker 0's batch) vs MODE=good; torch.multiprocessing.spawn, 2 workers", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered", "death_mp_spawn.py"),
    ("mp-illegal", "d1-death-mp-good", "d1-death-mp-illegal", "gpu.illegal-access",
     "MODE=illegal (Triton scatter with overflowed indices in worker 0) vs MODE=good", "",
     "torch.AcceleratorError: CUDA error: operation not supported on global/shared address space", "death_mp_spawn.py"),
    ("start-script-notfound", "d1-death-shell-good", "d1-death-shell-notfound", "env.module-missing",
     "SERVER_CMD='vllm serve ...' with vllm not on PATH vs SERVER_CMD='python3 death_hostmem_sglang.py' (4 x 1 GiB, stays up until "
     "`timeout --verbose 25` stops it)", "", "vllm: command not found", "start_server.sh"),
    ("start-script-oomkill", "d1-death-shell-good", "d2-death-shell-oomkill", "host.out-of-memory",
     "the server in a cgroup with memory.max=3G and 8 x 1 GiB shards vs no limit and 4 shards (the good run is d1 on the H200, "
     "the bad d2 on the H100)", "", "line 6:   500 Killed                  $SERVER_CMD", "start_server.sh"),
    ("ext-stale-lock", "d2-hang-ext-lock-good", "d2-hang-ext-lock-bad", "hang.timeout",
     "a stale 'lock' file in the extension's build folder vs none; both under `timeout --verbose` (45 s / 75 s): the good one builds, "
     "serves and is stopped (SIGTERM: clean shutdown lines), so timeout's line is in both: what differs is what follows it", "",
     "timeout: sending signal TERM to command", "hang_ext_lock_sglang.py"),
    ("oom-fragment", "d2-gpu-oom-fragment-good", "d2-gpu-oom-fragment-bad", "gpu.out-of-memory",
     "MEM_FRAC=0.45 (KV pool 2 x 17.82 GB) vs 0.08 (2 x 3.17 GB) after the same fragmenting warm-up; both print the same "
     "warm-up figures, so the early warning is not new in bad (see gpu-ew-oom-fragment)", "",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 17.82 GiB.", "oom_fragment_sglang.py"),
    ("arch-list-sm90", "d2-arch-list-wgmma-unset", "d2-arch-list-wgmma-90", "toolchain.compile-failed",
     "TORCH_CUDA_ARCH_LIST=9.0 vs unset (torch 2.11 then builds compute_90a/sm_90a, and prints no warning); the same wgmma kernel", "",
     "Instruction 'wgmma.fence' not supported on .target 'sm_90'", "ew_arch_list_ext.py"),
    ("barrier-guess", "d3-ew-barrier-guess-good", "d3-ew-barrier-guess-bad", "dist.nccl",
     "torchrun --nproc-per-node 2 vs 1 on one GPU, NCCL barrier with no device bound; both print torch's device-guess warnings, so "
     "the early warning is not new in bad (see gpu-ew-barrier-guess)", "",
     "NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60", "ew_barrier_guess_torchrun.py"),
    ("torchrun-oomkill", "d3-death-torchrun-hostmem-good", "d3-death-torchrun-oomkill", "host.out-of-memory",
     "the launcher in a cgroup with memory.max=3G vs no limit (8 x 1 GiB host shards either way); this pair's bad log is run d3's "
     "repeat of corpora/gpu/host-oom-torchrun-sigkill-01 (d2)", "", "Signal 9 (SIGKILL) received by PID 546",
     "death_hostmem_sglang.py"),
]
# pairs whose fatal line is in the good twin too (both stopped by `timeout`; the good one had served and shut down cleanly)
STOPPED_BOTH = {"ext-stale-lock"}
SHARED_GOOD = {"d1-death-mp-good": "gpu-pair-mp-spawn-good.log", "d1-death-shell-good": "gpu-pair-start-script-good.log"}
KMSG_ROWS = [
    ("gpu-illegal-xid-kmsg-01", "gpu.illegal-access", "serving", "", "NVRM: Xid (PCI:0000:00:06): 13, pid=764",
     "the kernel's log (dmesg, last 3 lines; the two lines before them, the GPU's PCI address/UUID and board serial, and the boot lines dropped) during run d1: Xid 43 for the device-side assert of "
     "gpu-illegal-devassert-mp-01's worker (pid 654), Xid 13 and 31 (MMU fault, FAULT_PDE) for gpu-illegal-mp-01's Triton scatter "
     "(pid 764); no server lines", "test"),
    ("host-oom-kmsg-01", "host.out-of-memory", "load-weights", "", "Memory cgroup out of memory: Killed process 582 (python3)",
     "the kernel's log (dmesg, last 6 lines: the end of the cgroup OOM report; the report's head and earlier lines dropped, the "
     "80-line tail kept by the driver began inside it) during run d2: the OOM killer of cgroup r8b kills torchrun's worker of "
     "host-oom-torchrun-sigkill-01 (pid 582); no server lines", "train"),
]


def _kmsg(logs, per):
    for cid, cause, phase, ew, fatal, note, split in KMSG_ROWS:
        src, n = KMSG[cid]
        lines = (logs / src).read_bytes().splitlines(keepends=True)[-n:]
        text = b"".join(lines).decode()
        check(text, fatal, "fatal", cid)
        (C / "gpu" / f"{cid}.log").write_bytes(b"".join(lines))
        run = src[:2]
        per["gpu"].append(dict(id=cid, root_cause=cause, phase=phase, early_warning_substring=ew, fatal_substring=fatal,
                               provenance="reproduced", note=f"{note}; {RUN[run]}", verdict="failed", split=split))


def main(logs):
    per = copy_failures(logs, ROWS, lambda src: RUN[src[:2]])
    _kmsg(logs, per)
    add_labels(per)
    write_pairs(logs, PAIRS, SHARED_GOOD, lambda good, bad: "/".join(sorted({good[:2], bad[:2]})),
                lambda key, text, fatal, ew: fatal not in text or key in STOPPED_BOTH)

if __name__ == "__main__":
    main(Path(sys.argv[1]))
