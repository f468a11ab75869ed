// toolchain.compile-failed: Hopper-only PTX built for sm_80 -> ptxas rejects it.
__global__ void gemm_prologue(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  out[threadIdx.x] = 0.f;
}
