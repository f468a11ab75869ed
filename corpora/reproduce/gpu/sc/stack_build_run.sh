#!/usr/bin/env bash
# Builds stack_recursion.cu as a project's build step would (nvcc, sm_90) and runs it with DEPTH.
set -e
B=${BUILD:-/tmp/stackwalk}; mkdir -p "$B"
FLAGS="-O3 -arch=sm_90 -Xptxas -warn-lmem-usage"
echo "building tree-walk kernel: nvcc $FLAGS"
nvcc $FLAGS -o "$B/walk" "$(dirname "$0")/stack_recursion.cu"
echo "build finished; starting with depth ${DEPTH:-4}"
exec "$B/walk" "${DEPTH:-4}"
