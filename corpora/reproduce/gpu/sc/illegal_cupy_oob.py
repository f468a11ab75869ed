# gpu.illegal-access: CuPy RawKernel writing far outside its buffer.
import sys
import cupy as cp
src = r'''
extern "C" __global__ void fill(float* out, long long n, long long stride) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i * stride] = 1.0f;
}'''
k = cp.RawKernel(src, "fill")
n = 1 << 20
out = cp.zeros(n, dtype=cp.float32)
stride = int(sys.argv[1]) if len(sys.argv) > 1 else (1 << 20)
k(((n + 255) // 256,), (256,), (out, cp.int64(n), cp.int64(stride)))
cp.cuda.Device().synchronize()
print(float(out.sum()))
