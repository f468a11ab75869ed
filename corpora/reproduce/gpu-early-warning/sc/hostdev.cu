// toolchain.compile-failed: a __host__ __device__ helper calls a host-only function. nvcc warns
// (#20011-D) and the device build then cannot resolve the call. -DFIXED marks the helper's callee
// __host__ __device__ too.
#include <cstdio>
#include <cmath>
#ifdef FIXED
__host__ __device__
#endif
float softcap_host(float x, float cap) { return cap * tanhf(x / cap); }
__host__ __device__ float softcap(float x) { return softcap_host(x, 30.f); }
__global__ void logits_softcap(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = softcap(x[i]); }
int main() { float* d; cudaMalloc(&d, 4096 * sizeof(float)); logits_softcap<<<16, 256>>>(d, 4096);
  cudaError_t e = cudaDeviceSynchronize(); printf("softcap kernel: %s\n", cudaGetErrorString(e)); return e != cudaSuccess; }
