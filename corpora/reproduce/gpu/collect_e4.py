"""Copy run_e4.sh's logs (run e4) into corpora/gpu, corpora/gpu-early-warning and corpora/gpu-pairs, add their
rows to labels.csv / pairs.csv (rows already there are left alone) and add its context pairs to corpora/gpu-pairs/context-warnings.csv.

usage: python corpora/reproduce/gpu/collect_e4.py LOGS      (LOGS: the logs/ folder of run e4's e4-logs.tar.gz)
The labels below were written from reading the logs, before running forensics on them. Every substring is
checked: fatal and early warning in the failing log (the warning's line first), the fatal line not in the good
twin, a pair's early warning (new in bad) not in its twin, and a context pair's shared warning in both logs.
Logs are copied byte for byte.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_jit import add_context, add_labels, copy_failures, write_pairs  # noqa: E402

SC = "corpora/reproduce/gpu/sc/"
RUN = ("run e4 of run_e4.sh on nvidia-h100-x1 (1x H100 80GB HBM3 81559 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, "
       "triton 3.6.0, jax 0.11.2, transformers 5.17.0, CUDA 13.0)")
OURS = " (its '[repro]' lines are the script's own wording and imitate no real server)"
HF = SC + "ctx_positions_hf.py" + OURS + ": transformers models built from a config (random weights) with 256 positions, a word-level tokenizer with model_max_length=256, greedy generate() on the GPU"

# source log, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("pos-prompt-gpt2-bad", "gpu-early-warning", "gpu-ew-hf-max-positions-prompt", "gpu.illegal-access", "serving",
     "Token indices sequence length is longer than the specified maximum sequence length for this model (400 > 256)",
     "torch.AcceleratorError: CUDA error: device-side assert triggered",
     HF + ", MODEL=gpt2 (learned absolute positions: a 256-row position embedding), a 400-token prompt: the tokenizer "
     "warns, the prefill indexes position 256 and beyond: 5,888 'vectorized_gather_kernel ... index out of bounds' assert "
     "lines, then the AcceleratorError; early warning MODERATE: the context twin (MODEL=llama, rotary positions, the same "
     "prompt) prints the same warning (and transformers' 'friendly reminder') and generates: the model's kind of position "
     "encoding decides; a 200-token prompt (run e4's pos-prompt-gpt2-good) prints neither and runs; UNSURE phase serving "
     "(a generate() call; alternative warmup); twin corpora/gpu-pairs/gpu-pair-hf-max-positions-prompt-good.log", "test"),
    ("pos-gen-gpt2-bad", "gpu-early-warning", "gpu-ew-hf-max-positions-generate", "gpu.illegal-access", "serving",
     "This is a friendly reminder - the current text generation call has exceeded the model's predefined maximum length (256)",
     "torch.AcceleratorError: CUDA error: device-side assert triggered",
     HF + ", MODEL=gpt2, a 64-token prompt and 256 new tokens: transformers' 'friendly reminder' ('Depending on the model, "
     "you may observe exceptions, performance degradation, or nothing at all'), then 320 'indexSelectSmallIndex ... "
     "Assertion `srcIndex < srcSelectDimSize` failed' lines and the AcceleratorError at the next sync; early warning "
     "MODERATE: the context twin (MODEL=llama) prints the same reminder and generates all 256 tokens; 128 new tokens "
     "(pos-gen-gpt2-good) print none and run; UNSURE phase serving; twin "
     "corpora/gpu-pairs/gpu-pair-hf-max-positions-generate-good.log", "train"),
    ("x64-offset-bad", "gpu-early-warning", "gpu-ew-jax-x64-truncation", "config.invalid-argument", "memory-plan",
     "Explicitly requested dtype int64 requested in asarray is not available, and will be truncated to dtype int32",
     "OverflowError: Python integer 8589934592 out of bounds for int32",
     SC + "jax_x64_offset.py" + OURS + ", NUM_PAGES=4096 (4096 x 2 MiB = 8 GiB): JAX without jax_enable_x64 truncates the "
     "requested int64 to int32 (UserWarning), and the byte offset does not fit; early warning STRONG in context: the "
     "context twin (NUM_PAGES=512, a 1 GiB offset) prints the same warning (and one for arange) and runs; "
     "JAX_ENABLE_X64=1 (x64-offset-x64-good) prints none; UNSURE label: config.invalid-argument (x64 off for a value that "
     "needs it), alternative unknown; phase memory-plan (the page table), alternative launch; twin "
     "corpora/gpu-pairs/gpu-pair-jax-x64-truncation-good.log", "train"),
    ("donate-f32-b8-bad", "gpu-early-warning", "gpu-ew-jax-donation-budget", "gpu.out-of-memory", "memory-plan",
     "The byte size of input/output arguments (9663676420) exceeds the base limit (8537505792)",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6.00GiB",
     SC + "jax_donate_budget.py" + OURS + ", BUDGET_GIB=8 CACHE_GIB=3 SCALE_DTYPE=float32: a jitted rescale donates the 3 "
     "GiB bf16 cache, but a float32 scale promotes the result to 6 GiB float32, so the donation cannot be used (JAX "
     "0.11.2 printed no 'donated buffers were not usable' warning); XLA's scheduler E line says the arguments exceed the "
     "limit, 10 s later BFC's 'ran out of memory' warning and the OOM; early warning STRONG; the twin with a 12 GiB "
     "budget prints no E line and runs; a bfloat16 scale (donate-bf16-b8-good) runs in 8 GiB; twin "
     "corpora/gpu-pairs/gpu-pair-jax-donation-budget-good.log", "test"),
    ("mse-eval-big-bad", "gpu-early-warning", "gpu-ew-mse-broadcast", "gpu.out-of-memory", "serving",
     "Using a target size (torch.Size([300000])) that is different to the input size (torch.Size([300000, 1]))",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 335.28 GiB",
     SC + "mse_broadcast_eval.py" + OURS + ", EVAL_BATCH=300000: a [B, 1] head against [B] targets; torch's mse_loss "
     "broadcast UserWarning is printed for the training batch (512, harmless) and again for the eval batch, whose "
     "[300000, 300000] difference needs 335 GiB; early warning STRONG in context (the second warning's size); the "
     "context twin (EVAL_BATCH=4096) prints both warnings and finishes; 'Process 1107 has 8.55 GiB' in the OOM message is "
     "a JAX scenario of another lane; UNSURE phase serving (an evaluation after training; no server phase fits); twin "
     "corpora/gpu-pairs/gpu-pair-mse-broadcast-good.log", "train"),
    ("graph-thread-global-bad", "gpu", "gpu-graph-capture-thread-01", "gpu.cuda-graph-capture", "cuda-graph-capture", "",
     "CUDA error: operation not permitted when stream is capturing",
     SC + "graph_thread_capture.py" + OURS + ", CAPTURE_MODE=global (torch's default capture_error_mode): a stats thread "
     "reads a GPU counter with .item() while the main thread captures decode graphs; the thread's copy is refused "
     "(cudaErrorStreamCaptureUnsupported), which invalidates the capture: cuBLASLt's 'gemm_and_bias error: "
     "CUBLAS_STATUS_EXECUTION_FAILED' UserWarning and capture_end's 'operation failed due to a previous error during "
     "capture' (cudaErrorStreamCaptureInvalidated) follow; the two threads' tracebacks are interleaved character by "
     "character (one line reads 'torch.    AcceleratorError: ...'); twin "
     "corpora/gpu-pairs/gpu-pair-graph-capture-thread-good.log (capture_error_mode=thread_local)", "train"),
    ("graph-replay-freed-bad", "gpu", "gpu-illegal-graph-replay-freed-01", "gpu.illegal-access", "serving", "",
     "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
     SC + "graph_replay_freed.py" + OURS + ", OFFLOAD=1: a decode step captured in a CUDA graph reads a 512 MiB pool "
     "allocated before the capture; on idle the pool is released (del + torch.cuda.empty_cache(), reserved 614 -> 102 "
     "MiB) and the next replay reads freed memory; UNSURE phase serving (alternative cuda-graph-capture: the graph's "
     "replay); twin corpora/gpu-pairs/gpu-pair-graph-replay-freed-good.log (OFFLOAD=0)", "test"),
    ("trees-overwrite-bad", "gpu", "gpu-graph-trees-overwritten-01", "gpu.cuda-graph-capture", "serving", "",
     "RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run.",
     SC + "graph_trees_overwrite.py" + OURS + ", KEEP=ref: torch.compile(mode='reduce-overhead') (CUDA graph trees); the "
     "caller keeps six requests' outputs and reads them together; UNSURE label gpu.cuda-graph-capture (CUDA graph "
     "replay semantics), alternative config.invalid-argument; twin corpora/gpu-pairs/gpu-pair-graph-trees-overwritten-good.log "
     "(KEEP=clone)", "train"),
    ("triton-fp4-asm-bad", "gpu", "tc-compile-triton-ptxas-arch-01", "toolchain.compile-failed", "kernel-jit", "",
     "Instruction 'cvt with .e2m1x2' not supported on .target 'sm_90a'",
     SC + "triton_fp4_asm.py" + OURS + ", PACK=asm: a Triton kernel with Blackwell-only inline PTX "
     "(cvt.rn.satfinite.e2m1x2.f32) JIT-compiled for this H100 (sm_90a): Triton's ptxas refuses it (8 error lines, "
     "'ptxas fatal', the PTX dump) and Triton raises PTXASError; UNSURE label toolchain.compile-failed (as "
     "tc-compile-ptxas-01), alternative env.gpu-arch-unsupported; twin corpora/gpu-pairs/gpu-pair-triton-ptxas-fp4-arch-good.log "
     "(PACK=ref, plain Triton arithmetic)", "test"),
    ("abi-tensor-old-bad", "gpu", "env-abi-cxx11-torch-ext-01", "env.abi-mismatch", "kernel-jit", "",
     "undefined symbol: _ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs",
     SC + "abi_ext_flags.py" + OURS + ", KIND=tensor EXTRA_CFLAGS=-D_GLIBCXX_USE_CXX11_ABI=0 (the pre-C++11 string ABI "
     "of torch wheels before 2.6): load_inline(verbose=True) builds the extension (ninja's two lines; gcc printed no "
     "warning about the redefined macro) and the import fails on a libtorch symbol with the old std::string "
     "mangling ('Ss'); run e4's abi-plain-old-ctx (an integer-only function, meant as the harmless context) failed "
     "the same way, because torch's headers' inline code references the same symbol, and is not kept; twin "
     "corpora/gpu-pairs/gpu-pair-abi-cxx11-ext-good.log (no extra flag)", "train"),
]
# pair key, good source, bad source, root_cause, change, early-warning substring (new in bad), fatal substring, script
PAIRS = [
    ("hf-max-positions-prompt", "pos-prompt-llama-ctx", "pos-prompt-gpt2-bad", "gpu.illegal-access",
     "MODEL=gpt2 (learned absolute positions) vs MODEL=llama (rotary positions), both with 256 positions and the same "
     "400-token prompt: both print transformers' sequence-length warning (context-warnings.csv)", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered", "ctx_positions_hf.py"),
    ("hf-max-positions-generate", "pos-gen-llama-ctx", "pos-gen-gpt2-bad", "gpu.illegal-access",
     "MODEL=gpt2 vs MODEL=llama, 64-token prompt and 256 new tokens with 256 positions: both print transformers' "
     "'friendly reminder' (context-warnings.csv)", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered", "ctx_positions_hf.py"),
    ("jax-x64-truncation", "x64-offset-ctx", "x64-offset-bad", "config.invalid-argument",
     "NUM_PAGES=4096 (an 8 GiB byte offset) vs 512 (1 GiB), jax_enable_x64 off in both: both print JAX's int64 "
     "truncation warning (context-warnings.csv)", "", "OverflowError: Python integer 8589934592 out of bounds for int32",
     "jax_x64_offset.py"),
    ("jax-donation-budget", "donate-f32-b12-ctx", "donate-f32-b8-bad", "gpu.out-of-memory",
     "an 8 GiB vs a 12 GiB device budget (XLA_PYTHON_CLIENT_MEM_FRACTION), the same 3 GiB cache and float32 scale",
     "The byte size of input/output arguments (9663676420) exceeds the base limit (8537505792)",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6.00GiB",
     "jax_donate_budget.py"),
    ("mse-broadcast", "mse-eval-small-ctx", "mse-eval-big-bad", "gpu.out-of-memory",
     "EVAL_BATCH=300000 vs 4096: both print torch's mse_loss broadcast warning, for the training and the eval batch "
     "(context-warnings.csv)", "", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 335.28 GiB",
     "mse_broadcast_eval.py"),
    ("graph-capture-thread", "graph-thread-local-good", "graph-thread-global-bad", "gpu.cuda-graph-capture",
     "capture_error_mode='global' (torch's default) vs 'thread_local', a stats thread calling .item() during capture in "
     "both", "", "CUDA error: operation not permitted when stream is capturing", "graph_thread_capture.py"),
    ("graph-replay-freed", "graph-replay-kept-good", "graph-replay-freed-bad", "gpu.illegal-access",
     "the captured pool released on idle (del + empty_cache) before the next replays vs kept", "",
     "torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "graph_replay_freed.py"),
    ("graph-trees-overwritten", "trees-clone-good", "trees-overwrite-bad", "gpu.cuda-graph-capture",
     "the caller keeps torch.compile(mode='reduce-overhead')'s outputs across calls vs clones them", "",
     "RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run.",
     "graph_trees_overwrite.py"),
    ("triton-ptxas-fp4-arch", "triton-fp4-ref-good", "triton-fp4-asm-bad", "toolchain.compile-failed",
     "Blackwell-only inline PTX (cvt.rn.satfinite.e2m1x2.f32) vs plain Triton arithmetic in the same kernel", "",
     "Instruction 'cvt with .e2m1x2' not supported on .target 'sm_90a'", "triton_fp4_asm.py"),
    ("abi-cxx11-ext", "abi-tensor-good", "abi-tensor-old-bad", "env.abi-mismatch",
     "extra_cflags=['-D_GLIBCXX_USE_CXX11_ABI=0'] vs none, the same extension source", "",
     "undefined symbol: _ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs", "abi_ext_flags.py"),
]
# context pairs: the warning both logs print; what decides whether it precedes a failure
CONTEXT = [
    ("gpu-pair-hf-max-positions-prompt", "Token indices sequence length is longer than the specified maximum sequence length for this model (400 > 256)",
     "the model's position encoding: learned absolute (gpt2, fails) vs rotary (llama, runs)"),
    ("gpu-pair-hf-max-positions-generate", "This is a friendly reminder - the current text generation call has exceeded the model's predefined maximum length (256)",
     "the model's position encoding: learned absolute (gpt2, fails) vs rotary (llama, runs)"),
    ("gpu-pair-jax-x64-truncation", "Explicitly requested dtype int64 requested in asarray is not available, and will be truncated to dtype int32",
     "the value: an offset beyond 2**31-1 (fails) vs within it (runs)"),
    ("gpu-pair-mse-broadcast", "that is different to the input size",
     "the batch size: [B, B] for B=300000 does not fit (fails), for B=4096 it does (runs; the result is wrong)"),
]


def main(logs):
    per = copy_failures(logs, ROWS, lambda src: RUN)
    add_labels(per)
    write_pairs(logs, PAIRS, {}, lambda good, bad: "e4",
                lambda key, text, fatal, ew: fatal not in text and not (ew and ew in text))
    print("context-warnings.csv", add_context(logs, PAIRS, CONTEXT), "rows added")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
