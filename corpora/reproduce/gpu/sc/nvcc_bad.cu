// toolchain.compile-failed: a kernel source with type/template errors, built by a JIT wrapper through ninja.
#include <cuda_fp16.h>
#include <cstdint>
template <typename T, int VEC>
__global__ void fused_add_rmsnorm(T* __restrict__ x, const T* __restrict__ residual, const T* w, int d, float eps) {
  using vec_t = typename VecType<T, VEC>::type;
  float acc = 0.f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float v = float(x[i]) + float(residual[i]);
    acc += v * v
  }
  x[0] = __float2half(acc * eps);
}
template __global__ void fused_add_rmsnorm<half, 8>(half*, const half*, const half*, int, float);
