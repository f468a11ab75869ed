# config.invalid-argument: --dtype float32 with the flash-attention backend forced. torch's SDPA warns
# why each kernel was not used, then finds no kernel. Twin: --dtype bfloat16.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
dtype = os.environ.get("SERVE_DTYPE", "bfloat16")
from srv import VLLM
v = VLLM(model="google/gemma-2-9b-it", dtype=dtype, max_model_len=4096)
import torch
from torch.nn.attention import sdpa_kernel, SDPBackend
import torch.nn.functional as F
v.start(torch)
v.eng.info("Using Flash Attention backend.")
dt = getattr(torch, dtype)
try:
    q = v.load(torch, lambda: torch.randn(4, 16, 1024, 128, device="cuda", dtype=dt))
    v.kv(torch, 140000)
    time.sleep(1)
    v.eng.info("Profiling attention with 4 dummy sequences.")
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    torch.cuda.synchronize()
    v.ready()
except Exception:
    v.fail()
