# gpu.illegal-access: block offsets computed in int32 (numpy warns: overflow encountered in scalar
# multiply); the CuPy copy kernel writes at a negative offset. Twin: int64 offsets.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
import warnings
from srv import VLLM
v = VLLM(model="mistralai/Mistral-7B-Instruct-v0.3", max_model_len=32768, block_size=16, kv_cache_dtype="auto")
import numpy as np, cupy as cp, torch
v.start(torch)
kernel = cp.RawKernel(r'''
extern "C" __global__ void reshape_and_cache(float* cache, const float* src, long long off, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) cache[off + i] = src[i];
}''', "reshape_and_cache")
try:
    n_blocks, block_stride = 3000, 1 << 20   # 16 tokens x 8 heads x 128 dim x 64 layers (floats)
    cache = v.load(torch, lambda: cp.zeros(n_blocks * block_stride, dtype=cp.float32))
    v.kv(torch, n_blocks * 16)
    src = cp.ones(4096, dtype=cp.float32)
    itype = np.int32 if MODE == "bad" else np.int64
    time.sleep(1)
    v.eng.info("Warming up the KV cache write path.")
    for blk in (1, 1024, 2047, 2999):
        off = itype(blk) * itype(block_stride)
        kernel((16,), (256,), (cache, src, np.int64(off), np.int32(4096)))
    cp.cuda.runtime.deviceSynchronize()
    v.eng.info(f"KV cache write check: {float(cache[2999 * block_stride]):.1f}")
    v.ready()
except Exception:
    v.fail()
