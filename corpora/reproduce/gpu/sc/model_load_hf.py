# A server-like load of a local transformers checkpoint onto the GPU, then a few generated tokens. The script
# first writes a small Llama checkpoint (random weights, safetensors, sharded) and then damages it as MODE says:
#   ok | truncated (a shard cut short, as an interrupted copy leaves it) | missing-shard (one shard not copied)
#   no-config (config.json not copied) | bad-type (config.json names an unknown model_type)
#   size-mismatch (config.json's intermediate_size differs from the weights)
#   extra-key (the weights carry a key the model has no parameter for, as old checkpoints' inv_freq)
# Lines with "[repro]" are this script's own.
import json, os, shutil, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

MODE = os.environ.get("MODE", "ok")
CKPT = f"/tmp/ckpt-{MODE}"
shutil.rmtree(CKPT, ignore_errors=True)
torch.manual_seed(0)
cfg = transformers.LlamaConfig(vocab_size=4000, hidden_size=512, intermediate_size=1024, num_hidden_layers=6,
                               num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024,
                               bos_token_id=1, eos_token_id=2, pad_token_id=2)
transformers.LlamaForCausalLM(cfg).to(torch.bfloat16).save_pretrained(CKPT, max_shard_size="10MB")
shards = sorted(f for f in os.listdir(CKPT) if f.endswith(".safetensors"))
say(f"checkpoint written: {CKPT} ({len(shards)} shards); mode={MODE}")


def edit_config(**kw):
    path = os.path.join(CKPT, "config.json")
    c = json.load(open(path))
    c.update(kw)
    json.dump(c, open(path, "w"), indent=2)


last = os.path.join(CKPT, shards[-1])
if MODE == "truncated":
    os.truncate(last, os.path.getsize(last) // 2)
elif MODE == "missing-shard":
    os.remove(last)
elif MODE == "no-config":
    os.remove(os.path.join(CKPT, "config.json"))
elif MODE == "bad-type":
    edit_config(model_type="llama5")
elif MODE == "size-mismatch":
    edit_config(intermediate_size=1536)
elif MODE == "extra-key":
    sd = load_file(last)
    sd["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.ones(32)
    save_file(sd, last, metadata={"format": "pt"})
say(f"torch {torch.__version__} transformers {transformers.__version__}; loading {CKPT}")
t0 = time.time()
model = transformers.AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16).to("cuda").eval()
say(f"weights loaded in {time.time() - t0:.1f}s")
ids = torch.randint(3, 4000, (1, 16), device="cuda")
with torch.no_grad():
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, do_sample=False)
say(f"generated {out.shape[1] - ids.shape[1]} tokens: {out[0, -8:].tolist()}")
