# toolchain.*: a server JIT-builds a CUDA op at start-up through torch.utils.cpp_extension.
# The environment decides (CXX, extra nvcc flags, TORCH_CUDA_ARCH_LIST). Real torch/nvcc/ninja output.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang
s = SGLang(model_path="deepseek-ai/DeepSeek-V2-Lite", trust_remote_code=True, attention_backend="triton")
import torch
from torch.utils.cpp_extension import load_inline
if os.environ.get("BUILD_ONLY"):
    print(f"Building kernels for torch {torch.__version__} (CUDA {torch.version.cuda}), TORCH_CUDA_ARCH_LIST={os.environ.get('TORCH_CUDA_ARCH_LIST')}", flush=True)
else:
    s.start()
    s.init_dist(torch)
cpp = "torch::Tensor fused_rmsnorm(torch::Tensor x, double eps);"
cuda = r'''
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void rms_kernel(float* out, const float* x, int d, float eps) {
  __shared__ float acc[256];
  int row = blockIdx.x; float s = 0.f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) { float v = x[row * d + i]; s += v * v; }
  acc[threadIdx.x] = s; __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) { if (threadIdx.x < k) acc[threadIdx.x] += acc[threadIdx.x + k]; __syncthreads(); }
  float r = rsqrtf(acc[0] / d + eps);
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[row * d + i] = x[row * d + i] * r;
}
torch::Tensor fused_rmsnorm(torch::Tensor x, double eps) {
  auto out = torch::empty_like(x);
  rms_kernel<<<x.size(0), 256>>>(out.data_ptr<float>(), x.data_ptr<float>(), x.size(1), (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
'''
try:
    if not os.environ.get("BUILD_ONLY"):
        s.log.info("Load weight begin. avail mem=%.2f GB" % (torch.cuda.mem_get_info()[0] / (1 << 30)))
        w = torch.randn(2048, 2048, device="cuda")
    s.log.info("JIT compiling fused_rmsnorm kernel (first start on this host)")
    flags = os.environ.get("EXTRA_NVCC_FLAGS", "").split()
    ext = load_inline(os.environ.get("EXT_NAME", "fused_rmsnorm_ext"), cpp_sources=cpp, cuda_sources=cuda,
                      functions=["fused_rmsnorm"], extra_cuda_cflags=flags, verbose=True)
    if os.environ.get("BUILD_ONLY"):
        print(f"Built {ext.__file__}", flush=True)
        sys.exit(0)
    y = ext.fused_rmsnorm(w, 1e-6)
    torch.cuda.synchronize()
    s.log.info("Load weight end. type=DeepseekV2ForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=0.02 GB." % (torch.cuda.mem_get_info()[0] / (1 << 30)))
    s.ready()
except Exception:
    s.fail()
