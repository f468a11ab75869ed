"""config.model-load: real transformers/safetensors failures on broken model
directories (offline: HF_HUB_OFFLINE=1, no hub access)."""
import json
import os
import shutil
import struct

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import common

CFG = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 64,
       "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
       "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 512,
       "torch_dtype": "bfloat16"}


def _model_dir(name, config=CFG, raw_config=None):
    d = os.path.join(common.WORK, "models", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if raw_config is not None:
        open(os.path.join(d, "config.json"), "w").write(raw_config)
    elif config is not None:
        json.dump(config, open(os.path.join(d, "config.json"), "w"), indent=2)
    return d


def missing_config():
    from transformers import AutoConfig
    d = _model_dir("Qwen2.5-7B-Instruct", config=None)
    open(os.path.join(d, "model.safetensors.index.json"), "w").write("{}")
    AutoConfig.from_pretrained(d)


def unknown_model_type():
    from transformers import AutoConfig
    d = _model_dir("Qwen9-Next-80B-A3B", config={**CFG, "model_type": "qwen9_next", "architectures": ["Qwen9NextForCausalLM"]})
    AutoConfig.from_pretrained(d)


def bad_json_config():
    from transformers import AutoConfig
    d = _model_dir("Llama-3.1-8B-Instruct", raw_config='{\n  "architectures": ["LlamaForCausalLM"],\n  "hidden_size": 4096,\n  "rope_scaling": {"factor": 8.0, "rope_type": "llama3",}\n}\n')
    AutoConfig.from_pretrained(d)


def _write_safetensors(path, header_len_override=None, truncate=None, header_bytes=None):
    import numpy as np
    from safetensors.numpy import save_file
    save_file({"model.embed_tokens.weight": np.zeros((256, 64), dtype=np.float32),
               "lm_head.weight": np.zeros((256, 64), dtype=np.float32)}, path)
    data = bytearray(open(path, "rb").read())
    if header_len_override is not None:
        data[:8] = struct.pack("<Q", header_len_override)
    if header_bytes is not None:
        n = struct.unpack("<Q", data[:8])[0]
        data[8:8 + n] = header_bytes.ljust(n)[:n]
    if truncate is not None:
        data = data[:truncate]
    open(path, "wb").write(bytes(data))


def _load_st(path):
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def st_header_too_large():
    d = _model_dir("Meta-Llama-3-8B")
    p = os.path.join(d, "model-00001-of-00004.safetensors")
    _write_safetensors(p, header_len_override=0x7B22646174612E22)  # HTML/JSON bytes where the length is
    _load_st(p)


def st_incomplete():
    d = _model_dir("Mistral-7B-Instruct-v0.3")
    p = os.path.join(d, "model-00002-of-00003.safetensors")
    _write_safetensors(p, truncate=4000)  # interrupted download
    _load_st(p)


def st_bad_header_json():
    d = _model_dir("gemma-2-9b-it")
    p = os.path.join(d, "model-00003-of-00004.safetensors")
    _write_safetensors(p, header_bytes=b'{"lm_head.weight":{"dtype":"F32","shape":[256,64],"data_offsets":[0,')
    _load_st(p)


def st_lfs_pointer():
    d = _model_dir("Qwen2.5-0.5B-Instruct")
    p = os.path.join(d, "model.safetensors")
    open(p, "w").write("version https://git-lfs.github.com/spec/v1\noid sha256:fdf756fa7fcbe7404d5c60e26bff1a0c8b8aa1f72ced49e7dd0210fe288fb7fe\nsize 988097824\n")
    _load_st(p)


def tokenizer_missing():
    from transformers import AutoTokenizer
    d = _model_dir("DeepSeek-R1-Distill-Qwen-7B")
    json.dump({"tokenizer_class": "LlamaTokenizerFast", "model_max_length": 16384},
              open(os.path.join(d, "tokenizer_config.json"), "w"))
    # truncated tokenizer.json (interrupted copy)
    open(os.path.join(d, "tokenizer.json"), "w").write('{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [{"id": 0, "content": "<unk>"')
    AutoTokenizer.from_pretrained(d)


def torch_load_corrupt():
    import torch
    d = _model_dir("opt-125m")
    p = os.path.join(d, "pytorch_model.bin")
    open(p, "wb").write(b"PK\x03\x04" + os.urandom(2048))
    torch.load(p, map_location="cpu", weights_only=True)


VARIANTS = {
    "missing_config": missing_config,
    "unknown_model_type": unknown_model_type,
    "bad_json_config": bad_json_config,
    "st_header_too_large": st_header_too_large,
    "st_incomplete": st_incomplete,
    "st_bad_header_json": st_bad_header_json,
    "st_lfs_pointer": st_lfs_pointer,
    "tokenizer_missing": tokenizer_missing,
    "torch_load_corrupt": torch_load_corrupt,
}

if __name__ == "__main__":
    common.main(VARIANTS)
