"""Copy run_e6.sh's logs (runs e6-1 and e6-2) into corpora/gpu, corpora/gpu-early-warning and corpora/gpu-pairs,
add their rows to labels.csv / pairs.csv and their context pairs to corpora/gpu-pairs/context-warnings.csv
(rows already there are left alone).

usage: python corpora/reproduce/gpu/collect_e6.py LOGS   (LOGS: the logs/ folders of both runs' e6-logs.tar.gz,
       merged; their file names do not overlap apart from the checkpoints' save-* logs, which are not copied)
The labels below were written from reading the logs, before running forensics on them. Every substring is
checked (collect_jit's check, copy_failures and write_pairs): the fatal line and the early warning (before it)
in the failing log, the fatal line not in its good twin, a context pair's shared warning in both logs.
Logs are copied byte for byte.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_jit import add_context, add_labels, copy_failures, write_pairs  # noqa: E402

SC = "corpora/reproduce/gpu/sc/"
MACHINE = ("on nvidia-h100-x1 (1x H100 80GB HBM3 81559 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, "
           "transformers 5.17.0, accelerate 1.15.0, jax 0.11.2, CUDA 13.0)")
RUN2 = {"posinfo-prompt-opt", "posinfo-prompt-qwen2", "posinfo-gen-gpt2-128", "posinfo-gen-llama-128",
        "clip-fp16-1e5-bad", "clip-bf16-1e5-good"}
OURS = " (its '[repro]' lines are the script's own wording and imitate no real server)"
POS = (SC + "ctx_positions_hf.py" + OURS + ": a random-weight model written with save_pretrained, loaded with "
       "AutoModelForCausalLM.from_pretrained and TRANSFORMERS_VERBOSITY=info, so transformers itself prints the config it "
       "read ('Model config ...Config {', \"architectures\": [\"...\"], \"model_type\", the positions), then greedy "
       "generate() on the GPU with a word-level tokenizer of model_max_length = the positions")
HF = SC + "attn_quant_hf.py" + OURS + ": run e6-1's /tmp/ckpt-llama (ctx_positions_hf.py SAVE_ONLY=1) loaded with from_pretrained(device_map='cuda')"
GEN = SC + "gen_args_hf.py" + OURS + ": /tmp/ckpt-llama on the GPU, generate(do_sample=False, temperature=0.7)"
REM = "This is a friendly reminder - the current text generation call has exceeded the model's predefined maximum length"
TOK = "Token indices sequence length is longer than the specified maximum sequence length for this model (400 > 256)"
ASSERT = "torch.AcceleratorError: CUDA error: device-side assert triggered"
OPT_FATAL = "RuntimeError: Expected mha_graph.execute(handle, variant_pack, workspace_ptr.get()).is_good() to be true, but got false."


def ew_note(model, twin, pair, what):
    return (POS + f"; MODEL={model}: {what}; early warning MODERATE: the context twin ({twin}, rotary positions) prints "
            "the same warning with the same figure and generates: the architecture the config states decides "
            f"(learned absolute position embeddings index past their table); UNSURE phase serving (a generate() call); "
            f"twin corpora/gpu-pairs/gpu-pair-{pair}-good.log")


# source log, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("posinfo-gen-gpt2", "gpu-early-warning", "gpu-ew-hf-arch-gpt2-generate", "gpu.illegal-access", "serving",
     REM + " (256)", ASSERT, ew_note("gpt2 (GPT2LMHeadModel, n_positions 256)", "Llama", "hf-arch-gpt2-generate",
                                     "a 64-token prompt and 256 new tokens: the reminder, then 416 'indexSelectSmallIndex "
                                     "... srcIndex < srcSelectDimSize' assert lines and the AcceleratorError"), "train"),
    ("posinfo-gen-opt", "gpu-early-warning", "gpu-ew-hf-arch-opt-generate", "gpu.illegal-access", "serving",
     REM + " (256)", OPT_FATAL,
     ew_note("opt (OPTForCausalLM, max_position_embeddings 256)", "Qwen2", "hf-arch-opt-generate",
             "as the gpt2 row: 512 indexSelectSmallIndex assert lines, then the error surfaces in the next kernel, "
             "SDPA's cuDNN attention graph (mha_graph.execute ... is_good()), not as an AcceleratorError; UNSURE label "
             "gpu.illegal-access (the assert lines; the last line names cuDNN)"), "test"),
    ("posinfo-prompt-gpt2", "gpu-early-warning", "gpu-ew-hf-arch-gpt2-prompt", "gpu.illegal-access", "serving",
     TOK, ASSERT, ew_note("gpt2", "Llama", "hf-arch-gpt2-prompt",
                          "a 400-token prompt: the tokenizer's warning, then 8,928 assert lines in the prefill and the "
                          "AcceleratorError"), "train"),
    ("posinfo-prompt-opt", "gpu-early-warning", "gpu-ew-hf-arch-opt-prompt", "gpu.illegal-access", "serving",
     TOK, ASSERT, ew_note("opt", "Qwen2", "hf-arch-opt-prompt",
                          "a 400-token prompt: the tokenizer's warning, 6,624 assert lines, the AcceleratorError"), "test"),
    ("posinfo-gen-gpt2-128", "gpu-early-warning", "gpu-ew-hf-arch-gpt2-generate-128", "gpu.illegal-access", "serving",
     REM + " (128)", ASSERT, ew_note("gpt2 with 128 positions", "Llama with 128", "hf-arch-gpt2-generate-128",
                                     "a 32-token prompt and 160 new tokens: the reminder with another figure, 512 assert "
                                     "lines, the AcceleratorError"), "train"),
    ("attn-fa2-bad", "gpu", "env-module-flash-attn2-01", "env.module-missing", "load-weights", "",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package for FlashAttention2 doesn't seem to be installed.",
     HF + ", attn_implementation='flash_attention_2' on an image without flash-attn: the model's __init__ checks the "
     "attention implementation; UNSURE phase load-weights (before any weight is read), alternative launch; twin "
     "corpora/gpu-pairs/gpu-pair-attn-flash2-missing-good.log (sdpa)", "train"),
    ("quant-bnb4-bad", "gpu", "env-module-bitsandbytes-01", "env.module-missing", "load-weights", "",
     "ImportError: Using `bitsandbytes` 4-bit quantization requires bitsandbytes: `pip install -U bitsandbytes>=0.46.1`",
     HF + ", BitsAndBytesConfig(load_in_4bit=True) on an image without bitsandbytes: the quantizer's "
     "validate_environment raises (load_in_8bit gives the same words with '8-bit': not kept); twin "
     "corpora/gpu-pairs/gpu-pair-bnb-missing-good.log (no quantization)", "test"),
    ("gen-beams2-ret4-bad", "gpu", "config-generate-return-beams-01", "config.invalid-argument", "serving", "",
     "ValueError: `num_return_sequences` (4) has to be smaller or equal to `num_beams` (2).",
     GEN + ", num_beams=2 num_return_sequences=4: GenerationConfig.validate raises; twin "
     "corpora/gpu-pairs/gpu-pair-generate-args-good.log (num_beams=4, shared by two pairs)", "train"),
    ("gen-greedy-ret2-bad", "gpu", "config-generate-return-greedy-01", "config.invalid-argument", "serving", "",
     "ValueError: Greedy methods (do_sample != True) without beam search do not support `num_return_sequences` different than 1 (got 2).",
     GEN + ", num_beams=1 num_return_sequences=2; twin corpora/gpu-pairs/gpu-pair-generate-args-good.log", "test"),
    ("dl-timeout-bad", "gpu", "hang-dataloader-timeout-01", "hang.timeout", "serving", "",
     "RuntimeError: DataLoader timed out after 10 seconds",
     SC + "dataloader_timeout.py" + OURS + ", SLOW=40 START=96 TIMEOUT=10: a training loop fed by DataLoader(num_workers=2, "
     "timeout=10) whose reads from sample 96 on take 40 s (a stalled file system): 4 steps, then the loader's timeout; "
     "UNSURE phase serving (a training step; no server phase fits); twin corpora/gpu-pairs/gpu-pair-dataloader-timeout-good.log", "train"),
    ("clip-fp16-1e5-bad", "gpu", "unknown-clip-grad-nonfinite-01", "unknown", "serving", "",
     "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.",
     SC + "clip_nonfinite.py" + OURS + ", DTYPE=float16 SCALE=1e5: the forward passes float16's largest value, "
     "clip_grad_norm_(error_if_nonfinite=True) raises at the first step (run e6-1's SCALE=1000 kept finite gradients and "
     "trained: not kept); UNSURE label unknown (a numerical fault: no label names it), phase serving (a training step); "
     "twin corpora/gpu-pairs/gpu-pair-clip-nonfinite-good.log (bfloat16)", "test"),
    ("serve-port-inuse-bad", "gpu", "net-port-toyserve-01", "net.port-in-use", "launch", "",
     "OSError: [Errno 98] Address already in use",
     SC + "toy_serve.py (its 'toyserve' lines are the script's own wording and imitate no real server), PORT=18120 while "
     "python3 -m http.server held it: the model loads and warms up, then ThreadingHTTPServer's bind fails; UNSURE phase "
     "launch (after warm-up, before ready); twin corpora/gpu-pairs/gpu-pair-toyserve-port-good.log (port 18121)", "train"),
    ("jax-coord-inuse-bad", "gpu", "net-port-jax-coordinator-01", "net.port-in-use", "launch", "",
     "Failed to add port to server: No address added out of total 1 resolved for '[::]:18130'",
     SC + "jax_coordinator.py" + OURS + ", COORD=127.0.0.1:18130 while python3 -m http.server held that port: "
     "jax.distributed.initialize starts the coordination service, gRPC cannot bind ('Address already in use') and the "
     "process dies of SIGSEGV (exit 139; the log ends at gRPC's line, no traceback); twin "
     "corpora/gpu-pairs/gpu-pair-jax-coordinator-port-good.log (port 18131)", "test"),
    ("torchrun-2ranks-1gpu-bad", "gpu", "config-torchrun-nproc-over-gpus-01", "config.invalid-argument", "launch", "",
     "torch.AcceleratorError: CUDA error: invalid device ordinal",
     SC + "dist_store_world.py" + OURS + ", torchrun --standalone --nproc-per-node 2 on a host with one GPU: rank 1's "
     "torch.cuda.set_device(1) fails ('GPU device may be out of range, do you have enough GPUs?'), torchrun stops rank 0 "
     "and prints its ChildFailedError summary; UNSURE label config.invalid-argument (more ranks than GPUs), alternative "
     "env.driver-too-old (a GPU not visible); twin corpora/gpu-pairs/gpu-pair-torchrun-nproc-good.log (--nproc-per-node 1)",
     "train"),
]
# pair key, good source, bad source, root_cause, change, early-warning substring (new in bad), fatal substring, script
PAIRS = [
    ("hf-arch-gpt2-generate", "posinfo-gen-llama", "posinfo-gen-gpt2", "gpu.illegal-access",
     "the checkpoint's architecture: GPT2LMHeadModel (learned absolute positions) vs LlamaForCausalLM (rotary), 256 "
     "positions each, 64-token prompt and 256 new tokens; both print the reminder (context-warnings.csv)", "", ASSERT,
     "ctx_positions_hf.py"),
    ("hf-arch-opt-generate", "posinfo-gen-qwen2", "posinfo-gen-opt", "gpu.illegal-access",
     "OPTForCausalLM vs Qwen2ForCausalLM, as hf-arch-gpt2-generate; both print the reminder", "", OPT_FATAL,
     "ctx_positions_hf.py"),
    ("hf-arch-gpt2-prompt", "posinfo-prompt-llama", "posinfo-prompt-gpt2", "gpu.illegal-access",
     "GPT2LMHeadModel vs LlamaForCausalLM, a 400-token prompt with 256 positions; both print the tokenizer's warning",
     "", ASSERT, "ctx_positions_hf.py"),
    ("hf-arch-opt-prompt", "posinfo-prompt-qwen2", "posinfo-prompt-opt", "gpu.illegal-access",
     "OPTForCausalLM vs Qwen2ForCausalLM, a 400-token prompt with 256 positions; both print the tokenizer's warning",
     "", ASSERT, "ctx_positions_hf.py"),
    ("hf-arch-gpt2-generate-128", "posinfo-gen-llama-128", "posinfo-gen-gpt2-128", "gpu.illegal-access",
     "GPT2LMHeadModel vs LlamaForCausalLM with 128 positions, 32-token prompt and 160 new tokens; both print the reminder",
     "", ASSERT, "ctx_positions_hf.py"),
    ("attn-flash2-missing", "attn-sdpa-good", "attn-fa2-bad", "env.module-missing",
     "attn_implementation='flash_attention_2' vs 'sdpa' (flash-attn not installed)", "",
     "FlashAttention2 has been toggled on, but it cannot be used", "attn_quant_hf.py"),
    ("bnb-missing", "quant-none-good", "quant-bnb4-bad", "env.module-missing",
     "BitsAndBytesConfig(load_in_4bit=True) vs no quantization (bitsandbytes not installed)", "",
     "4-bit quantization requires bitsandbytes", "attn_quant_hf.py"),
    ("generate-return-beams", "gen-beams4-ret4-good", "gen-beams2-ret4-bad", "config.invalid-argument",
     "num_beams=2 vs 4 with num_return_sequences=4 (temperature=0.7 in both: the twin prints 'generation flags are not "
     "valid', the bad run raises before it)", "", "`num_return_sequences` (4) has to be smaller or equal to `num_beams` (2).",
     "gen_args_hf.py"),
    ("generate-return-greedy", "gen-beams4-ret4-good", "gen-greedy-ret2-bad", "config.invalid-argument",
     "num_beams=1 num_return_sequences=2 vs num_beams=4 num_return_sequences=4", "",
     "without beam search do not support `num_return_sequences` different than 1", "gen_args_hf.py"),
    ("dataloader-timeout", "dl-timeout-good", "dl-timeout-bad", "hang.timeout",
     "reads from sample 96 on take 40 s vs 2 ms, DataLoader timeout 10 s in both", "",
     "RuntimeError: DataLoader timed out after 10 seconds", "dataloader_timeout.py"),
    ("clip-nonfinite", "clip-bf16-1e5-good", "clip-fp16-1e5-bad", "unknown",
     "float16 vs bfloat16, the same loss scale (1e5) and clip_grad_norm_(error_if_nonfinite=True)", "",
     "is non-finite, so it cannot be clipped", "clip_nonfinite.py"),
    ("toyserve-port", "serve-port-free-good", "serve-port-inuse-bad", "net.port-in-use",
     "PORT=18120 (held by python3 -m http.server) vs 18121 (free)", "", "OSError: [Errno 98] Address already in use",
     "toy_serve.py"),
    ("jax-coordinator-port", "jax-coord-free-good", "jax-coord-inuse-bad", "net.port-in-use",
     "coordinator port 18130 (held by python3 -m http.server) vs 18131 (free)", "",
     "Failed to add port to server", "jax_coordinator.py"),
    ("torchrun-nproc", "torchrun-1rank-good", "torchrun-2ranks-1gpu-bad", "config.invalid-argument",
     "torchrun --nproc-per-node 2 vs 1 on a host with one GPU", "", "CUDA error: invalid device ordinal",
     "dist_store_world.py"),
]
SHARED_GOOD = {"gen-beams4-ret4-good": "gpu-pair-generate-args-good.log"}
ARCH = "the architecture the config states: learned absolute position embeddings ({}, fails) vs rotary ({}, generates)"
CONTEXT = [
    ("gpu-pair-hf-arch-gpt2-generate", REM + " (256)", ARCH.format("GPT2LMHeadModel", "LlamaForCausalLM")),
    ("gpu-pair-hf-arch-opt-generate", REM + " (256)", ARCH.format("OPTForCausalLM", "Qwen2ForCausalLM")),
    ("gpu-pair-hf-arch-gpt2-prompt", TOK, ARCH.format("GPT2LMHeadModel", "LlamaForCausalLM")),
    ("gpu-pair-hf-arch-opt-prompt", TOK, ARCH.format("OPTForCausalLM", "Qwen2ForCausalLM")),
    ("gpu-pair-hf-arch-gpt2-generate-128", REM + " (128)", ARCH.format("GPT2LMHeadModel", "LlamaForCausalLM")),
]


def run_of(*srcs):
    return "run e6-2 of run_e6.sh" if RUN2 & set(srcs) else "run e6-1 of run_e6.sh"


def main(logs):
    add_labels(copy_failures(logs, ROWS, lambda src: f"{run_of(src)} {MACHINE}"))
    write_pairs(logs, PAIRS, SHARED_GOOD, lambda good, bad: "e6-2" if RUN2 & {good, bad} else "e6-1")
    print("context-warnings.csv", add_context(logs, PAIRS, CONTEXT), "rows added")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
