// gpu.illegal-access: a CUDA C++ kernel with a bad stride, checked the usual way.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t err__ = (call); if (err__ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)err__, \
          cudaGetErrorName(err__), #call, cudaGetErrorString(err__)); exit(EXIT_FAILURE);} } while (0)
__global__ void rope_kernel(float* q, int n, long long stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) q[(long long)i * stride] *= 2.0f;
}
int main(int argc, char** argv) {
  long long stride = argc > 1 ? atoll(argv[1]) : (1LL << 24);
  int n = 1 << 16;
  float* q;
  CUDA_CHECK(cudaMalloc(&q, n * sizeof(float)));
  CUDA_CHECK(cudaMemset(q, 0, n * sizeof(float)));
  printf("launching rope_kernel n=%d stride=%lld\n", n, stride);
  fflush(stdout);
  rope_kernel<<<(n + 255) / 256, 256>>>(q, n, stride);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  printf("ok\n");
  return 0;
}
