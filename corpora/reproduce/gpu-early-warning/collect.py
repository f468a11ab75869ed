"""Copy the captured logs into corpora/gpu-early-warning and corpora/gpu-pairs and write their tables.

usage: python collect.py RUN2_LOGS RUN3_LOGS   (the logs/ folders of the two device runs' tarballs)
Every substring below is checked against the log it labels; the logs are copied byte for byte.
"""
import csv
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
EW = REPO / "corpora" / "gpu-early-warning"
PAIRS = REPO / "corpora" / "gpu-pairs"
MACHINE = "nvidia-h200 (1x H200 143771 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, CUDA 13.0)"

# key, root_cause, phase, early-warning substring ('' = none printed), fatal substring, script, the one change, run
S = [
    ("c10d-node-rank", "hang.timeout", "launch", "TCP client failed to connect/validate to host 127.0.0.1:29615 - retrying",
     "torch.distributed.DistNetworkError: The client socket has timed out after 25000ms", "dist_init_sglang.py",
     "RANK=1 WORLD_SIZE=2 (node_rank 1 started with no rank 0) vs RANK=0 WORLD_SIZE=1", 2),
    ("cxx-missing", "toolchain.compiler-missing", "kernel-jit", "Your compiler (/opt/rh/gcc-toolset-13/root/usr/bin/g++) is not compatible",
     "RuntimeError: Error building extension 'rmsnorm_a'", "jit_op_sglang.py",
     "CXX=/opt/rh/gcc-toolset-13/root/usr/bin/g++ (not installed) vs CXX unset", 2),
    ("genconfig-temperature", "config.invalid-argument", "memory-plan", "The following generation flags are not valid and may be ignored: ['temperature', 'top_p']",
     "ValueError: GenerationConfig is invalid:", "genconfig_vllm.py",
     "generation defaults temperature=0.0, top_p=0.9 with do_sample=False vs none; transformers 5.17.0", 2),
    ("jax-libdevice", "toolchain.compiler-missing", "kernel-jit", "Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice",
     "jax.errors.JaxRuntimeError: UNAVAILABLE: No PTX compilation provider is available", "jax_server.py",
     "CUDA toolkit hidden (tmpfs over /usr/local/cuda-13.0) and the nvidia-cuda-nvcc wheel absent vs complete install; jax 0.11.2", 2),
    ("jax-mem-fraction", "gpu.out-of-memory", "memory-plan", "exceeds the base limit (15011414016)",
     "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 24.00GiB", "jax_server.py",
     "XLA_PYTHON_CLIENT_MEM_FRACTION=0.1 vs 0.3 for a 24 GiB KV pool; the XLA scheduler's E line comes 10 s before the OOM", 2),
    ("jax-no-gpu", "env.driver-too-old", "launch", "Falling back to cpu.",
     "RuntimeError: Unknown backend cuda. Available backends are ['cpu']", "jax_server.py",
     "CUDA_VISIBLE_DEVICES= (empty) vs 0; plugin init fails with CUDA_ERROR_NO_DEVICE, JAX falls back to CPU", 2),
    ("jax-plugin-missing", "env.module-missing", "launch", "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
     "RuntimeError: Unknown backend cuda. Available backends are ['cpu']", "jax_server.py",
     "venv without jax_plugins/ and jax_cuda13_plugin (python -S over a symlinked site-packages) vs complete venv", 2),
    ("kv-offset-int32", "gpu.illegal-access", "warmup", "RuntimeWarning: overflow encountered in scalar multiply",
     "cudaErrorIllegalAddress: an illegal memory access was encountered", "offsets_cupy_vllm.py",
     "KV block offsets computed in numpy int32 vs int64; CuPy 14.2.0 RawKernel", 2),
    ("nccl-ifname", "dist.nccl", "launch", "NCCL WARN Bootstrap : no socket interface found",
     "torch.distributed.DistBackendError: NCCL error in:", "dist_init_sglang.py",
     "NCCL_SOCKET_IFNAME=ens9f0np0 (no such interface) vs lo, NCCL_DEBUG=INFO in both; NCCL 2.28.9", 2),
    ("nccl-net-ib", "dist.nccl", "launch", "NCCL WARN Failed to initialize any NET plugin",
     "torch.distributed.DistBackendError: NCCL error in:", "dist_init_sglang.py",
     "NCCL_NET=IB on a host without InfiniBand vs unset, NCCL_DEBUG=WARN in both", 2),
    ("nccl-comm-id", "dist.nccl", "launch", "NCCL WARN NET/Socket : No usable listening interface found",
     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed", "dist_init_sglang.py",
     "NCCL_COMM_ID=10.255.255.1:23456 (not an address of this host) vs unset, NCCL_DEBUG=WARN in both", 2),
    ("numpy-missing", "env.module-missing", "warmup", "UserWarning: Failed to initialize NumPy: No module named 'numpy'",
     "RuntimeError: Numpy is not available", "numpy_missing_vllm.py",
     "venv without numpy (python -S over a symlinked site-packages) vs complete venv", 2),
    ("sdpa-fp32", "config.invalid-argument", "warmup", "UserWarning: Flash attention kernel not used because:",
     "RuntimeError: No available kernel. Aborting execution.", "sdpa_dtype_vllm.py",
     "--dtype float32 with FLASH_ATTENTION forced vs bfloat16; the warnings come from the same SDPA call as the error", 2),
    ("temperature-zero", "gpu.illegal-access", "warmup", "RuntimeWarning: divide by zero encountered in divide",
     "torch.AcceleratorError: CUDA error: device-side assert triggered", "temperature_sampling_sglang.py",
     "default temperature 0.0 vs 0.7; 1/T=inf makes NaN probabilities, torch.multinomial's device assert fires", 2),
    ("graph-side-stream", "gpu.cuda-graph-capture", "cuda-graph-capture", "UserWarning: The CUDA Graph is empty. This usually means that the graph was attempted to be captured on wrong device or stream.",
     "CUDA error: capturing stream has unjoined work", "graph_side_stream_sglang.py",
     "sampler on its own stream vs on the capture stream", 2),
    ("vision-libjpeg", "env.library-missing", "warmup", "UserWarning: Failed to load 'image' extension: OSError: Could not load this library",
     "RuntimeError: Couldn't load the image extension.", "vision_decode_vllm.py",
     "torchvision's bundled libjpeg removed from a copy of the package vs complete; TORCHVISION_WARN_WHEN_EXTENSION_LOADING_FAILS=1 in both (torchvision 0.26 warns only then)", 2),
    ("compile-no-triton", "env.module-missing", "kernel-jit", "triton not found; flop counting will not work for triton kernels",
     "torch._inductor.exc.TritonMissing: Cannot find a working triton installation.", "compile_no_triton_vllm.py",
     "venv without triton vs complete venv; torch.compile(backend=inductor)", 2),
    ("arch-build-nogpu", "toolchain.compile-failed", "kernel-jit", "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
     "IndexError: list index out of range", "build_then_serve.sh + jit_op_sglang.py",
     "kernel build step run with CUDA_VISIBLE_DEVICES= and TORCH_CUDA_ARCH_LIST unset (torch cannot pick an arch: IndexError in _get_cuda_arch_flags) vs build step seeing the GPU", 2),
    ("graph-oom-retry", "gpu.out-of-memory", "cuda-graph-capture", "Capture cuda graph with max bs 160 failed, retrying with cuda_graph_max_bs=64: CUDA out of memory.",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.", "graph_oom_retry_sglang.py",
     "--mem-fraction-static 0.97 vs 0.70; the first OOM is torch's own text logged as a warning by the wrapper's retry, the second is fatal", 3),
    ("numpy1-ext", "env.abi-mismatch", "warmup", "A module that was compiled using NumPy 1.x cannot be run in",
     "ImportError: numpy.core.multiarray failed to import", "grammar_ext_sglang.py + npext.c",
     "C helper whose init does what NumPy 1.x's import_array() does (-DNUMPY1) vs NumPy 2.x's; numpy 2.5.2 prints the message; the first failed import is handled (wrapper warning), the second is fatal", 3),
    # pairs whose failing run printed no early warning (kept for `diff`)
    ("alloc-conf-typo", "config.invalid-argument", "memory-plan", "", "ValueError: Unrecognized key 'expandable_segment' in CUDA allocator config.",
     "alloc_frag_sglang.py", "PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True (misspelt) vs expandable_segments:True; torch 2.11 rejects the key at the first CUDA call", 2),
    ("port-in-use", "net.port-in-use", "launch", "", "name: EADDRINUSE, message: address already in use",
     "dist_init_sglang.py", "MASTER_PORT held by another listener vs a free port", 2),
    ("visible-devices", "env.driver-too-old", "launch", "", "RuntimeError: No CUDA GPUs are available",
     "torch_no_gpu_sglang.py", "CUDA_VISIBLE_DEVICES=1 on a 1-GPU host vs 0 (torch prints no warning: is_available() is just False)", 2),
    ("arch-torchext", "env.gpu-arch-unsupported", "kernel-jit", "", "CUDA error: no kernel image is available for execution on the device",
     "jit_op_sglang.py", "TORCH_CUDA_ARCH_LIST=7.5 vs 9.0 (nvcc 13.0 prints no warning for sm_75)", 2),
    ("arch-sm75", "env.gpu-arch-unsupported", "warmup", "", "no kernel image is available for execution on the device (cudaErrorNoKernelImageForDevice)",
     "arch_probe.cu", "nvcc -gencode arch=compute_75,code=sm_75 vs compute_90,code=sm_90", 2),
    ("nvcc-std", "toolchain.compile-failed", "kernel-jit", "", "#error C++17 or later compatible compiler is required to use ATen.",
     "jit_op_sglang.py", "extra_cuda_cflags=['-std=c++14'] vs none", 2),
    ("cupy-nvrtc-missing", "env.library-missing", "load-weights", "", "No such file: libcurand.so.11 or libcurand.so.10",
     "cupy_rmsnorm_vllm.py", "CUDA toolkit hidden and the nvidia-cuda-nvrtc wheel absent vs complete; CuPy failed first on cuRAND (not NVRTC)", 2),
]
HEALTHY = [("healthy-sglang-01", "healthy_sglang.py", "MEM_FRAC=0.2 MAX_BS=16"), ("healthy-sglang-02", "healthy_sglang.py", "MEM_FRAC=0.1 MAX_BS=64 MODEL=Qwen/Qwen3-8B"),
           ("healthy-vllm-01", "healthy_vllm.py", "GPU_UTIL=0.3"), ("healthy-vllm-02", "healthy_vllm.py", "GPU_UTIL=0.2 MAX_LEN=32768 MODEL=meta-llama/Llama-3.1-8B-Instruct")]
