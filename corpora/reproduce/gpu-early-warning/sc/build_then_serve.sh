#!/usr/bin/env bash
# env.gpu-arch-unsupported: the kernels are JIT-built in a build step that sees no GPU (as in an image
# build), with TORCH_CUDA_ARCH_LIST unset; the server then runs them on the H200. Twin: the build step
# sees the GPU. usage: build_then_serve.sh bad|good
HERE=$(cd "$(dirname "$0")" && pwd)
echo "+ python -m kernels.build  (CUDA_VISIBLE_DEVICES=${BUILD_VISIBLE-<unset>})"
if [ "$1" = bad ]; then env CUDA_VISIBLE_DEVICES= BUILD_ONLY=1 python3 "$HERE/jit_op_sglang.py" bad || exit 1
else BUILD_ONLY=1 python3 "$HERE/jit_op_sglang.py" good || exit 1; fi
echo "+ python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V2-Lite --trust-remote-code"
exec python3 "$HERE/jit_op_sglang.py" "$1"
