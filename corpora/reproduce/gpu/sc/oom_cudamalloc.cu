// gpu.out-of-memory: raw cudaMalloc with an error-check macro.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t err__ = (call); if (err__ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)err__, \
          cudaGetErrorName(err__), #call, cudaGetErrorString(err__)); exit(EXIT_FAILURE);} } while (0)
int main() {
  size_t free_b, total_b;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  printf("[workspace] device memory: free=%.2f GiB total=%.2f GiB\n", free_b / 1073741824.0, total_b / 1073741824.0);
  size_t want = (size_t)200 << 30;
  printf("[workspace] allocating %.2f GiB for the KV/workspace arena\n", want / 1073741824.0);
  fflush(stdout);
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, want));
  printf("ok\n");
  return 0;
}
