"""toolchain.compiler-missing / toolchain.compile-failed: real JIT builds with
torch.utils.cpp_extension.load_inline (torch 2.13.0 CPU), gcc and nvcc."""
import os
import shutil
import subprocess
import sys
import sysconfig

import common

GOOD_CPP = """
#include <torch/extension.h>
torch::Tensor silu_and_mul(torch::Tensor x) {
  auto d = x.size(-1) / 2;
  return torch::silu(x.narrow(-1, 0, d)) * x.narrow(-1, d, d);
}
"""


def _build_dir(name):
    d = common.workdir("jit-" + name)
    shutil.rmtree(d)
    os.makedirs(d)
    return d


def _load_inline(name, cpp, functions, **kw):
    from torch.utils.cpp_extension import load_inline
    return load_inline(name=name, cpp_sources=[cpp], functions=functions,
                       build_directory=_build_dir(name), **kw)


def _path_without(*tools):
    """A PATH that has gcc & co. but not the named tools."""
    d = common.workdir("bin-without-" + "-".join(tools))
    for t in ("gcc", "g++", "c++", "cc", "as", "ld", "sh", "which", "ninja", "nvcc"):
        src = shutil.which(t)
        dst = os.path.join(d, t)
        if src and t not in tools and not os.path.exists(dst):
            os.symlink(src, dst)
    os.environ["PATH"] = os.path.dirname(sys.executable) + ":" + d


# ---- compiler-missing -------------------------------------------------------
def ninja_missing():
    _path_without("ninja")
    _load_inline("sgl_silu_and_mul", GOOD_CPP, ["silu_and_mul"])


def ninja_missing_cuda():
    _path_without("ninja")
    from torch.utils.cpp_extension import load_inline
    load_inline(name="fused_moe_align", cpp_sources=["void align(){}"],
                cuda_sources=["__global__ void k(){}"], functions=["align"],
                build_directory=_build_dir("fused_moe_align"))


def cxx_missing():
    os.environ["CXX"] = "/usr/bin/g++-14"
    _load_inline("rotary_embedding_cpu", GOOD_CPP, ["silu_and_mul"])


def cuda_home_bogus():
    os.environ["CUDA_HOME"] = "/usr/local/cuda-12.8"
    from torch.utils.cpp_extension import load_inline
    load_inline(name="fp8_quant_kernel", cpp_sources=["void quant();"],
                cuda_sources=["__global__ void k(){}\nvoid quant(){ k<<<1,1>>>(); }"],
                functions=["quant"], build_directory=_build_dir("fp8_quant_kernel"))


def cuda_home_unset():
    os.environ.pop("CUDA_HOME", None)
    os.environ.pop("CUDA_PATH", None)
    import torch.utils.cpp_extension as ce
    ce.CUDA_HOME = None  # as on a host without /usr/local/cuda and nvcc on PATH
    ce.load_inline(name="moe_sum_cuda", cpp_sources=["void moe_sum();"],
                   cuda_sources=["__global__ void k(){}\nvoid moe_sum(){ k<<<1,1>>>(); }"],
                   functions=["moe_sum"], build_directory=_build_dir("moe_sum_cuda"))


def nvcc_not_on_path():
    # a flashinfer/tvm-ffi style JIT that shells out to `nvcc` directly
    _path_without("nvcc")
    d = common.workdir("jit-nvcc")
    open(os.path.join(d, "batch_decode.cu"), "w").write("__global__ void k(){}\n")
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a",
                    "-c", "batch_decode.cu", "-o", "batch_decode.cuda.o"], cwd=d, check=True)


