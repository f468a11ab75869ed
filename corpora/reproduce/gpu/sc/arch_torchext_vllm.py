# env.gpu-arch-unsupported: torch extension JIT-built with TORCH_CUDA_ARCH_LIST=8.0 (no +PTX), run on H200.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger
logger = vllm_logger()
import torch
from torch.utils.cpp_extension import load_inline

cpp = "torch::Tensor silu_and_mul(torch::Tensor x);"
cuda = r'''
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void silu_and_mul_kernel(float* out, const float* x, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < d) { float a = x[i]; out[i] = a / (1.0f + __expf(-a)) * x[i + d]; }
}
torch::Tensor silu_and_mul(torch::Tensor x) {
  int d = x.size(-1) / 2;
  auto out = torch::empty({d}, x.options());
  silu_and_mul_kernel<<<(d + 255) / 256, 256>>>(out.data_ptr<float>(), x.data_ptr<float>(), d);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
'''
logger.info("Building custom ops with TORCH_CUDA_ARCH_LIST=%s", os.environ.get("TORCH_CUDA_ARCH_LIST"))
ext = load_inline("custom_act_ops", cpp_sources=cpp, cuda_sources=cuda, functions=["silu_and_mul"], verbose=True)
logger.info("Warming up activation kernels on %s", torch.cuda.get_device_name(0))
x = torch.randn(8192, device="cuda")
y = ext.silu_and_mul(x)
print(y.sum().item())
