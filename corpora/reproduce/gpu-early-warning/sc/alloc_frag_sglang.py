# gpu.out-of-memory: the profile run frees a large block, a small allocation splits it, and the KV pool
# no longer fits without expandable segments. Bad: PYTORCH_CUDA_ALLOC_CONF has a misspelt key
# (torch warns about it); twin: expandable_segments:True spelt right.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang, gib
s = SGLang(model_path="Qwen/Qwen2.5-72B-Instruct", mem_fraction_static=0.7, tp_size=1)
import torch
s.start()
try:
    s.init_dist(torch)
    torch.cuda.set_device(0)
    free, total = torch.cuda.mem_get_info()
    s.load_begin(torch)
    before = torch.cuda.mem_get_info()[0]
    weights = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
    s.load_end(torch, before, arch="Qwen2ForCausalLM")
    free = torch.cuda.mem_get_info()[0]
    act = int(free * 0.62)
    s.log.info(f"Profile run: peak activation {gib(act):.2f} GB")
    a = torch.empty(act, dtype=torch.uint8, device="cuda")
    del a
    meta = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")   # req_to_token pool, carved from the cached block
    tokens = act // (80 * 2 * 8 * 128 * 2)
    k = torch.empty(act, dtype=torch.uint8, device="cuda")
    s.kv(torch, tokens, act // 2)
    s.graph_begin(torch); t = time.time(); s.graph_end(torch, t)
    s.ready(tokens)
except Exception:
    s.fail()
