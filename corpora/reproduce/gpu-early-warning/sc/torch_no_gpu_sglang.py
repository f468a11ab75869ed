# env.driver-too-old: CUDA_VISIBLE_DEVICES names a GPU index the host does not have. torch warns
# "CUDA initialization: ..." at is_available(); the scheduler's set_device fails later. Twin: index 0.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", base_gpu_id=0)
import torch
s.start()
s.main.info(f"CUDA available: {torch.cuda.is_available()}")
time.sleep(2)
s.main.info("Load tokenizer from meta-llama/Llama-3.1-8B-Instruct")
time.sleep(1)
try:
    s.init_dist(None)
    torch.cuda.set_device(0)
    s.load_begin(torch)
    before = torch.cuda.mem_get_info()[0]
    w = [torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    s.load_end(torch, before)
    s.ready()
except Exception:
    s.fail()
