"""Copy run_e5.sh's logs (run e5) into corpora/gpu and corpora/gpu-pairs, add their rows to labels.csv /
pairs.csv and their context pair to corpora/gpu-pairs/context-warnings.csv (rows already there are left alone).

usage: python corpora/reproduce/gpu/collect_e5.py LOGS      (LOGS: the logs/ folder of run e5's e5-logs.tar.gz)
The labels below were written from reading the logs, before running forensics on them. Every substring is
checked (collect_jit's check, copy_failures and write_pairs): the fatal line in the failing log and not in its
good twin, and a context pair's shared warning in both logs. Logs are copied byte for byte.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_jit import add_context, add_labels, copy_failures, write_pairs  # noqa: E402

SC = "corpora/reproduce/gpu/sc/"
RUN = ("run e5 of run_e5.sh on nvidia-h100-x1 (1x H100 80GB HBM3 81559 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, "
       "cuDNN 9.19, NCCL 2.28.9, transformers 5.17.0, safetensors 0.8.0, CUDA 13.0)")
OURS = " (its '[repro]' lines are the script's own wording and imitate no real server)"
DS = SC + "dist_store_world.py" + OURS
FILL = SC + "cublas_fill.py" + OURS + ": a pool of torch tensors fills the H100 to 2.2 MiB free, keeping a 64 MiB spare block for torch's allocator"
LOAD = SC + "model_load_hf.py" + OURS + ": a 6-layer Llama written with save_pretrained (bf16 safetensors, 5 shards), then AutoModelForCausalLM.from_pretrained"
LOAD_TWIN = "; twin corpora/gpu-pairs/gpu-pair-load-good.log (MODE=ok, shared by the five load pairs)"

# source log, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("dist-port-inuse-bad", "gpu", "net-port-torchrun-store-01", "net.port-in-use", "launch", "",
     "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29611, "
     "useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
     DS + ", started by torchrun --nnodes 1 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port 29611 while an identical "
     "job (the twin, HOLD=30) held that port: torchrun's static rendezvous cannot bind its TCPStore; the worker never "
     "starts, so the log is torchrun's traceback alone; twin corpora/gpu-pairs/gpu-pair-torchrun-port-in-use-good.log", "train"),
    ("dist-world2-bad", "gpu", "hang-c10d-store-world-size-01", "hang.timeout", "launch", "",
     "torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. 1/2 clients joined.",
     DS + ", started directly with RANK=0 WORLD_SIZE=2 and no second rank, init_process_group(nccl, timeout=20 s): rank 0's "
     "TCPStore waits for the clients and gives up; UNSURE label hang.timeout (a rendezvous deadline, as gpu-ew-c10d-node-rank), "
     "alternative dist.nccl; twin corpora/gpu-pairs/gpu-pair-c10d-world-size-good.log (WORLD_SIZE=1)", "test"),
    ("dist-cpu-tensor-bad", "gpu", "dist-nccl-cpu-tensor-01", "dist.nccl", "launch", "",
     "RuntimeError: No backend type associated with device type cpu",
     DS + ", MODE=cpu-tensor, torchrun --standalone --nproc-per-node 1: all_reduce of a CPU tensor on a process group with the "
     "NCCL backend only; the worker's traceback ([rank0]: prefixes), ProcessGroupNCCL's destroy_process_group warning, then "
     "torchrun's ChildFailedError summary; UNSURE label dist.nccl (the collective's backend), alternative "
     "config.invalid-argument; twin corpora/gpu-pairs/gpu-pair-nccl-cpu-tensor-good.log (a CUDA tensor)", "train"),
    ("xent-pad-bad", "gpu", "gpu-illegal-devassert-nll-01", "gpu.illegal-access", "serving", "",
     "Assertion `t >= 0 && t < n_classes` failed.",
     SC + "xent_pad_label.py" + OURS + ", PAD_LABEL=-1: a fine-tuning step whose padded label positions are -1 (cross_entropy "
     "ignores -100): 16 nll_loss_forward_reduce_cuda_kernel_2d assert lines, then the AcceleratorError at backward(); UNSURE "
     "phase serving (a training step; no server phase fits); twin corpora/gpu-pairs/gpu-pair-xent-pad-label-good.log (-100)",
     "test"),
    ("anomaly-bad", "gpu", "unknown-autograd-nan-01", "unknown", "serving", "",
     "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.",
     SC + "anomaly_logloss.py" + OURS + ", CLAMP=0: torch.autograd.detect_anomaly() on; -where(h > 0, log(h), 0) of a ReLU "
     "output with exact zeros: the forward is finite, log's backward gives 0/0; torch's 'Anomaly Detection has been enabled' "
     "UserWarning (also in the twin: context-warnings.csv), then 'Error detected in LogBackward0' with the forward's "
     "traceback and the RuntimeError; UNSURE label unknown (a numerical fault: no label of the taxonomy names NaN), phase "
     "serving (a training step); twin corpora/gpu-pairs/gpu-pair-autograd-anomaly-nan-good.log (clamp_min(1e-6))", "train"),
    ("nan-fp16-bad", "gpu", "gpu-illegal-devassert-nan-sample-01", "gpu.illegal-access", "serving", "",
     "Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.",
     SC + "nan_sample_hf.py" + OURS + ", DTYPE=float16: a Llama (random weights) whose lm_head weights are scaled by 2e5, so "
     "its logits pass float16's largest value; transformers' sampling (temperature 0.7, top_p 0.95) reaches "
     "torch.multinomial, whose _assert_async_cuda_kernel asserts, then the AcceleratorError; UNSURE label gpu.illegal-access "
     "(the device-side assert the log shows), alternative unknown (a float16 overflow); twin "
     "corpora/gpu-pairs/gpu-pair-nan-sample-fp16-good.log (bfloat16, the same weights)", "test"),
    ("fill-matmul-bad", "gpu", "gpu-oom-cublas-handle-01", "gpu.out-of-memory", "warmup", "",
     "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
     FILL + ", OP=matmul WARM=0: the first fp16 matmul after the pool creates the cuBLAS handle and fails (torch's own "
     "allocations fit in the spare block); UNSURE phase warmup (the first forward after the memory pool), alternative "
     "memory-plan; twin corpora/gpu-pairs/gpu-pair-cublas-handle-oom-good.log (WARM=1: a matmul before the pool)", "train"),
    ("fill-conv-bad", "gpu", "gpu-oom-cudnn-handle-01", "gpu.out-of-memory", "warmup", "",
     "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
     FILL + ", OP=conv WARM=0: the first fp16 conv2d after the pool creates the cuDNN handle; cuDNN 9.19 says "
     "CUDNN_STATUS_INTERNAL_ERROR, not an allocation status; UNSURE label gpu.out-of-memory (only the script's own "
     "'free 2.2 MiB' line shows the GPU full), alternative unknown; twin "
     "corpora/gpu-pairs/gpu-pair-cudnn-handle-oom-good.log (WARM=1)", "test"),
    ("load-truncated", "gpu", "config-load-safetensors-truncated-01", "config.model-load", "load-weights", "",
     "safetensors._safetensors_rust.SafetensorError: Error while deserializing header: incomplete metadata, file not fully covered",
     LOAD + ", MODE=truncated: the last shard cut to half its size (an interrupted copy)" + LOAD_TWIN, "train"),
    ("load-missing-shard", "gpu", "config-load-missing-shard-01", "config.model-load", "load-weights", "",
     "FileNotFoundError: No such file or directory: /tmp/ckpt-missing-shard/model-00005-of-00005.safetensors",
     LOAD + ", MODE=missing-shard: the index names a shard that was not copied" + LOAD_TWIN, "test"),
    ("load-no-config", "gpu", "config-load-no-config-01", "config.model-load", "load-weights", "",
     "ValueError: Unrecognized model in /tmp/ckpt-no-config. Should have a `model_type` key in its config.json.",
     LOAD + ", MODE=no-config: config.json not copied (transformers 5.17 words it as a missing model_type); UNSURE phase "
     "load-weights (the config is read first), alternative launch" + LOAD_TWIN, "train"),
    ("load-bad-type", "gpu", "config-load-model-type-01", "config.model-load", "load-weights", "",
     "ValueError: The checkpoint you are trying to load has model type `llama5` but Transformers does not recognize this architecture.",
     LOAD + ", MODE=bad-type: config.json's model_type set to 'llama5' (KeyError, then the ValueError with its 'pip install "
     "--upgrade transformers' advice); UNSURE phase load-weights, alternative launch" + LOAD_TWIN, "test"),
    ("load-size-mismatch", "gpu", "config-load-size-mismatch-01", "config.model-load", "load-weights", "",
     "RuntimeError: You set `ignore_mismatched_sizes` to `False`, thus raising an error. For details look at the above report!",
     LOAD + ", MODE=size-mismatch: config.json's intermediate_size 1536 against 1024-wide MLP weights: transformers' LOAD "
     "REPORT (ANSI bold; three MISMATCH rows 'Reinit due to size mismatch') and the RuntimeError" + LOAD_TWIN, "train"),
]
# pair key, good source, bad source, root_cause, change, early-warning substring (new in bad), fatal substring, script
PAIRS = [
    ("torchrun-port-in-use", "dist-port-holder-good", "dist-port-inuse-bad", "net.port-in-use",
     "the same torchrun command started 12 s after the twin, which held --master-port 29611 (HOLD=30) until it finished", "",
     "name: EADDRINUSE, message: address already in use", "dist_store_world.py"),
    ("c10d-world-size", "dist-world1-good", "dist-world2-bad", "hang.timeout",
     "WORLD_SIZE=2 vs 1 with only rank 0 started (and MASTER_PORT 29621 vs 29622)", "",
     "torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. 1/2 clients joined.", "dist_store_world.py"),
    ("nccl-cpu-tensor", "dist-torchrun-good", "dist-cpu-tensor-bad", "dist.nccl",
     "all_reduce of a CPU tensor vs a CUDA tensor on the NCCL process group (torchrun --standalone)", "",
     "RuntimeError: No backend type associated with device type cpu", "dist_store_world.py"),
    ("xent-pad-label", "xent-pad-good", "xent-pad-bad", "gpu.illegal-access",
     "padded label positions -1 vs -100 (cross_entropy's ignore_index)", "",
     "Assertion `t >= 0 && t < n_classes` failed.", "xent_pad_label.py"),
    ("autograd-anomaly-nan", "anomaly-good", "anomaly-bad", "unknown",
     "log of the ReLU output as it is vs clamp_min(1e-6); anomaly detection on in both, both print its UserWarning "
     "(context-warnings.csv)", "", "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.",
     "anomaly_logloss.py"),
    ("nan-sample-fp16", "nan-bf16-good", "nan-fp16-bad", "gpu.illegal-access",
     "float16 vs bfloat16, the same weights (lm_head scaled by 2e5) and sampling settings", "",
     "Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.", "nan_sample_hf.py"),
    ("cublas-handle-oom", "fill-matmul-good", "fill-matmul-bad", "gpu.out-of-memory",
     "a matmul before the pool fills the GPU (WARM=1: the cuBLAS handle exists) vs none", "",
     "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cublas_fill.py"),
    ("cudnn-handle-oom", "fill-conv-good", "fill-conv-bad", "gpu.out-of-memory",
     "a conv2d before the pool fills the GPU (WARM=1: the cuDNN handle exists) vs none", "",
     "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "cublas_fill.py"),
    ("load-safetensors-truncated", "load-ok", "load-truncated", "config.model-load",
     "the last safetensors shard cut to half vs intact", "",
     "Error while deserializing header: incomplete metadata, file not fully covered", "model_load_hf.py"),
    ("load-missing-shard", "load-ok", "load-missing-shard", "config.model-load",
     "the last shard removed vs present (the index names it in both)", "",
     "FileNotFoundError: No such file or directory: /tmp/ckpt-missing-shard/model-00005-of-00005.safetensors", "model_load_hf.py"),
    ("load-no-config", "load-ok", "load-no-config", "config.model-load", "config.json removed vs present", "",
     "ValueError: Unrecognized model in /tmp/ckpt-no-config. Should have a `model_type` key in its config.json.",
     "model_load_hf.py"),
    ("load-model-type", "load-ok", "load-bad-type", "config.model-load", "config.json's model_type 'llama5' vs 'llama'", "",
     "but Transformers does not recognize this architecture", "model_load_hf.py"),
    ("load-size-mismatch", "load-ok", "load-size-mismatch", "config.model-load",
     "config.json's intermediate_size 1536 vs 1024 (the weights' 1024 in both)", "",
     "RuntimeError: You set `ignore_mismatched_sizes` to `False`, thus raising an error.", "model_load_hf.py"),
]
SHARED_GOOD = {"load-ok": "gpu-pair-load-good.log"}
# context pair: the warning both logs print; what decides whether it precedes a failure
CONTEXT = [
    ("gpu-pair-autograd-anomaly-nan", "UserWarning: Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging.",
     "the values: a log term whose input can be exactly zero (backward 0/0, anomaly mode raises) vs one clamped to 1e-6 (trains)"),
]


def main(logs):
    per = copy_failures(logs, ROWS, lambda src: RUN)
    add_labels(per)
    write_pairs(logs, PAIRS, SHARED_GOOD, lambda good, bad: "e5")
    print("context-warnings.csv", add_context(logs, PAIRS, CONTEXT), "rows added")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
