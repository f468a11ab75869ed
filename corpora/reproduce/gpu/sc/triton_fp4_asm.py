# A Triton kernel that packs pairs of float32 values into FP4 (e2m1) codes, as MXFP4 weight-quantisation
# kernels written for Blackwell do with inline PTX (cvt.rn.satfinite.e2m1x2.f32, PTX for sm_100a and later),
# JIT-compiled by Triton for this GPU at first use. PACK=asm uses the inline PTX; PACK=ref rounds with plain
# Triton arithmetic (the portable path). "[repro]" lines are this script's own.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def pack_fp4(X, Y, N, BLOCK: tl.constexpr, ASM: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    a = tl.load(X + 2 * offs, mask=m, other=0.0)
    b = tl.load(X + 2 * offs + 1, mask=m, other=0.0)
    if ASM:
        y = tl.inline_asm_elementwise(
            "{ .reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, $2, $1; mov.b16 $0, {t, t}; }",
            "=h,r,r", [a, b], dtype=tl.int16, is_pure=True, pack=1)
    else:
        qa = tl.clamp(tl.floor(a * 2.0 + 0.5), -12.0, 12.0).to(tl.int16)
        qb = tl.clamp(tl.floor(b * 2.0 + 0.5), -12.0, 12.0).to(tl.int16)
        y = (qa & 15) | ((qb & 15) << 4)
    tl.store(Y + offs, y, mask=m)


cap = torch.cuda.get_device_capability()
say(f"torch {torch.__version__} triton {triton.__version__} on {torch.cuda.get_device_name()} (sm_{cap[0]}{cap[1]}); "
    f"quantising weights to FP4, pack={os.environ.get('PACK', 'asm')}")
x = torch.randn(1 << 20, device="cuda", dtype=torch.float32)
n = x.numel() // 2
y = torch.empty(n, device="cuda", dtype=torch.int16)
pack_fp4[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, ASM=os.environ.get("PACK", "asm") == "asm")
torch.cuda.synchronize()
say(f"packed {n} pairs; first codes {y[:4].tolist()}")
