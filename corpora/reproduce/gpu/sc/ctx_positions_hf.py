# transformers models built from a config (random weights, nothing downloaded) and a word-level tokenizer
# with model_max_length=MAXPOS, run on the GPU. The context that decides whether a prompt or a generation
# past MAXPOS positions is harmless: MODEL=gpt2 (learned absolute positions: an embedding of MAXPOS rows)
# or MODEL=llama (rotary positions: no table to index past). Lines with "[repro]" are this script's own.
# Knobs: MODEL=gpt2|llama|opt|qwen2  MAXPOS=256  PROMPT_WORDS=N  MAX_NEW=N  INPUT_DEVICE=cuda|cpu
#   CKPT=dir: load the model with from_pretrained(dir), as a server loads its checkpoint (with
#   TRANSFORMERS_VERBOSITY=info transformers itself prints the config it read: architectures, model_type,
#   positions); SAVE_ONLY=1 writes that checkpoint (save_pretrained of the random model) and exits.
#   opt: learned absolute positions as gpt2; qwen2: rotary as llama.
import os, random, time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

try:
    from transformers import PreTrainedTokenizerFast as TokCls
except ImportError:  # transformers 5 may name the fast tokenizer class differently
    from transformers import TokenizersBackend as TokCls

E = os.environ.get
MODEL, MAXPOS = E("MODEL", "gpt2"), int(E("MAXPOS", "256"))
PROMPT_WORDS, MAX_NEW = int(E("PROMPT_WORDS", "64")), int(E("MAX_NEW", "16"))
say(f"torch {torch.__version__} transformers {transformers.__version__} model={MODEL} max positions {MAXPOS}")
words = [f"w{i}" for i in range(2000)]
vocab = {"[UNK]": 0, "[EOS]": 1, **{w: i + 2 for i, w in enumerate(words)}}
tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
tk.pre_tokenizer = pre_tokenizers.Whitespace()
tok = TokCls(tokenizer_object=tk, model_max_length=MAXPOS, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")


def build():
    ids = dict(vocab_size=len(vocab), bos_token_id=1, eos_token_id=1, pad_token_id=1)
    dims = dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=8,
                max_position_embeddings=MAXPOS, **ids)
    if MODEL == "gpt2":
        return transformers.GPT2LMHeadModel(transformers.GPT2Config(n_positions=MAXPOS, n_embd=512, n_layer=4, n_head=8, **ids))
    if MODEL == "opt":
        return transformers.OPTForCausalLM(transformers.OPTConfig(
            hidden_size=512, ffn_dim=1024, num_hidden_layers=4, num_attention_heads=8, word_embed_proj_dim=512,
            max_position_embeddings=MAXPOS, **ids))
    if MODEL == "qwen2":
        return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(num_key_value_heads=8, **dims))
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(num_key_value_heads=8, **dims))


CKPT = E("CKPT")
if E("SAVE_ONLY") == "1":
    build().save_pretrained(CKPT)
    say(f"saved {MODEL} to {CKPT}")
    raise SystemExit(0)
if CKPT:
    say(f"loading the checkpoint in {CKPT}")
    model = transformers.AutoModelForCausalLM.from_pretrained(CKPT, dtype=torch.bfloat16)
else:
    model = build()
model = model.to("cuda", dtype=torch.bfloat16).eval()
say(f"model on cuda: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, bf16")
random.seed(0)
prompt = " ".join(random.choice(words) for _ in range(PROMPT_WORDS))
enc = tok(prompt, return_tensors="pt", return_token_type_ids=False)
say(f"prompt: {enc['input_ids'].shape[1]} tokens; generating {MAX_NEW} new tokens")
if E("INPUT_DEVICE", "cuda") == "cuda":
    enc = enc.to("cuda")
with torch.no_grad():
    out = model.generate(**enc, max_new_tokens=MAX_NEW, min_new_tokens=MAX_NEW, do_sample=False)
say(f"generated: output length {out.shape[1]}, last ids {out[0, -4:].tolist()}")
