#!/usr/bin/env bash
# Session 11 (gpu-e6). Lane P: the max-positions pairs again, the checkpoint now loaded with from_pretrained
# and transformers' own INFO logging, so the program itself states the architecture (the config it read:
# "architectures", "model_type", the positions); learned absolute positions (gpt2, opt) vs rotary (llama,
# qwen2). Lane A: the same checkpoints with optional accelerations whose package is absent (FlashAttention 2,
# bitsandbytes) and generate() arguments that do not fit together. Lane H: a DataLoader timeout, a float16
# overflow caught by gradient clipping, a server port and a JAX coordinator port already held, torchrun
# starting more ranks than GPUs. Each failure with its healthy twin.
# Run e6-1: everything; run e6-2: ONLY="posinfo-prompt-opt posinfo-prompt-qwen2 save-gpt2-128 posinfo-gen-gpt2-128
# save-llama-128 posinfo-gen-llama-128 clip-fp16-1e5-bad clip-bf16-1e5-good" (needs run e6-1's /tmp/ckpt-* on the
# machine, else add save-opt save-qwen2).
# usage (on the GPU machine):  bash corpora/reproduce/gpu/run_e6.sh OUTDIR     ONLY="id1 id2" runs just those.
# Output: OUTDIR/e6-logs.tar.gz (logs/<id>.log, summary.txt, dmesg.txt), OUTDIR/e6-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
. "$HERE/run_lib.sh"
run_start "${1:-${OUT:-/tmp/e6-out}}" /tmp/e6-repro
export HF_HUB_OFFLINE=1
{
  echo "== date"; date -u; uname -a; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,torch.cuda.get_device_name(0))"
  $PY -c "import transformers,accelerate;print('transformers',transformers.__version__,'accelerate',accelerate.__version__)"
  $PY -c "import jax;print('jax',jax.__version__)"
  $PY -m pip list 2>/dev/null | grep -i -E "flash|bitsandbytes|kernels|onnxruntime|xformers|apex|deepspeed|optimum|peft"
  $PY -c "import onnxruntime as o;print('ort',o.__version__,o.get_available_providers())"
  nproc
} > "$OUTDIR/e6-probe.txt" 2>&1
P=$SC/ctx_positions_hf.py
laneP() {
  for m in gpt2 opt llama qwen2; do
    sc save-$m 120 env MODEL=$m MAXPOS=256 CKPT=/tmp/ckpt-$m SAVE_ONLY=1 $PY $P
  done
  for m in gpt2 opt llama qwen2; do
    sc posinfo-gen-$m 150 env TRANSFORMERS_VERBOSITY=info MODEL=$m MAXPOS=256 CKPT=/tmp/ckpt-$m PROMPT_WORDS=64 MAX_NEW=256 $PY $P
  done
  for m in gpt2 llama; do
    sc posinfo-prompt-$m 150 env TRANSFORMERS_VERBOSITY=info MODEL=$m MAXPOS=256 CKPT=/tmp/ckpt-$m PROMPT_WORDS=400 MAX_NEW=16 $PY $P
  done
  sc posinfo-gen128-gpt2 150 env TRANSFORMERS_VERBOSITY=info MODEL=gpt2 MAXPOS=256 CKPT=/tmp/ckpt-gpt2 PROMPT_WORDS=64 MAX_NEW=128 $PY $P
  # run e6-2: the prompt case for opt / qwen2, and another figure (128 positions)
  for m in opt qwen2; do
    sc posinfo-prompt-$m 150 env TRANSFORMERS_VERBOSITY=info MODEL=$m MAXPOS=256 CKPT=/tmp/ckpt-$m PROMPT_WORDS=400 MAX_NEW=16 $PY $P
  done
  for m in gpt2 llama; do
    sc save-$m-128 120 env MODEL=$m MAXPOS=128 CKPT=/tmp/ckpt-$m-128 SAVE_ONLY=1 $PY $P
    sc posinfo-gen-$m-128 150 env TRANSFORMERS_VERBOSITY=info MODEL=$m MAXPOS=128 CKPT=/tmp/ckpt-$m-128 PROMPT_WORDS=32 MAX_NEW=160 $PY $P
  done
}
laneA() {
  until grep -q "^save-qwen2" "$SUM" || [ -n "${ONLY:-}" ]; do sleep 2; done
  sc attn-fa2-bad 150 env CKPT=/tmp/ckpt-llama ATTN=flash_attention_2 $PY $SC/attn_quant_hf.py
  sc attn-sdpa-good 150 env CKPT=/tmp/ckpt-llama ATTN=sdpa $PY $SC/attn_quant_hf.py
  sc quant-bnb4-bad 150 env CKPT=/tmp/ckpt-llama QUANT=bnb4 $PY $SC/attn_quant_hf.py
  sc quant-bnb8-bad 150 env CKPT=/tmp/ckpt-llama QUANT=bnb8 $PY $SC/attn_quant_hf.py
  sc quant-none-good 150 env CKPT=/tmp/ckpt-llama QUANT=none $PY $SC/attn_quant_hf.py
  sc gen-beams2-ret4-bad 150 env CKPT=/tmp/ckpt-llama NUM_BEAMS=2 NUM_RETURN=4 $PY $SC/gen_args_hf.py
  sc gen-beams4-ret4-good 150 env CKPT=/tmp/ckpt-llama NUM_BEAMS=4 NUM_RETURN=4 $PY $SC/gen_args_hf.py
  sc gen-greedy-ret2-bad 150 env CKPT=/tmp/ckpt-llama NUM_BEAMS=1 NUM_RETURN=2 $PY $SC/gen_args_hf.py
}
laneH() {
  sc dl-timeout-bad 120 env SLOW=40 START=96 TIMEOUT=10 $PY $SC/dataloader_timeout.py
  sc dl-timeout-good 120 env SLOW=0.002 START=96 TIMEOUT=10 $PY $SC/dataloader_timeout.py
  sc clip-fp16-bad 120 env DTYPE=float16 $PY $SC/clip_nonfinite.py
  sc clip-bf16-good 120 env DTYPE=bfloat16 $PY $SC/clip_nonfinite.py
  # run e6-2: a scale whose float16 forward overflows (1000 did not: the loss was inf, the gradients finite)
  sc clip-fp16-1e5-bad 120 env DTYPE=float16 SCALE=1e5 $PY $SC/clip_nonfinite.py
  sc clip-bf16-1e5-good 120 env DTYPE=bfloat16 SCALE=1e5 $PY $SC/clip_nonfinite.py
  sc port-holder 90 $PY -m http.server 18120 --bind 127.0.0.1 &
  sc coord-holder 90 $PY -m http.server 18130 --bind 127.0.0.1 &
  sleep 3
  sc serve-port-inuse-bad 120 env PORT=18120 $PY $SC/toy_serve.py
  sc serve-port-free-good 120 env PORT=18121 $PY $SC/toy_serve.py
  sc jax-coord-inuse-bad 120 env COORD=127.0.0.1:18130 XLA_PYTHON_CLIENT_PREALLOCATE=false $PY $SC/jax_coordinator.py
  sc jax-coord-free-good 120 env COORD=127.0.0.1:18131 XLA_PYTHON_CLIENT_PREALLOCATE=false $PY $SC/jax_coordinator.py
  wait
  sc torchrun-2ranks-1gpu-bad 120 env MODE=allreduce INIT_TIMEOUT=30 $TR --standalone --nproc-per-node 2 $SC/dist_store_world.py
  sc torchrun-1rank-good 120 env MODE=allreduce $TR --standalone --nproc-per-node 1 $SC/dist_store_world.py
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/e6-logs.tar.gz"; done ) & psnap=$!
laneP & p1=$!
laneA & p2=$!
laneH & p3=$!
wait $p1 $p2 $p3
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
dmesg 2>&1 | tail -n 40 > $WORK/dmesg.txt
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/e6-logs.tar.gz" -C "$WORK" logs summary.txt dmesg.txt
cat "$SUM"
