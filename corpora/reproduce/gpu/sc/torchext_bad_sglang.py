# toolchain.compile-failed: torch cpp_extension load_inline of CUDA code with a compile error, SGLang wrapper.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit
logger = sglang_logger(0)
import torch
from torch.utils.cpp_extension import load_inline

cpp = "torch::Tensor moe_align(torch::Tensor ids, int64_t block);"
cuda = r'''
#include <torch/extension.h>
__global__ void moe_align_kernel(const int* ids, int* out, int n, int block) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (ids[i] + block - 1) / block * block;
}
torch::Tensor moe_align(torch::Tensor ids, int64_t block) {
  auto out = torch::empty_like(ids);
  int n = ids.numel();
  moe_align_kernel<<<(n + 255) / 256, 256>>>(ids.data_ptr<int>(), out.data_ptr<float>(), n, block);
  return out
}
'''
try:
    logger.info("Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=72.31 GB, mem usage=61.02 GB.")
    logger.info("JIT compiling moe_align_block_size kernels...")
    ext = load_inline("moe_align_ops", cpp_sources=cpp, cuda_sources=cuda, functions=["moe_align"])
except Exception:
    sglang_report_and_exit(logger)
