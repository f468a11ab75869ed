#!/usr/bin/env bash
# Runs every GPU failure scenario and captures stdout+stderr of each, merged, to one log.
# usage (on the GPU machine, from the repo root):  bash corpora/reproduce/gpu/run_all.sh [OUTDIR]
#   ONLY="id1 id2" bash corpora/reproduce/gpu/run_all.sh OUTDIR   runs just those scenarios
# Output: OUTDIR/gpu-logs.tar.gz (logs/<id>.log + summary.txt), OUTDIR/probe.txt, OUTDIR/summary.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/gpu-out}}
WORK=/tmp/gpu-repro
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs
SUM=$WORK/summary.txt
: > "$SUM"

# NVLink multicast stays off (shared host); Python output unbuffered so merged order is real.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=$(command -v python3)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NINJA=$(command -v ninja)
SANITIZER=$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")
CXX_BIN=$(command -v c++)
NGPU=$($PY -c 'import torch;print(torch.cuda.device_count())' 2>/dev/null || echo 0)

# sc ID TIMEOUT CMD... : run one scenario, merged output to logs/ID.log
sc() {
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  local rc=$?
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$rc" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
skip() { printf '%s\tSKIPPED\t%s\n' "$1" "$2" >> "$SUM"; }

{
  echo "== date"; date -u
  echo "== uname"; uname -a
  echo "== nvidia-smi"; nvidia-smi
  nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  echo "== tools"; echo "python3=$PY -> $(readlink -f $PY)"; echo "nvcc=$NVCC ninja=$NINJA c++=$CXX_BIN"
  $PY -V; $NVCC --version; $NINJA --version; $CXX_BIN --version | head -1
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,'ngpu',torch.cuda.device_count(),torch.cuda.get_device_name(0),torch.cuda.get_device_capability(0));print('nccl',torch.cuda.nccl.version())"
  $PY -c "import cupy;print('cupy',cupy.__version__)"
  $PY -c "import jax;print('jax',jax.__version__)"
  echo "== cuda dirs"; ls -la /usr/local/ | head -30; ls -ld /usr/local/cuda*
  ldconfig -p | grep -i -E 'nvrtc|cudart' | head
  echo "NGPU=$NGPU"
} > "$OUTDIR/probe.txt" 2>&1

# ---------- native builds ----------
B=$WORK/build; mkdir -p $B
{
  set -x
  $NVCC -O2 -gencode arch=compute_90,code=sm_90 -o $B/oom_cudamalloc $SC/oom_cudamalloc.cu
  $NVCC -O2 -gencode arch=compute_90,code=sm_90 -lineinfo -o $B/illegal_oob $SC/illegal_oob.cu
  $NVCC -O2 -gencode arch=compute_90,code=sm_90 -o $B/illegal_far $SC/illegal_far.cu
  $NVCC -O2 -gencode arch=compute_80,code=sm_80 -o $B/arch_sm80 $SC/arch_kernel.cu
  $NVCC -cubin -gencode arch=compute_80,code=sm_80 -o $B/silu_sm80.cubin $SC/arch_kernel.cu
  # ABI mismatch: ext built against dep v1, dep then replaced by v2 with another signature
  mkdir -p $B/abi $B/libmiss
  printf 'namespace dep { int compute(int x) { return 2 * x; } }\n' > $B/abi/dep_v1.cpp
  printf 'namespace dep { long compute(long x, int scale) { return scale * x; } }\n' > $B/abi/dep_v2.cpp
  printf 'namespace dep { int compute(int); }\nextern "C" int ext_entry(int x) { return dep::compute(x); }\n' > $B/abi/ext.cpp
  g++ -shared -fPIC -Wl,-soname,libdep_rt.so -o $B/abi/libdep_rt.so $B/abi/dep_v1.cpp
  g++ -shared -fPIC -o $B/abi/libsgl_kernel_ops.so $B/abi/ext.cpp -L$B/abi -ldep_rt -Wl,-rpath,$B/abi
  g++ -shared -fPIC -Wl,-soname,libdep_rt.so -o $B/abi/libdep_rt.so $B/abi/dep_v2.cpp
  # library missing: dependency built, linked, then absent at run time
  g++ -shared -fPIC -Wl,-soname,libcustom_ar_rt.so.2 -o $B/libmiss/libcustom_ar_rt.so.2 $B/abi/dep_v1.cpp
  g++ -shared -fPIC -o $B/libmiss/libcustom_ar.so $B/abi/ext.cpp -L$B/libmiss -l:libcustom_ar_rt.so.2
  rm $B/libmiss/libcustom_ar_rt.so.2
  # tool dirs for PATH-stripped runs
  mkdir -p $B/bin_noninja $B/bin_nonvcc
  for t in c++ g++ gcc cc; do ln -sf "$(command -v $t)" $B/bin_noninja/$t; ln -sf "$(command -v $t)" $B/bin_nonvcc/$t; done
  ln -sf "$NVCC" $B/bin_noninja/nvcc; ln -sf "$NINJA" $B/bin_nonvcc/ninja
  set +x
} > $WORK/build.log 2>&1
FLAG=$WORK/memfill.done

