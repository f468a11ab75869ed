# env.driver-too-old (no GPU visible): CUDA_VISIBLE_DEVICES hides every GPU.
import os, torch
print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} torch={torch.__version__} cuda={torch.version.cuda} is_available={torch.cuda.is_available()}", flush=True)
torch.cuda.set_device(0)
x = torch.zeros(1, device="cuda")
