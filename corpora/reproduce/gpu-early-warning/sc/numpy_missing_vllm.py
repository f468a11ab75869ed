# env.module-missing: venv without numpy. torch warns "Failed to initialize NumPy" at import; the
# sampler's .numpy() fails later with "Numpy is not available". Twin: same venv with numpy.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=8192, gpu_memory_utilization=0.9)
import torch
v.start(torch)
try:
    w = v.load(torch, lambda: [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(8)])
    time.sleep(2)
    v.kv(torch, 483216)
    time.sleep(1)
    v.eng.info("Warming up sampler with 256 dummy requests.")
    logits = torch.randn(256, 32000, device="cuda")
    ids = logits.argmax(-1).cpu().numpy()
    v.eng.info(f"Sampler warmup produced {len(ids)} tokens.")
    v.ready()
except Exception:
    v.fail()
