# A checkpoint (ctx_positions_hf.py SAVE_ONLY=1) loaded the way a server loads it, with one of transformers'
# optional accelerations asked for: ATTN=flash_attention_2|sdpa|eager (attn_implementation) or
# QUANT=bnb4|bnb8 (bitsandbytes through BitsAndBytesConfig), then a short greedy generate() on the GPU.
# Lines with "[repro]" are this script's own.  Knobs: CKPT=dir  ATTN=...  QUANT=none|bnb4|bnb8
import os, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import transformers  # noqa: E402

E = os.environ.get
kw = {}
if E("ATTN"):
    kw["attn_implementation"] = E("ATTN")
quant = E("QUANT", "none")
if quant == "bnb4":
    kw["quantization_config"] = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
elif quant == "bnb8":
    kw["quantization_config"] = transformers.BitsAndBytesConfig(load_in_8bit=True)
say(f"torch {torch.__version__} transformers {transformers.__version__}; loading {E('CKPT')} with {sorted(kw)}")
model = transformers.AutoModelForCausalLM.from_pretrained(E("CKPT"), dtype=torch.bfloat16, device_map="cuda", **kw).eval()
say(f"loaded; attention implementation {model.config._attn_implementation}")
torch.manual_seed(0)
ids = torch.randint(2, 2000, (2, 32), device="cuda")
with torch.no_grad():
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16, do_sample=False)
say(f"generated: {tuple(out.shape)}")
