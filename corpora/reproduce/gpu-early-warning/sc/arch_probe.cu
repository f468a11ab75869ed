// env.gpu-arch-unsupported probe: the same kernel built for sm_75 only (bad) or sm_90 (good).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
int main() {
  float* d; cudaMalloc(&d, 1 << 20);
  scale<<<256, 256>>>(d, 2.f, 1 << 18);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) { fprintf(stderr, "CUDA error at %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(e), cudaGetErrorName(e)); return 1; }
  printf("scale kernel ok\n"); return 0;
}
