#!/usr/bin/env bash
# Session 10 (gpu-e4): the same real library warning harmless in one context and followed by a failure in
# another (transformers' sequence-length warning with learned vs rotary positions, JAX's unusable-donation
# warning under two device budgets, JAX's int64 truncation warning with a small and a large offset, gcc's
# _GLIBCXX_USE_CXX11_ABI redefinition warning in a torch extension that calls libtorch or not, torch's
# mse_loss broadcast warning at two batch sizes), and failures of kinds not captured before (a CUDA graph
# capture invalidated by another thread, CUDA graph trees' overwritten output, a graph replayed after its
# buffer was freed, a Triton JIT build of Blackwell-only PTX on this GPU, an extension built with the old ABI).
# usage (on the GPU machine):  bash corpora/reproduce/gpu/run_e4.sh OUTDIR     ONLY="id1 id2" runs just those.
# Output: OUTDIR/e4-logs.tar.gz (logs/<id>.log, summary.txt), OUTDIR/e4-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/e4-out}}
WORK=/tmp/e4-repro
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
  $PY -c "import transformers,tokenizers;print('transformers',transformers.__version__,'tokenizers',tokenizers.__version__)"
  nvcc --version | tail -1; g++ --version | head -1; ninja --version; nproc
} > "$OUTDIR/e4-probe.txt" 2>&1
# lane H: transformers, learned (gpt2) vs rotary (llama) positions, max 256 positions
laneH() {
  sc pos-prompt-gpt2-bad 180 env MODEL=gpt2 PROMPT_WORDS=400 MAX_NEW=8 $PY $SC/ctx_positions_hf.py
  sc pos-prompt-llama-ctx 180 env MODEL=llama PROMPT_WORDS=400 MAX_NEW=8 $PY $SC/ctx_positions_hf.py
  sc pos-prompt-gpt2-good 180 env MODEL=gpt2 PROMPT_WORDS=200 MAX_NEW=8 $PY $SC/ctx_positions_hf.py
  sc pos-gen-gpt2-bad 180 env MODEL=gpt2 PROMPT_WORDS=64 MAX_NEW=256 $PY $SC/ctx_positions_hf.py
  sc pos-gen-llama-ctx 180 env MODEL=llama PROMPT_WORDS=64 MAX_NEW=256 $PY $SC/ctx_positions_hf.py
  sc pos-gen-gpt2-good 180 env MODEL=gpt2 PROMPT_WORDS=64 MAX_NEW=128 $PY $SC/ctx_positions_hf.py
  sc pos-cpu-input-gpt2 180 env MODEL=gpt2 PROMPT_WORDS=64 MAX_NEW=8 INPUT_DEVICE=cpu $PY $SC/ctx_positions_hf.py
}
# lane J: JAX (one at a time: each preallocates its budget)
laneJ() {
  sc donate-f32-b8-bad 120 env BUDGET_GIB=8 CACHE_GIB=3 SCALE_DTYPE=float32 $PY $SC/jax_donate_budget.py
  sc donate-f32-b12-ctx 120 env BUDGET_GIB=12 CACHE_GIB=3 SCALE_DTYPE=float32 $PY $SC/jax_donate_budget.py
  sc donate-bf16-b8-good 120 env BUDGET_GIB=8 CACHE_GIB=3 SCALE_DTYPE=bfloat16 $PY $SC/jax_donate_budget.py
  sc x64-offset-bad 120 env NUM_PAGES=4096 $PY $SC/jax_x64_offset.py
  sc x64-offset-ctx 120 env NUM_PAGES=512 $PY $SC/jax_x64_offset.py
  sc x64-offset-x64-good 120 env NUM_PAGES=4096 JAX_ENABLE_X64=1 $PY $SC/jax_x64_offset.py
}
# lane X: torch extensions built with and without the pre-C++11 ABI flag (fresh build folders)
laneX() {
  sc abi-tensor-old-bad 300 env TORCH_EXTENSIONS_DIR=/tmp/tx1 KIND=tensor EXTRA_CFLAGS=-D_GLIBCXX_USE_CXX11_ABI=0 $PY $SC/abi_ext_flags.py &
  sc abi-plain-old-ctx 300 env TORCH_EXTENSIONS_DIR=/tmp/tx2 KIND=plain EXTRA_CFLAGS=-D_GLIBCXX_USE_CXX11_ABI=0 $PY $SC/abi_ext_flags.py &
  sc abi-tensor-good 300 env TORCH_EXTENSIONS_DIR=/tmp/tx3 KIND=tensor $PY $SC/abi_ext_flags.py &
  wait
}
# lane G: CUDA graphs
laneG() {
  sc graph-thread-global-bad 120 env CAPTURE_MODE=global $PY $SC/graph_thread_capture.py
  sc graph-thread-local-good 120 env CAPTURE_MODE=thread_local $PY $SC/graph_thread_capture.py
  sc graph-replay-freed-bad 120 env OFFLOAD=1 $PY $SC/graph_replay_freed.py
  sc graph-replay-kept-good 120 env OFFLOAD=0 $PY $SC/graph_replay_freed.py
  sc trees-overwrite-bad 300 env KEEP=ref TORCHINDUCTOR_CACHE_DIR=/tmp/gi1 TRITON_CACHE_DIR=/tmp/gt1 $PY $SC/graph_trees_overwrite.py
  sc trees-clone-good 300 env KEEP=clone TORCHINDUCTOR_CACHE_DIR=/tmp/gi2 TRITON_CACHE_DIR=/tmp/gt2 $PY $SC/graph_trees_overwrite.py
}
# lane T: Triton JIT of Blackwell-only PTX; mse_loss broadcast at two eval batch sizes
laneT() {
  sc triton-fp4-asm-bad 180 env PACK=asm TRITON_CACHE_DIR=/tmp/ft1 $PY $SC/triton_fp4_asm.py
  sc triton-fp4-ref-good 180 env PACK=ref TRITON_CACHE_DIR=/tmp/ft2 $PY $SC/triton_fp4_asm.py
  sc mse-eval-big-bad 120 env EVAL_BATCH=300000 $PY $SC/mse_broadcast_eval.py
  sc mse-eval-small-ctx 120 env EVAL_BATCH=4096 $PY $SC/mse_broadcast_eval.py
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/e4-logs.tar.gz"; done ) & psnap=$!
laneH & p1=$!
laneJ & p2=$!
laneX & p3=$!
laneG & p4=$!
laneT & p5=$!
wait $p1 $p2 $p3 $p4 $p5
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
dmesg 2>&1 | tail -n 40 > $WORK/dmesg.txt
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/e4-logs.tar.gz" -C "$WORK" logs summary.txt dmesg.txt
cat "$SUM"
