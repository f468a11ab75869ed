# env.library-missing: a JIT helper dlopen()s the CUDA 12 NVRTC on a CUDA 13 machine; SGLang wrapper.
import os, sys, ctypes
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit
logger = sglang_logger(0)

def load_nvrtc():
    for name in ("libnvrtc.so.12",):
        return ctypes.CDLL(name)

try:
    logger.info("Init torch distributed begin.")
    logger.info("Loading NVRTC for the DeepGEMM JIT runtime...")
    nvrtc = load_nvrtc()
    logger.info("NVRTC loaded")
except Exception:
    sglang_report_and_exit(logger)
