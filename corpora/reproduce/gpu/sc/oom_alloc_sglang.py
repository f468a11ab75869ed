# gpu.out-of-memory: KV-cache sized past free memory, SGLang-style scheduler wrapper.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit, gib
logger = sglang_logger(0)
import torch

def run():
    logger.info("Init torch distributed begin.")
    torch.cuda.set_device(0)
    free, total = torch.cuda.mem_get_info()
    logger.info(f"Init torch distributed ends. mem usage={gib(total - free):.2f} GB")
    logger.info(f"Load weight begin. avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB")
    weights = torch.empty(16 << 30, dtype=torch.uint8, device="cuda")
    free2, _ = torch.cuda.mem_get_info()
    logger.info(f"Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={gib(free2):.2f} GB, mem usage={gib(free - free2):.2f} GB.")
    # memory plan computed from a stale 'free' figure -> KV pool larger than what is left
    layers, heads, dim = 32, 8, 128
    per_token = layers * 2 * heads * dim * 2
    tokens = int(free * 0.95 / per_token)
    k_buffer = torch.empty((layers, tokens, heads, dim), dtype=torch.bfloat16, device="cuda")
    v_buffer = torch.empty((layers, tokens, heads, dim), dtype=torch.bfloat16, device="cuda")
    logger.info(f"KV Cache is allocated. #tokens: {tokens}")

try:
    run()
except Exception:
    sglang_report_and_exit(logger)