def _triton_style_build(name, include_dirs, src):
    """like triton/runtime/build.py::_build: cc <src> -O3 -shared -fPIC -I... -o mod.so"""
    d = common.workdir("cc-" + name)
    c = os.path.join(d, name + ".c")
    open(c, "w").write(src)
    so = os.path.join(d, name + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = os.environ.get("CC") or shutil.which("gcc")
    cmd = [cc, c, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", so]
    cmd += [f"-I{i}" for i in include_dirs]
    subprocess.check_call(cmd)


PY_EXT_SRC = """#include <Python.h>
static struct PyModuleDef M = {PyModuleDef_HEAD_INIT, "cuda_utils", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_cuda_utils(void) { return PyModule_Create(&M); }
"""


def python_h_missing():
    # interpreter include dir reported by a relocated/conda-packed python that is gone
    _triton_style_build("cuda_utils", ["/opt/conda/envs/sglang/include/python3.11",
                                       "/usr/local/cuda/include"], PY_EXT_SRC)


def python_h_missing_cpp():
    # the same through torch's JIT: point the Python include at a non-existent prefix
    import torch.utils.cpp_extension as ce
    import sysconfig as sc
    real = sc.get_paths
    sc.get_paths = lambda *a, **k: {**real(*a, **k), "include": "/usr/local/python3.11-slim/include/python3.11"}
    ce.load_inline(name="cpu_gemm_ext", cpp_sources=[GOOD_CPP], functions=["silu_and_mul"],
                   build_directory=_build_dir("cpu_gemm_ext"))


# ---- compile-failed ---------------------------------------------------------
def syntax_error():
    _load_inline("sgl_fused_add_rmsnorm", """
#include <torch/extension.h>
torch::Tensor fused_add_rmsnorm(torch::Tensor x, torch::Tensor w) {
  auto var = x.pow(2).mean(-1, true)
  return x * torch::rsqrt(var + 1e-6) * w;
}
""", ["fused_add_rmsnorm"])


def type_error():
    _load_inline("vllm_cpu_attn", """
#include <torch/extension.h>
torch::Tensor paged_attention(torch::Tensor q, torch::Tensor k) {
  int64_t block_size = k.sizes();
  return torch::matmul(q, k.transpose(-1, -2)) / std::sqrt((double)block_size);
}
""", ["paged_attention"])


def undeclared():
    _load_inline("moe_topk_softmax", """
#include <torch/extension.h>
torch::Tensor topk_softmax(torch::Tensor gating, int64_t k) {
  auto probs = torch::softmax(gating, -1);
  return std::get<0>(torch::topk(probs, topk_size));
}
""", ["topk_softmax"])


def link_error():
    _load_inline("awq_dequant_cpu", """
#include <torch/extension.h>
torch::Tensor awq_dequantize_impl(torch::Tensor q);
torch::Tensor awq_dequantize(torch::Tensor q) { return awq_dequantize_impl(q); }
""", ["awq_dequantize"])


def nvcc_syntax():
    d = common.workdir("nvcc-syntax")
    open(os.path.join(d, "merge_attn_states.cu"), "w").write("""
template <typename T>
__global__ void merge_attn_states(T* out, const T* a, const T* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i]
}
template __global__ void merge_attn_states<float>(float*, const float*, const float*, int);
""")
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-c", "merge_attn_states.cu", "-o", "merge_attn_states.o"],
                   cwd=d, check=True)


def nvcc_arch():
    d = common.workdir("nvcc-arch")
    open(os.path.join(d, "gemm_sm35.cu"), "w").write("__global__ void k(float* x){ x[0] = 1.f; }\n")
    subprocess.run(["nvcc", "-gencode=arch=compute_35,code=sm_35", "-c", "gemm_sm35.cu", "-o", "gemm_sm35.o"],
                   cwd=d, check=True)


def gcc_c_error():
    _triton_style_build("launcher_fp8", [sysconfig.get_paths()["include"]], """#include <Python.h>
#include <stdint.h>
static void _launch(int gridX, int gridY, CUstream stream, CUfunction function) {
  void *params[] = { };
  if (gridX*gridY > 0) { cuLaunchKernel(function, gridX, gridY, 1, 128, 1, 1, 0, stream, params, 0); }
}
""")


VARIANTS = {
    "ninja_missing": ninja_missing,
    "ninja_missing_cuda": ninja_missing_cuda,
    "cxx_missing": cxx_missing,
    "cuda_home_bogus": cuda_home_bogus,
    "cuda_home_unset": cuda_home_unset,
    "nvcc_not_on_path": nvcc_not_on_path,
    "python_h_missing": python_h_missing,
    "python_h_missing_cpp": python_h_missing_cpp,
    "syntax_error": syntax_error,
    "type_error": type_error,
    "undeclared": undeclared,
    "link_error": link_error,
    "nvcc_syntax": nvcc_syntax,
    "nvcc_arch": nvcc_arch,
    "gcc_c_error": gcc_c_error,
}

if __name__ == "__main__":
    common.main(VARIANTS)
