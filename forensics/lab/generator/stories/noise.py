"""Harmless warnings that real logs carry, inserted at phase boundaries."""

from __future__ import annotations

import time

from ..catalog import IGNORED_MODEL_IMPORTS, pick
from ..records import Emitter


def noise_lines(em: Emitter, where: str) -> None:
    """Harmless warnings that real logs carry; inserted at phase boundaries."""
    c, r = em.c, em.r
    if r.random() > 0.45:
        return
    if c.server == "sglang":
        opts = []
        if where == "launch":
            opts += [lambda: [em.bare(f"{c.sp}/torch/cuda/__init__.py:{r.choice([61, 63])}: FutureWarning: The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers of the package that installed pynvml for you."),
                              em.bare("  import pynvml  # type: ignore[import]")],
                     lambda: em.sg("Using default HuggingFace chat template with detected content format: string"),
                     lambda: em.sg_ranks(lambda i: "Attention backend not explicitly specified. Use flashinfer backend by default."),
                     lambda: em.bare(f"{c.sp}/transformers/utils/hub.py:{r.randint(100, 130)}: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead."),
                     lambda: em.sg(f"Unexpected error during package walk: cutlass.cute.{pick(r, ['experimental', 'runtime'])}"),
                     lambda: em.sg_ranks(lambda i: "please use at least NVCC 12.9 for the best DeepGEMM performance") if r.random() < 0.3 else None]
        if where == "load-weights":
            mod, err = pick(r, IGNORED_MODEL_IMPORTS)
            opts += [lambda: em.sg_ranks(lambda i: f"Ignore import error when loading sglang.srt.models.{mod}: {err}"),
                     lambda: em.sg_ranks(lambda i: "Custom allreduce is disabled because this process group spans across nodes.") if c.tp > 1 else None,
                     lambda: em.sg("Using KV cache dtype: torch.bfloat16", 0),
                     lambda: em.sg(f"Found local HF snapshot for {c.model.hf} at /root/.cache/huggingface/hub/models--{c.model.hf.replace('/', '--')}/snapshots/{r.randbytes(20).hex()}; skipping download.", 0)]
        if where in ("memory-plan", "kernel-jit"):
            opts += [lambda: em.bare(f"{c.sp}/torch/_dynamo/variables/functions.py:{r.randint(600, 1500)}: UserWarning: Dynamo does not know how to trace the builtin `time.perf_counter.` This function is either a Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind)."),
                     lambda: em.sg_ranks(lambda i: "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead to less accurate results!")]
    else:
        opts = []
        if where == "launch":
            opts += [lambda: em.vl("INFO", "__init__.py", "Automatically detected platform cuda.", "api"),
                     lambda: em.bare("`torch_dtype` is deprecated! Use `dtype` instead!", proc="api"),
                     lambda: em.bare("The argument `trust_remote_code` is to be used with Auto classes. It has no effect here and is ignored.", proc="api"),
                     lambda: em.vl("WARNING", "model.py", "Default sampling parameters have been overridden by the model's Hugging Face generation config recommended from the model creator. If this is not intended, please relaunch vLLM instance with `--generation-config vllm`.", "api"),
                     lambda: em.vl("WARNING", "__init__.py", "Unexpected error during package walk: cutlass.cute.experimental", "core") if r.random() < 0.3 else None]
        if where == "load-weights":
            opts += [lambda: em.vl("WARNING", "topk_topp_sampler.py", "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.", "core"),
                     lambda: em.vl("WARNING", "custom_all_reduce.py", "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.", ("w", 0)) if c.tp > 2 else None,
                     lambda: em.vl("INFO", "cuda.py", "Using Flash Attention backend on V1 engine.", "core")]
        if where in ("memory-plan", "kernel-jit"):
            opts += [lambda: em.bare(f"[rank0]:W{time.strftime('%m%d %H:%M:%S', time.gmtime(em.st.t))}.{r.randint(0, 999999):06d} {em.st.core_pid} torch/_inductor/utils.py:1436] [0/0] Not enough SMs to use max_autotune_gemm mode", proc="core")]
    if opts:
        pick(r, opts)()
