"""Builder for host.out-of-memory: the kernel's OOM killer ends the server."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, gib, pick, tb
from .frames import head


def f_host_oom(c: Ctx) -> Failure:
    r = c.rng
    kinds = ["memoryerror", "errno12", "cpualloc", "hicache"] + (["kernel", "kernel", "kernel", "cgroup"] if c.journald else [])
    kind = pick(r, kinds)
    if c.server == "vllm" and kind == "hicache":
        kind = "cpualloc"
    pre = None
    if c.server == "vllm" and r.random() < 0.5:
        tot = pick(r, [62.0, 125.6, 251.4, 30.9])
        pre = Precursor([f"Possibly too large swap space. {tot * 0.6:.2f} GiB out of the {tot:.2f} GiB total CPU memory is allocated for the swap space."],
                        "Possibly too large swap space", "launch", style="vlog", vfile="config.py", lead=(20, 300))
    phase = r.choices(["load-weights", "memory-plan", "serving"], weights=[5, 2, 2])[0]
    if kind in ("kernel", "cgroup"):
        pid = r.randint(2000, 99999)
        comm = pick(r, ["python3", "python", "sglang::schedul", "VLLM::EngineCor", "pt_main_thread", "VLLM::Worker_TP"])
        tvm = r.randint(80, 900) * 1048576
        anon = r.randint(40, 480) * 1048576
        kern = [f"{comm} invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
                f"oom-kill:constraint=CONSTRAINT_{'NONE' if kind == 'kernel' else 'MEMCG'},nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/system.slice/{'sglang' if c.server == 'sglang' else 'vllm'}.service,task={comm},pid={pid},uid=0",
                f"{'Out of memory' if kind == 'kernel' else 'Memory cgroup out of memory'}: Killed process {pid} ({comm}) total-vm:{tvm}kB, anon-rss:{anon}kB, file-rss:{r.randint(1000, 900000)}kB, shmem-rss:{r.randint(0, 9000000)}kB, UID:0 pgtables:{r.randint(1000, 900000)}kB oom_score_adj:0",
                f"oom_reaper: reaped process {pid} ({comm}), now anon-rss:0kB, file-rss:0kB, shmem-rss:{r.randint(0, 90000)}kB"]
        fatal = "Out of memory: Killed process" if kind == "kernel" else "Memory cgroup out of memory: Killed process"
        use_unit = r.random() < 0.5
        if use_unit:
            fatal = pick(r, [fatal, "A process of this unit has been killed by the OOM killer.", "Failed with result 'oom-kill'."])
        return Failure("host.out-of-memory", phase, [], fatal, scope="kernel", kernel=kern, result="oom-kill",
                       systemd=["A process of this unit has been killed by the OOM killer."], precursor=pre, variant=kind)
    if kind == "memoryerror":
        exc = tb(head(c, phase) + c.frames([pick(r, [(f"{c.sp}/safetensors/torch.py", "load_file", "result[k] = f.get_tensor(k)"),
                                                     (f"{c.sp}/torch/serialization.py", "load", "return _load(", True),
                                                     (f"{c.sp}/numpy/core/_methods.py" if r.random() < 0.5 else f"{c.sp}/torch/_utils.py", "_rebuild_tensor", "t = torch.empty((0,), dtype=storage.dtype, device=storage._untyped_storage.device)")])])) + ["MemoryError"]
        return Failure("host.out-of-memory", phase, exc, "MemoryError", precursor=pre, variant=kind)
    if kind == "errno12":
        exc = tb(head(c, phase) + c.frames([pick(r, [(f"{c.sp.rsplit('/', 2)[0]}/multiprocessing/popen_fork.py", "_launch", "self.pid = os.fork()"),
                                                     (f"{c.sp}/torch/multiprocessing/reductions.py", "reduce_storage", "fd, size = storage._share_fd_cpu_()"),
                                                     (f"{c.sp}/safetensors/torch.py", "load_file", "with safe_open(filename, framework=\"pt\", device=device) as f:")])])) + [
            "OSError: [Errno 12] Cannot allocate memory"]
        return Failure("host.out-of-memory", phase, exc, "[Errno 12] Cannot allocate memory", precursor=pre, variant=kind)
    if kind == "cpualloc":
        n = r.randint(2, 64) * 1073741824
        exc = tb(head(c, phase) + c.frames([(f"{c.sp}/torch/nn/modules/module.py", "_apply", "param_applied = fn(param)"),
                                            (f"{c.sp}/torch/_tensor.py" if r.random() < 0.5 else f"{c.sp}/torch/utils/_device.py", "pin_memory" if r.random() < 0.5 else "__torch_function__", "return func(*args, **kwargs)")])) + [
            f"RuntimeError: [enforce fail at alloc_cpu.cpp:{r.choice([114, 117, 121])}] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {n} bytes. Error code 12 (Cannot allocate memory)"]
        return Failure("host.out-of-memory", phase, exc, "DefaultCPUAllocator: can't allocate memory", precursor=pre, variant=kind)
    req, have = gib(r, 100, 800), gib(r, 10, 90)
    exc = tb(head(c, "memory-plan") + c.frames([("sglang/srt/mem_cache/memory_pool_host.py", "__init__", "raise ValueError(")])) + [
        f"ValueError: Not enough host memory available. Requesting {req:.2f} GB but only have {have:.2f} GB free. Please reduce the size of the hierarchical cache."]
    return Failure("host.out-of-memory", "memory-plan", exc, "Not enough host memory available", precursor=pre, variant=kind)
