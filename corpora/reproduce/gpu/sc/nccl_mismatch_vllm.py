# dist.nccl: ranks call all_reduce with different shapes; TORCH_DISTRIBUTED_DEBUG=DETAIL catches it.
import os, sys
from datetime import timedelta
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger
rank = int(os.environ["RANK"]); local_rank = int(os.environ["LOCAL_RANK"])
logger = vllm_logger(prefix=f"(VllmWorker rank={rank} pid={os.getpid()}) ")
import torch, torch.distributed as dist
dev = torch.device("cuda", local_rank)
torch.cuda.set_device(dev)
dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=dev)
logger.info("world_size=%d rank=%d local_rank=%d distributed_init_method=env:// backend=nccl", dist.get_world_size(), rank, local_rank)
hidden = 4096 if rank == 0 else 5120   # ranks disagree about the model config
try:
    x = torch.ones(8, hidden, device=dev)
    dist.all_reduce(x)
    torch.cuda.synchronize()
except Exception:
    logger.exception("WorkerProc failed to start.")
    raise
