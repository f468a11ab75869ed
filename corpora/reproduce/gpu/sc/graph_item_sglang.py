# gpu.cuda-graph-capture: .item() (host sync) inside a forward that is being captured, SGLang wrapper.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit, SGLANG_CAPTURE_FAILED_MSG, gib
logger = sglang_logger(0)
import torch, tqdm

hidden, experts = 2048, 64
router = torch.randn(hidden, experts, device="cuda", dtype=torch.bfloat16)

def moe_forward(x):
    logits = x @ router
    topk = torch.topk(logits, 8, dim=-1).indices
    if int(topk.max().item()) >= experts:   # host-side sanity check -> sync
        raise ValueError("bad expert id")
    return logits.softmax(-1)

def capture():
    logger.info(f"Capture cuda graph begin. This can take up to several minutes. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")
    bs_list = [1, 2, 4, 8, 16, 24, 32]
    logger.info(f"Capture cuda graph bs {bs_list}")
    pool = torch.cuda.graph_pool_handle()
    s = torch.cuda.Stream()
    it = tqdm.tqdm(list(reversed(bs_list)))
    for bs in it:
        it.set_description(f"Capturing batches (bs={bs} avail_mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB)")
        x = torch.randn(bs, hidden, device="cuda", dtype=torch.bfloat16)
        with torch.cuda.stream(s):
            for _ in range(2):
                moe_forward(x)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool, stream=s):
            out = moe_forward(x)

try:
    try:
        capture()
    except RuntimeError as e:
        raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")
except Exception:
    sglang_report_and_exit(logger)
