# Shared set-up of the GPU run scripts (sourced): run_start OUTDIR WORK makes the work folders and defines
# LOGS, SUM, PY, TR and sc (one capture: its log, exit status and seconds in the summary). The run scripts
# before run e6 keep their own copies: each is the record of a run that was made with it.
run_start() {  # run_start OUTDIR WORK
  OUTDIR=$1 WORK=$2
  rm -rf "$WORK"; mkdir -p "$WORK/logs" "$OUTDIR"
  LOGS=$WORK/logs SUM=$WORK/summary.txt
  : > "$SUM"
  # NVLink multicast off (KINDS.md); unbuffered so a killed capture keeps its last lines
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
  PY=$(command -v python3)
  TR="$PY -m torch.distributed.run"
}

sc() {  # sc ID TIMEOUT CMD...   (ONLY="id1 id2" runs just those)
  local id=$1 t=$2; shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then return 0; fi
  local s=$(date +%s)
  timeout -k 10 "$t" "$@" > "$LOGS/$id.log" 2>&1
  printf '%s\trc=%s\tsecs=%s\tcmd=%s\n' "$id" "$?" "$(( $(date +%s) - s ))" "$*" >> "$SUM"
}
