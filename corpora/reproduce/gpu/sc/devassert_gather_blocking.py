# gpu.illegal-access: torch.gather with an out-of-range index, run with CUDA_LAUNCH_BLOCKING=1.
import torch
x = torch.randn(8, 32, device="cuda")
idx = torch.randint(0, 32, (8, 4), device="cuda")
idx[3, 2] = 40
y = torch.gather(x, 1, idx)
print(y.sum().item())
