# toolchain.compiler-missing: load_inline of a small CUDA op; the environment decides what is missing
# (PATH without ninja, CUDA_HOME pointing nowhere, CXX not installed, or no CUDA toolkit at all).
import os, sys
import torch
from torch.utils.cpp_extension import load_inline
print(f"[jit] building rotary_emb extension (torch {torch.__version__}, CUDA_HOME={os.environ.get('CUDA_HOME')}, CXX={os.environ.get('CXX')})", flush=True)
cpp = "torch::Tensor rotary(torch::Tensor x);"
cuda = r'''
#include <torch/extension.h>
__global__ void rot_kernel(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = -x[i]; }
torch::Tensor rotary(torch::Tensor x) { int n = x.numel(); rot_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n); return x; }
'''
ext = load_inline(sys.argv[1] if len(sys.argv) > 1 else "rotary_emb_ext", cpp_sources=cpp, cuda_sources=cuda, functions=["rotary"], verbose=True)
print(ext.rotary(torch.ones(4, device="cuda")))
