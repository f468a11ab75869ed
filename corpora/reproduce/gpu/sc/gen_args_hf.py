# generate() with the sampling arguments a serving request carries: a checkpoint (ctx_positions_hf.py
# SAVE_ONLY=1) loaded on the GPU, then generate(num_beams=NUM_BEAMS, num_return_sequences=NUM_RETURN,
# do_sample=False, temperature=TEMPERATURE). Lines with "[repro]" are this script's own.
# Knobs: CKPT=dir  NUM_BEAMS=N  NUM_RETURN=N  TEMPERATURE=x
import os, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import transformers  # noqa: E402

E = os.environ.get
beams, nret, temp = int(E("NUM_BEAMS", "1")), int(E("NUM_RETURN", "1")), float(E("TEMPERATURE", "0.7"))
model = transformers.AutoModelForCausalLM.from_pretrained(E("CKPT"), dtype=torch.bfloat16).to("cuda").eval()
say(f"request: num_beams={beams} num_return_sequences={nret} temperature={temp} do_sample=False")
torch.manual_seed(0)
ids = torch.randint(2, 2000, (1, 24), device="cuda")
with torch.no_grad():
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False,
                         num_beams=beams, num_return_sequences=nret, temperature=temp)
say(f"generated: {tuple(out.shape)}")
