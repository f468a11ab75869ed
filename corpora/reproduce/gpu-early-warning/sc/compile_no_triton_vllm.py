# env.module-missing: triton not installed in the venv; torch.compile's inductor backend needs it.
# Twin: triton installed.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model="Qwen/Qwen2.5-1.5B-Instruct", compilation_config={"level": 3})
import torch
v.start(torch)
try:
    mlp = torch.nn.Sequential(torch.nn.Linear(1536, 8960), torch.nn.SiLU(), torch.nn.Linear(8960, 1536)).cuda().half()
    v.load(torch, lambda: mlp)
    time.sleep(1)
    v.eng.info("Compiling a graph for dynamic shape takes a while (torch.compile, backend=inductor).")
    f = torch.compile(mlp)
    y = f(torch.randn(16, 1536, device="cuda", dtype=torch.half))
    torch.cuda.synchronize()
    v.eng.info("torch.compile takes 8.21 s in total")
    v.ready()
except Exception:
    v.fail()