# ---------- lane A: builds / toolchain / env (CPU only until the memfill group is over) ----------
laneA() {
  sc tc-compile-nvcc-01 120 env NVCC=$NVCC $PY $SC/jit_nvcc_bad.py $SC/nvcc_bad.cu
  sc tc-compile-ptxas-01 120 bash -xc "$NVCC -O3 -gencode arch=compute_80,code=sm_80 -c $SC/ptxas_wgmma.cu -o $B/ptxas_wgmma.o"
  sc env-abi-undefined-symbol-01 60 $PY $SC/abi_load.py $B/abi/libsgl_kernel_ops.so
  sc env-libmissing-dep-01 60 $PY $SC/libmissing_dep.py $B/libmiss/libcustom_ar.so
  sc env-libmissing-nvrtc-01 60 $PY $SC/libmissing_nvrtc_sglang.py
  sc env-no-gpu-01 60 env CUDA_VISIBLE_DEVICES= $PY $SC/no_gpu_visible.py
  sc tc-missing-ninja-01 120 env PATH=$B/bin_noninja TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/torchext_missing_tool.py rotary_emb_a
  sc tc-missing-nvcc-01 180 env PATH=$B/bin_nonvcc CUDA_HOME=/usr/local/cuda-12.4 TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/torchext_missing_tool.py rotary_emb_b
  sc tc-missing-cxx-01 180 env CXX=/opt/rh/gcc-toolset-13/root/usr/bin/g++ TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/torchext_missing_tool.py rotary_emb_c
  sc tc-compile-torchext-01 300 env TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/torchext_bad_sglang.py
  while [ ! -e $FLAG ]; do sleep 1; done
  sc env-arch-torchext-01 400 env TORCH_CUDA_ARCH_LIST=8.0 $PY $SC/arch_torchext_vllm.py
}

# ---------- lane B: single-GPU scenarios ----------
laneB() {
  # memory-filling group first, alone on the GPU
  sc gpu-oom-alloc-02 120 $PY $SC/oom_fill_vllm.py
  sc gpu-oom-alloc-01 120 $PY $SC/oom_alloc_sglang.py
  sc gpu-oom-graph-capture-01 120 $PY $SC/oom_graph_capture_sglang.py
  sc gpu-oom-cupy-01 120 $PY $SC/oom_cupy.py
  sc gpu-oom-cudamalloc-01 60 $B/oom_cudamalloc
  sc gpu-oom-jax-01 120 $PY $SC/oom_jax.py
  touch $FLAG
  sc gpu-illegal-triton-01 120 $PY $SC/illegal_triton_vllm.py
  sc gpu-illegal-triton-02 120 $PY $SC/illegal_triton_then_gemm.py
  sc gpu-illegal-cupy-01 120 $PY $SC/illegal_cupy_oob.py
  sc gpu-illegal-misaligned-01 120 $PY $SC/illegal_cupy_misaligned.py
  sc gpu-illegal-trap-01 120 $PY $SC/illegal_cupy_trap.py
  sc gpu-illegal-devassert-01 120 $PY $SC/devassert_embedding_sglang.py
  sc gpu-illegal-devassert-02 120 env CUDA_LAUNCH_BLOCKING=1 $PY $SC/devassert_gather_blocking.py
  sc gpu-illegal-cuda-01 60 $B/illegal_oob
  sc gpu-illegal-cuda-02 60 $B/illegal_far
  sc gpu-illegal-sanitizer-01 180 $SANITIZER --print-limit 8 $B/illegal_oob 4096
  sc env-arch-nvcc-sm80-01 60 $B/arch_sm80
  sc env-arch-cupy-cubin-01 120 $PY $SC/arch_cupy_cubin.py $B/silu_sm80.cubin
  sc gpu-graph-capture-sync-01 120 $PY $SC/graph_sync_plain.py
  sc gpu-graph-capture-item-01 120 $PY $SC/graph_item_sglang.py
  sc gpu-graph-capture-cpu-01 120 $PY $SC/graph_cpu_copy_vllm.py
  sc gpu-graph-capture-default-stream-01 120 $PY $SC/graph_default_stream.py
  sc gpu-graph-capture-nonzero-01 120 $PY $SC/graph_nonzero_sglang.py
  sc tc-compile-triton-01 180 $PY $SC/triton_compile_arange_vllm.py
  sc tc-compile-triton-02 180 $PY $SC/triton_compile_dot_sglang.py
  sc tc-compile-triton-oor-01 180 $PY $SC/triton_out_of_resources.py
}

