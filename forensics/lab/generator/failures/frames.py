"""Traceback pieces the failure builders share: the server's scheduler / engine-core head, FlashInfer's JIT path, CUDA errors."""

from __future__ import annotations

from ..catalog import CUDA_TRAILER, Ctx, sglang_sched_head, vllm_core_head


def head(c: Ctx, phase: str) -> list[str]:
    return sglang_sched_head(c, phase) if c.server == "sglang" else vllm_core_head(c, phase)


def attn_jit_frames(c: Ctx) -> list[str]:
    """Frames from CUDA-graph capture (or a forward) down into FlashInfer's
    plan, which builds its kernels by JIT on GPUs it ships no AOT kernels for
    (SGLang's flashinfer_backend / vLLM's FlashInfer attention backend)."""
    if c.server == "sglang":
        spec = [("sglang/srt/model_executor/cuda_graph_runner.py", "capture_one_batch_size",
                 "self.model_runner.attn_backend.init_forward_metadata_capture_cuda_graph(", True),
                ("sglang/srt/layers/attention/flashinfer_backend.py", "init_forward_metadata_capture_cuda_graph",
                 "self.indices_updater_decode.update(", True),
                ("sglang/srt/layers/attention/flashinfer_backend.py", "update_single_wrapper", "self.call_begin_forward("),
                ("sglang/srt/layers/attention/flashinfer_backend.py", "call_begin_forward", "wrapper.begin_forward(", True)]
    else:
        spec = [("vllm/v1/worker/gpu_model_runner.py", "_dummy_run", "attn_metadata_i = builder.build_for_cudagraph_capture(", True),
                ("vllm/v1/attention/backends/flashinfer.py", "build", "self._plan(num_prefills, num_decodes, attn_metadata)"),
                ("vllm/v1/attention/backends/flashinfer.py", "_plan", "attn_metadata.decode_wrapper.plan(", True)]
    spec += [(f"{c.sp}/flashinfer/decode.py", "plan", "self._cached_module = get_batch_decode_module(", True),
             (f"{c.sp}/flashinfer/decode.py", "get_batch_decode_module", "module = gen_batch_decode_module(*args).build_and_load()", True)]
    return c.frames(spec)


def cuda_error(c: Ctx, msg: str) -> list[str]:
    exc = "torch.AcceleratorError" if c.torch >= "2.8" and c.rng.random() < 0.6 else "RuntimeError"
    return [f"{exc}: CUDA error: {msg}"] + CUDA_TRAILER


def torch_cuda_frames(c: Ctx, call: str) -> list[str]:
    return c.frames([(f"{c.sp}/torch/cuda/__init__.py", call,
                      {"_lazy_init": "torch._C._cuda_init()", "set_device": "torch._C._cuda_setDevice(device)",
                       "synchronize": "return torch._C._cuda_synchronize()", "mem_get_info": "return torch.cuda.cudart().cudaMemGetInfo(device)"}.get(call, "torch._C._cuda_init()"))])
