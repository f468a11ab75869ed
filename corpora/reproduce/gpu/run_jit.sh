#!/usr/bin/env bash
# JIT-compiler scenarios: FlashInfer's JIT (kernels built by ninja + nvcc at first use), torch.compile /
# inductor / Triton autotuning, and the good twins. Each scenario's stdout+stderr merged to one log.
# usage (on the GPU machine):  WHL=DIR bash corpora/reproduce/gpu/run_jit.sh OUTDIR
#   WHL: folder with flashinfer_python-0.5.3-py3-none-any.whl and apache_tvm_ffi-0.1.15.post2-*.whl
#   (installed with --no-deps into /tmp/site; the machine has torch, ninja, filelock, numpy, ...);
#   without it the FlashInfer scenarios are skipped.  ONLY="id1 id2" runs just those.
# Output: OUTDIR/jit-logs.tar.gz (logs/<id>.log, summary.txt), OUTDIR/jit-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/jit-out}}
WORK=/tmp/jit-repro
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs SUM=$WORK/summary.txt
: > "$SUM"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=$(command -v python3)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_DIR=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
sc() {  # sc ID TIMEOUT CMD...
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
FI=0
if [ -n "${WHL:-}" ] && ls "$WHL"/flashinfer_python-*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl && FI=1
fi
# PATH without ninja (compilers and nvcc kept) for the no-ninja run
B=$WORK/bin_noninja; mkdir -p $B
for t in c++ g++ gcc cc which; do ln -sf "$(command -v $t)" $B/$t; done; ln -sf "$NVCC" $B/nvcc
{
  echo "== date"; date -u; uname -a; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  echo "PY=$PY NVCC=$NVCC CUDA_DIR=$CUDA_DIR ninja=$(command -v ninja) cc=$(command -v cc) FI=$FI"
  $NVCC --version | tail -2; ninja --version; gcc --version | head -1; ls /usr/bin/gcc-14 /usr/bin/g++-14 2>&1
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,torch.cuda.get_device_name(0))"
  [ $FI = 1 ] && PYTHONPATH=/tmp/site $PY -c "import flashinfer,tvm_ffi;print('flashinfer',flashinfer.__version__,'tvm_ffi',tvm_ffi.__version__)"
  $PY -m pip list 2>/dev/null | grep -i -E "filelock|ninja|einops|nvidia-ml-py|typing.ext|apache|cuda-python|cudnn-frontend|cutlass"
} > "$OUTDIR/jit-probe.txt" 2>&1

FIENV="PYTHONPATH=/tmp/site"
laneF() {
  [ $FI = 1 ] || { printf 'fi-*\tSKIPPED\tno WHL\n' >> "$SUM"; return; }
  sc fi-arch-list-malformed 120 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/a FLASHINFER_CUDA_ARCH_LIST=9.0a,8.0 $PY $SC/fi_decode_sglang.py
  sc fi-jit-no-ninja 180 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/b GRAPH=0 CUDA_HOME=$CUDA_DIR PATH=$B $PY $SC/fi_decode_sglang.py
  sc fi-jit-no-nvcc-graph 180 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/c CUDA_HOME=/usr/local/cuda-12.4 $PY $SC/fi_decode_sglang.py
  sc fi-jit-arch-sm80 360 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/d FLASHINFER_CUDA_ARCH_LIST=8.0 $PY $SC/fi_decode_sglang.py &
  sc fi-jit-healthy 360 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/e $PY $SC/fi_decode_sglang.py
  wait
  sc fi-graph-plan-in-capture 180 env $FIENV FLASHINFER_WORKSPACE_BASE=/tmp/fiws/e PLAN_IN_CAPTURE=1 $PY $SC/fi_decode_sglang.py
}
fresh() { echo "TORCHINDUCTOR_CACHE_DIR=/tmp/ic/$1 TRITON_CACHE_DIR=/tmp/tc/$1"; }
laneT() {
  sc tc-inductor-no-cc 300 env $(fresh a) CC=/usr/bin/gcc-14 CXX=/usr/bin/g++-14 $PY $SC/inductor_mlp_vllm.py
  sc tc-inductor-healthy 300 env $(fresh b) $PY $SC/inductor_mlp_vllm.py
  sc tc-inductor-cpu-no-cxx 300 env $(fresh g) DEVICE=cpu CC=/usr/bin/gcc-14 CXX=/usr/bin/g++-14 $PY $SC/inductor_mlp_vllm.py
  sc tc-inductor-cpu-healthy 300 env $(fresh h) DEVICE=cpu $PY $SC/inductor_mlp_vllm.py
}
laneU() {
  sc tc-autotune-oor-fp32 240 env $(fresh c) TRITON_PRINT_AUTOTUNING=1 DTYPE=float32 $PY $SC/triton_autotune_sglang.py
  sc tc-autotune-oor-bf16 240 env $(fresh d) TRITON_PRINT_AUTOTUNING=1 DTYPE=bfloat16 $PY $SC/triton_autotune_sglang.py
  sc tc-dynamo-recompile-bad 300 env $(fresh e) TORCH_LOGS=graph_breaks,recompiles $PY $SC/dynamo_recompile_vllm.py bad
  sc tc-dynamo-recompile-good 300 env $(fresh f) TORCH_LOGS=graph_breaks,recompiles $PY $SC/dynamo_recompile_vllm.py good
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/jit-logs.tar.gz"; done ) & psnap=$!
laneF & pf=$!
laneT & pt=$!
laneU & pu=$!
wait $pf $pt $pu
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/jit-logs.tar.gz" -C "$WORK" logs summary.txt
cat "$SUM"
