# torch.compile (inductor, Triton kernels) of an fp32 MLP block in a vLLM-shaped start-up. The
# environment decides what breaks: CC/CXX pointing at compilers that are not installed (Triton
# builds its launcher with CC). Twin: CC/CXX unset. Both print inductor's own TF32 warning.
# DEVICE=cpu compiles a CPU copy (inductor's C++ backend, which builds with CXX) instead.
# Fresh TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR are set by the driver so every run compiles.
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import VLLM
v = VLLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=8192,
         compilation_config={"level": 3, "cudagraph_mode": "NONE"})
import torch
DEV = os.environ.get("DEVICE", "cuda")
D = 4096 if DEV == "cuda" else 1024
v.start()


class Block(torch.nn.Module):
    def __init__(self, d=4096):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


try:
    model = v.load(torch, lambda: Block(D).to(DEV))
    t = time.time()
    fn = torch.compile(model, dynamic=False)
    for bs in (16, 8):
        fn(torch.randn(bs, D, device=DEV))
    torch.cuda.synchronize()
    v.eng.info(f"Compiling a graph for dynamic shape takes {time.time() - t:.2f} s")
    v.eng.info(f"torch.compile takes {time.time() - t:.2f} s in total")
    v.kv(torch, 389_120)
    v.ready()
except Exception:
    v.fail()
