"""Copy run_ew9.sh's logs into corpora/gpu, corpora/gpu-early-warning and corpora/gpu-pairs and add
their rows to labels.csv / pairs.csv (rows already there are left alone).

usage: python corpora/reproduce/gpu/collect_ew9.py LOGS
       LOGS: a folder with run e1's logs as e1-<id>.log, run e2's as e2-<id>.log and run e3's as e3-<id>.log
       (from the three ew9-logs.tar.gz).
The labels below were written from reading the logs, before running forensics on them. Every
substring is checked: fatal and early warning in the failing log (the warning's line first), the fatal
line not in the good twin, and a pair's early warning (new in bad) not in its good twin. Logs are
copied byte for byte.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_jit import add_labels, copy_failures, write_pairs  # noqa: E402

SC = "corpora/reproduce/gpu/sc/"
M = ("on nvidia-h100-x1 (1x H100 80GB HBM3 81559 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, triton 3.6.0, "
     "jax 0.11.2, CUDA 13.0)")
RUN = {r: f"run {r} of run_ew9.sh {M}" for r in ("e1", "e2", "e3")}
TOY = (SC + "toy_serve.py (a small HTTP server of the reproductions' own: its 'toyserve' lines, including its 'ready: "
       "listening on' line, are the script's wording and imitate no real server; the access lines are Python's http.server; "
       "a client thread in the same process sends the requests and, when done, the operator's SIGTERM)")

# source log, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("e1-serve-devassert", "gpu", "gpu-illegal-serve-first-request-01", "gpu.illegal-access", "serving", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered",
     TOY + ", BAD_TOKEN=32003: after the ready line the first request carries token id 32003 for a 32000-row embedding "
     "(a tokenizer's added tokens beyond the model's vocabulary): 1,344 'indexSelectSmallIndex ... Assertion `srcIndex < "
     "srcSelectDimSize` failed' lines, then the AcceleratorError at the next sync (the overflow guard's .any()); the server "
     "logs the request's traceback and exits; twin corpora/gpu-pairs/gpu-pair-serve-first-request-devassert-good.log", "test"),
    ("e1-serve-oom-newbatch", "gpu", "gpu-oom-serve-new-batch-01", "gpu.out-of-memory", "serving", "",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.",
     TOY + ", HEADROOM_GIB=4 (a pool leaves 4 GiB free after the warm-up of batch sizes 1, 4, 8): three requests within "
     "the warmed sizes answer 200, then a batch 256 x 2048 request, a size first met while serving, needs 8 GiB for one "
     "MLP activation; the server logs the traceback and exits; twin "
     "corpora/gpu-pairs/gpu-pair-serve-new-batch-oom-good.log (the same pool, requests up to 8 x 512)", "train"),
    ("e1-serve-warmafter-oom", "gpu", "gpu-oom-warmup-after-ready-01", "gpu.out-of-memory", "warmup", "",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.",
     TOY + ", HEADROOM_GIB=4, WARM_AFTER=16x256,64x512,256x2048: the server prints its ready line, then warms larger "
     "batch sizes in the background and the third (256 x 2048) runs out of GPU memory 50 ms after ready, before any "
     "request was answered; UNSURE: phase warmup (a warm-up, though after the ready line), alternative ready; twin "
     "corpora/gpu-pairs/gpu-pair-serve-warmup-after-ready-oom-good.log (WARM_AFTER without the 256 x 2048 size; run e2)",
     "train"),
    ("e1-serve-compile-fullgraph", "gpu", "tc-compile-dynamo-first-request-01", "toolchain.compile-failed", "serving", "",
     "torch._dynamo.exc.Unsupported: Data-dependent branching",
     TOY + ", COMPILE=fullgraph: torch.compile(model, fullgraph=True) is built lazily, at the first request after ready; "
     "the model's overflow guard (`if torch.isinf(h).any():`, as T5-style models have) is data-dependent control flow and "
     "dynamo refuses it; UNSURE: toolchain.compile-failed (the compile ran and failed), alternative config.invalid-argument "
     "(fullgraph=True); phase serving (the compile happens at the first request), alternative kernel-jit; twin "
     "corpora/gpu-pairs/gpu-pair-serve-compile-good.log (fullgraph=False: dynamo breaks the graph in the layer loop and "
     "silently runs the forward eagerly)", "test"),
    ("e3-serve-compile-noguard-rotriton", "gpu", "tc-compile-triton-cache-readonly-01", "toolchain.compile-failed",
     "serving", "",
     "torch._inductor.exc.InductorError: OSError: [Errno 30] Read-only file system: '/tmp/rocache/triton'",
     TOY + ", GUARD=0 COMPILE=lazy TRITON_CACHE_DIR on a read-only tmpfs (as a container with a read-only root and "
     "the default cache under it): inductor compiles at the first request after ready and Triton cannot create its cache "
     "folder while building its CUDA driver stub; UNSURE: toolchain.compile-failed, alternative config.invalid-argument "
     "(a cache setting pointing at a read-only file system); phase serving (alternative kernel-jit); twin "
     "corpora/gpu-pairs/gpu-pair-serve-compile-triton-cache-ro-good.log (a writable cache, same run)", "train"),
    ("e1-serve-compile-rocache", "gpu", "tc-compile-inductor-cache-readonly-01", "toolchain.compile-failed", "kernel-jit",
     "", "OSError: [Errno 30] Read-only file system: '/tmp/rocache/inductor'",
     TOY + ", COMPILE=lazy TORCHINDUCTOR_CACHE_DIR on a read-only tmpfs: torch 2.11 creates the cache folder when "
     "torch.compile first imports torch._dynamo (DiskDynamoCache), so the start fails after the warm-up, before the ready "
     "line, with a plain traceback; UNSURE: toolchain.compile-failed, alternative config.invalid-argument; phase kernel-jit "
     "(torch.compile's setup), alternative warmup; twin corpora/gpu-pairs/gpu-pair-serve-compile-good.log", "train"),
    ("e1-ew-cudainit-bad", "gpu-early-warning", "gpu-ew-cuda-init-warning", "host.out-of-memory", "load-weights",
     "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount()",
     "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 2: out of memory",
     TOY + " under `ulimit -v 16000000`, DEVICE=cuda: torch.cuda.is_available() warns (CUDA's initialisation cannot reserve "
     "its address range: 'Error 2: out of memory') and returns False; the server moves the model to cuda anyway and the lazy "
     "init raises; early warning MODERATE: the twin (DEVICE=auto) prints the same warning, falls back to the CPU and serves: "
     "whether the server insists on the GPU decides; UNSURE label as corpora/gpu/host-oom-cuda-init-ulimit-01 (a host "
     "address-space limit; alternatives gpu.out-of-memory, env.driver-too-old); twin "
     "corpora/gpu-pairs/gpu-pair-cuda-init-warning-good.log", "test"),
    ("e1-ew-stack-bad", "gpu-early-warning", "gpu-ew-stack-frame", "gpu.illegal-access", "serving",
     "ptxas warning : Local memory used for function '_Z4walkPKiiii', size of stack frame: 280 bytes",
     "CUDA error cudaErrorIllegalAddress at",
     SC + "stack_build_run.sh + stack_recursion.cu, DEPTH=64: nvcc -Xptxas -warn-lmem-usage warns that the recursive "
     "device function uses a 280-byte stack frame; 64 levels need ~18 KB against the default 1024-byte per-thread stack "
     "(the program prints the limit) and the kernel faults (an illegal memory access); the program's stdout line about the "
     "limit comes after its stderr error line (stdout to a file is block-buffered); early warning MODERATE: the twin "
     "(STACK_BYTES=32768) prints the same warning and runs: the stack limit against the depth decides; twin "
     "corpora/gpu-pairs/gpu-pair-stack-frame-good.log", "train"),
    ("e2-ew-jax-share-kvbig", "gpu-early-warning", "gpu-ew-jax-prealloc-fallback", "gpu.out-of-memory", "memory-plan",
     "Failed to allocate device memory of 59.38GiB (63763906560 bytes)",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 39.59GiB",
     SC + "jax_after_torch.py HOLD_FRAC=0.5 JAX_KV_FRAC=0.5: torch holds half the GPU, then JAX's default preallocation "
     "(75%) fails four times (XLA's E lines, 59.38 -> 43.29 GiB, each RESOURCE_EXHAUSTED / CUDA_ERROR_OUT_OF_MEMORY) and "
     "settles on a smaller region silently; the KV pool (half the card) does not fit it: BFC's 'ran out of memory' "
     "warning, then the OOM; early warning MODERATE: the twin (run e1's ew-jax-share-bad, the same HOLD_FRAC, a 16 GiB "
     "pool) prints the same four E lines and serves; twin corpora/gpu-pairs/gpu-pair-jax-prealloc-fallback-good.log",
     "train"),
    ("e2-ew-jax-autotune-good", "gpu-early-warning", "gpu-ew-jax-autotune-scratch", "gpu.out-of-memory", "kernel-jit",
     "Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.41GiB from the lower end with freed_by_count=0",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.41GiB",
     SC + "jax_scratch_serve.py BUDGET_GIB=8 INIT=ones WEIGHT_GIB=4.4 KV_GIB=0.5 (scenario id ew-jax-autotune-good: it "
     "was meant to fit): compiling the jitted matmul, XLA's GEMM autotuner wants a scratch copy of the 4.4 GiB weights; "
     "the BFC allocator warns 'The caller indicates that this is not a failure', yet the autotuner's E line ('Could not get "
     "config for HLO ... RESOURCE_EXHAUSTED') follows and compilation fails with the OOM (in jax 0.11.2 the scratch "
     "failure is fatal); early warning MODERATE (it disclaims a failure; here it is the failure's first line, 0 s "
     "before); run e2's ew-jax-autotune-bad (KV_GIB=3) failed identically and ew-jax-scaled-38 (3.8 GiB weights) the "
     "same way at 3.81 GiB, not kept; twin corpora/gpu-pairs/gpu-pair-jax-autotune-scratch-good.log "
     "(XLA_FLAGS=--xla_gpu_autotune_level=0, run e3)", "test"),
    ("e1-ew-jax-scratch-bad", "gpu-early-warning", "gpu-ew-jax-remat", "gpu.out-of-memory", "load-weights",
     "Can't reduce memory use below 4.40GiB (4722786304 bytes) by rematerialization",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.40GiB",
     SC + "jax_scratch_serve.py BUDGET_GIB=8 WEIGHT_GIB=4.4 (INIT=scaled: ones * 0.01, one XLA program whose input and "
     "output are both 4.4 GiB): the GPU scheduler's E line ('exceeds the base limit') and the rematerialization W line "
     "say at compile time that the program cannot fit, 10 s later the BFC allocator's OOM; early warning STRONG (XLA states "
     "the program needs more than its limit); run e1's ew-jax-scratch-good (KV_GIB=0.5) failed identically before the KV "
     "size mattered and is not kept; twin corpora/gpu-pairs/gpu-pair-jax-remat-good.log (WEIGHT_GIB=2, no warning)",
     "train"),
]
# pair key, good source, bad source, root_cause, change, early-warning substring (new in bad), fatal substring, script
PAIRS = [
    ("serve-first-request-devassert", "e1-serve-good", "e1-serve-devassert", "gpu.illegal-access",
     "BAD_TOKEN=32003 in the first request vs none (token ids within the 32000-row vocabulary)", "",
     "torch.AcceleratorError: CUDA error: device-side assert triggered", "toy_serve.py"),
    ("serve-new-batch-oom", "e1-serve-pool-good", "e1-serve-oom-newbatch", "gpu.out-of-memory",
     "a 256 x 2048 request after three small ones vs requests up to 8 x 512 (both with a pool leaving 4 GiB free)", "",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.", "toy_serve.py"),
    ("serve-warmup-after-ready-oom", "e2-serve-warmafter-good", "e1-serve-warmafter-oom", "gpu.out-of-memory",
     "WARM_AFTER=16x256,64x512,256x2048 vs 16x256,64x512 (the background warm-up after the ready line; good run e2, "
     "bad e1)", "", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.", "toy_serve.py"),
    ("serve-compile-fullgraph", "e1-serve-compile-good", "e1-serve-compile-fullgraph", "toolchain.compile-failed",
     "torch.compile(fullgraph=True) vs fullgraph=False, built at the first request (the good run's dynamo falls back to "
     "eager without a word at the default log level)", "", "torch._dynamo.exc.Unsupported: Data-dependent branching",
     "toy_serve.py"),
    ("serve-compile-inductor-cache-ro", "e1-serve-compile-good", "e1-serve-compile-rocache", "toolchain.compile-failed",
     "TORCHINDUCTOR_CACHE_DIR/TRITON_CACHE_DIR on a read-only tmpfs vs writable folders", "",
     "OSError: [Errno 30] Read-only file system: '/tmp/rocache/inductor'", "toy_serve.py"),
    ("serve-compile-triton-cache-ro", "e3-serve-compile-noguard-good", "e3-serve-compile-noguard-rotriton",
     "toolchain.compile-failed", "TRITON_CACHE_DIR on a read-only tmpfs vs a writable folder (GUARD=0: inductor builds "
     "Triton kernels at the first request)", "",
     "torch._inductor.exc.InductorError: OSError: [Errno 30] Read-only file system: '/tmp/rocache/triton'",
     "toy_serve.py"),
    ("cuda-init-warning", "e1-ew-cudainit-good", "e1-ew-cudainit-bad", "host.out-of-memory",
     "DEVICE=cuda vs DEVICE=auto under the same `ulimit -v 16000000`: both print torch's CUDA-initialization warning; the "
     "good one serves on the CPU, so the early warning is not new in bad (see gpu-ew-cuda-init-warning)", "",
     "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 2: out of memory", "toy_serve.py"),
    ("stack-frame", "e1-ew-stack-good", "e1-ew-stack-bad", "gpu.illegal-access",
     "the default 1024-byte per-thread stack vs STACK_BYTES=32768 (cudaDeviceSetLimit), depth 64 both; both print "
     "ptxas's local-memory warning (see gpu-ew-stack-frame)", "", "CUDA error cudaErrorIllegalAddress at",
     "stack_build_run.sh"),
    ("jax-prealloc-fallback", "e1-ew-jax-share-bad", "e2-ew-jax-share-kvbig", "gpu.out-of-memory",
     "JAX_KV_FRAC=0.5 (a pool of half the card) vs JAX_KV_GIB=16, torch holding half the GPU in both: both print XLA's "
     "four failed preallocations (good run e1, whose scenario id is ew-jax-share-bad; bad e2)", "",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 39.59GiB",
     "jax_after_torch.py"),
    ("jax-autotune-scratch", "e3-ew-jax-autotune-off", "e2-ew-jax-autotune-good", "gpu.out-of-memory",
     "XLA's GEMM autotuner on (default) vs XLA_FLAGS=--xla_gpu_autotune_level=0, 4.4 GiB weights in an 8 GiB budget "
     "(good run e3, bad e2)",
     "Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.41GiB from the lower end with freed_by_count=0",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.41GiB",
     "jax_scratch_serve.py"),
    ("jax-remat", "e1-ew-jax-scratch-small", "e1-ew-jax-scratch-bad", "gpu.out-of-memory",
     "WEIGHT_GIB=4.4 vs 2 in an 8 GiB budget (INIT=scaled)",
     "Can't reduce memory use below 4.40GiB (4722786304 bytes) by rematerialization",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.40GiB",
     "jax_scratch_serve.py"),
]
SHARED_GOOD = {"e1-serve-compile-good": "gpu-pair-serve-compile-good.log"}


def main(logs):
    per = copy_failures(logs, ROWS, lambda src: RUN[src[:2]])
    add_labels(per)
    write_pairs(logs, PAIRS, SHARED_GOOD, lambda good, bad: "/".join(sorted({good[:2], bad[:2]})),
                lambda key, text, fatal, ew: fatal not in text and not (ew and ew in text))

if __name__ == "__main__":
    main(Path(sys.argv[1]))
