# gpu.out-of-memory: vLLM-style profile run that keeps allocating activations until CUDA OOM.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import vllm_logger, gib
logger = vllm_logger()
import torch

def profile_run():
    t0 = time.time()
    logger.info("Starting to load model /models/Qwen2.5-72B-Instruct...")
    w = torch.empty(72 << 30, dtype=torch.uint8, device="cuda")
    logger.info("Model loading took %.4f GiB and %.6f seconds", gib(w.numel()), time.time() - t0)
    acts = []
    for i in range(64):
        acts.append(torch.empty(12 << 30, dtype=torch.uint8, device="cuda"))

def run_engine_core():
    try:
        profile_run()
    except Exception:
        logger.exception("EngineCore failed to start.")
        raise

try:
    run_engine_core()
except Exception:
    sys.stdout.flush()
    raise RuntimeError("Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}")
