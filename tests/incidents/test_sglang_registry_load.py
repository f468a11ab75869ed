"""Issue 27 (phase on healthy logs): SGLang imports its model registry when the loader resolves the
model's architecture, and each rank says which model modules it skipped ("Ignore import error when
loading sglang.srt.models.X"): the ranks had started to load the model. Lines built here."""
from __future__ import annotations

from forensics.api import classify

_ARGS = "[2025-08-24 06:25:20] server_args=ServerArgs(model_path='org/model', tp_size=2)"
_SKIPS = [f"[2025-08-24 06:25:37 TP{r}] Ignore import error when loading sglang.srt.models.glm4v_moe: "
          "No module named 'transformers.models.glm4v_moe'" for r in (0, 1)]


def test_the_registrys_skips_are_the_model_load():
    d = classify("\n".join([_ARGS, *_SKIPS]) + "\n")
    assert (d["verdict"], d["phase"]) == ("starting", "load-weights")


def test_a_later_step_stays_where_it_is():
    later = ["[2025-08-24 06:26:10 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB",
             "[2025-08-24 06:26:11 TP0] KV Cache is allocated. #tokens: 500000, K size: 20 GB, V size: 20 GB",
             "[2025-08-24 06:26:11 TP0] Memory pool end. avail mem=18.5 GB"]
    d = classify("\n".join([_ARGS, *_SKIPS, *later]) + "\n")
    assert d["phase"] == "memory-plan"
