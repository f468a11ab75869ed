# gpu.illegal-access: a Triton cache-write kernel fed a corrupt slot mapping writes far out of bounds.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger
logger = vllm_logger(prefix="(EngineCore_DP0 pid=%d) " % os.getpid())
import torch, triton, triton.language as tl

@triton.jit
def reshape_and_cache_kernel(key_ptr, cache_ptr, slot_ptr, D: tl.constexpr):
    tok = tl.program_id(0)
    slot = tl.load(slot_ptr + tok)
    offs = tl.arange(0, D)
    k = tl.load(key_ptr + tok * D + offs)
    tl.store(cache_ptr + slot * D + offs, k)

def execute_model():
    num_tokens, D = 256, 128
    key = torch.randn(num_tokens, D, dtype=torch.float16, device="cuda")
    cache = torch.zeros(4096, D, dtype=torch.float16, device="cuda")
    slot = torch.arange(num_tokens, dtype=torch.int64, device="cuda")
    slot[17] = 1 << 40  # corrupted slot id
    reshape_and_cache_kernel[(num_tokens,)](key, cache, slot, D=D)
    out = cache.sum()
    return out.item()

logger.info("Graph capturing finished in 9 secs, took 0.51 GiB")
logger.info("init engine (profile, create kv cache, warmup model) took 41.07 seconds")
try:
    execute_model()
except Exception:
    logger.exception("EngineCore encountered a fatal error.")
    sys.exit(1)
