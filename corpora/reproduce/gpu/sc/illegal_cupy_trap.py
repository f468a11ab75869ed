# gpu.illegal-access: a kernel that traps (what a failed device check compiled with -DNDEBUG off can do).
import cupy as cp
src = r'''
extern "C" __global__ void check_bounds(const int* ids, int n, int vocab) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && ids[i] >= vocab) __trap();
}'''
k = cp.RawKernel(src, "check_bounds")
ids = cp.arange(1024, dtype=cp.int32) * 200
k((4,), (256,), (ids, cp.int32(1024), cp.int32(151936)))
cp.cuda.runtime.deviceSynchronize()
print("done")
