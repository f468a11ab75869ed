# gpu.out-of-memory inside CUDA-graph capture, wrapped the way SGLang's CudaGraphRunner wraps it.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit, SGLANG_CAPTURE_FAILED_MSG, gib
logger = sglang_logger(0)
import torch
import tqdm

def capture():
    free, _ = torch.cuda.mem_get_info()
    kv = torch.empty(int(free * 0.88), dtype=torch.uint8, device="cuda")  # --mem-fraction-static pool
    logger.info(f"Memory pool end. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")
    logger.info(f"Capture cuda graph begin. This can take up to several minutes. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")
    bs_list = [512, 256, 160, 128, 64, 32, 16, 8, 4, 2, 1]
    logger.info(f"Capture cuda graph bs {sorted(bs_list)}")
    hidden, inter = 8192, 29568
    w = torch.randn(hidden, inter, dtype=torch.bfloat16, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    s = torch.cuda.Stream()
    it = tqdm.tqdm(bs_list)
    graphs = []
    for bs in it:
        it.set_description(f"Capturing batches (bs={bs} avail_mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB)")
        x = torch.randn(bs, hidden, dtype=torch.bfloat16, device="cuda")
        with torch.cuda.stream(s):
            x @ w
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool, stream=s):
            # logits buffer sized by bs * chunk * vocab
            y = x @ w
            logits = torch.empty(bs * 64, 152064, dtype=torch.float32, device="cuda")
        graphs.append(g)

def init_cuda_graphs():
    try:
        capture()
    except RuntimeError as e:
        raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")

try:
    init_cuda_graphs()
except Exception:
    sglang_report_and_exit(logger)
