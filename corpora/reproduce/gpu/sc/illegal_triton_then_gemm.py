# gpu.illegal-access: out-of-bounds Triton store, error surfaces in the next (unrelated) GEMM / sync.
import torch, triton, triton.language as tl

@triton.jit
def scatter_add_kernel(out_ptr, idx_ptr, val_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    idx = tl.load(idx_ptr + offs, mask=m)
    v = tl.load(val_ptr + offs, mask=m)
    tl.store(out_ptr + idx, v, mask=m)

N = 1 << 16
out = torch.zeros(N, device="cuda")
idx = torch.randint(0, N, (N,), device="cuda") * (1 << 22)   # bad stride: indexes far past the end
val = torch.randn(N, device="cuda")
scatter_add_kernel[(triton.cdiv(N, 1024),)](out, idx, val, N, BLOCK=1024)
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
c = a @ a
print("checksum", c.float().sum().item())
