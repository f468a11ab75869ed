#!/usr/bin/env bash
# Early-warning captures (issue 12) and good/bad twins (issue 19) on one GPU.
# usage (on the GPU machine): bash run_all.sh [OUTDIR]     ONLY="id1 id2" bash run_all.sh OUTDIR
# Each scenario ID runs twice: ID-bad (the one change that breaks it) and ID-good (the twin).
# Output: OUTDIR/ew-logs.tar.gz (logs/<id>-{bad,good}.log, logs/healthy-*.log, summary.txt), OUTDIR/probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/ew-out}}
WORK=/tmp/ewcap
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs; SUM=$WORK/summary.txt; : > "$SUM"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=4
PY=$(command -v python3)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
SITE=$($PY -c 'import torch,os;print(os.path.dirname(os.path.dirname(torch.__file__)))')
CUDA_REAL=$(readlink -f /usr/local/cuda)

sc() {  # sc ID TIMEOUT CMD...
  local id=$1 t=$2; shift 2
  local base=${id%-bad}; base=${base%-good}
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $base "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}

# venv views: site-packages as symlinks, minus what a broken install lacks (run with python -S)
farm() {  # farm DIR EXCLUDE_ERE [NVIDIA_EXCLUDE_ERE]
  mkdir -p "$1"
  for e in "$SITE"/*; do b=$(basename "$e"); [[ $b =~ $2 ]] && continue
    if [ "$b" = nvidia ] && [ -n "${3:-}" ]; then mkdir -p "$1/nvidia"; for n in "$e"/*; do nb=$(basename "$n"); [[ $nb =~ $3 ]] || ln -s "$n" "$1/nvidia/$nb"; done
    else ln -s "$e" "$1/$b"; fi
  done
}
F=$WORK/venv; mkdir -p $F
farm $F/full '^$'
farm $F/nonumpy '^numpy'
farm $F/nojaxcuda '^(jax_plugins|jax_cuda1[0-9]_p)'
farm $F/nocusparse '^$' '^cusparse'
farm $F/nonvcc '^$' '^cuda_nvcc'
farm $F/nonvrtc '^$' '^cuda_nvrtc'
farm $F/notriton '^triton'
farm $F/novislib '^(torchvision|torchvision\.libs)$'
cp -r "$SITE/torchvision" $F/novislib/torchvision
if [ -d "$SITE/torchvision.libs" ]; then mkdir -p $F/novislib/torchvision.libs; cp "$SITE"/torchvision.libs/* $F/novislib/torchvision.libs/; rm -f $F/novislib/torchvision.libs/libjpeg*; else rm -f $F/novislib/torchvision/libjpeg* $F/novislib/torchvision/libnvjpeg*; fi

{
  echo "== date"; date -u; echo "== uname"; uname -a; hostname
  echo "== nvidia-smi"; nvidia-smi; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  echo "== tools"; echo "python3=$PY -> $(readlink -f $PY) SITE=$SITE CUDA_REAL=$CUDA_REAL"; $PY -V; $NVCC --version; ninja --version; c++ --version | head -1
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,'ngpu',torch.cuda.device_count(),torch.cuda.get_device_name(0),torch.cuda.get_device_capability(0));print('nccl',torch.cuda.nccl.version())"
  $PY -c "import cupy,numpy,jax,transformers,torchvision;print('cupy',cupy.__version__,'numpy',numpy.__version__,'jax',jax.__version__,'transformers',transformers.__version__,'torchvision',torchvision.__version__)"
  ls $SITE | grep -i -E 'vision|jax|^nvidia|numpy'; ls $SITE/nvidia; ls $SITE/torchvision | head -40; ls $SITE/torchvision.libs 2>/dev/null
  ldd $SITE/torchvision/image.so 2>&1 | head -20
  ls $F/novislib/torchvision | grep -i -E 'jpeg|png|\.so'
  echo "== nvcc sm_75 probe"; $NVCC -gencode arch=compute_75,code=sm_75 -o $WORK/arch75 $SC/arch_probe.cu; echo rc=$?
} > "$OUTDIR/probe.txt" 2>&1

B=$WORK/build; mkdir -p $B
$NVCC -gencode arch=compute_90,code=sm_90 -o $B/arch90 $SC/arch_probe.cu > $B/build.log 2>&1
PORT_BUSY=29617
laneBuild() {
  sc ew-cxx-missing-bad 300 env CXX=/opt/rh/gcc-toolset-13/root/usr/bin/g++ EXT_NAME=rmsnorm_a $PY $SC/jit_op_sglang.py bad
  sc ew-nvcc-std-bad 300 env EXTRA_NVCC_FLAGS=-std=c++14 EXT_NAME=rmsnorm_c $PY $SC/jit_op_sglang.py bad
}
laneBuild2() {
  sc ew-cxx-missing-good 300 env EXT_NAME=rmsnorm_b $PY $SC/jit_op_sglang.py good
  sc ew-arch-torchext-good 300 env TORCH_CUDA_ARCH_LIST=9.0 EXT_NAME=rmsnorm_f $PY $SC/jit_op_sglang.py good
}
laneBuild3() {
  sc ew-arch-build-nogpu-bad 300 env -u TORCH_CUDA_ARCH_LIST EXT_NAME=rmsnorm_g PATH=$(dirname $PY):$PATH bash $SC/build_then_serve.sh bad
  sc ew-arch-torchext-bad 300 env TORCH_CUDA_ARCH_LIST=7.5 EXT_NAME=rmsnorm_e $PY $SC/jit_op_sglang.py bad
  sc ew-nvcc-std-good 300 env EXT_NAME=rmsnorm_d $PY $SC/jit_op_sglang.py good
  sc ew-arch-build-nogpu-good 300 env -u TORCH_CUDA_ARCH_LIST EXT_NAME=rmsnorm_h PATH=$(dirname $PY):$PATH bash $SC/build_then_serve.sh good
}
laneMem() {  # memory-heavy, one at a time
  sc ew-alloc-conf-typo-bad 150 env PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True $PY $SC/alloc_frag_sglang.py bad
  sc ew-alloc-conf-typo-good 150 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $PY $SC/alloc_frag_sglang.py good
  sc ew-jax-mem-fraction-bad 150 env XLA_PYTHON_CLIENT_MEM_FRACTION=0.1 KV_GB=24 $PY $SC/jax_server.py bad
  sc ew-jax-mem-fraction-good 150 env XLA_PYTHON_CLIENT_MEM_FRACTION=0.3 KV_GB=24 $PY $SC/jax_server.py good
  sc ew-graph-oom-retry-bad 150 env MEM_FRAC=0.97 $PY $SC/graph_oom_retry_sglang.py bad
  sc ew-graph-oom-retry-good 150 env MEM_FRAC=0.70 $PY $SC/graph_oom_retry_sglang.py good
  sc ew-kv-offset-int32-bad 120 $PY $SC/offsets_cupy_vllm.py bad
  sc ew-kv-offset-int32-good 120 $PY $SC/offsets_cupy_vllm.py good
  sc healthy-sglang-01 150 env MEM_FRAC=0.2 MAX_BS=16 $PY $SC/healthy_sglang.py
  sc healthy-sglang-02 150 env MEM_FRAC=0.1 MAX_BS=64 MODEL=Qwen/Qwen3-8B $PY $SC/healthy_sglang.py
  sc healthy-vllm-01 150 env GPU_UTIL=0.3 $PY $SC/healthy_vllm.py
  sc healthy-vllm-02 150 env GPU_UTIL=0.2 MAX_LEN=32768 MODEL=meta-llama/Llama-3.1-8B-Instruct $PY $SC/healthy_vllm.py
}
laneEnv() {  # broken installs / environment, light on the GPU
  sc ew-numpy-missing-bad 120 env PYTHONPATH=$F/nonumpy $PY -S $SC/numpy_missing_vllm.py bad
  sc ew-numpy-missing-good 120 env PYTHONPATH=$F/full $PY -S $SC/numpy_missing_vllm.py good
  sc ew-jax-plugin-missing-bad 120 env PYTHONPATH=$F/nojaxcuda $PY -S $SC/jax_server.py bad
  sc ew-jax-plugin-missing-good 120 env PYTHONPATH=$F/full $PY -S $SC/jax_server.py good
  sc ew-jax-cusparse-missing-bad 120 env PYTHONPATH=$F/nocusparse $PY -S $SC/jax_server.py bad
  sc ew-jax-cusparse-missing-good 120 env PYTHONPATH=$F/full $PY -S $SC/jax_server.py good
  sc ew-jax-no-gpu-bad 120 env CUDA_VISIBLE_DEVICES= $PY $SC/jax_server.py bad
  sc ew-jax-no-gpu-good 120 env CUDA_VISIBLE_DEVICES=0 $PY $SC/jax_server.py good
  sc ew-jax-libdevice-bad 150 unshare -m sh -c "mount -t tmpfs none $CUDA_REAL && exec env PYTHONPATH=$F/nonvcc PATH=/usr/bin:/bin $PY -S $SC/jax_server.py bad"
  sc ew-jax-libdevice-good 150 env PYTHONPATH=$F/full $PY -S $SC/jax_server.py good
  sc ew-cupy-nvrtc-missing-bad 120 unshare -m sh -c "mount -t tmpfs none $CUDA_REAL && exec env PYTHONPATH=$F/nonvrtc PATH=/usr/bin:/bin $PY -S $SC/cupy_rmsnorm_vllm.py bad"
  sc ew-cupy-nvrtc-missing-good 120 env PYTHONPATH=$F/full $PY -S $SC/cupy_rmsnorm_vllm.py good
  sc ew-compile-no-triton-bad 150 env PYTHONPATH=$F/notriton $PY -S $SC/compile_no_triton_vllm.py bad
  sc ew-compile-no-triton-good 150 env PYTHONPATH=$F/full $PY -S $SC/compile_no_triton_vllm.py good
  sc ew-vision-libjpeg-bad 120 env TORCHVISION_WARN_WHEN_EXTENSION_LOADING_FAILS=1 PYTHONPATH=$F/novislib $PY -S $SC/vision_decode_vllm.py bad
  sc ew-vision-libjpeg-good 120 env TORCHVISION_WARN_WHEN_EXTENSION_LOADING_FAILS=1 PYTHONPATH=$F/full $PY -S $SC/vision_decode_vllm.py good
  sc ew-genconfig-temperature-bad 120 $PY $SC/genconfig_vllm.py bad
  sc ew-genconfig-temperature-good 120 $PY $SC/genconfig_vllm.py good
}
laneGpu() {
  sc ew-visible-devices-bad 90 env CUDA_VISIBLE_DEVICES=1 $PY $SC/torch_no_gpu_sglang.py bad
  sc ew-visible-devices-good 90 env CUDA_VISIBLE_DEVICES=0 $PY $SC/torch_no_gpu_sglang.py good
  sc ew-graph-side-stream-bad 120 $PY $SC/graph_side_stream_sglang.py bad
  sc ew-graph-side-stream-good 120 $PY $SC/graph_side_stream_sglang.py good
  sc ew-temperature-zero-bad 120 env DEFAULT_TEMPERATURE=0.0 $PY $SC/temperature_sampling_sglang.py bad
  sc ew-temperature-zero-good 120 env DEFAULT_TEMPERATURE=0.7 $PY $SC/temperature_sampling_sglang.py good
  sc ew-sdpa-fp32-bad 120 env SERVE_DTYPE=float32 $PY $SC/sdpa_dtype_vllm.py bad
  sc ew-sdpa-fp32-good 120 env SERVE_DTYPE=bfloat16 $PY $SC/sdpa_dtype_vllm.py good
  sc ew-arch-sm75-bad 60 bash -c "echo '+ nvcc -gencode arch=compute_75,code=sm_75 -o scale arch_probe.cu'; $NVCC -gencode arch=compute_75,code=sm_75 -o $B/arch75 $SC/arch_probe.cu && $B/arch75"
  sc ew-arch-sm75-good 60 bash -c "echo '+ nvcc -gencode arch=compute_90,code=sm_90 -o scale arch_probe.cu'; $NVCC -gencode arch=compute_90,code=sm_90 -o $B/arch90b $SC/arch_probe.cu && $B/arch90b"
}
laneExtra() {
  mkdir -p $B/np1 $B/np2
  INC=$($PY -c 'import sysconfig;print(sysconfig.get_paths()["include"])')
  gcc -shared -fPIC -O2 -DNUMPY1 -I$INC -o $B/np1/xgrammar_bitmask$($PY -c 'import sysconfig;print(sysconfig.get_config_var("EXT_SUFFIX"))') $SC/npext.c >> $B/build.log 2>&1
  gcc -shared -fPIC -O2 -I$INC -o $B/np2/xgrammar_bitmask$($PY -c 'import sysconfig;print(sysconfig.get_config_var("EXT_SUFFIX"))') $SC/npext.c >> $B/build.log 2>&1
  sc ew-numpy1-ext-bad 90 env EXT_DIR=$B/np1 $PY $SC/grammar_ext_sglang.py bad
  sc ew-numpy1-ext-good 90 env EXT_DIR=$B/np2 $PY $SC/grammar_ext_sglang.py good
  sc ew-nvcc-host-device-bad 120 bash -xc "$NVCC -O2 -gencode arch=compute_90,code=sm_90 -o $B/softcap_bad $SC/hostdev.cu && $B/softcap_bad"
  sc ew-nvcc-host-device-good 120 bash -xc "$NVCC -O2 -gencode arch=compute_90,code=sm_90 -DFIXED -o $B/softcap_good $SC/hostdev.cu && $B/softcap_good"
}
laneDist() {
  sc ew-nccl-ifname-bad 90 env NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=ens9f0np0 MASTER_PORT=29611 $PY $SC/dist_init_sglang.py bad
  sc ew-nccl-ifname-good 90 env NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=lo MASTER_PORT=29612 $PY $SC/dist_init_sglang.py good
  sc ew-nccl-net-ib-bad 90 env NCCL_DEBUG=WARN NCCL_NET=IB MASTER_PORT=29613 $PY $SC/dist_init_sglang.py bad
  sc ew-nccl-net-ib-good 90 env NCCL_DEBUG=WARN MASTER_PORT=29614 $PY $SC/dist_init_sglang.py good
  sc ew-nccl-comm-id-bad 90 env NCCL_DEBUG=WARN NCCL_COMM_ID=10.255.255.1:23456 MASTER_PORT=29619 $PY $SC/dist_init_sglang.py bad
  sc ew-nccl-comm-id-good 90 env NCCL_DEBUG=WARN MASTER_PORT=29620 $PY $SC/dist_init_sglang.py good
  sc ew-c10d-node-rank-bad 90 env RANK=1 WORLD_SIZE=2 MASTER_PORT=29615 DIST_TIMEOUT=25 $PY $SC/dist_init_sglang.py bad
  sc ew-c10d-node-rank-good 90 env RANK=0 WORLD_SIZE=1 MASTER_PORT=29616 DIST_TIMEOUT=25 $PY $SC/dist_init_sglang.py good
  ( $PY -c "import socket,time;s=socket.socket();s.bind(('0.0.0.0',$PORT_BUSY));s.listen();time.sleep(60)" & echo $! > $WORK/busy.pid; wait ) &
  sleep 1
  sc ew-port-in-use-bad 90 env MASTER_PORT=$PORT_BUSY $PY $SC/dist_init_sglang.py bad
  kill $(cat $WORK/busy.pid) 2>/dev/null
  sc ew-port-in-use-good 90 env MASTER_PORT=29618 $PY $SC/dist_init_sglang.py good
}
( while true; do sleep 20; cp "$SUM" $LOGS/_summary_partial.txt 2>/dev/null; tar -czf "$OUTDIR/.snap.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.snap.tgz" "$OUTDIR/ew-logs.tar.gz"; done ) & psnap=$!
laneBuild & p1=$!; laneBuild2 & p2=$!; laneBuild3 & p3=$!; laneMem & p4=$!; laneEnv & p5=$!; laneGpu & p6=$!; laneDist & p7=$!; laneExtra & p8=$!
wait $p1 $p2 $p3 $p4 $p5 $p6 $p7 $p8
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
cp $B/build.log $LOGS/_build.log; cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/ew-logs.tar.gz" -C "$WORK" logs summary.txt
cat "$SUM"
