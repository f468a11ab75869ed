# torch.utils.cpp_extension JIT build of a CUDA op with TORCH_CUDA_ARCH_LIST unset: torch warns that
# all archs of the visible cards are included (here sm_90) and builds for compute_90/sm_90.
# KERNEL=wgmma: the op's prologue uses a Hopper-only instruction that exists only for sm_90a, so
# ptxas rejects it for sm_90 and the build fails. KERNEL=plain: the same op without it builds and
# runs. Both print the same warning (the context, the kernel, decides). SGLang-shaped start-up.
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", mem_fraction_static=0.1)
import torch
from torch.utils.cpp_extension import load_inline
KERNEL = os.environ.get("KERNEL", "wgmma")
s.start()
try:
    s.init_dist(torch)
    torch.cuda.set_device(0)
    s.load_begin(torch)
    b = torch.cuda.mem_get_info()[0]
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    s.load_end(torch, b)
    s.log.info("Building custom kernel fused_moe_prologue (JIT) ...")
    fence = 'asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");' if KERNEL == "wgmma" else ""
    cuda = r'''
#include <torch/extension.h>
__global__ void prologue(float* out, int n) {
  FENCE
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = 0.f;
}
torch::Tensor fused_moe_prologue(torch::Tensor x) { int n = x.numel(); prologue<<<(n + 127) / 128, 128>>>(x.data_ptr<float>(), n); return x; }
'''.replace("FENCE", fence)
    ext = load_inline(f"fused_moe_prologue_{KERNEL}", cpp_sources="torch::Tensor fused_moe_prologue(torch::Tensor x);",
                      cuda_sources=cuda, functions=["fused_moe_prologue"], verbose=True)
    ext.fused_moe_prologue(torch.ones(1024, device="cuda"))
    torch.cuda.synchronize()
    s.log.info("Custom kernel ready.")
    s.ready()
except Exception:
    s.fail()
