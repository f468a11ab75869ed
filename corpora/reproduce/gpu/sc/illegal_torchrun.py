# gpu.illegal-access under torchrun: rank 0 runs an out-of-bounds Triton store, rank 1 waits in a collective.
import os
from datetime import timedelta
import torch, torch.distributed as dist, triton, triton.language as tl

@triton.jit
def write_kernel(out_ptr, idx_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    idx = tl.load(idx_ptr + offs, mask=m)
    tl.store(out_ptr + idx, 1.0, mask=m)

rank = int(os.environ["RANK"]); local_rank = int(os.environ["LOCAL_RANK"])
dev = torch.device("cuda", local_rank); torch.cuda.set_device(dev)
dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=dev)
x = torch.ones(1024, device=dev); dist.all_reduce(x); torch.cuda.synchronize()
print(f"[rank {rank}] warmup all_reduce ok", flush=True)
N = 4096
out = torch.zeros(N, device=dev)
idx = torch.arange(N, device=dev)
if rank == 0:
    idx = idx * (1 << 16)   # index arithmetic overflowed upstream
write_kernel[(N // 1024,)](out, idx, N, BLOCK=1024)
dist.all_reduce(out)
print(f"[rank {rank}] sum {out.sum().item()}")
