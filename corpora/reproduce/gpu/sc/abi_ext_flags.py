# A torch C++ extension built at start-up by torch.utils.cpp_extension.load_inline(verbose=True), with the
# build flags an extension of an older torch build carried (EXTRA_CFLAGS, e.g. "-D_GLIBCXX_USE_CXX11_ABI=0":
# torch pip wheels before 2.6 used the pre-C++11 std::string ABI; torch 2.11 uses the C++11 one).
# KIND=tensor: an op that takes a tensor and checks its argument with TORCH_CHECK (std::string messages);
# KIND=plain: a helper on plain integers that calls nothing of libtorch. "[repro]" lines are this script's.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
from torch.utils.cpp_extension import load_inline  # noqa: E402

KIND = os.environ.get("KIND", "tensor")
flags = os.environ.get("EXTRA_CFLAGS", "").split()
SRC = {
    "tensor": r'''
#include <torch/extension.h>
torch::Tensor rms_scale(torch::Tensor x, double eps) {
  TORCH_CHECK(x.dim() == 2, "rms_scale expects a 2-D tensor, got ", x.dim(), " dimensions");
  return x * (x.pow(2).mean(-1, true) + eps).rsqrt();
}
''',
    "plain": r'''
#include <torch/extension.h>
int64_t pages_for(int64_t tokens, int64_t page_size) { return (tokens + page_size - 1) / page_size; }
''',
}
FN = {"tensor": "rms_scale", "plain": "pages_for"}
say(f"torch {torch.__version__} (C++11 ABI: {torch._C._GLIBCXX_USE_CXX11_ABI}); building ext_{KIND} with extra "
    f"cflags {flags}")
mod = load_inline(name=f"ext_{KIND}", cpp_sources=SRC[KIND], functions=[FN[KIND]], extra_cflags=flags,
                  verbose=True)
say(f"loaded {mod.__file__}")
if KIND == "tensor":
    y = mod.rms_scale(torch.randn(4, 1024, device="cuda"), 1e-6)
    say(f"rms_scale ran on {y.device}: {tuple(y.shape)}")
else:
    say(f"pages_for(1000, 16) = {mod.pages_for(1000, 16)}")
