"""Builders for the GPU family: out of device memory, an illegal memory access, a failed CUDA graph capture."""

from __future__ import annotations

from ..catalog import CUDA_TRAILER, Ctx, Failure, Precursor, gib, model_forward_frames, pick, tb, vllm_core_head
from .frames import cuda_error, head


def torch_oom_line(c: Ctx, dev: int = 0) -> tuple[str, str]:
    r = c.rng
    tot = c.gpu.total_gib
    alloc = pick(r, [f"{r.choice([1, 2, 4, 8, 16])}.00 GiB", f"{r.randint(20, 990)}.00 MiB", f"{gib(r, 1.0, 12.0)} GiB"])
    free_ = f"{r.randint(3, 900)}.{r.randint(10, 99)} MiB" if r.random() < 0.6 else f"{gib(r, 0.1, 1.9)} GiB"
    inuse = round(tot - r.uniform(0.05, 2.0), 2)
    byp = round(inuse - r.uniform(0.3, 4.0), 2)
    pid = r.randint(1200, 99999)
    exc = "torch.OutOfMemoryError" if c.torch >= "2.5" and r.random() < 0.8 else "torch.cuda.OutOfMemoryError"
    line = (f"{exc}: CUDA out of memory. Tried to allocate {alloc}. GPU {dev} has a total capacity of {tot:.2f} GiB of which {free_} is free. "
            f"Process {pid} has {inuse:.2f} GiB memory in use. Of the allocated memory {byp:.2f} GiB is allocated by PyTorch, and {r.randint(10, 900)}.{r.randint(10, 99)} MiB is reserved by PyTorch but unallocated. "
            "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    return line, f"CUDA out of memory. Tried to allocate {alloc}"


def f_gpu_oom(c: Ctx) -> Failure:
    r = c.rng
    if c.server == "sglang":
        kind = r.choices(["torch-oom", "mem-fraction", "unbalanced", "cuda-oom", "prefill-oom"], weights=[6, 4, 1, 2, 1])[0]
    else:
        kind = r.choices(["torch-oom", "no-blocks", "kv-too-small", "free-mem", "cuda-oom", "sampler"], weights=[5, 3, 3, 2, 1, 1])[0]
    pre = None
    if kind == "torch-oom":
        return _torch_oom(c)
    if kind == "cuda-oom":
        phase = pick(r, ["serving", "warmup", "cuda-graph-capture", "memory-plan"])
        exc = tb(head(c, phase) + model_forward_frames(c)) + cuda_error(c, "out of memory")
        return Failure("gpu.out-of-memory", phase, exc, "CUDA error: out of memory", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind == "mem-fraction":
        phase = "memory-plan"
        f = pick(r, [0.95, 0.9, 0.88, 0.85, 0.8, 0.7, 0.6, 0.5])
        cur = f"self.server_args.mem_fraction_static={f}" if c.gen != "new" else f"mem_fraction_static={f}"
        exc = tb(head(c, phase) + c.frames([("sglang/srt/model_executor/model_runner.py", "init_memory_pool", "raise RuntimeError(")])
                 ) + [f"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: {cur}"]
        pre = None
        return Failure("gpu.out-of-memory", phase, exc, "Not enough memory. Please try to increase --mem-fraction-static", variant=kind)
    if kind == "unbalanced":
        phase = "launch"
        a = gib(r, 10, 60)
        exc = tb(head(c, "launch") + c.frames([("sglang/srt/model_executor/model_runner.py", "init_torch_distributed", "raise ValueError(")])) + [
            f"ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. min_per_gpu_memory={a}, local_gpu_memory={a + 40:.2f}, local_gpu_memory * 0.9={(a + 40) * 0.9:.2f}"]
        return Failure("gpu.out-of-memory", phase, exc, "The memory capacity is unbalanced", variant=kind)
    if kind == "prefill-oom":
        phase = "serving"
        n = r.randint(2000, 60000)
        exc = tb(head(c, "serving")[:6] + c.frames([("sglang/srt/managers/schedule_batch.py", "prepare_for_extend", "out_cache_loc = alloc_for_extend(self)"),
                                                     ("sglang/srt/mem_cache/common.py", "alloc_token_slots", "raise RuntimeError(error_msg)")])) + [
            "RuntimeError: Prefill out of memory. Try to lower your batch size.", f"Try to allocate {n} tokens.",
            f"Available tokens: {r.randint(0, 500)}", ""]
        pre = Precursor([f"KV cache pool is full. Retract requests. #retracted_reqs: {r.randint(1, 9)}, #new_token_ratio: {r.uniform(0.3, 0.7):.4f} -> {r.uniform(0.8, 1.0):.4f}"],
                        "KV cache pool is full. Retract requests.", "serving", style="log", lead=(5, 90))
        return Failure("gpu.out-of-memory", phase, exc, "Prefill out of memory. Try to lower your batch size.", precursor=pre, variant=kind)
    if kind in ("no-blocks", "kv-too-small"):
        return _vllm_kv_memory(c, kind)
    if kind == "free-mem":
        phase = "launch"
        tot = c.gpu.total_gib
        u = pick(r, [0.9, 0.92, 0.95, 0.85, 0.8])
        exc = tb(vllm_core_head(c, "launch") + c.frames([("vllm/v1/worker/gpu_worker.py", "init_device", "raise ValueError(")])) + [
            f"ValueError: Free memory on device ({gib(r, 2, tot * u - 1)}/{tot} GiB) on startup is less than desired GPU memory utilization ({u}, {tot * u:.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."]
        return Failure("gpu.out-of-memory", phase, exc, "on startup is less than desired GPU memory utilization", variant=kind)
    phase = "warmup"
    n = pick(r, [256, 512, 1024])
    line, _ = torch_oom_line(c)
    exc = tb(vllm_core_head(c, "warmup") + c.frames([("vllm/v1/worker/gpu_model_runner.py", "_dummy_sampler_run", "sampler_output = self.sampler(logits=logits,", True)])) + [line, "",
        "The above exception was the direct cause of the following exception:", ""] + tb(vllm_core_head(c, "warmup") + c.frames([("vllm/v1/worker/gpu_model_runner.py", "_dummy_sampler_run", "raise RuntimeError(")])) + [
        f"RuntimeError: CUDA out of memory occurred when warming up sampler with {n} dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."]
    return Failure("gpu.out-of-memory", phase, exc, "CUDA out of memory occurred when warming up sampler", variant="sampler")


def _vllm_kv_memory(c: Ctx, kind: str) -> Failure:
    """vLLM's KV-cache checks: no blocks at all, or too few for the max sequence length."""
    r = c.rng
    if kind == "no-blocks":
        phase = "memory-plan"
        exc = tb(vllm_core_head(c, "memory-plan")[:4] + c.frames([("vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "raise ValueError(\"No available memory for the cache blocks. \"")])) + [
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."]
        return Failure("gpu.out-of-memory", phase, exc, "No available memory for the cache blocks", variant=kind)
    if kind == "kv-too-small":
        phase = "memory-plan"
        n = c.model.max_len
        need = gib(r, 8, 40)
        have = gib(r, 0.5, need - 1)
        est = int(n * have / need) // 16 * 16
        word = "models's" if c.gen != "v033" else "model's"
        exc = tb(vllm_core_head(c, "memory-plan")[:4] + c.frames([("vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory", "raise ValueError(")])) + [
            f"ValueError: To serve at least one request with the {word} max seq len ({n}), ({need} GiB KV cache is needed, which is larger than the available KV cache memory ({have} GiB). "
            f"Based on the available memory, the estimated maximum model length is {est}. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."]
        pre = Precursor([f"The model has a long context length ({n}). This may cause OOM during the initial memory profiling phase, or result in low performance due to small KV cache size. Consider setting --max-model-len to a smaller value."],
                        "The model has a long context length", "launch", style="vlog", vfile="arg_utils.py", lead=(20, 300)) if n >= 65536 else None
        return Failure("gpu.out-of-memory", phase, exc, "KV cache is needed, which is larger than the available KV cache memory", precursor=pre, variant=kind)
    raise ValueError(f"not a vLLM KV-memory variant: {kind}")


def _torch_oom(c: Ctx) -> Failure:
    """torch.OutOfMemoryError in a forward, a load or a capture; in serving, KV-cache pressure warns first."""
    r = c.rng
    kind = "torch-oom"
    pre = None
    phase = r.choices(["load-weights", "memory-plan", "cuda-graph-capture", "warmup", "serving"], weights=[2, 2, 3, 1, 3])[0]
    line, fatal = torch_oom_line(c)
    extra = model_forward_frames(c) if phase in ("cuda-graph-capture", "warmup", "serving", "memory-plan") else c.frames([
        (f"{c.sp}/torch/nn/modules/module.py", "to", "return self._apply(convert)"),
        (f"{c.sp}/torch/nn/modules/module.py", "convert", "return t.to(", True)])
    extra += c.frames([pick(r, [(f"{c.sp}/torch/nn/modules/linear.py", "forward", "return F.linear(input, self.weight, self.bias)"),
                                ("sglang/srt/layers/logits_processor.py" if c.server == "sglang" else "vllm/model_executor/layers/logits_processor.py", "_get_logits",
                                 "logits = torch.matmul(hidden_states.to(lm_head.weight.dtype), lm_head.weight.T)"),
                                ("sglang/srt/layers/moe/fused_moe_triton/fused_moe.py" if c.server == "sglang" else "vllm/model_executor/layers/fused_moe/fused_moe.py",
                                 "fused_experts_impl", "intermediate_cache1 = torch.empty(", True)])])
    exc = tb(head(c, phase) + extra) + [line]
    if phase == "serving" and r.random() < 0.8:
        if c.server == "sglang":
            pre = Precursor([f"KV cache pool is full. Retract requests. #retracted_reqs: {r.randint(1, 12)}, #new_token_ratio: {r.uniform(0.3, 0.7):.4f} -> {r.uniform(0.8, 1.0):.4f}"],
                            "KV cache pool is full. Retract requests.", "serving", style="log", lead=(5, 120))
        else:
            pre = Precursor([f"Sequence group cmpl-{r.randbytes(16).hex()}-0 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption={r.randint(1, 60)}"],
                            "is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space", "serving", style="vlog", vfile="scheduler.py", lead=(5, 120))
    return Failure("gpu.out-of-memory", phase, exc, fatal, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)


def f_illegal(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["ima", "assert", "misaligned", "launch-failure", "illegal-instr", "nccl-watchdog-ima", "triton-ima", "cublas"], weights=[6, 3, 2, 2, 1, 2, 1, 1])[0]
    phase = r.choices(["serving", "warmup", "cuda-graph-capture", "memory-plan"], weights=[6, 2, 2, 1])[0]
    body = head(c, phase) + model_forward_frames(c) + c.frames([pick(r, [
        ("sglang/srt/layers/attention/flashinfer_backend.py" if c.server == "sglang" else "vllm/v1/attention/backends/flashinfer.py", "forward_decode" if c.server == "sglang" else "forward",
         "o = decode_wrapper.forward(" if c.server == "sglang" else "decode_wrapper.run(", True),
        ("sglang/srt/layers/attention/triton_backend.py" if c.server == "sglang" else "vllm/attention/ops/triton_unified_attention.py", "forward_extend" if c.server == "sglang" else "unified_attention",
         "self.extend_attention_fwd(" if c.server == "sglang" else "kernel_unified_attention_2d[(", True),
        ("sglang/srt/layers/moe/ep_moe/layer.py" if c.server == "sglang" else "vllm/model_executor/layers/fused_moe/layer.py", "forward", "return self.forward_impl(hidden_states, topk_output)" if c.server == "sglang" else "return torch.ops.vllm.moe_forward(hidden_states, router_logits,", True),
        ("sglang/srt/model_executor/forward_batch_info.py" if c.server == "sglang" else "vllm/v1/sample/sampler.py", "compute_position" if c.server == "sglang" else "forward",
         "torch.cuda.synchronize()" if c.server == "sglang" else "sampled = self.sample(logits, sampling_metadata)")])])
    pre = None
    if r.random() < 0.5 and c.journald:
        pre = Precursor([f"NVRM: Xid (PCI:0000:{r.randint(16, 250):02x}:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC {r.randint(0, 7)}, TPC {r.randint(0, 8)}, SM {r.randint(0, 1)}): Out Of Range Address"],
                        "Graphics SM Warp Exception", phase, style="kernel", lead=(0.5, 5))
    if kind == "assert":
        kern = pick(r, ["/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [{b},0,0], thread: [{t},0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.",
                        "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:367: operator(): block: [{b},0,0], thread: [{t},0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.",
                        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [{b},0,0], thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
                        "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:110: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed."])
        n = r.randint(2, 8)
        pre_lines = [kern.format(b=r.randint(0, 500), t=r.randint(0, 127)) for _ in range(n)]
        exc = tb(body) + cuda_error(c, "device-side assert triggered")
        if pre is None and "index out of bounds" in kern and r.random() < 0.7:
            mx = c.model.max_len
            pre = Precursor([f"Token indices sequence length is longer than the specified maximum sequence length for this model ({mx + r.randint(1, 9000)} > {mx}). Running this sequence through the model will result in indexing errors"],
                            "Token indices sequence length is longer than the specified maximum sequence length", phase if phase == "serving" else "launch", style="raw", lead=(0.5, 30))
        return Failure("gpu.illegal-access", phase, exc, "device-side assert triggered", pre=pre_lines, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "nccl-watchdog-ima":
        rank = r.randrange(max(1, c.tp))
        ts = "E" + f"{r.randint(1, 12):02d}{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999999999):09d}"
        whatl = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"
        pre_lines = [f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([1895, 1595, 2001])}] {whatl}"] + CUDA_TRAILER
        cxx = ["terminate called after throwing an instance of 'c10::DistBackendError'", f"  what():  {whatl}"] + CUDA_TRAILER + [
            "", f"Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:{r.choice([42, 43])} (most recent call first):",
            f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libc10.so)",
            f"frame #1: <unknown function> + 0x{r.randint(10**5, 10**6):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libc10_cuda.so)",
            f"frame #2: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x50 (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
            f"frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x{r.randint(500, 900):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
            "", "Fatal Python error: Aborted"]
        return Failure("gpu.illegal-access", "serving", [], "watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
                       scope="cxx", pre=pre_lines, cxx=cxx, precursor=pre, variant=kind)
    if kind == "triton-ima":
        exc = tb(body + c.frames([(f"{c.sp}/triton/backends/nvidia/driver.py", "__call__", "self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,", True)])) + [
            "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"]
        return Failure("gpu.illegal-access", phase, exc, "Triton Error [CUDA]: an illegal memory access was encountered", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "cublas":
        exc = tb(body + c.frames([(f"{c.sp}/torch/nn/modules/linear.py", "forward", "return F.linear(input, self.weight, self.bias)")])) + [
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"]
        return Failure("gpu.illegal-access", phase, exc, "CUBLAS_STATUS_EXECUTION_FAILED", precursor=pre, variant=kind)
    msg = {"ima": "an illegal memory access was encountered", "misaligned": "misaligned address", "launch-failure": "unspecified launch failure",
           "illegal-instr": "an illegal instruction was encountered"}[kind]
    exc = tb(body) + cuda_error(c, msg)
    return Failure("gpu.illegal-access", phase, exc, f"CUDA error: {msg}", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)


def f_graph(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["not-permitted", "invalidated", "unsupported", "rng", "cpu-copy", "unjoined", "prev-error"], weights=[4, 3, 3, 2, 2, 1, 1])[0]
    phase = "cuda-graph-capture"
    body = head(c, phase) + model_forward_frames(c)
    extra = c.frames([pick(r, [(f"{c.sp}/torch/cuda/graphs.py", "__exit__", "self.cuda_graph.capture_end()"),
                               (f"{c.sp}/torch/cuda/graphs.py", "capture_end", "super().capture_end()"),
                               ("sglang/srt/layers/sampler.py" if c.server == "sglang" else "vllm/model_executor/layers/utils.py", "forward", "torch.cuda.synchronize()"),
                               (f"{c.sp}/torch/_tensor.py", "item", "return self._item()")])])
    if kind == "not-permitted":
        last = ["RuntimeError: CUDA error: operation not permitted when stream is capturing"] + CUDA_TRAILER
        fatal = "operation not permitted when stream is capturing"
    elif kind == "invalidated":
        last = ["RuntimeError: CUDA error: operation failed due to a previous error during capture"] + CUDA_TRAILER if r.random() < 0.3 else [
            "torch.AcceleratorError: CUDA error: cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during capture" if c.torch >= "2.8" else
            "RuntimeError: CUDA error: cudaErrorStreamCaptureInvalidated"] + CUDA_TRAILER
        fatal = "operation failed due to a previous error during capture" if "operation failed" in last[0] else "cudaErrorStreamCaptureInvalidated"
    elif kind == "unsupported":
        last = ["RuntimeError: CUDA error: operation not supported when stream is capturing (cudaErrorStreamCaptureUnsupported)"] + CUDA_TRAILER
        fatal = "cudaErrorStreamCaptureUnsupported"
    elif kind == "rng":
        last = ["RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture. If you need this call to be captured, please file an issue. Current cudaStreamCaptureStatus: cudaStreamCaptureStatusActive"]
        fatal = "during CUDA graph capture"
    elif kind == "cpu-copy":
        last = ["RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned."]
        fatal = "Cannot copy between CPU and CUDA tensors during CUDA graph capture"
    elif kind == "unjoined":
        last = ["RuntimeError: CUDA error: capture unjoined (cudaErrorStreamCaptureUnjoined)"] + CUDA_TRAILER
        fatal = "cudaErrorStreamCaptureUnjoined"
    else:
        last = ["RuntimeError: CUDA error: operation would make the legacy stream depend on a capturing blocking stream"] + CUDA_TRAILER
        fatal = "operation would make the legacy stream depend on a capturing blocking stream"
    exc = tb(body + extra) + last
    pre = None
    if r.random() < 0.6:
        ts = f"W{r.randint(1, 12):02d}{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999999):06d}"
        pre = Precursor([f"[{ts} {r.randint(1000, 99999)} torch/csrc/cuda/CUDAGraph.cpp:{r.choice([150, 171, 192])}] Warning: The CUDA Graph is empty. This usually means that the graph was attempted to be captured on wrong device or stream. (function operator())"],
                        "The CUDA Graph is empty", "cuda-graph-capture", style="raw", lead=(0.5, 20))
    return Failure("gpu.cuda-graph-capture", phase, exc, fatal, capture_wrap=True, precursor=pre, variant=kind)