COLS = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note", "verdict", "split"]


def main(run2: Path, run3: Path) -> None:
    runs = {2: run2, 3: run3}
    EW.mkdir(parents=True, exist_ok=True)
    PAIRS.mkdir(parents=True, exist_ok=True)
    rows, pairs = [], []
    for i, (key, rc, phase, ew, fatal, script, change, run) in enumerate(S):
        bad, good = runs[run] / f"ew-{key}-bad.log", runs[run] / f"ew-{key}-good.log"
        tb, tg = bad.read_text(errors="replace"), good.read_text(errors="replace")
        assert fatal in tb and fatal not in tg, key
        assert not ew or (ew in tb and ew not in tg), key
        pid = f"gpu-pair-{key}"
        shutil.copyfile(bad, PAIRS / f"{pid}-bad.log")
        shutil.copyfile(good, PAIRS / f"{pid}-good.log")
        pairs.append({"id": pid, "root_cause": rc, "good": f"{pid}-good.log", "bad": f"{pid}-bad.log",
                      "change": change, "early_warning_substring": ew, "fatal_substring": fatal,
                      "script": f"corpora/reproduce/gpu-early-warning/sc/{script}", "run": run})
        if ew:
            eid = f"gpu-ew-{key}"
            shutil.copyfile(bad, EW / f"{eid}.log")
            rows.append({"id": eid, "root_cause": rc, "phase": phase, "early_warning_substring": ew,
                         "fatal_substring": fatal, "provenance": "reproduced",
                         "note": f"corpora/reproduce/gpu-early-warning/sc/{script}: {change}; twin corpora/gpu-pairs/{pid}-good.log; {MACHINE}, run {run} of run_all.sh",
                         "verdict": "failed", "split": "test" if i % 4 == 3 else "train"})
    for hid, script, env in HEALTHY:
        shutil.copyfile(run2 / f"{hid}.log", EW / f"{hid}.log")
        rows.append({"id": hid, "root_cause": "", "phase": "ready", "early_warning_substring": "", "fatal_substring": "",
                     "provenance": "reproduced", "note": f"corpora/reproduce/gpu-early-warning/sc/{script} ({env}): healthy start-up with real GPU work; {MACHINE}, run 2 of run_all.sh",
                     "verdict": "ready", "split": "train"})
    with open(EW / "labels.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLS); w.writeheader(); w.writerows(rows)
    with open(PAIRS / "pairs.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(pairs[0])); w.writeheader(); w.writerows(pairs)
    print(len(rows), "labelled logs,", len(pairs), "pairs")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
