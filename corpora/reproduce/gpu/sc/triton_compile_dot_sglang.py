# toolchain.compile-failed: tl.dot on operands whose inner dimensions disagree (Triton compile error), SGLang wrapper.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit
logger = sglang_logger(0)
import torch, triton, triton.language as tl

@triton.jit
def lora_shrink_kernel(x_ptr, w_ptr, out_ptr, M: tl.constexpr, K: tl.constexpr, R: tl.constexpr):
    rm = tl.arange(0, M); rk = tl.arange(0, K); rr = tl.arange(0, R)
    rk2 = tl.arange(0, K // 2)   # bug: loads only half of the inner dimension of w
    x = tl.load(x_ptr + rm[:, None] * K + rk[None, :])
    w = tl.load(w_ptr + rk2[:, None] * R + rr[None, :])
    acc = tl.dot(x, w)
    tl.store(out_ptr + rm[:, None] * R + rr[None, :], acc)

try:
    logger.info("Using triton as backend of LoRA kernels.")
    M, K, R = 16, 64, 16
    x = torch.randn(M, K, device="cuda", dtype=torch.float16)
    w = torch.randn(K, R, device="cuda", dtype=torch.float16)
    o = torch.empty(M, R, device="cuda", dtype=torch.float32)
    lora_shrink_kernel[(1,)](x, w, o, M=M, K=K, R=R)
    torch.cuda.synchronize()
except Exception:
    sglang_report_and_exit(logger)
