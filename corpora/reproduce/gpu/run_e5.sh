#!/usr/bin/env bash
# Session 10 (gpu-e5): kinds not captured before, each with a healthy twin: torch.distributed's rendezvous on
# one GPU (a master port already held by another job, a world size larger than the ranks started, a rank out of
# range, a CPU tensor to an NCCL-only group), cuBLAS's determinism check (strict, warn-only, configured), a
# negative pad label in cross_entropy, autograd's anomaly detection, NaN in sampling from float16 logits,
# damaged local checkpoints (transformers), and cuBLAS / cuDNN handles created after a pool filled the GPU.
# usage (on the GPU machine):  bash corpora/reproduce/gpu/run_e5.sh OUTDIR     ONLY="id1 id2" runs just those.
# Output: OUTDIR/e5-logs.tar.gz (logs/<id>.log, summary.txt, dmesg.txt), OUTDIR/e5-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/e5-out}}
WORK=/tmp/e5-repro
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs SUM=$WORK/summary.txt
: > "$SUM"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=$(command -v python3)
TR="$PY -m torch.distributed.run"
sc() {  # sc ID TIMEOUT CMD...
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
{
  echo "== date"; date -u; uname -a; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version(),'triton',triton.__version__,torch.cuda.get_device_name(0))"
  $PY -c "import transformers,safetensors;print('transformers',transformers.__version__,'safetensors',safetensors.__version__)"
  $PY -c "import torch;print('nccl',torch.cuda.nccl.version())"
  nvcc --version | tail -1; ls -d /usr/local/cuda* /usr/local/cuda/compat 2>&1; nproc
} > "$OUTDIR/e5-probe.txt" 2>&1
DS=$SC/dist_store_world.py
R1="--nnodes 1 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port 29611"
# lane D: torch.distributed rendezvous on one GPU
laneD() {
  sc dist-port-holder-good 120 env HOLD=30 $TR $R1 $DS &
  sleep 12
  sc dist-port-inuse-bad 120 env HOLD=30 $TR $R1 $DS
  wait
  sc dist-world2-bad 120 env RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29621 INIT_TIMEOUT=20 $PY $DS
  sc dist-world1-good 120 env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29622 INIT_TIMEOUT=20 $PY $DS
  sc dist-rank-oob-bad 120 env RANK=2 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29623 INIT_TIMEOUT=20 $PY $DS
  sc dist-cpu-tensor-bad 120 env MODE=cpu-tensor $TR --standalone --nproc-per-node 1 $DS
  sc dist-torchrun-good 120 env MODE=allreduce $TR --standalone --nproc-per-node 1 $DS
}
# lane B: small training / sampling steps
laneB() {
  sc det-strict-bad 120 env -u CUBLAS_WORKSPACE_CONFIG WARN_ONLY=0 $PY $SC/determinism_cublas.py
  sc det-warn-ctx 120 env -u CUBLAS_WORKSPACE_CONFIG WARN_ONLY=1 $PY $SC/determinism_cublas.py
  sc det-config-good 120 env CUBLAS_WORKSPACE_CONFIG=:4096:8 WARN_ONLY=0 $PY $SC/determinism_cublas.py
  sc xent-pad-bad 120 env PAD_LABEL=-1 $PY $SC/xent_pad_label.py
  sc xent-pad-good 120 env PAD_LABEL=-100 $PY $SC/xent_pad_label.py
  sc anomaly-bad 120 env CLAMP=0 $PY $SC/anomaly_logloss.py
  sc anomaly-good 120 env CLAMP=1 $PY $SC/anomaly_logloss.py
  sc nan-fp16-bad 150 env DTYPE=float16 $PY $SC/nan_sample_hf.py
  sc nan-bf16-good 150 env DTYPE=bfloat16 $PY $SC/nan_sample_hf.py
}
# lane L: local checkpoints damaged in different ways
laneL() {
  for m in ok truncated missing-shard no-config bad-type size-mismatch extra-key; do
    sc load-$m 150 env MODE=$m $PY $SC/model_load_hf.py
  done
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/e5-logs.tar.gz"; done ) & psnap=$!
laneD & p1=$!
laneB & p2=$!
laneL & p3=$!
wait $p1 $p2 $p3
# lane F last and alone: it fills the GPU
sc fill-matmul-bad 120 env OP=matmul WARM=0 $PY $SC/cublas_fill.py
sc fill-matmul-good 120 env OP=matmul WARM=1 $PY $SC/cublas_fill.py
sc fill-conv-bad 120 env OP=conv WARM=0 $PY $SC/cublas_fill.py
sc fill-conv-good 120 env OP=conv WARM=1 $PY $SC/cublas_fill.py
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
dmesg 2>&1 | tail -n 40 > $WORK/dmesg.txt
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/e5-logs.tar.gz" -C "$WORK" logs summary.txt dmesg.txt
cat "$SUM"
