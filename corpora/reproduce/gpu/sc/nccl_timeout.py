# dist.nccl: rank 1 never joins the second all_reduce -> ProcessGroupNCCL watchdog timeout on rank 0.
# Run with torchrun --nproc-per-node 2 (or with WRAP=sglang to log in SGLang's TP format).
import os, sys, time, logging
from datetime import timedelta
import torch, torch.distributed as dist
rank = int(os.environ["RANK"]); local_rank = int(os.environ["LOCAL_RANK"])
if os.environ.get("WRAP") == "sglang":
    logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s TP{rank}] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
else:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger(__name__)
dev = torch.device("cuda", local_rank)
torch.cuda.set_device(dev)
log.info("Init torch distributed begin.")
dist.init_process_group("nccl", timeout=timedelta(seconds=20), device_id=dev)
x = torch.ones(1 << 20, device=dev)
dist.all_reduce(x)
torch.cuda.synchronize()
log.info(f"Init torch distributed ends. all_reduce ok: {x[0].item()}")
if rank == 1:
    log.info("rank 1 stuck in weight loading (simulated: sleeping)")
    time.sleep(150)
else:
    dist.all_reduce(x)
    torch.cuda.synchronize()
    log.info("second all_reduce done")
dist.destroy_process_group()
