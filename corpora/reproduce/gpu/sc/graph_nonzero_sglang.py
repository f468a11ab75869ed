# gpu.cuda-graph-capture: torch.nonzero (data-dependent shape, syncs) in a captured forward; SGLang wrapper, TP1 rank tag.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit, SGLANG_CAPTURE_FAILED_MSG, gib
logger = sglang_logger(1)
import torch

def sample(logits):
    mask = logits > 0.5
    rows = torch.nonzero(mask)
    return rows.shape[0]

def capture():
    logger.info(f"Capture cuda graph begin. This can take up to several minutes. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")
    pool = torch.cuda.graph_pool_handle()
    s = torch.cuda.Stream()
    x = torch.rand(8, 32000, device="cuda")
    with torch.cuda.stream(s):
        sample(x)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, pool=pool, stream=s):
        sample(x)

try:
    try:
        capture()
    except RuntimeError as e:
        raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")
except Exception:
    sglang_report_and_exit(logger)
