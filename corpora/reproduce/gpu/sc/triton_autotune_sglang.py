# A custom Triton GEMM (SGLang-shaped start-up, warmed up before serving) autotuned over four
# configs with TRITON_PRINT_AUTOTUNING=1, which prints why a config was dropped. DTYPE=bfloat16:
# one config needs more shared memory than the H200 has and is dropped, the others fit.
# DTYPE=float32: every config needs twice the shared memory, all are dropped, and the launch with
# the chosen (first) config fails with OutOfResources.
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang
DTYPE = os.environ.get("DTYPE", "bfloat16")
s = SGLang(model_path="Qwen/Qwen3-8B", dtype=DTYPE)
import torch, triton
import triton.language as tl
s.start()

CONFIGS = [
    triton.Config({"BM": 256, "BN": 256, "BK": 64}, num_stages=4, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 64}, num_stages=4, num_warps=8),
    triton.Config({"BM": 64, "BN": 256, "BK": 64}, num_stages=4, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 64}, num_stages=3, num_warps=8),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def gemm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))


def gemm(x, w):
    M, K = x.shape
    N = w.shape[1]
    out = torch.empty(M, N, dtype=x.dtype, device=x.device)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    gemm_kernel[grid](x, w, out, M, N, K)
    return out


try:
    s.init_dist(torch)
    s.load_begin(torch)
    before = torch.cuda.mem_get_info()[0]
    dt = getattr(torch, DTYPE)
    w = torch.randn(4096, 4096, dtype=dt, device="cuda")
    s.load_end(torch, before, arch="Qwen3ForCausalLM")
    s.log.info(f"Warming up custom GEMM kernel (dtype={DTYPE}).")
    x = torch.randn(1024, 4096, dtype=dt, device="cuda")
    y = gemm(x, w)
    torch.cuda.synchronize()
    err = (y.float() - (x.float() @ w.float())).abs().max().item()
    s.log.info(f"Custom GEMM warm-up done, max abs diff vs torch.matmul {err:.3f}.")
    s.ready()
except Exception:
    s.fail()
