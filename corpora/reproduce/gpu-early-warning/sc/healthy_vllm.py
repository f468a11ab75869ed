# Healthy vLLM-style start-up with real GPU work: model load, profile run, KV cache, CUDA graphs.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model=os.environ.get("MODEL", "Qwen/Qwen2.5-7B-Instruct"), max_model_len=int(os.environ.get("MAX_LEN", "8192")),
         gpu_memory_utilization=float(os.environ.get("GPU_UTIL", "0.3")))
import torch, tqdm
v.start(torch)
try:
    ws = v.load(torch, lambda: [torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(6)])
    v.eng.info("Memory profiling takes 1.02 seconds")
    free = torch.cuda.mem_get_info()[0]
    kv = torch.empty(int(free * v.args["gpu_memory_utilization"]), dtype=torch.uint8, device="cuda")
    v.kv(torch, kv.numel() // (28 * 2 * 4 * 128 * 2))
    w = ws[0][:2048, :2048]
    bss = [1, 2, 4, 8, 16, 32, 64]
    cap = torch.cuda.Stream(); pool = torch.cuda.graph_pool_handle(); graphs = []
    for bs in tqdm.tqdm(list(reversed(bss)), desc="Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)"):
        xx = torch.randn(bs, 2048, device="cuda", dtype=torch.bfloat16)
        with torch.cuda.stream(cap):
            (xx @ w).relu()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(); graphs.append(g)
        with torch.cuda.graph(g, pool=pool, stream=cap):
            out = (xx @ w).relu()
    v.eng.info("Graph capturing finished in 1 secs, took 0.12 GiB")
    v.ready()
except Exception:
    v.fail()
