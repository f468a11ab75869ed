# dist.nccl on ONE GPU with TWO ranks (torchrun --nproc-per-node 2): NCCL refuses two ranks of one
# communicator on one GPU (dist-nccl-dup-gpu-01), so each rank has its own one-rank NCCL group (a TP
# group of size 1) and the world group is gloo. MODE=bad: rank 0's GPU stream is busy in a long
# kernel (torch.cuda._sleep, standing for a hung kernel) when its all_reduce is queued. Run 1: torch
# 2.11's watchdog did NOT time it out (15 s group timeout, 90 s kernel: the collective finished late,
# silently); run 2 makes the kernel 150 s and the driver's `timeout --verbose` stops the start.
# MODE=initwait: the TP group is one NCCL group of both ranks; rank 0 enters its first all_reduce
# (communicator init) while rank 1 is still "loading weights" and never arrives (NCCL would refuse two
# ranks on one GPU anyway, but only once both are in init). MODE=good: no long kernel, one-rank groups;
# both ranks finish, torchrun exits 0. SGLang's scheduler log format.
import os, time, logging
from datetime import timedelta
import torch, torch.distributed as dist
MODE = os.environ.get("MODE", "bad")
rank = int(os.environ["RANK"]); world = int(os.environ["WORLD_SIZE"])
logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s TP{rank}] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
log = logging.getLogger("sglang.srt.managers.scheduler")
torch.cuda.set_device(0)
log.info("Init torch distributed begin.")
dist.init_process_group("gloo", timeout=timedelta(seconds=30))
if MODE == "initwait":
    tp = dist.new_group(list(range(world)), backend="nccl", timeout=timedelta(seconds=20))
    if rank == 1:
        log.info("Load weight begin. (rank 1 reading its shard from network storage)")
        time.sleep(300)
else:
    groups = [dist.new_group([r], backend="nccl", timeout=timedelta(seconds=15)) for r in range(world)]
    tp = groups[rank]
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x, group=tp)
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
log.info(f"Init torch distributed ends. mem usage={(total - free) / 2**30:.2f} GB")
log.info("Load weight begin. avail mem=%.2f GB" % (torch.cuda.mem_get_info()[0] / 2**30))
w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
log.info("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB" % (torch.cuda.mem_get_info()[0] / 2**30))
if MODE == "bad" and rank == 0:
    torch.cuda._sleep(int(150 * 2e9))   # ~150 s of spinning on this stream before the collective
h = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16) @ w
dist.all_reduce(h, group=tp)
torch.cuda.synchronize()
log.info(f"warmup all_reduce done, norm={h.float().norm().item():.1f}")
dist.barrier()
log.info("The server is fired up and ready to roll!")
dist.destroy_process_group()
