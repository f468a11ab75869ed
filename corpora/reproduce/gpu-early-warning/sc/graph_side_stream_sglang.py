# gpu.cuda-graph-capture: the sampler runs on its own stream, so the sampler graph captures nothing
# (torch warns "The CUDA Graph is empty ... wrong device or stream"); the decode graph then forks that
# stream without joining it back and the capture fails. Twin: everything on the capture stream.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang, SGLANG_CAPTURE_FAILED_MSG
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", cuda_graph_max_bs=8)
import torch, tqdm
s.start()
side = torch.cuda.Stream() if MODE == "bad" else None
graphs = []

def sample(h, tok):
    if side is None:
        torch.argmax(h, dim=-1, out=tok)
        return tok
    with torch.cuda.stream(side):
        torch.argmax(h, dim=-1, out=tok)
    return tok

def decode(x, w, tok):
    h = x @ w
    if side is not None:
        side.wait_stream(torch.cuda.current_stream())
    return sample(h, tok)

def capture():
    s.graph_begin(torch)
    t = time.time()
    w = torch.randn(2048, 2048, device="cuda")
    cap = torch.cuda.Stream()
    pool = torch.cuda.graph_pool_handle()
    h8 = torch.randn(8, 2048, device="cuda")
    tok8 = torch.empty(8, dtype=torch.long, device="cuda")
    with torch.cuda.stream(cap):          # warm up cuBLAS and the kernels outside capture
        for _ in range(2):
            decode(h8, w, tok8)
    torch.cuda.synchronize()
    g0 = torch.cuda.CUDAGraph(); graphs.append(g0)
    with torch.cuda.graph(g0, pool=pool, stream=cap):
        sample(h8, tok8)
    s.log.info("Sampler graph captured.")
    time.sleep(1)
    it = tqdm.tqdm([8, 4, 2, 1])
    for bs in it:
        it.set_description(f"Capturing batches (bs={bs} avail_mem={torch.cuda.mem_get_info()[0] / (1 << 30):.2f} GB)")
        x = torch.randn(bs, 2048, device="cuda")
        tok = torch.empty(bs, dtype=torch.long, device="cuda")
        with torch.cuda.stream(cap):
            decode(x, w, tok)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(); graphs.append(g)
        with torch.cuda.graph(g, pool=pool, stream=cap):
            decode(x, w, tok)
        time.sleep(0.3)
    s.graph_end(torch, t)

try:
    s.init_dist(torch)
    s.load_begin(torch); b = torch.cuda.mem_get_info()[0]; s.load_end(torch, b)
    try:
        capture()
    except RuntimeError as e:
        raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")
    s.ready()
except Exception:
    s.fail()
