# toolchain.compile-failed: Triton kernel whose tl.arange range is not a power of two.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger
logger = vllm_logger()
import torch, triton, triton.language as tl

@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, eps, HIDDEN: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, HIDDEN)
    x = tl.load(x_ptr + row * HIDDEN + offs).to(tl.float32)
    var = tl.sum(x * x, axis=0) / HIDDEN
    w = tl.load(w_ptr + offs)
    tl.store(out_ptr + row * HIDDEN + offs, x * tl.rsqrt(var + eps) * w)

hidden = 5120 + 96   # model with a non power-of-two hidden size
x = torch.randn(4, hidden, device="cuda"); w = torch.ones(hidden, device="cuda"); o = torch.empty_like(x)
logger.info("Compiling Triton rms_norm for hidden_size=%d", hidden)
rms_norm_kernel[(4,)](x, w, o, 1e-6, HIDDEN=hidden)
torch.cuda.synchronize()
