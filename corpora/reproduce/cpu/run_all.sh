#!/usr/bin/env bash
# Rebuild every log of corpora/cpu/ from real failing programs, then labels.csv.
#   corpora/reproduce/cpu/run_all.sh            # all scenarios of manifest.csv
#   corpora/reproduce/cpu/run_all.sh cpu-abi-   # only ids starting with this prefix
# Needs: python3.11 with venv, gcc/g++, ninja (/usr/bin), nvcc (CUDA 13.0 at
# /usr/local/cuda, no driver) and libcudart.so.13 for the nvcc_* / cudart_* rows.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(cd "$HERE/../.." && pwd)/cpu"
VENV="${REPRO_VENV:-/tmp/repro-venv}"
export REPRO_WORK="${REPRO_WORK:-/tmp/repro-work}"
PY="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import torch, numpy, transformers, safetensors, uvicorn" 2>/dev/null; then
  echo "building venv $VENV" >&2
  "$PY" -m venv "$VENV"
  # torch 2.13.0 CPU build (taken from the machine's local wheel), nothing CUDA.
  "$VENV/bin/pip" install -q torch==2.13.0 numpy transformers safetensors uvicorn || exit 1
fi
"$VENV/bin/pip" list 2>/dev/null | grep -i -E '^(torch|numpy|transformers|safetensors|uvicorn|tokenizers) ' >&2

rm -rf "$REPRO_WORK"; mkdir -p "$REPRO_WORK" "$OUT"
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TORCH_EXTENSIONS_DIR="$REPRO_WORK/torch_extensions"
unset CUDA_HOME CUDA_PATH CC CXX

prefix="${1:-}"
"$VENV/bin/python" - "$HERE/manifest.csv" <<'PYEOF' > "$REPRO_WORK/rows.txt"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["id"], r["script"], r["variant"], r["style"], r["phase"])
PYEOF
while read -r id script variant style phase; do
  case "$id" in "$prefix"*) ;; *) continue ;; esac
  ( cd "$HERE" && timeout 300 "$VENV/bin/python" "$script" "$variant" "$style" "$phase" ) > "$OUT/$id.log" 2>&1 < /dev/null
  echo "$id rc=$?" >&2
done < "$REPRO_WORK/rows.txt"

"$VENV/bin/python" "$HERE/make_labels.py" "$HERE/manifest.csv" "$OUT"
