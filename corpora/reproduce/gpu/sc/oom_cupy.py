# gpu.out-of-memory: CuPy memory pool runs out (plain script, no wrapper).
import cupy as cp
print("cupy", cp.__version__, "device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
a = cp.zeros((100 << 30) // 4, dtype=cp.float32)
print("allocated 100 GiB workspace")
b = cp.zeros((60 << 30) // 4, dtype=cp.float32)
print("allocated second workspace")
