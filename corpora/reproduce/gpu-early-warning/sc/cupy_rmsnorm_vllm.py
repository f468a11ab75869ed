# env.library-missing: no NVRTC on the host (no toolkit, no nvidia-cuda-nvrtc wheel). CuPy compiles
# its kernels with NVRTC on first use. Twin: complete install.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model="microsoft/Phi-3-mini-4k-instruct", max_model_len=4096)
v.start(None)
try:
    import cupy as cp
    v.eng.info(f"CuPy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    time.sleep(1)
    v.eng.info("Starting to load model microsoft/Phi-3-mini-4k-instruct...")
    w = cp.random.standard_normal((4096, 4096), dtype=cp.float32)
    v.eng.info("Compiling fused RMSNorm kernel.")
    k = cp.ElementwiseKernel("float32 x, float32 r", "float32 y", "y = x * rsqrtf(r + 1e-6f)", "rmsnorm_scale")
    y = k(w, cp.float32(2.0))
    cp.cuda.runtime.deviceSynchronize()
    v.eng.info(f"Kernel ok: {float(y[0, 0]):.3f}")
    v.ready()
except Exception:
    v.fail()
