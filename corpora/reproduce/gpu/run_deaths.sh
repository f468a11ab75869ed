#!/usr/bin/env bash
# Deaths under launchers and supervisors (torchrun, a start script, `timeout`, a cgroup memory limit,
# ulimit, torch.multiprocessing.spawn) and early-warning pairs (an unset TORCH_CUDA_ARCH_LIST before a
# build that fails / succeeds; fragmentation before an OOM), each with its healthy twin where one exists.
# usage (on the GPU machine):  bash corpora/reproduce/gpu/run_deaths.sh OUTDIR     ONLY="id1 id2" runs just those.
# Runs made (2026-12-05): d1 = all scenarios on nvidia-h200; d2 = ONLY="gpu-oom-fragment-bad gpu-oom-fragment-expandable
#   gpu-oom-fragment-good death-torchrun-watchdog-bad death-torchrun-initwait death-torchrun-watchdog-good death-torchrun-segv
#   death-shell-oomkill death-torchrun-oomkill arch-list-wgmma-unset arch-list-wgmma-90 hang-ext-lock-bad hang-ext-lock-good"
#   on nvidia-h100-x1, after fixing those; d3 = ONLY="death-torchrun-oomkill death-torchrun-hostmem-good
#   ew-barrier-guess-bad ew-barrier-guess-good" on nvidia-h100-x1 (scenarios added after d2) (summaries: deaths-summary-run1.txt / -run2.txt; collect_deaths.py files them).
# Output: OUTDIR/deaths-logs.tar.gz (logs/<id>.log, summary.txt, dmesg.txt, cgroup.txt), OUTDIR/deaths-probe.txt
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SC=$HERE/sc
OUTDIR=${1:-${OUT:-/tmp/deaths-out}}
WORK=/tmp/deaths-repro
rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
LOGS=$WORK/logs SUM=$WORK/summary.txt
: > "$SUM"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
PY=$(command -v python3)
sc() {  # sc ID TIMEOUT CMD...   (the scenario's own `timeout`, if any, is part of CMD)
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
# cgroup v2 memory limits for the host-OOM scenarios (memory.max, no swap); CG=0 where not possible
CGR=/sys/fs/cgroup CG=0
if [ -f $CGR/cgroup.controllers ] && grep -qw memory $CGR/cgroup.controllers; then
  echo +memory > $CGR/cgroup.subtree_control 2>/dev/null
  for g in r8a r8b; do mkdir -p $CGR/$g && echo 3G > $CGR/$g/memory.max && { echo 0 > $CGR/$g/memory.swap.max 2>/dev/null; true; } && CG=1; done
fi
# incg G CMD...: moves itself into cgroup G, then execs CMD (a file: timeout cannot run a function)
INCG=$WORK/incg; printf '#!/bin/sh\ng=$1; shift\necho $$ > %s/$g/cgroup.procs && exec "$@"\n' $CGR > $INCG; chmod +x $INCG
{
  echo "== date"; date -u; uname -a; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
  $PY -c "import torch,triton;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,'nccl',torch.cuda.nccl.version(),torch.cuda.get_device_name(0))"
  timeout --version | head -1; bash --version | head -1; nvcc --version | tail -1; ninja --version; g++ --version | head -1
  echo "CG=$CG"; cat $CGR/cgroup.controllers 2>&1; cat $CGR/cgroup.subtree_control 2>&1; free -g; ulimit -a | head -20
  command -v vllm sglang systemd-run 2>&1; ps -p 1 -o comm=
} > "$OUTDIR/deaths-probe.txt" 2>&1
TR="$PY -m torch.distributed.run --standalone"
XD() { echo "TORCH_EXTENSIONS_DIR=/tmp/ext/$1"; }

# lane G: GPU memory first, alone (fragmentation sizes follow free memory), then light GPU work
laneG() {
  sc gpu-oom-fragment-bad 120 $PY $SC/oom_fragment_sglang.py
  sc gpu-oom-fragment-expandable 120 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $PY $SC/oom_fragment_sglang.py
  sc gpu-oom-fragment-good 120 env MEM_FRAC=0.08 $PY $SC/oom_fragment_sglang.py
  touch $WORK/gpu.free
  sc death-mp-devassert 120 env MODE=devassert $PY $SC/death_mp_spawn.py
  sc death-mp-illegal 120 env MODE=illegal $PY $SC/death_mp_spawn.py
  sc death-mp-good 120 env MODE=good $PY $SC/death_mp_spawn.py
  sc death-torchrun-watchdog-bad 200 timeout --verbose 80 env MODE=bad NCCL_DEBUG=WARN $TR --nproc-per-node 2 $SC/death_watchdog_torchrun.py &
  sc death-torchrun-initwait 200 timeout --verbose 100 env MODE=initwait NCCL_DEBUG=WARN TORCH_NCCL_USE_COMM_NONBLOCKING=1 $TR --nproc-per-node 2 $SC/death_watchdog_torchrun.py
  wait
  sc death-torchrun-watchdog-good 120 env MODE=good NCCL_DEBUG=WARN $TR --nproc-per-node 2 $SC/death_watchdog_torchrun.py
  sc death-torchrun-segv 120 $TR --nproc-per-node 2 $SC/death_segv_torchrun.py
  sc ew-barrier-guess-bad 120 env NCCL_DEBUG=WARN $TR --nproc-per-node 2 $SC/ew_barrier_guess_torchrun.py
  sc ew-barrier-guess-good 120 env NCCL_DEBUG=WARN $TR --nproc-per-node 1 $SC/ew_barrier_guess_torchrun.py
}
# lane H: host memory, shells, launchers (CPU only)
laneH() {
  sc death-torchrun-record 120 $TR --nproc-per-node 3 $SC/death_record_torchrun.py
  sc death-shell-notfound 60 env PATH=/usr/bin:/bin SERVER_CMD="vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 --max-model-len 8192" bash $SC/start_server.sh
  sc death-shell-good 90 timeout --verbose 25 env SHARDS=4 SHARD_GIB=1 SERVE=1 SERVER_CMD="$PY $SC/death_hostmem_sglang.py" bash $SC/start_server.sh
  if [ $CG = 1 ]; then
    sc death-shell-oomkill 90 $INCG r8a env SHARDS=8 SHARD_GIB=1 SERVE=1 SERVER_CMD="$PY $SC/death_hostmem_sglang.py" bash $SC/start_server.sh
    sc death-torchrun-oomkill 120 $INCG r8b env SHARDS=8 SHARD_GIB=1 $TR --nproc-per-node 1 $SC/death_hostmem_sglang.py
    sc death-torchrun-hostmem-good 120 env SHARDS=8 SHARD_GIB=1 $TR --nproc-per-node 1 $SC/death_hostmem_sglang.py
  else printf 'death-*-oomkill\tSKIPPED\tno cgroup v2 memory controller\n' >> "$SUM"; fi
  sc host-memerror-ulimit 60 bash -c "ulimit -v 4000000; exec env SHARDS=8 SHARD_GIB=1 $PY $SC/death_hostmem_sglang.py"
  sc cuda-init-ulimit 60 bash -c "ulimit -v 16000000; exec $PY $SC/cuda_init_ulimit_vllm.py"
}
# lane J: JIT builds and the hung start (GPU work is small; waits for the fragmentation pair)
laneJ() {
  while [ ! -e $WORK/gpu.free ]; do sleep 1; done
  sc arch-list-wgmma-unset 300 env $(XD a) KERNEL=wgmma $PY $SC/ew_arch_list_ext.py &
  sc arch-list-wgmma-90 300 env $(XD e) KERNEL=wgmma TORCH_CUDA_ARCH_LIST=9.0 $PY $SC/ew_arch_list_ext.py
  wait
  sc hang-ext-lock-bad 120 timeout --verbose 45 env $(XD c) STALE_LOCK=1 $PY $SC/hang_ext_lock_sglang.py &
  sc hang-ext-lock-good 150 timeout --verbose 75 env $(XD d) $PY $SC/hang_ext_lock_sglang.py
  wait
}
( while true; do sleep 15; cp "$SUM" $LOGS/_summary_partial.txt; tar -czf "$OUTDIR/.s.tgz" -C "$WORK" logs 2>/dev/null && mv "$OUTDIR/.s.tgz" "$OUTDIR/deaths-logs.tar.gz"; done ) & psnap=$!
laneG & pg=$!
laneH & ph=$!
laneJ & pj=$!
wait $pg $ph $pj
kill $psnap 2>/dev/null; wait $psnap 2>/dev/null
dmesg 2>&1 | tail -n 80 > $WORK/dmesg.txt
for g in r8a r8b; do echo "== $g"; cat $CGR/$g/memory.events 2>&1; done > $WORK/cgroup.txt
cp "$SUM" "$OUTDIR/summary.txt"
tar -czf "$OUTDIR/deaths-logs.tar.gz" -C "$WORK" logs summary.txt dmesg.txt cgroup.txt
cat "$SUM"
