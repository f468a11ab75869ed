"""Builder for the distributed family: NCCL errors, timeouts and the watchdog."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, pick, tb
from .frames import head
from .vocab import NCCL_VERSIONS


def nccl_warn(c: Ctx, rank: int, msg: str) -> str:
    r = c.rng
    return f"{c.host}:{r.randint(1000, 99999)}:{r.randint(1000, 99999)} [{rank}] {msg}"


def f_nccl(c: Ctx) -> Failure:
    r = c.rng
    ver = pick(r, NCCL_VERSIONS)
    kind = r.choices(["unhandled-cuda", "system", "internal", "remote", "invalid-usage", "watchdog"], weights=[3, 3, 2, 2, 1, 4])[0]
    rank = r.randrange(max(2, c.tp))
    warns = {
        "unhandled-cuda": ("ncclUnhandledCudaError: Call to CUDA function failed.", [f"Cuda failure '{pick(r, ['peer access is not supported between these two devices', 'out of memory', 'invalid device ordinal', 'operation not supported'])}'"],
                           [f"transport/p2p.cc:{r.randint(200, 800)} NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
                            f"enqueue.cc:{r.randint(1000, 2000)} NCCL WARN Cuda failure 'invalid argument'"]),
        "system": ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
                   [pick(r, [f"socketStartConnect: Connect to 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}<{r.randint(30000, 65000)}> failed : Software caused connection abort",
                             "Error while creating shared memory segment /dev/shm/nccl-" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6)) + f" (size {r.randint(5, 40) * 1048576 + 5000})",
                             "NET/IB : Unable to open device mlx5_0"])],
                   [f"misc/shmutils.cc:{r.randint(50, 120)} NCCL WARN Error: failed to extend /dev/shm/nccl-abcd12 to {r.randint(5, 40) * 1048576} bytes",
                    f"misc/socket.cc:{r.randint(400, 600)} NCCL WARN socketStartConnect: Connect to 10.0.{r.randint(0, 9)}.{r.randint(1, 99)}<{r.randint(30000, 65000)}> failed : Software caused connection abort"]),
        "internal": ("ncclInternalError: Internal check failed.", [f"Proxy Call to rank {r.randrange(max(2, c.tp))} failed (Connect)"],
                     [f"proxy.cc:{r.randint(1000, 1800)} NCCL WARN [Proxy Service {rank}] Failed to execute operation Connect from rank {rank}, retcode 3"]),
        "remote": ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                   [f"NET/IB : Got completion from peer 10.0.{r.randint(0, 9)}.{r.randint(1, 99)}<{r.randint(30000, 65000)}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.{r.randint(1, 99)} remoteGidsfe80::{r.randint(1000, 9999):x}"],
                   [f"transport/net_ib.cc:{r.randint(1200, 2400)} NCCL WARN NET/IB : Got completion from peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}> with status=12 opcode=0 len=0 vendor err 129 (Recv)"]),
        "invalid-usage": ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", [f"Duplicate GPU detected : rank {rank} and rank 0 both on CUDA device {r.choice(['1000', '18000', 'e1000'])}"],
                          [f"init.cc:{r.randint(500, 1000)} NCCL WARN Duplicate GPU detected : rank {rank} and rank 0 both on CUDA device 1000"]),
    }
    pre = None
    if kind == "watchdog":
        return _watchdog(c, rank)
    err, last_err, warn_lines = warns[kind]
    phase = r.choices(["launch", "load-weights", "cuda-graph-capture", "serving"], weights=[5, 1, 2, 2])[0]
    loc = f"/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{r.choice([3356, 3690, 2010, 1970, 3414])}"
    desc = {"unhandled-cuda": "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "system": "unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "internal": "internal error - please report this issue to the NCCL developers", "remote": "remote process exited or there was a network error",
            "invalid-usage": "invalid usage (run with NCCL_DEBUG=WARN for details)"}[kind]
    tail_frames = c.frames([pick(r, [("sglang/srt/distributed/parallel_state.py" if c.server == "sglang" else "vllm/distributed/parallel_state.py", "all_reduce", "torch.distributed.all_reduce(input_, group=self.device_group)"),
                                     ("sglang/srt/distributed/parallel_state.py" if c.server == "sglang" else "vllm/distributed/parallel_state.py", "init_distributed_environment", "torch.distributed.barrier()"),
                                     ("sglang/srt/distributed/device_communicators/pynccl.py" if c.server == "sglang" else "vllm/distributed/device_communicators/pynccl.py", "__init__",
                                      "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(", True)]),
                            (f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "return func(*args, **kwargs)", True),
                            (f"{c.sp}/torch/distributed/distributed_c10d.py", "all_reduce", "work = group.allreduce([tensor], opts)", True)])
    if r.random() < 0.35:
        exc = tb(head(c, phase) + tail_frames[:-3] + c.frames([("sglang/srt/distributed/device_communicators/pynccl_wrapper.py" if c.server == "sglang" else "vllm/distributed/device_communicators/pynccl_wrapper.py",
                                                                "NCCL_CHECK", "raise RuntimeError(f\"NCCL error: {error_str}\")")])) + [
            f"RuntimeError: NCCL error: {desc.split(' (')[0]}"]
        fatal = f"NCCL error: {desc.split(' (')[0]}"
    else:
        exc = tb(head(c, phase) + tail_frames) + [
            f"torch.distributed.DistBackendError: NCCL error in: {loc}, {desc}, NCCL version {ver}", err, "Last error:"] + last_err
        fatal = "NCCL error in:" if r.random() < 0.5 else err.split(":")[0]
    pre = Precursor([nccl_warn(c, rank, w) for w in warn_lines[:1]], "NCCL WARN", "launch" if phase == "launch" else pick(r, ["launch", phase]), style="nccl", lead=(0.5, 120)) if r.random() < 0.6 else None
    if pre is None and r.random() < 0.4 and kind == "unhandled-cuda":
        pre = Precursor(["Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify --disable-custom-all-reduce explicitly."],
                        "Custom allreduce is disabled because your platform lacks GPU P2P capability", "launch", style="log" if c.server == "sglang" else "vlog", vfile="custom_all_reduce.py", lead=(5, 60))
    return Failure("dist.nccl", phase, exc, fatal, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)


def _watchdog(c: Ctx, rank: int) -> Failure:
    """ProcessGroupNCCL's watchdog times a collective out and aborts the process (C++ terminate)."""
    r = c.rng
    kind = "watchdog"
    pre = None
    op = pick(r, ["ALLREDUCE", "ALLGATHER", "_ALLGATHER_BASE", "BROADCAST", "GATHER", "_REDUCE_SCATTER_BASE"])
    seq = r.randint(2, 90000)
    to = pick(r, [600000, 1800000, 300000])
    ran = to + r.randint(1, 900)
    phase = r.choices(["serving", "load-weights", "cuda-graph-capture", "launch"], weights=[5, 1, 1, 1])[0]
    ts = f"E{r.randint(1, 12):02d}{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999999999):09d}"
    work = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={r.randint(1, 9000000)}, NumelOut={r.randint(1, 9000000)}, Timeout(ms)={to}) ran for {ran} milliseconds before timing out."
    pre_lines = [f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([632, 616, 685])}] [Rank {rank}] Watchdog caught collective operation timeout: {work}"]
    if r.random() < 0.6:
        pre_lines.append(f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([2271, 1664])}] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {seq - 1}")
        pre_lines.append(f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([670, 681])}] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")
    whatl = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {work}"
    cxx = ["terminate called after throwing an instance of 'c10::DistBackendError'", f"  what():  {whatl}",
           f"Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{r.choice([635, 618, 688])} (most recent call first):",
           f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libc10.so)",
           f"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x{r.randint(0x200, 0x300):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
           f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x{r.randint(0x600, 0x900):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
           f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
           f"frame #4: <unknown function> + 0x{r.randint(0xd0000, 0xfffff):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in /lib/x86_64-linux-gnu/libstdc++.so.6)",
           f"frame #5: <unknown function> + 0x94ac3 (0x7f{r.randint(10**9, 10**10 - 1):x} in /lib/x86_64-linux-gnu/libc.so.6)", "", "Fatal Python error: Aborted"]
    if r.random() < 0.6:
        pre = Precursor([nccl_warn(c, rank, f"transport/net_ib.cc:{r.randint(1200, 2400)} NCCL WARN NET/IB : req {r.randint(1, 9)}/{r.randint(1, 9)} tag {r.randint(1, 99):x} peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}> collective mismatch error, local size {r.randint(1, 99999)} remote size {r.randint(1, 99999)}")]
                        if r.random() < 0.5 else [nccl_warn(c, rank, f"misc/socket.cc:{r.randint(40, 700)} NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}>")],
                        "NCCL WARN", phase, style="nccl", lead=(30, 600))
    return Failure("dist.nccl", phase, [], "Watchdog caught collective operation timeout", scope="cxx", pre=pre_lines, cxx=cxx, precursor=pre, variant=kind)
