# Healthy SGLang-style start-up with real GPU work: weights, KV pool, CUDA graph capture, a Triton kernel.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang, gib
model = os.environ.get("MODEL", "meta-llama/Llama-3.1-8B-Instruct")
s = SGLang(model_path=model, tokenizer_path=model, mem_fraction_static=float(os.environ.get("MEM_FRAC", "0.2")),
           cuda_graph_max_bs=int(os.environ.get("MAX_BS", "16")))
import torch, tqdm, triton, triton.language as tl
s.start()
@triton.jit
def _add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
try:
    s.init_dist(torch)
    torch.cuda.set_device(0)
    s.load_begin(torch)
    b = torch.cuda.mem_get_info()[0]
    it = tqdm.tqdm(range(4), desc="Loading safetensors checkpoint shards")
    ws = []
    for _ in it:
        ws.append(torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)); time.sleep(0.4)
    s.load_end(torch, b)
    free = torch.cuda.mem_get_info()[0]
    kvb = int(free * s.args["mem_fraction_static"] / 2)
    k = torch.empty(kvb, dtype=torch.uint8, device="cuda"); vv = torch.empty(kvb, dtype=torch.uint8, device="cuda")
    s.kv(torch, kvb // (32 * 8 * 128 * 2), kvb)
    x = torch.randn(1 << 20, device="cuda"); o = torch.empty_like(x)
    _add[(x.numel() // 1024,)](x, x, o, x.numel(), B=1024)
    s.graph_begin(torch); t = time.time()
    cap = torch.cuda.Stream(); pool = torch.cuda.graph_pool_handle(); graphs = []
    bss = [b for b in (1, 2, 4, 8, 16, 24, 32, 64) if b <= s.args["cuda_graph_max_bs"]]
    it = tqdm.tqdm(list(reversed(bss)))
    w = ws[0][:2048, :2048]
    for bs in it:
        it.set_description(f"Capturing batches (bs={bs} avail_mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB)")
        xx = torch.randn(bs, 2048, device="cuda", dtype=torch.bfloat16)
        with torch.cuda.stream(cap):
            (xx @ w).softmax(-1)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(); graphs.append(g)
        with torch.cuda.graph(g, pool=pool, stream=cap):
            out = (xx @ w).softmax(-1)
        g.replay()
    torch.cuda.synchronize()
    s.graph_end(torch, t)
    s.ready(kvb // (32 * 8 * 128 * 2))
except Exception:
    s.fail()
