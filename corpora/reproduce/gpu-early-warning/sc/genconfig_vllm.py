# config.invalid-argument: generation defaults temperature=0.0 with do_sample=False; transformers warns
# when the GenerationConfig is built and refuses to save it later. Twin: temperature unset.
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
from srv import VLLM
v = VLLM(model="/models/llama-3.1-8b-ft", generation_config="auto", override_generation_config={"temperature": 0.0} if MODE == "bad" else {})
import torch
v.start(torch)
try:
    import transformers
    from transformers import GenerationConfig
    kw = dict(do_sample=False, max_new_tokens=256)
    if MODE == "bad":
        kw["temperature"] = 0.0
        kw["top_p"] = 0.9
    gc = GenerationConfig(**kw)
    v.eng.info(f"Default sampling parameters have been overridden by the model's Hugging Face generation config: {kw}")
    w = v.load(torch, lambda: torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16))
    time.sleep(2)
    v.kv(torch, 240000)
    v.eng.info("Writing merged generation_config.json to the model cache")
    os.makedirs("/tmp/ewcap/genconfig", exist_ok=True)
    gc.save_pretrained("/tmp/ewcap/genconfig")
    v.ready()
except Exception:
    v.fail()
