# gpu.cuda-graph-capture: device->host copy inside capture, vLLM-style engine wrapper.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger
logger = vllm_logger()
import torch, tqdm

def model(x):
    seq_lens = (x.abs().sum(-1) > 0).int()
    max_len = seq_lens.cpu().max()          # copies to the host
    return x * max_len.item()

def capture_model():
    sizes = [512, 256, 128, 64, 32, 16, 8, 4, 2, 1]
    logger.info("Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.")
    for bs in tqdm.tqdm(sizes, desc="Capturing CUDA graph shapes"):
        x = torch.randn(bs, 4096, device="cuda")
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            model(x)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            model(x)

try:
    capture_model()
except Exception:
    logger.exception("EngineCore failed to start.")
    sys.exit(1)
