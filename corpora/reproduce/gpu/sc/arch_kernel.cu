// env.gpu-arch-unsupported: built with -gencode arch=compute_80,code=sm_80 only (no PTX), run on sm_90.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t err__ = (call); if (err__ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)err__, \
          cudaGetErrorName(err__), #call, cudaGetErrorString(err__)); exit(EXIT_FAILURE);} } while (0)
extern "C" __global__ void silu_and_mul(float* out, const float* x, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < d) { float a = x[i]; out[i] = a / (1.0f + __expf(-a)) * x[i + d]; }
}
int main() {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device 0: %s (sm_%d%d), running silu_and_mul benchmark\n", prop.name, prop.major, prop.minor);
  fflush(stdout);
  int d = 4096; float *x, *o;
  CUDA_CHECK(cudaMalloc(&x, 2 * d * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&o, d * sizeof(float)));
  silu_and_mul<<<(d + 255) / 256, 256>>>(o, x, d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  printf("ok\n");
  return 0;
}
