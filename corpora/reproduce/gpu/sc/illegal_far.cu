// gpu.illegal-access: one thread of a KV-cache write kernel gets a corrupt slot id and writes ~256 TiB past the buffer.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t err__ = (call); if (err__ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)err__, \
          cudaGetErrorName(err__), #call, cudaGetErrorString(err__)); exit(EXIT_FAILURE);} } while (0)
__global__ void store_kv(float* cache, const long long* slots, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) cache[slots[i]] = 1.0f;
}
int main() {
  int n = 4096;
  long long* h = (long long*)malloc(n * sizeof(long long));
  for (int i = 0; i < n; ++i) h[i] = i;
  h[17] = 1LL << 46;   // corrupted slot id
  float* cache; long long* slots;
  CUDA_CHECK(cudaMalloc(&cache, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&slots, n * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(slots, h, n * sizeof(long long), cudaMemcpyHostToDevice));
  printf("store_kv: %d tokens\n", n); fflush(stdout);
  store_kv<<<(n + 255) / 256, 256>>>(cache, slots, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  printf("ok\n");
  return 0;
}
