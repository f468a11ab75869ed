"""Phases from what released packages print (phases.yaml): a terminal's Ctrl-C after the server
served is the operator's stop; Hugging Face's loaders say the model is being loaded."""
from __future__ import annotations

from forensics import classify_text

_SERVED = "\n".join([
    "llama_model_loader: loaded meta data with 20 key-value pairs and 291 tensors from /m/mistral-7b.Q2_K.gguf (version GGUF V2)",
    "llama_new_context_with_model: n_ctx      = 2048",
    "llama_new_context_with_model: kv self size  = 256.00 MB",
    '{"timestamp":1710246275,"level":"INFO","function":"server_cli","line":3289,"message":"HTTP server listening","port":"8080","hostname":"127.0.0.1"}',
    "slot 0 is processing [task id: 0]",
    "print_timings: prompt eval time =    4391.73 ms /    76 tokens (   57.79 ms per token,    17.31 tokens per second)",
    "print_timings:        eval time =     695.26 ms /    14 runs   (   49.66 ms per token,    20.14 tokens per second)",
    "slot 0 released (91 tokens in cache)",
]) + "\n"


def test_served_then_ctrl_c_is_shutdown():
    assert classify_text(_SERVED)["phase"] == "serving"
    out = classify_text(_SERVED + "^C\n")
    assert (out["verdict"], out["phase"]) == ("ready", "shutdown")
    out = classify_text(_SERVED + "^C^C\n")  # pressed twice before it exits: one line of echoes
    assert (out["verdict"], out["phase"]) == ("ready", "shutdown")


def test_ctrl_c_during_start_up_is_not_shutdown():
    out = classify_text(_SERVED.split("\n", 3)[0] + "\n^C\n")
    assert out["phase"] != "shutdown"


def test_hugging_face_loading_lines_are_load_weights():
    log = "\n".join([
        "INFO:     Started server process [1]",
        "Fetching 5 files:  40%|████      | 2/5 [00:01<00:03,  1.06s/it]",
        "Fetching 5 files: 100%|██████████| 5/5 [00:01<00:00,  2.71it/s]",
    ]) + "\n"
    assert classify_text(log)["phase"] == "load-weights"