# ---------- lane C: NCCL (after the memfill group) ----------
TR="$PY -m torch.distributed.run --standalone --nproc-per-node 2"
laneC() {
  while [ ! -e $FLAG ]; do sleep 1; done
  sc dist-nccl-dup-gpu-01 150 env NCCL_DEBUG=WARN $TR $SC/nccl_dup_gpu.py
  if [ "$NGPU" -ge 2 ]; then
    sc dist-nccl-timeout-01 150 env TORCH_NCCL_ASYNC_ERROR_HANDLING=1 $TR $SC/nccl_timeout.py
    sc dist-nccl-timeout-02 150 env TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_DEBUG=INFO WRAP=sglang $TR $SC/nccl_timeout.py
    sc dist-nccl-mismatch-01 150 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR $SC/nccl_mismatch_vllm.py
    sc gpu-oom-alloc-03 150 $TR $SC/oom_torchrun.py
    sc gpu-illegal-torchrun-01 150 $TR $SC/illegal_torchrun.py
  else
    for i in dist-nccl-timeout-01 dist-nccl-timeout-02 dist-nccl-mismatch-01 gpu-oom-alloc-03 gpu-illegal-torchrun-01; do skip $i "needs 2 GPUs"; done
  fi
}

# snapshot the logs into OUTDIR every 20 s, so a killed run still returns what it had
( while true; do sleep 20; cp "$SUM" $LOGS/_summary_partial.txt 2>/dev/null; tar -czf "$OUTDIR/.snap.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.snap.tgz" "$OUTDIR/gpu-logs.tar.gz"; done ) & psnap=$!
laneA & pa=$!
laneB & pb=$!
laneC & pc=$!
wait $pa $pb $pc

# ---------- last, alone: no CUDA toolkit visible at all (tmpfs over /usr/local in a private mount namespace) ----------
if [[ "$(readlink -f $PY)" != /usr/local/* ]]; then
  sc tc-missing-cuda-home-01 120 unshare -m sh -c "mount -t tmpfs none /usr/local && exec env -u CUDA_HOME -u CUDA_PATH PATH=$B/bin_nonvcc TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/torchext_missing_tool.py rotary_emb_d"
else
  skip tc-missing-cuda-home-01 "python lives under /usr/local"
fi

kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
cp $WORK/build.log $LOGS/_build.log
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/gpu-logs.tar.gz" -C "$WORK" logs summary.txt

# ---------- JIT compilers (FlashInfer JIT, inductor, Triton autotune, dynamo): own driver, own tarball ----------
# (OUTDIR/jit-logs.tar.gz; FlashInfer needs WHL=folder of wheels, see run_jit.sh; JIT=0 skips it)
if [ "${JIT:-1}" = 1 ]; then bash "$HERE/run_jit.sh" "$OUTDIR"; fi
# ---------- deaths under launchers/supervisors and early-warning pairs: own driver, own tarball ----------
# (OUTDIR/deaths-logs.tar.gz; run_deaths.sh; DEATHS=0 skips it)
if [ "${DEATHS:-1}" = 1 ]; then bash "$HERE/run_deaths.sh" "$OUTDIR"; fi
ls -la "$OUTDIR"; cat "$SUM"
