# dist.nccl: two ranks bound to the same CUDA device -> NCCL 'Duplicate GPU detected'.
import os
from datetime import timedelta
import torch, torch.distributed as dist
rank = int(os.environ["RANK"])
dev = torch.device("cuda", 0)   # bug: every rank uses cuda:0
torch.cuda.set_device(dev)
print(f"[rank {rank}] using {dev}", flush=True)
dist.init_process_group("nccl", timeout=timedelta(seconds=60))
x = torch.ones(1024, device=dev)
dist.all_reduce(x)
torch.cuda.synchronize()
print(f"[rank {rank}] all_reduce -> {x[0].item()}")
dist.destroy_process_group()
