# transformers models built from a config (random weights, nothing downloaded) and a word-level tokenizer
# with model_max_length=MAXPOS, run on the GPU. The context that decides whether a prompt or a generation
# past MAXPOS positions is harmless: MODEL=gpt2 (learned absolute positions: an embedding of MAXPOS rows)
# or MODEL=llama (rotary positions: no table to index past). Lines with "[repro]" are this script's own.
# Knobs: MODEL=gpt2|llama  MAXPOS=256  PROMPT_WORDS=N  MAX_NEW=N  INPUT_DEVICE=cuda|cpu
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
if MODEL == "gpt2":
    cfg = transformers.GPT2Config(vocab_size=len(vocab), n_positions=MAXPOS, n_embd=512, n_layer=4, n_head=8,
                                  bos_token_id=1, eos_token_id=1, pad_token_id=1)
    model = transformers.GPT2LMHeadModel(cfg)
else:
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=512, intermediate_size=1024,
                                   num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8,
                                   max_position_embeddings=MAXPOS, bos_token_id=1, eos_token_id=1, pad_token_id=1)
    model = transformers.LlamaForCausalLM(cfg)
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
