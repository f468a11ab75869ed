# env.gpu-arch-unsupported: loading a prebuilt sm_80 cubin on an sm_90 device through CuPy.
import sys
import cupy as cp
path = sys.argv[1]
print(f"loading precompiled kernels from {path}")
mod = cp.RawModule(path=path)
fn = mod.get_function("silu_and_mul")
x = cp.zeros(8192, dtype=cp.float32); o = cp.zeros(4096, dtype=cp.float32)
fn((16,), (256,), (o, x, cp.int32(4096)))
cp.cuda.runtime.deviceSynchronize()
print("ok")
