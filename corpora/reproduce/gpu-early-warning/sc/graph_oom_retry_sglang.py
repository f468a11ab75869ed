# gpu.out-of-memory: --mem-fraction-static too high. The KV pool takes almost all memory; the first
# CUDA-graph batch runs out of memory, the runner logs torch's OOM as a warning and retries with a
# smaller max batch, which runs out again. Twin: mem_fraction_static=0.80.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang, SGLANG_CAPTURE_FAILED_MSG, gib
frac = float(os.environ.get("MEM_FRAC", "0.8"))
s = SGLang(model_path="Qwen/Qwen2.5-32B-Instruct", mem_fraction_static=frac, cuda_graph_max_bs=160)
import torch, tqdm
s.start()
graphs = []
def run_graphs(max_bs, w):
    cap = torch.cuda.Stream(); pool = torch.cuda.graph_pool_handle()
    bss = [b for b in (160, 128, 96, 64, 32, 16, 8, 4, 2, 1) if b <= max_bs]
    it = tqdm.tqdm(bss)
    for bs in it:
        it.set_description(f"Capturing batches (bs={bs} avail_mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB)")
        act = torch.empty(bs * (128 << 20), dtype=torch.uint8, device="cuda")   # activations for this batch
        x = torch.randn(bs, 4096, device="cuda", dtype=torch.bfloat16)
        with torch.cuda.stream(cap):
            (x @ w).relu()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(); graphs.append(g)
        with torch.cuda.graph(g, pool=pool, stream=cap):
            (x @ w).relu()
try:
    s.init_dist(torch)
    torch.cuda.set_device(0)
    s.load_begin(torch); b = torch.cuda.mem_get_info()[0]
    weights = torch.empty(20 << 30, dtype=torch.uint8, device="cuda")
    s.load_end(torch, b, arch="Qwen2ForCausalLM")
    free, total = torch.cuda.mem_get_info()
    pool_bytes = int(free - total * (1 - frac))
    kv = torch.empty(max(pool_bytes, 1 << 30), dtype=torch.uint8, device="cuda")
    s.kv(torch, pool_bytes // (64 * 2 * 8 * 128 * 2), pool_bytes // 2)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    s.graph_begin(torch); t = time.time()
    try:
        try:
            run_graphs(160, w)
        except torch.OutOfMemoryError as e:
            s.log.warning(f"Capture cuda graph with max bs 160 failed, retrying with cuda_graph_max_bs=64: {e}")
            torch.cuda.empty_cache()
            time.sleep(2)
            run_graphs(64, w)
    except RuntimeError as e:
        raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")
    s.graph_end(torch, t)
    s.ready()
except Exception:
    s.fail()
