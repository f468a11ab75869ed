#!/usr/bin/env bash
# Early-warning captures with their twins (JAX/XLA BFC allocator, ptxas local-memory warning, torch's
# CUDA-initialization warning, torch + JAX sharing a GPU) and failures after readiness (first request,
# lazy compile at the first request, a batch size first met while serving, a warm-up after ready) of
# sc/toy_serve.py, a small HTTP server of the reproductions' own, each with a healthy twin.
# Runs made (2026-12-05): e1 = all scenarios on nvidia-h100-x1; e2 = ONLY="ew-jax-share-kvbig serve-warmafter-good
#   ew-jax-autotune-bad ew-jax-autotune-good ew-jax-scaled-38 serve-compile-rotriton" (added after e1) on the same kind;
#   e3 = ONLY="serve-compile-noguard-good serve-compile-noguard-rotriton ew-jax-autotune-small ew-jax-autotune-off" (added after e2).
# usage (on the GPU machine):  bash corpora/reproduce/gpu/run_ew9.sh OUTDIR     ONLY="id1 id2" runs just those.
# Output: OUTDIR/ew9-logs.tar.gz (logs/<id>.log, summary.txt), OUTDIR/ew9-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/ew9-out}}
WORK=/tmp/ew9-repro
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs SUM=$WORK/summary.txt
: > "$SUM"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=$(command -v python3)
sc() {  # sc ID TIMEOUT CMD...
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
{
  echo "== date"; date -u; uname -a; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,torch.cuda.get_device_name(0))"
  $PY -c "import jax,jaxlib;print('jax',jax.__version__,'jaxlib',jaxlib.__version__)"
  nvcc --version | tail -1; g++ --version | head -1; ulimit -a | head -20
} > "$OUTDIR/ew9-probe.txt" 2>&1
# a read-only file system for the inductor cache (as a container with a read-only root has)
mkdir -p /tmp/rocache && mount -t tmpfs -o ro,size=1m tmpfs /tmp/rocache 2>>"$OUTDIR/ew9-probe.txt"; mount | grep rocache >> "$OUTDIR/ew9-probe.txt"
TS="$PY $SC/toy_serve.py"
# lane M: scenarios that size themselves by free GPU memory, alone on the GPU
laneM() {
  sc serve-pool-good 180 env PORT=18101 HEADROOM_GIB=4 REQS=1x16,4x64,8x128,8x512 $TS
  sc serve-oom-newbatch 180 env PORT=18102 HEADROOM_GIB=4 REQS=1x16,4x64,8x128,256x2048 $TS
  sc serve-warmafter-oom 180 env PORT=18103 HEADROOM_GIB=4 REQS=1x16,2x32 WARM_AFTER=16x256,64x512,256x2048 $TS
  sc ew-jax-share-bad 120 env HOLD_FRAC=0.5 $PY $SC/jax_after_torch.py
  sc ew-jax-share-good 120 env HOLD_FRAC=0.1 $PY $SC/jax_after_torch.py
  sc ew-jax-share-kvbig 120 env HOLD_FRAC=0.5 JAX_KV_FRAC=0.5 $PY $SC/jax_after_torch.py
  sc serve-warmafter-good 180 env PORT=18111 HEADROOM_GIB=4 REQS=1x16,2x32 WARM_AFTER=16x256,64x512 $TS
  touch $WORK/gpu.free
}
waitfree() { while [ ! -e $WORK/gpu.free ]; do sleep 1; done; }
# lane A: JAX budgets, the ptxas stack pair, first-request failure
laneA() {
  waitfree
  sc ew-jax-scratch-bad 120 env BUDGET_GIB=8 WEIGHT_GIB=4.4 KV_GIB=3 $PY $SC/jax_scratch_serve.py
  sc ew-jax-scratch-good 120 env BUDGET_GIB=8 WEIGHT_GIB=4.4 KV_GIB=0.5 $PY $SC/jax_scratch_serve.py
  sc ew-jax-scratch-small 120 env BUDGET_GIB=8 WEIGHT_GIB=2 KV_GIB=3 $PY $SC/jax_scratch_serve.py
  sc ew-jax-autotune-bad 120 env BUDGET_GIB=8 INIT=ones WEIGHT_GIB=4.4 KV_GIB=3 $PY $SC/jax_scratch_serve.py
  sc ew-jax-autotune-good 120 env BUDGET_GIB=8 INIT=ones WEIGHT_GIB=4.4 KV_GIB=0.5 $PY $SC/jax_scratch_serve.py
  sc ew-jax-autotune-small 120 env BUDGET_GIB=8 INIT=ones WEIGHT_GIB=2 KV_GIB=0.5 $PY $SC/jax_scratch_serve.py
  sc ew-jax-autotune-off 120 env BUDGET_GIB=8 INIT=ones WEIGHT_GIB=4.4 KV_GIB=0.5 XLA_FLAGS=--xla_gpu_autotune_level=0 $PY $SC/jax_scratch_serve.py
  sc ew-jax-scaled-38 120 env BUDGET_GIB=8 WEIGHT_GIB=3.8 KV_GIB=0.5 $PY $SC/jax_scratch_serve.py
  sc ew-stack-bad 120 env DEPTH=64 BUILD=/tmp/sw1 bash $SC/stack_build_run.sh
  sc ew-stack-good 120 env DEPTH=64 STACK_BYTES=32768 BUILD=/tmp/sw2 bash $SC/stack_build_run.sh
  sc serve-good 180 env PORT=18104 $TS
  sc serve-devassert 180 env PORT=18105 BAD_TOKEN=32003 $TS
}
# lane C: torch.compile at the first request (fresh caches each)
laneC() {
  waitfree
  sc serve-compile-good 300 env PORT=18106 COMPILE=lazy TORCHINDUCTOR_CACHE_DIR=/tmp/ind1 TRITON_CACHE_DIR=/tmp/tri1 $TS
  sc serve-compile-fullgraph 300 env PORT=18107 COMPILE=fullgraph TORCHINDUCTOR_CACHE_DIR=/tmp/ind2 TRITON_CACHE_DIR=/tmp/tri2 $TS
  sc serve-compile-rotriton 300 env PORT=18112 COMPILE=lazy TORCHINDUCTOR_CACHE_DIR=/tmp/ind3 TRITON_CACHE_DIR=/tmp/rocache/triton $TS
  sc serve-compile-noguard-good 300 env PORT=18113 GUARD=0 COMPILE=lazy TORCHINDUCTOR_CACHE_DIR=/tmp/ind4 TRITON_CACHE_DIR=/tmp/tri4 $TS
  sc serve-compile-noguard-rotriton 300 env PORT=18114 GUARD=0 COMPILE=lazy TORCHINDUCTOR_CACHE_DIR=/tmp/ind5 TRITON_CACHE_DIR=/tmp/rocache/triton $TS
  sc serve-compile-rocache 300 env PORT=18108 COMPILE=lazy TORCHINDUCTOR_CACHE_DIR=/tmp/rocache/inductor TRITON_CACHE_DIR=/tmp/rocache/triton $TS
}
# lane H: CUDA initialisation under an address-space limit (no GPU work)
laneH() {
  sc ew-cudainit-bad 120 bash -c "ulimit -v 16000000; exec env PORT=18109 DEVICE=cuda $TS"
  sc ew-cudainit-good 180 bash -c "ulimit -v 16000000; exec env PORT=18110 DEVICE=auto $TS"
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/ew9-logs.tar.gz"; done ) & psnap=$!
laneM & pm=$!
laneA & pa=$!
laneC & pc=$!
laneH & ph=$!
wait $pm $pa $pc $ph
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
dmesg 2>&1 | tail -n 40 > $WORK/dmesg.txt
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/ew9-logs.tar.gz" -C "$WORK" logs summary.txt dmesg.txt
cat "$SUM"
