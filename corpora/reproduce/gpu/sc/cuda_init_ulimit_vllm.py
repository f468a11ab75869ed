# A vLLM-shaped start-up run under an address-space limit (the driver's `ulimit -v`, as a shared
# host's limits.conf or a batch system sets): CUDA's initialisation reserves a large virtual address
# range and fails, although the GPU is empty.
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import VLLM
v = VLLM(model="Qwen/Qwen2.5-7B-Instruct", max_model_len=8192)
import torch
v.start()
try:
    m = v.load(torch, lambda: torch.nn.Linear(4096, 4096).to("cuda", torch.bfloat16))
    v.kv(torch, 100000)
    v.ready()
except Exception:
    v.fail()
