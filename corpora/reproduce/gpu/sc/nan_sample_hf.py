# Sampling from a transformers Llama (built from a config, random weights, nothing downloaded) whose output
# head has large weights, as some checkpoints' heads do: in float16 the logits pass float16's largest value
# (65504), in bfloat16 they do not. Lines with "[repro]" are this script's own.
# Knobs: DTYPE=float16|bfloat16  HEAD_SCALE=200000
import os, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import transformers  # noqa: E402

E = os.environ.get
dtype = getattr(torch, E("DTYPE", "bfloat16"))
torch.manual_seed(0)
cfg = transformers.LlamaConfig(vocab_size=4000, hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
                               num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024,
                               bos_token_id=1, eos_token_id=2, pad_token_id=2, tie_word_embeddings=False)
model = transformers.LlamaForCausalLM(cfg)
with torch.no_grad():
    model.lm_head.weight.mul_(float(E("HEAD_SCALE", "200000")))
model = model.to("cuda", dtype=dtype).eval()
say(f"torch {torch.__version__} transformers {transformers.__version__}; model on cuda, {dtype}")
ids = torch.randint(3, 4000, (4, 32), device="cuda")
for req in range(3):
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=16,
                             do_sample=True, temperature=0.7, top_p=0.95)
    say(f"request {req}: generated {out.shape[1] - ids.shape[1]} tokens, last ids {out[0, -4:].tolist()}")
