# gpu.illegal-access: temperature 0 from the request defaults; numpy warns "divide by zero" while
# computing 1/temperature; the NaN/inf probabilities trip torch.multinomial's device-side assert.
# Twin: temperature 0.7.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import SGLang
s = SGLang(model_path="Qwen/Qwen2.5-7B-Instruct", sampling_backend="pytorch")
import numpy as np, torch
s.start()
try:
    s.init_dist(torch)
    s.load_begin(torch); b = torch.cuda.mem_get_info()[0]
    w = torch.randn(4096, 32000, device="cuda") * 0.02
    s.load_end(torch, b, arch="Qwen2ForCausalLM")
    temps = np.array([float(os.environ.get("DEFAULT_TEMPERATURE", "0.7"))] * 8, dtype=np.float32)
    inv = (np.float32(1.0) / temps)
    time.sleep(2)
    s.log.info("Warmup: sampling 8 dummy requests")
    h = torch.randn(8, 4096, device="cuda")
    logits = (h @ w) * torch.from_numpy(inv).cuda()[:, None]
    logits = logits - logits          # inf - inf = nan where 1/T = inf
    probs = torch.softmax(logits * torch.from_numpy(inv).cuda()[:, None], -1)
    tok = torch.multinomial(probs, 1)
    torch.cuda.synchronize()
    s.log.info(f"Warmup done. tokens={tok.flatten().tolist()}")
    s.ready()
except Exception:
    s.fail()
