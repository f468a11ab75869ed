# gpu.illegal-access: vectorised float4 load through a pointer that is not 16-byte aligned.
import cupy as cp
src = r'''
extern "C" __global__ void vec_copy(const char* in, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4* p = reinterpret_cast<const float4*>(in + 4);   // off by one float
  if (i < n) out[i] = p[i];
}'''
k = cp.RawKernel(src, "vec_copy")
n = 4096
inp = cp.zeros(n * 16 + 16, dtype=cp.uint8)
out = cp.zeros((n, 4), dtype=cp.float32)
k(((n + 127) // 128,), (128,), (inp, out, cp.int32(n)))
cp.cuda.runtime.deviceSynchronize()
print("done")
