// A recursive device function (a tree walk with a per-frame scratch array): ptxas cannot size the
// stack statically and warns; whether it overflows depends on the depth asked at run time (argv[1])
// against the per-thread stack (cudaLimitStackSize, 1 KiB unless STACK_BYTES sets it).
#include <cstdio>
#include <cstdlib>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); \
  exit(1); } } while (0)

__device__ int walk(const int* tree, int node, int depth, int limit) {
  int scratch[32];
  for (int i = 0; i < 32; i++) scratch[i] = tree[(node + i) & 1023] + depth;
  if (depth >= limit) return scratch[node & 31];
  int r = walk(tree, (node * 7 + 1) & 1023, depth + 1, limit);
  return r ^ scratch[r & 31];
}

__global__ void walk_all(const int* tree, int* out, int limit) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = walk(tree, t & 1023, 0, limit);
}

int main(int argc, char** argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 4;
  size_t stack = 0;
  if (getenv("STACK_BYTES")) CK(cudaDeviceSetLimit(cudaLimitStackSize, atol(getenv("STACK_BYTES"))));
  CK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  printf("tree walk: depth %d, 264 blocks x 256 threads, per-thread stack %zu bytes\n", depth, stack);
  int *tree, *out;
  CK(cudaMalloc(&tree, 1024 * sizeof(int)));
  CK(cudaMalloc(&out, 264 * 256 * sizeof(int)));
  CK(cudaMemset(tree, 1, 1024 * sizeof(int)));
  walk_all<<<264, 256>>>(tree, out, depth);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int h[4];
  CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  printf("tree walk done: out[0..3] = %d %d %d %d\n", h[0], h[1], h[2], h[3]);
  return 0;
}
