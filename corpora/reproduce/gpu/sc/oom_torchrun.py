# gpu.out-of-memory under torchrun (2 ranks): each rank's weight shard + activations exceed its GPU.
import os, torch
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
print(f"[rank {local_rank}] loading shard, free={torch.cuda.mem_get_info()[0] / 2**30:.2f} GiB", flush=True)
shard = torch.empty(110 << 30, dtype=torch.uint8, device="cuda")
workspace = torch.empty((16384, 1 << 20), dtype=torch.bfloat16, device="cuda")   # 32 GiB
