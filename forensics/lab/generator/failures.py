"""One builder per taxonomy label: returns a :class:`Failure` with the
exception text, the proving substring, the phase and an optional genuine
precursor.  Builders pick one of many catalog entries at random."""

from __future__ import annotations

from .catalog import (CUDA_TRAILER, Ctx, Failure, Precursor, gib,
                      import_frames, model_forward_frames, pick, sglang_sched_head, tb, vllm_core_head)


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


# ------------------------------------------------------------------ env.module-missing
MISSING_MODULES = [
    "sgl_kernel", "flashinfer", "vllm._C", "triton", "deep_gemm", "flash_attn", "flash_attn_2_cuda", "xformers",
    "outlines", "xgrammar", "vllm.vllm_flash_attn.layers", "decord", "transformers.models.qwen3_vl",
    "transformers.models.glm4v_moe", "sgl_kernel.flash_attn", "flashinfer.jit", "mooncake", "nixl", "cuda.bindings",
    "pynvml", "ray", "blobfile", "tiktoken", "sentencepiece", "compressed_tensors", "torchao", "partial_json_parser",
    "orjson", "uvloop", "zmq", "msgspec", "setproctitle", "numba", "modelopt", "mistral_common", "timm", "einops",
    "qwen_vl_utils", "soundfile", "librosa", "openai_harmony", "llguidance", "cutlass", "tvm_ffi", "deep_ep",
    "triton_kernels", "vllm._moe_C", "sgl_kernel.common_ops", "flash_mla", "vllm._flashmla_C", "sglang.srt.layers.quantization.fp8_kernel",
    "transformers.models.qwen3_next", "huggingface_hub.errors", "pybase64", "cuda.bindings.driver", "fastsafetensors",
    "nvidia.cutlass_dsl", "torch_memory_saver", "aiohttp", "pydantic_core._pydantic_core", "psutil", "lark",
]
IMPORT_NAMES = [
    ("transformers", "Qwen3VLMoeConfig"), ("transformers", "AutoProcessor"), ("transformers.utils", "is_torch_greater_or_equal"),
    ("flashinfer", "BatchDecodeWithPagedKVCacheWrapper"), ("sgl_kernel", "fp8_scaled_mm"), ("sgl_kernel", "silu_and_mul"),
    ("vllm.model_executor.layers.fused_moe", "fused_experts"), ("triton.runtime.jit", "get_cuda_stream"),
    ("huggingface_hub", "cached_download"), ("torch.library", "custom_op"), ("outlines.fsm.guide", "RegexGuide"),
    ("xgrammar", "StructuralTagItem"), ("deep_gemm", "get_num_sms"), ("flash_attn.flash_attn_interface", "flash_attn_varlen_func"),
    ("triton.language.extra", "libdevice"), ("torch._inductor.utils", "is_big_gpu"), ("numpy", "bool8"),
]
IMPORT_SITES = [
    ("sglang/srt/layers/activation.py", "from sgl_kernel import gelu_and_mul, gelu_tanh_and_mul, silu_and_mul"),
    ("sglang/srt/layers/attention/flashinfer_backend.py", "from flashinfer import ("),
    ("sglang/srt/layers/quantization/fp8_kernel.py", "import triton"),
    ("sglang/srt/constrained/xgrammar_backend.py", "from xgrammar import ("),
    ("vllm/_custom_ops.py", "import vllm._C"),
    ("vllm/attention/backends/flash_attn.py", "from vllm.vllm_flash_attn import (flash_attn_varlen_func,"),
    ("vllm/model_executor/layers/rotary_embedding.py", "from vllm.vllm_flash_attn.layers.rotary import apply_rotary_emb"),
    ("vllm/model_executor/guided_decoding/outlines_decoding.py", "from outlines.fsm.guide import RegexGuide"),
    ("vllm/transformers_utils/tokenizers/mistral.py", "from mistral_common.protocol.instruct.request import ChatCompletionRequest"),
]


def f_module_missing(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["mnf", "cannot-import", "cute", "mnf-model", "please-install"], weights=[5, 2, 2, 2, 3])[0]
    if kind == "cute":
        phase = pick(r, ["warmup", "warmup", "serving", "cuda-graph-capture"])
        fr = head(c, phase) + model_forward_frames(c) + c.frames([
            ("sglang/srt/layers/attention/vision.py" if c.server == "sglang" else "vllm/model_executor/models/vision.py", "forward",
             "output = flash_attn_varlen_func(", True),
            ("sglang/jit_kernel/flash_attention/cute/interface.py" if c.server == "sglang" else "vllm/vllm_flash_attn/cute/interface.py",
             "flash_attn_varlen_func", "raise ImportError(")])
        exc = tb(c.frames([("sglang/jit_kernel/flash_attention/cute/interface.py" if c.server == "sglang" else "vllm/vllm_flash_attn/cute/interface.py",
                            "<module>", "from flash_attn.cute import flash_attn_varlen_func as _fa4_varlen")])
                 + [pick(r, ["ModuleNotFoundError: No module named 'flash_attn.cute'",
                             "ImportError: cannot import name 'flash_attn_varlen_func' from 'flash_attn.cute' (unknown location)"]),
                    "", "The above exception was the direct cause of the following exception:", ""]) + tb(fr) + [
            "ImportError: Vendored FlashAttention CUTE is not available (cannot import flash_attn.cute). Please check your source tree."]
        pre = Precursor([f"Unexpected error during package walk: cutlass.cute.{pick(r, ['experimental', 'experimental', 'nvgpu.tcgen05', 'runtime'])}"],
                        "Unexpected error during package walk: cutlass.cute", pick(r, ["launch", "load-weights", "kernel-jit"]), style="log", lead=(20, 400))
        return Failure("env.module-missing", phase, exc, "Vendored FlashAttention CUTE is not available", capture_wrap=phase == "cuda-graph-capture",
                       precursor=pre, variant="fa-cute")
    if kind == "mnf-model":
        mod = pick(r, ["transformers.models.qwen3_vl", "transformers.models.glm4v_moe", "blobfile", "timm", "einops", "qwen_vl_utils",
                       "transformers.models.qwen3_next", "decord", "mamba_ssm", "transformers.models.llama4"])
        phase = "load-weights"
        site = pick(r, ["qwen3_vl", "glm4v_moe", "kimi_vl", "qwen3_next", "mllama4", "nemotron_h"])
        pkg = "sglang/srt/models" if c.server == "sglang" else "vllm/model_executor/models"
        exc = tb(head(c, phase) + c.frames([
            ("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/utils.py", "_initialize_model" if c.server == "sglang" else "get_model_architecture",
             "model_class, _ = get_model_architecture(model_config)", True),
            (f"{pkg}/registry.py", "_try_load_model_cls" if c.server == "vllm" else "import_model_classes", "module = importlib.import_module(", True),
            (f"{c.sp.rsplit('/', 2)[0]}/importlib/__init__.py", "import_module", "return _bootstrap._gcd_import(name[level:], package, level)", True)])
            + ['  File "<frozen importlib._bootstrap>", line 1387, in _gcd_import', '  File "<frozen importlib._bootstrap>", line 1360, in _find_and_load',
               '  File "<frozen importlib._bootstrap_external>", line 999, in exec_module']
            + c.frames([(f"{pkg}/{site}.py", "<module>", f"from {mod} import " + pick(r, ["(", "*", "AutoConfig"]) if "." in mod else f"import {mod}")])
            + [f"ModuleNotFoundError: No module named '{mod}'"])
        pre = None
        if c.server == "sglang":
            pre = Precursor([f"Ignore import error when loading sglang.srt.models.{site}: No module named '{mod}'"],
                            f"Ignore import error when loading sglang.srt.models.{site}", "launch", style="log", lead=(5, 60))
        return Failure("env.module-missing", phase, exc, f"No module named '{mod}'", precursor=pre, variant="model-module")
    site, src = pick(r, [s for s in IMPORT_SITES if s[0].startswith(c.server)])
    if kind == "please-install":
        # Libraries that catch the ImportError and re-raise with advice.
        mod = pick(r, MISSING_MODULES).split(".")[0]
        dist = mod.replace("_", "-")
        ver = f"{r.randint(0, 3)}.{r.randint(0, 12)}.{r.randint(0, 9)}"
        last = pick(r, [
            f"ImportError: Please install {dist} to use this feature: `pip install {dist}`",
            f"ImportError: {mod} is not installed. Please install it with `pip install {dist}>={ver}`.",
            f"ImportError: This model requires the {mod} library but it was not found in your environment. You can install it with pip: `pip install {dist}`",
            f"ImportError: Failed to import {mod}. Please install {dist}>={ver} to enable this backend.",
            f"RuntimeError: {mod} is required for this quantization method but is not available; install {dist} first.",
            f"ImportError: {dist} is not installed; it is needed by the selected attention backend (pip install {dist}).",
        ])
        fatal = last.split(": ", 1)[1][:60]
        phase = r.choices(["launch", "load-weights", "kernel-jit"], weights=[4, 3, 1])[0]
        frames = head(c, phase) + c.frames([(site, "<module>", src)])
        if r.random() < 0.4:
            exc = (tb(c.frames([(site, "<module>", f"import {mod}")]) + [f"ModuleNotFoundError: No module named '{mod}'"])
                   + ["", "During handling of the above exception, another exception occurred:", ""] + tb(frames + [last]))
        else:
            exc = tb(frames + [last])
        return Failure("env.module-missing", phase, exc, fatal, variant="please-install")
    if kind == "mnf":
        mod = pick(r, MISSING_MODULES)
        last = f"ModuleNotFoundError: No module named '{mod}'"
        fatal = f"No module named '{mod}'"
    else:
        mod, name = pick(r, IMPORT_NAMES)
        last = f"ImportError: cannot import name '{name}' from '{mod}' ({c.sp}/{mod.replace('.', '/')}/__init__.py)"
        fatal = f"cannot import name '{name}' from '{mod}'"
    phase = r.choices(["launch", "load-weights", "kernel-jit", "serving"], weights=[6, 2, 2, 1])[0]
    pre = None
    if r.random() < 0.6:
        if c.server == "vllm":
            pre = Precursor([f"Failed to import from vllm._C with ModuleNotFoundError(\"No module named '{mod.split('.')[0]}'\")"],
                            "Failed to import from vllm._C with", "launch", style="vlog", vfile="_custom_ops.py", lead=(1, 30))
        else:
            pre = Precursor([f"Ignore import error when loading sglang.srt.models.{pick(r, ['deepseek_v2', 'qwen3_moe', 'llama4', 'gpt_oss'])}: No module named '{mod}'"],
                            "Ignore import error when loading sglang.srt.models.", "launch", style="log", lead=(2, 40))
    if phase == "launch":
        chain = [(site, src)]
        if c.server == "sglang":
            chain = [("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses"),
                     ("sglang/srt/entrypoints/engine.py", "from sglang.srt.managers.scheduler import run_scheduler_process")] + chain
        else:
            chain = [("vllm/entrypoints/cli/main.py", "import vllm.entrypoints.cli.serve"),
                     ("vllm/entrypoints/openai/api_server.py", "from vllm.engine.arg_utils import AsyncEngineArgs")] + chain
        exc = tb(import_frames(c, chain) + [last])
        return Failure("env.module-missing", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    exc = tb(head(c, phase) + (model_forward_frames(c) if phase == "serving" else []) + c.frames([(site, "<module>", src)]) + [last])
    return Failure("env.module-missing", phase, exc, fatal, precursor=pre, variant=kind)


# ------------------------------------------------------------------ env.library-missing
LIBS = ["libnvrtc.so.12", "libnvrtc.so.13", "libcudart.so.12", "libcudart.so.13", "libcublas.so.12", "libcublasLt.so.12",
        "libcudnn.so.9", "libnccl.so.2", "libnvJitLink.so.12", "libcusparse.so.12", "libcufft.so.11", "libcurand.so.10",
        "libnuma.so.1", "libibverbs.so.1", "libmlx5.so.1", "libgomp.so.1", "libtorch_cuda.so", "libc10_cuda.so",
        "libpython3.11.so.1.0", "libcupti.so.12", "libcusparseLt.so.0", "libnvshmem_host.so.3", "libmpi.so.40", "libucs.so.0",
        "libcuda.so.1", "libcudnn_graph.so.9", "libnvToolsExt.so.1", "libcusolver.so.11", "libnvinfer.so.10", "libmooncake_transfer_engine.so"]
LIB_SITES = [
    ("sgl_kernel/__init__.py", "from sgl_kernel import common_ops", "sgl_kernel/{arch}/common_ops.abi3.so"),
    ("vllm/_custom_ops.py", "import vllm._C  # noqa", "vllm/_C.abi3.so"),
    ("flashinfer/__init__.py", "from .activation import gelu_and_mul as gelu_and_mul", "flashinfer/data/lib/libflashinfer.so"),
    ("flash_attn/flash_attn_interface.py", "import flash_attn_2_cuda as flash_attn_gpu", "flash_attn_2_cuda.cpython-{pyn}-x86_64-linux-gnu.so"),
    ("torch/__init__.py", "_load_global_deps()", "torch/lib/libtorch_global_deps.so"),
    ("deep_ep/__init__.py", "from .buffer import Buffer", "deep_ep_cpp.cpython-{pyn}-x86_64-linux-gnu.so"),
    ("xformers/ops/fmha/flash.py", "from ... import _C_flashattention  # type: ignore[attr-defined]", "xformers/_C.so"),
]


def f_library_missing(c: Ctx) -> Failure:
    r = c.rng
    lib = pick(r, LIBS)
    kind = r.choices(["import", "ctypes", "triton-libcuda", "cudnn"], weights=[6, 2, 1, 1])[0]
    pyn = c.py.replace(".", "")
    pre = None
    if kind == "triton-libcuda":
        phase = pick(r, ["kernel-jit", "cuda-graph-capture", "warmup"])
        exc = tb(head(c, phase) + c.frames([(f"{c.sp}/triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", True),
                                            (f"{c.sp}/triton/backends/nvidia/driver.py", "__init__", "self.utils = CudaUtils()  # TODO: make static", True),
                                            (f"{c.sp}/triton/backends/nvidia/driver.py", "library_dirs", "return [libdevice_dir, *libcuda_dirs()]", True),
                                            (f"{c.sp}/triton/backends/nvidia/driver.py", "libcuda_dirs", "assert any(os.path.exists(os.path.join(path, 'libcuda.so.1')) for path in dirs), msg")])
                 + ["AssertionError: libcuda.so cannot found!", "Possible files are located at ['/usr/lib/x86_64-linux-gnu/libcuda.so.1']."
                    "Please create a symlink of libcuda.so to any of the files."])
        return Failure("env.library-missing", phase, exc, "libcuda.so cannot found!", capture_wrap=False, variant="triton-libcuda")
    if kind == "cudnn":
        phase = pick(r, ["warmup", "serving", "load-weights"])
        lib = pick(r, ["libcudnn_cnn_infer.so.8", "libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_ops.so.9"])
        line = f"Could not load library {lib}. Error: {lib}: cannot open shared object file: No such file or directory"
        exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([(f"{c.sp}/torch/nn/modules/conv.py", "_conv_forward", "return F.conv3d(", True)])
                 + ["RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"])
        return Failure("env.library-missing", phase, exc, f"Could not load library {lib}", pre=[line], pre_scope="ranks", variant="cudnn")
    site, src, so = pick(r, LIB_SITES)
    so = so.format(arch=pick(r, ["sm90", "sm100"]), pyn=pyn)
    if kind == "ctypes":
        site, src = pick(r, [("sglang/srt/utils/common.py" if c.gen != "old" else "sglang/srt/utils.py", "libnuma = ctypes.CDLL(\"libnuma.so.1\")"),
                             ("nvidia/nccl/__init__.py", "_nccl = ctypes.CDLL(so_file)"),
                             ("vllm/distributed/device_communicators/pynccl_wrapper.py", "lib = ctypes.CDLL(so_file)"),
                             ("cuda/bindings/_bindings/cynvrtc.pyx", "handle = dlopen(path, RTLD_NOW)")])
        last = f"OSError: {lib}: cannot open shared object file: No such file or directory"
    else:
        last = f"ImportError: {lib}: cannot open shared object file: No such file or directory"
    phase = r.choices(["launch", "load-weights", "kernel-jit"], weights=[6, 2, 2])[0]
    if c.server == "vllm" and r.random() < 0.6:
        pre = Precursor([f"Failed to import from vllm._C with ImportError('{lib}: cannot open shared object file: No such file or directory')"],
                        "Failed to import from vllm._C with ImportError(", "launch", style="vlog", vfile="_custom_ops.py", lead=(2, 90))
        phase = "load-weights" if phase == "launch" else phase
    elif c.server == "sglang" and r.random() < 0.5:
        pre = Precursor([f"Ignore import error when loading sglang.srt.models.{pick(r, ['deepseek_v2', 'qwen3_moe', 'llama4'])}: {lib}: cannot open shared object file: No such file or directory"],
                        "Ignore import error when loading sglang.srt.models.", "launch", style="log", lead=(2, 60))
    if phase == "launch":
        chain = [(site, src)]
        exc = tb(import_frames(c, [("sglang/srt/entrypoints/http_server.py" if c.server == "sglang" else "vllm/entrypoints/openai/api_server.py",
                                    "from sglang.srt.entrypoints.engine import _launch_subprocesses" if c.server == "sglang" else "import vllm.envs as envs")] + chain) + [last])
        return Failure("env.library-missing", phase, exc, f"{lib}: cannot open shared object file", scope="main", result="exit-code", precursor=pre, variant=kind)
    exc = tb(head(c, phase) + c.frames([(site, "<module>", src)]) + [last])
    return Failure("env.library-missing", phase, exc, f"{lib}: cannot open shared object file", precursor=pre, variant=kind)


# ------------------------------------------------------------------ env.abi-mismatch
SYMBOLS = ["_ZN3c104cuda9SetDeviceEi", "_ZN3c104cuda9SetDeviceEab",
           "_ZN3c1010Dispatcher17runRecordFunctionERN2at13RecordFunctionESt17reference_wrapperIKNS_14FunctionSchemaEENS_11DispatchKeyE",
           "_ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE",
           "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE",
           "_ZNK3c105Error4whatEv", "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", "_ZN3c1017RegisterOperatorsD1Ev",
           "_ZN3c106ivalue14ConstantString6createENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
           "cuGreenCtxStreamCreate", "cudaGetDriverEntryPointByVersion", "ncclCommInitRankScalable", "ncclCommShrink",
           "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib", "_ZN3c1013MessageLoggerC1EPKcii",
           "_ZNK5torch8autograd4Node4nameEv", "_ZN5torch3jit17parseSchemaOrNameERKSsb",
           "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs", "_ZN2at6detail10empty_cudaEN3c108ArrayRefIlEENS1_10ScalarTypeENS1_8optionalINS1_6DeviceEEENS5_INS1_12MemoryFormatEEE",
           "_ZN3c1015SmallVectorBaseIjE8grow_podEPvmm", "_ZN6tvm_ffi7details15ObjectUnsafe21IncRefObjectHandleEP10TVMFFIObject"]
ABI_SOS = [("sgl_kernel/{arch}/common_ops.abi3.so", "sgl_kernel/__init__.py", "from sgl_kernel import common_ops"),
           ("vllm/_C.abi3.so", "vllm/_custom_ops.py", "import vllm._C  # noqa"),
           ("vllm/_moe_C.abi3.so", "vllm/_custom_ops.py", "import vllm._moe_C  # noqa: F401"),
           ("flash_attn_2_cuda.cpython-{pyn}-x86_64-linux-gnu.so", "flash_attn/flash_attn_interface.py", "import flash_attn_2_cuda as flash_attn_gpu"),
           ("xformers/_C.so", "xformers/ops/common.py", "from .. import _C"),
           ("flashinfer/flashinfer_kernels.abi3.so", "flashinfer/__init__.py", "from . import flashinfer_kernels"),
           ("deep_gemm_cpp.cpython-{pyn}-x86_64-linux-gnu.so", "deep_gemm/__init__.py", "from . import deep_gemm_cpp"),
           ("torchvision/_C.so", "torchvision/extension.py", "torch.ops.load_library(lib_path)"),
           ("torchaudio/lib/libtorchaudio.so", "torchaudio/_extension/utils.py", "torch.ops.load_library(path)"),
           ("awq_inference_engine.cpython-{pyn}-x86_64-linux-gnu.so", "awq/modules/linear/gemm.py", "import awq_ext  # with CUDA kernels"),
           ("sgl_kernel/flashmla_ops.abi3.so", "sgl_kernel/flash_mla.py", "from sgl_kernel import flashmla_ops  # noqa: F401"),
           ("vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so", "vllm/vllm_flash_attn/flash_attn_interface.py", "import vllm.vllm_flash_attn._vllm_fa3_C  # noqa")]


def f_abi_mismatch(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["symbol", "glibcxx", "glibc", "torchvision-cuda", "numpy", "torchvision-op"], weights=[7, 3, 1, 1, 1, 1])[0]
    so, site, src = pick(r, ABI_SOS)
    so_full = f"{c.sp}/" + so.format(arch=pick(r, ["sm90", "sm100"]), pyn=c.py.replace(".", ""))
    pre = None
    if kind == "symbol":
        sym = pick(r, SYMBOLS)
        last = f"ImportError: {so_full}: undefined symbol: {sym}"
        fatal = f"undefined symbol: {sym}"
    elif kind == "glibcxx":
        ver = pick(r, ["GLIBCXX_3.4.29", "GLIBCXX_3.4.30", "GLIBCXX_3.4.31", "GLIBCXX_3.4.32", "CXXABI_1.3.15", "GLIBCXX_3.4.26"])
        libp = pick(r, ["/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                        "/opt/conda/lib/libstdc++.so.6", "/opt/conda/bin/../lib/libstdc++.so.6"])
        last = f"ImportError: {libp}: version `{ver}' not found (required by {so_full})"
        fatal = f"version `{ver}' not found"
    elif kind == "glibc":
        ver = pick(r, ["GLIBC_2.32", "GLIBC_2.34", "GLIBC_2.35", "GLIBC_2.38"])
        last = f"ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `{ver}' not found (required by {so_full})"
        fatal = f"version `{ver}' not found"
    elif kind == "torchvision-cuda":
        a, b = pick(r, [("12.8", "12.4"), ("12.6", "11.8"), ("13.0", "12.8"), ("12.4", "12.1")])
        last = (f"RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA Version={a} "
                f"and torchvision has CUDA Version={b}. Please reinstall the torchvision that matches your PyTorch install.")
        fatal = "Detected that PyTorch and torchvision were compiled with different CUDA"
        site, src = "torchvision/extension.py", "_check_cuda_version()"
    elif kind == "torchvision-op":
        last = "RuntimeError: operator torchvision::nms does not exist"
        fatal = "operator torchvision::nms does not exist"
        site, src = "torchvision/_meta_registrations.py", "@register_meta(\"nms\")"
    else:
        last = "ImportError: numpy.core.multiarray failed to import"
        fatal = "numpy.core.multiarray failed to import"
        site, src = pick(r, [("cv2/__init__.py", "bootstrap()"), ("scipy/sparse/_sputils.py", "from scipy._lib._util import np_long, np_ulong"),
                             ("decord/__init__.py", "from ._ffi.function import register_func")])
        pre = Precursor(["A module that was compiled using NumPy 1.x cannot be run in", f"NumPy {pick(r, ['2.0.2', '2.1.3', '2.2.6', '2.3.1'])} as it may crash. To support both 1.x and 2.x",
                         "versions of NumPy, modules must be compiled with NumPy 2.0.", "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'."],
                        "A module that was compiled using NumPy 1.x cannot be run in", "launch", style="raw", lead=(0.2, 3))
    if pre is None and r.random() < 0.55:
        choice = r.randrange(3)
        if choice == 0 and "xformers" not in so:
            tv = pick(r, ["2.5.1+cu121", "2.6.0+cu124", "2.7.0+cu126"])
            pre = Precursor(["WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
                             f"    PyTorch {tv} with CUDA 12{r.randint(1, 6)}0 (you have {c.torch})",
                             f"    Python  {c.py}.{r.randint(1, 9)} (you have {c.py}.{r.randint(1, 9)})",
                             "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)",
                             "  Memory-efficient attention, SwiGLU, sparse and more won't be available.",
                             "  Set XFORMERS_MORE_DETAILS=1 for more details"],
                            "xFormers can't load C++/CUDA extensions", "launch", style="raw", lead=(1, 40))
        elif c.server == "vllm":
            pre = Precursor([f"Failed to import from vllm._C with {last.split(':', 1)[0]}('{last.split(': ', 1)[1][:160]}')"],
                            "Failed to import from vllm._C with", "launch", style="vlog", vfile="_custom_ops.py", lead=(2, 60))
        else:
            pre = Precursor([f"{c.sp}/torch/utils/cpp_extension.py:{r.randint(400, 2200)}: UserWarning: There are no g++ version bounds defined for CUDA version {c.cuda}",
                             "  warnings.warn(f'There are no {compiler_name} version bounds defined for CUDA version {cuda_str_version}')"],
                            "There are no g++ version bounds defined for CUDA version", "launch", style="raw", lead=(1, 30))
    phase = r.choices(["launch", "load-weights", "kernel-jit", "warmup"], weights=[6, 2, 1, 1])[0]
    if phase == "launch":
        exc = tb(import_frames(c, [("sglang/srt/layers/activation.py" if c.server == "sglang" else "vllm/model_executor/layers/activation.py",
                                    "from sgl_kernel import silu_and_mul" if c.server == "sglang" else "from vllm import _custom_ops as ops"), (site, src)]) + [last])
        return Failure("env.abi-mismatch", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    exc = tb(head(c, phase) + c.frames([(site, "<module>", src)]) + [last])
    return Failure("env.abi-mismatch", phase, exc, fatal, precursor=pre, variant=kind)


# ------------------------------------------------------------------ env.gpu-arch-unsupported
def torch_arch_warning(c: Ctx, gpu_name: str, sm: int) -> list[str]:
    supported = pick(c.rng, ["sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90 compute_37",
                             "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "sm_80 sm_86 sm_89 sm_90"])
    return [f"{c.sp}/torch/cuda/__init__.py:{c.rng.choice([215, 230, 235, 262, 287])}: UserWarning: ",
            f"{gpu_name} with CUDA capability sm_{sm} is not compatible with the current PyTorch installation.",
            f"The current PyTorch install supports CUDA capabilities {supported}.",
            f"If you want to use the {gpu_name} GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/",
            "  warnings.warn("]


def f_gpu_arch(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["no-kernel-image", "sm75", "ampere", "bf16", "cutlass", "triton-image"], weights=[7, 2, 2, 2, 1, 1])[0]
    gname, sm = c.gpu.name, c.gpu.sm
    pre = None
    if kind == "no-kernel-image":
        phase = r.choices(["load-weights", "memory-plan", "kernel-jit", "cuda-graph-capture", "warmup"], weights=[3, 2, 2, 2, 1])[0]
        tail = c.frames([pick(r, [(f"{c.sp}/torch/nn/modules/linear.py", "forward", "return F.linear(input, self.weight, self.bias)"),
                                  ("sgl_kernel/elementwise.py" if c.server == "sglang" else "vllm/_custom_ops.py", "rmsnorm" if c.server == "sglang" else "rms_norm",
                                   "torch.ops.sgl_kernel.rmsnorm.default(out, input, weight, eps, enable_pdl)" if c.server == "sglang" else "torch.ops._C.rms_norm(out, input, weight, epsilon)"),
                                  (f"{c.sp}/torch/_ops.py", "__call__", "return self._op(*args, **kwargs)", True)])])
        fr = head(c, phase) + (model_forward_frames(c) if phase != "load-weights" else c.frames([
            ("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/default_loader.py", "load_weights" if c.server == "vllm" else "load_model",
             "self.load_weights_and_postprocess(" if c.server == "sglang" else "loaded_weights = model.load_weights(", True)])) + tail
        exc = tb(fr) + cuda_error(c, "no kernel image is available for execution on the device")
        fatal = "no kernel image is available for execution on the device"
        if sm < 100:
            sm = pick(r, [120, 121, 100, 103])
            gname = {120: "NVIDIA GeForce RTX 5090", 121: "NVIDIA GB10", 100: "NVIDIA B200", 103: "NVIDIA B300 SXM6 AC"}[sm]
        pre = Precursor(torch_arch_warning(c, gname, sm), f"sm_{sm} is not compatible with the current PyTorch installation", "launch", style="raw", lead=(20, 300))
        return Failure("env.gpu-arch-unsupported", phase, exc, fatal, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "sm75":
        phase = "load-weights"
        exc = tb(head(c, "launch")[:-2] + c.frames([("sglang/srt/model_executor/model_runner.py", "initialize", "self.load_model()"),
                                                   ("sglang/srt/model_executor/model_runner.py", "load_model", "raise RuntimeError(\"SGLang only supports sm75 and above.\")")])
                 + ["RuntimeError: SGLang only supports sm75 and above."])
        pre = Precursor(["Compute capability below sm80. Use float16 due to lack of bfloat16 support."], "Compute capability below sm80", "load-weights", style="log", lead=(0.1, 2))
        if c.server == "vllm":
            kind = "bf16"
        else:
            return Failure("env.gpu-arch-unsupported", phase, exc, "SGLang only supports sm75 and above", precursor=pre, variant=kind)
    if kind == "ampere":
        phase = pick(r, ["warmup", "cuda-graph-capture", "memory-plan", "serving"])
        exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([
            (f"{c.sp}/flash_attn/flash_attn_interface.py", "_flash_attn_varlen_forward", "out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(", True)])
            + ["RuntimeError: FlashAttention only supports Ampere GPUs or newer."])
        if r.random() < 0.3:
            pre = Precursor([f"{c.sp}/torch/cuda/__init__.py:{r.randint(120, 300)}: UserWarning: ",
                             "    Found GPU0 Tesla T4 which is of cuda capability 7.5.",
                             "    Minimum and Maximum cuda capability supported by this version of PyTorch is",
                             "    (8.0) - (12.0)", "  warnings.warn("],
                            "Found GPU0 Tesla T4 which is of cuda capability 7.5", "launch", style="raw", lead=(10, 200))
        elif c.server == "sglang":
            pre = Precursor(["Compute capability below sm80. Use float16 due to lack of bfloat16 support."], "Compute capability below sm80",
                            "load-weights", style="log", lead=(10, 200))
        else:
            pre = Precursor(["Cannot use FlashAttention-2 backend for Volta and Turing GPUs."], "Cannot use FlashAttention-2 backend for Volta and Turing GPUs",
                            "load-weights", style="vlog", level="INFO", vfile="selector.py", lead=(10, 200))
        return Failure("env.gpu-arch-unsupported", phase, exc, "FlashAttention only supports Ampere GPUs or newer", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "bf16":
        phase = "launch"
        gpu = pick(r, [("Tesla T4", "7.5"), ("Tesla V100-SXM2-16GB", "7.0"), ("Quadro RTX 6000", "7.5"), ("NVIDIA GeForce RTX 2080 Ti", "7.5")])
        msg = (f"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu[0]} GPU has compute capability {gpu[1]}. "
               "You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.")
        exc = tb(head(c, "launch") + c.frames([("vllm/v1/worker/gpu_worker.py" if c.gen != "v06" else "vllm/worker/worker.py", "init_device", "_check_if_gpu_supports_dtype(self.model_config.dtype)"),
                                               ("vllm/platforms/cuda.py" if c.gen != "v06" else "vllm/worker/worker.py", "check_if_supports_dtype" if c.gen != "v06" else "_check_if_gpu_supports_dtype", "raise ValueError(", )]) + [msg])
        return Failure("env.gpu-arch-unsupported", phase, exc, "Bfloat16 is only supported on GPUs with compute capability of at least 8.0", variant=kind)
    if kind == "cutlass":
        phase = pick(r, ["memory-plan", "cuda-graph-capture", "warmup"])
        cap = pick(r, [120, 121, 103, 89])
        exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([
            ("vllm/model_executor/layers/quantization/utils/w8a8_utils.py" if c.server == "vllm" else "sglang/srt/layers/quantization/fp8_utils.py",
             "cutlass_w8a8_scaled_mm", "output = ops.cutlass_scaled_mm(qinput,", True),
            ("vllm/_custom_ops.py" if c.server == "vllm" else "sgl_kernel/gemm.py", "cutlass_scaled_mm", "torch.ops._C.cutlass_scaled_mm(out, a, b, scale_a, scale_b, bias)")])
            + [f"NotImplementedError: No compiled cutlass_scaled_mm for CUDA device capability: {cap}"])
        pre = Precursor(torch_arch_warning(c, c.gpu.name if c.gpu.sm >= 100 else "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120 if c.gpu.sm < 100 else c.gpu.sm),
                        "is not compatible with the current PyTorch installation", "launch", style="raw", lead=(30, 300))
        return Failure("env.gpu-arch-unsupported", phase, exc, "No compiled cutlass_scaled_mm for CUDA device capability", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    phase = pick(r, ["memory-plan", "kernel-jit", "warmup"])
    exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([
        (f"{c.sp}/triton/runtime/jit.py", "run", "kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata,", True),
        (f"{c.sp}/triton/compiler/compiler.py", "__getattribute__", "self._init_handles()"),
        (f"{c.sp}/triton/compiler/compiler.py", "_init_handles", "self.module, self.function, self.n_regs, self.n_spills, self.n_max_threads = driver.active.utils.load_binary(", True)])
        + ["RuntimeError: Triton Error [CUDA]: device kernel image is invalid"])
    return Failure("env.gpu-arch-unsupported", phase, exc, "Triton Error [CUDA]: device kernel image is invalid", variant="triton-image")


# ------------------------------------------------------------------ env.driver-too-old
def f_driver(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["too-old", "insufficient", "no-driver", "803", "804", "no-gpus", "ptx", "infer-device"], weights=[3, 3, 2, 2, 1, 1, 2, 2])[0]
    drv = pick(r, [11040, 12000, 12020, 12040, 12060, 12080])
    msgs = {
        "too-old": (f"RuntimeError: The NVIDIA driver on your system is too old (found version {drv}). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.",
                    "The NVIDIA driver on your system is too old"),
        "no-driver": ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
                      "Found no NVIDIA driver on your system"),
        "803": ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
                "Error 803: system has unsupported display driver / cuda driver combination"),
        "804": ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW",
                "Error 804: forward compatibility was attempted on non supported HW"),
        "no-gpus": ("RuntimeError: No CUDA GPUs are available", "No CUDA GPUs are available"),
    }
    pre = None
    if kind == "insufficient":
        phase = pick(r, ["launch", "load-weights"])
        exc = tb(head(c, phase) + torch_cuda_frames(c, pick(r, ["set_device", "_lazy_init"]))) + cuda_error(c, "CUDA driver version is insufficient for CUDA runtime version")
        fatal = "CUDA driver version is insufficient for CUDA runtime version"
    elif kind == "ptx":
        phase = pick(r, ["kernel-jit", "cuda-graph-capture", "warmup"])
        if r.random() < 0.5:
            exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([(f"{c.sp}/triton/compiler/compiler.py", "_init_handles",
                                                                          "self.module, self.function, self.n_regs, self.n_spills, self.n_max_threads = driver.active.utils.load_binary(", True)])) + [
                "RuntimeError: Triton Error [CUDA]: the provided PTX was compiled with an unsupported toolchain."]
        else:
            exc = tb(head(c, phase) + model_forward_frames(c)) + cuda_error(c, "the provided PTX was compiled with an unsupported toolchain.")
        fatal = "the provided PTX was compiled with an unsupported toolchain"
        pre = Precursor([f"{c.sp}/torch/cuda/__init__.py:{r.randint(100, 300)}: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version {drv}). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)",
                         "  return torch._C._cuda_getDeviceCount() > 0"],
                        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old", "launch", style="raw", lead=(30, 400))
    elif kind == "infer-device":
        phase = "launch"
        exc = tb(import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)"),
                                                      ("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))"),
                                                      ("vllm/engine/arg_utils.py", "create_engine_config", "device_config = DeviceConfig(device=self.device)", True),
                                                      ("vllm/config/__init__.py", "__post_init__", "raise RuntimeError(")])) + ["RuntimeError: Failed to infer device type"]
        fatal = "Failed to infer device type"
        if c.server == "sglang":
            kind = "no-driver"
        else:
            pre = Precursor(["No platform detected, vLLM is running on UnspecifiedPlatform"], "No platform detected, vLLM is running on UnspecifiedPlatform",
                            "launch", style="vlog", level="INFO", vfile="__init__.py", lead=(1, 15))
            return Failure("env.driver-too-old", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    if kind in msgs:
        phase = pick(r, ["launch", "launch", "load-weights"])
        last, fatal = msgs[kind]
        exc = tb(head(c, phase) + torch_cuda_frames(c, "_lazy_init")) + [last]
        if r.random() < 0.5 and kind in ("too-old", "803", "804", "no-driver"):
            pre = Precursor([f"{c.sp}/torch/cuda/__init__.py:{r.randint(100, 300)}: UserWarning: CUDA initialization: {last.split(': ', 1)[1]} (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:{r.choice([108, 109, 119])}.)",
                             "  return torch._C._cuda_getDeviceCount() > 0"],
                            "UserWarning: CUDA initialization:", "launch", style="raw", lead=(1, 20))
    return Failure("env.driver-too-old", phase, exc, fatal, precursor=pre, variant=kind)


# ------------------------------------------------------------------ toolchain.compiler-missing
def f_compiler_missing(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["nvcc-sh", "cuda-home", "ninja", "python-h", "cc", "nvcc-fnf", "header"], weights=[3, 3, 2, 3, 2, 2, 2])[0]
    phase = r.choices(["kernel-jit", "cuda-graph-capture", "warmup", "serving", "load-weights"], weights=[5, 4, 2, 1, 1])[0]
    jitdir = pick(r, [f"/root/.cache/flashinfer/{c.cuda.replace('.', '')}/{c.gpu.sm}/cached_ops", "/root/.cache/torch_extensions/py312_cu128",
                      f"/home/{c.user}/.cache/flashinfer/jit", "/root/.cache/sglang/jit_kernel", f"/tmp/torchinductor_{c.user}"])
    op = pick(r, ["batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False",
                  "batch_decode_with_kv_cache_dtype_q_f16_dtype_kv_f16_dtype_o_f16_dtype_idx_i32_head_dim_qk_64_head_dim_vo_64_posenc_0_use_swa_False_use_logits_cap_False",
                  "sampling", "norm", "rope", "page", "fused_moe_90", "cascade", "quantization", "mla_decode"])
    flashinfer_frames = c.frames([(f"{c.sp}/flashinfer/jit/core.py", "build_and_load", "self.build(verbose, need_lock=False)"),
                                  (f"{c.sp}/flashinfer/jit/core.py", "build", "run_ninja(jit_env.FLASHINFER_JIT_DIR, self.ninja_path, verbose)"),
                                  (f"{c.sp}/flashinfer/jit/cpp_ext.py", "run_ninja", "subprocess.run(", True)])
    pre = None
    common_head = head(c, phase) + (model_forward_frames(c) if phase in ("serving", "warmup", "cuda-graph-capture") else [])
    if phase == "cuda-graph-capture" and r.random() < 0.8:
        common_head = head(c, phase) + attn_jit_frames(c)  # FlashInfer's plan JIT-builds its kernels inside capture
    if kind == "nvcc-sh":
        nv = pick(r, ["/usr/local/cuda/bin/nvcc", "nvcc", "/usr/local/cuda-12.8/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"])
        pre_lines = [f"[1/{r.randint(3, 12)}] {nv} --generate-dependencies-with-compile --dependency-output {op}.cuda.o.d -DTORCH_EXTENSION_NAME={op.split('_dtype')[0]} -isystem {c.sp}/torch/include -gencode=arch=compute_{c.gpu.sm},code=sm_{c.gpu.sm} -O3 -std=c++17 -c {jitdir}/{op}/{op}.cu -o {jitdir}/{op}/{op}.cuda.o",
                     f"FAILED: {jitdir}/{op}/{op}.cuda.o",
                     f"/bin/sh: 1: {nv}: not found",
                     "ninja: build stopped: subcommand failed."]
        exc = tb(common_head + flashinfer_frames + c.frames([(f"{c.sp.rsplit('/', 2)[0]}/subprocess.py", "run", "raise CalledProcessError(retcode, process.args,", True)])
                 + [f"subprocess.CalledProcessError: Command '['ninja', '-v', '-C', '{jitdir}', '-f', '{jitdir}/build.ninja']' returned non-zero exit status 1.",
                    "", "During handling of the above exception, another exception occurred:", ""]) + tb(
            c.frames([(f"{c.sp}/flashinfer/jit/core.py", "build", "raise RuntimeError(msg) from e")])) + ["RuntimeError: Ninja build failed. Ninja output:"] + pre_lines[:3]
        return Failure("toolchain.compiler-missing", phase, exc, f"{nv}: not found", pre=pre_lines, capture_wrap=phase == "cuda-graph-capture",
                       precursor=_prec_cuda_runtime(c), variant=kind)
    if kind == "cuda-home":
        exc = tb(common_head + c.frames([(f"{c.sp}/deep_gemm/jit/compiler.py" if r.random() < 0.5 else f"{c.sp}/torch/utils/cpp_extension.py",
                                          "get_nvcc_compiler" if r.random() < 0.5 else "_join_cuda_home", "raise OSError('CUDA_HOME environment variable is not set. '")])
                 + ["OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."])
        pre = Precursor([f"{c.sp}/torch/utils/cpp_extension.py:{r.randint(300, 2300)}: UserWarning: TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation. ",
                         "If this is not desired, please set os.environ['TORCH_CUDA_ARCH_LIST'].", "  warnings.warn("],
                        "TORCH_CUDA_ARCH_LIST is not set", "launch", style="raw", lead=(10, 200)) if r.random() < 0.5 else None
        return Failure("toolchain.compiler-missing", phase, exc, "CUDA_HOME environment variable is not set", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "ninja":
        exc = tb(common_head + c.frames([(f"{c.sp}/torch/utils/cpp_extension.py", "load", "return _jit_compile(", True),
                                         (f"{c.sp}/torch/utils/cpp_extension.py", "_write_ninja_file_and_build_library", "verify_ninja_availability()"),
                                         (f"{c.sp}/torch/utils/cpp_extension.py", "verify_ninja_availability", "raise RuntimeError(\"Ninja is required to load C++ extensions (pip install ninja to get it)\")")])
                 + ["RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)"])
        return Failure("toolchain.compiler-missing", phase, exc, "Ninja is required to load C++ extensions", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind in ("python-h", "header"):
        tmp = f"/tmp/tmp{''.join(r.choice('abcdefghijklmnopqrstuvwxyz0123456789_') for _ in range(8))}"
        hdr = "Python.h" if kind == "python-h" else pick(r, ["cuda.h", "cuda_runtime.h", "nccl.h", "cuda_fp8.h", "cusparse.h"])
        src = f"{tmp}/main.c" if kind == "python-h" else f"{tmp}/cuda_utils.c"
        pre_lines = [f"{src}:{r.choice([1, 2, 5])}:10: fatal error: {hdr}: No such file or directory",
                     f"    {r.choice([1, 2, 5])} | #include <{hdr}>" if r.random() < 0.7 else f"    #include <{hdr}>",
                     "      |          ^~~~~~~~~~",
                     "compilation terminated."]
        gcc = pick(r, ["/usr/bin/gcc", "/usr/bin/cc", "gcc", "/usr/bin/x86_64-linux-gnu-gcc-12"])
        exc = tb(common_head + c.frames([(f"{c.sp}/triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", True),
                                         (f"{c.sp}/triton/runtime/build.py", "_build", "subprocess.check_call(cc_cmd, stdout=subprocess.DEVNULL)"),
                                         (f"{c.sp.rsplit('/', 2)[0]}/subprocess.py", "check_call", "raise CalledProcessError(retcode, cmd)")])
                 + [f"subprocess.CalledProcessError: Command '['{gcc}', '{src}', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', '{tmp}/cuda_utils.cpython-{c.py.replace('.', '')}-x86_64-linux-gnu.so', '-lcuda', '-L{c.sp}/triton/backends/nvidia/lib', '-L/lib/x86_64-linux-gnu', '-I{c.sp}/triton/backends/nvidia/include', '-I{tmp}', '-I/usr/include/python{c.py}']' returned non-zero exit status 1."])
        return Failure("toolchain.compiler-missing", phase, exc, f"fatal error: {hdr}: No such file or directory", pre=pre_lines, pre_scope="ranks",
                       capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind == "cc":
        exc = tb(common_head + c.frames([(f"{c.sp}/triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", True),
                                         (f"{c.sp}/triton/runtime/build.py", "_build", "raise RuntimeError(\"Failed to find C compiler. Please specify via CC environment variable.\")")])
                 + ["RuntimeError: Failed to find C compiler. Please specify via CC environment variable."])
        return Failure("toolchain.compiler-missing", phase, exc, "Failed to find C compiler", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    nv = pick(r, ["/usr/local/cuda/bin/nvcc", "/usr/local/cuda-12.9/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"])
    exc = tb(common_head + c.frames([(f"{c.sp}/deep_gemm/jit/compiler.py", "build", "result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)"),
                                     (f"{c.sp.rsplit('/', 2)[0]}/subprocess.py", "_execute_child", "raise child_exception_type(errno_num, err_msg, err_filename)")])
             + [f"FileNotFoundError: [Errno 2] No such file or directory: '{nv}'"])
    return Failure("toolchain.compiler-missing", phase, exc, f"No such file or directory: '{nv}'", capture_wrap=phase == "cuda-graph-capture", precursor=_prec_cuda_runtime(c), variant=kind)


def _prec_cuda_runtime(c: Ctx) -> Precursor | None:
    if c.rng.random() < 0.5:
        return None
    return Precursor([f"No CUDA runtime is found, using CUDA_HOME='{pick(c.rng, ['/usr/local/cuda', '/usr', '/opt/cuda'])}'"],
                     "No CUDA runtime is found, using CUDA_HOME=", "launch", style="raw", lead=(30, 500))


# ------------------------------------------------------------------ toolchain.compile-failed
def f_compile_failed(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["nvcc-error", "ptxas", "triton-comp", "gnu-version", "arch", "cccl", "ld", "passmanager", "mapat", "tvm-ninja"],
                     weights=[4, 3, 2, 2, 2, 2, 1, 1, 1, 2])[0]
    phase = r.choices(["kernel-jit", "cuda-graph-capture", "warmup", "serving"], weights=[6, 5, 2, 1])[0]
    common = head(c, phase) + (model_forward_frames(c) if phase in ("serving", "warmup", "cuda-graph-capture") else [])
    if phase == "cuda-graph-capture" and r.random() < 0.8:
        common = head(c, phase) + attn_jit_frames(c)  # FlashInfer's plan JIT-builds its kernels inside capture
    jitdir = pick(r, [f"/root/.cache/flashinfer/{c.cuda.replace('.', '')}/{c.gpu.sm}/cached_ops", f"/home/{c.user}/.cache/flashinfer/jit",
                      "/root/.cache/sglang/jit_kernel", "/root/.cache/torch_extensions/py312_cu128"])
    op = pick(r, ["batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_e4m3_head_dim_qk_128", "single_decode_with_kv_cache_head_dim_256", "fp4_gemm_cutlass_sm120",
                  "trtllm_fmha_gen", "fused_moe_sm100", "mla_decode_head_dim_ckv_512", "rope_quantize_fp8", "gdn_prefill_sm90"])
    nvver = pick(r, ["12.4", "12.6", "12.8", "12.1"])
    pre = None
    ninja_tail = lambda: tb(c.frames([(f"{c.sp}/flashinfer/jit/core.py", "build_and_load", "self.build(verbose, need_lock=False)"),
                                      (f"{c.sp}/flashinfer/jit/core.py", "build", "run_ninja(jit_env.FLASHINFER_JIT_DIR, self.ninja_path, verbose)"),
                                      (f"{c.sp}/flashinfer/jit/cpp_ext.py", "run_ninja", "subprocess.run(", True),
                                      (f"{c.sp.rsplit('/', 2)[0]}/subprocess.py", "run", "raise CalledProcessError(retcode, process.args,", True)])
                            + [f"subprocess.CalledProcessError: Command '['ninja', '-v', '-C', '{jitdir}', '-f', '{jitdir}/build.ninja']' returned non-zero exit status 1.",
                               "", "During handling of the above exception, another exception occurred:", ""]) + tb(
        common + c.frames([(f"{c.sp}/flashinfer/jit/core.py", "build", "raise RuntimeError(msg) from e")]))
    if kind in ("nvcc-error", "gnu-version", "cccl", "arch"):
        cu = f"{c.sp}/flashinfer/data/csrc/{pick(r, ['batch_prefill.cu', 'batch_decode.cu', 'fp4_gemm_cutlass.cu', 'trtllm_fmha_kernel_launcher.cu', 'norm.cu', 'renorm.cu'])}"
        cmd = f"/usr/local/cuda/bin/nvcc --generate-dependencies-with-compile --dependency-output {op}.cuda.o.d -isystem {c.sp}/torch/include -gencode=arch=compute_{c.gpu.sm}a,code=sm_{c.gpu.sm}a -O3 -std=c++17 -c {cu} -o {jitdir}/{op}/{op}.cuda.o"
        if kind == "nvcc-error":
            errs = pick(r, [f'{cu}({r.randint(20, 900)}): error: identifier "__nv_fp8_e4m3" is undefined',
                            f'{cu}({r.randint(20, 900)}): error: no instance of overloaded function "cute::copy" matches the argument list',
                            f'{c.sp}/flashinfer/data/include/flashinfer/attention/hopper/utils.cuh({r.randint(20, 400)}): error: namespace "cute" has no member "SM90_TMA_LOAD_MULTICAST"',
                            f'{cu}({r.randint(20, 900)}): error: class "cutlass::arch::Sm100" has no member "kMinComputeCapability"',
                            f'{cu}({r.randint(20, 900)}): error: expression must have a constant value'])
            body = [errs, f'{r.randint(1, 4)} error{"s" if r.random() < 0.5 else ""} detected in the compilation of "{cu}".']
            fatal = errs.split(": error: ")[1][:60]
            fatal = "error: " + fatal
        elif kind == "gnu-version":
            gv = pick(r, ["13", "14", "12"])
            body = [f"/usr/local/cuda/include/crt/host_config.h:{r.choice([132, 143, 151])}:2: error: #error -- unsupported GNU version! gcc versions later than {gv} are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
                    f"  {r.choice([132, 143, 151])} | #error -- unsupported GNU version! gcc versions later than {gv} are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.",
                    "      |  ^~~~~"]
            fatal = "unsupported GNU version!"
        elif kind == "cccl":
            body = [pick(r, ["/usr/local/cuda/include/cuda/std/__cccl/preprocessor.h(23): error: #error directive: \"CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths\"",
                             f"{c.sp}/nvidia/cu13/include/cccl/cuda/std/__cccl/compiler.h(31): error: #error directive: \"libcu++ requires at least CUDA 12.0\"",
                             f"/usr/local/cuda/include/cub/util_device.cuh({r.randint(40, 200)}): error: #error directive: \"The version of CUB in your include path is not compatible with this release of Thrust. CUB is now included in the CUDA Toolkit, so you no longer need to use your own checkout of CUB. Define THRUST_IGNORE_CUB_VERSION_CHECK to ignore this.\""]),
                    f'1 error detected in the compilation of "{cu}".']
            fatal = "error: #error directive:"
        else:
            arch = pick(r, ["compute_120a", "compute_121a", "compute_100a", "compute_103a", "sm_120a"])
            body = [f"nvcc fatal   : Unsupported gpu architecture '{arch}'"]
            fatal = f"Unsupported gpu architecture '{arch}'"
            pre = Precursor([f"Please use at least NVCC 12.9 for the best DeepGEMM performance. Current NVCC version: {nvver}" if r.random() < 0.5 else
                             "please use at least NVCC 12.9 for the best DeepGEMM performance"],
                            "use at least NVCC 12.9", "launch", style="log", lead=(20, 400))
        pre_lines = [f"[{r.randint(1, 4)}/{r.randint(5, 14)}] {cmd}", f"FAILED: {jitdir}/{op}/{op}.cuda.o", cmd] + body + ["ninja: build stopped: subcommand failed."]
        exc = ninja_tail() + ["RuntimeError: Ninja build failed. Ninja output:"] + pre_lines[1:3]
        if pre is None and r.random() < 0.6:
            pre = Precursor(["please use at least NVCC 12.9 for the best DeepGEMM performance"] if c.server == "sglang" else
                            [f"{c.sp}/torch/utils/cpp_extension.py:{r.randint(400, 2200)}: UserWarning: There are no g++ version bounds defined for CUDA version {nvver}",
                             "  warnings.warn(f'There are no {compiler_name} version bounds defined for CUDA version {cuda_str_version}')"],
                            "use at least NVCC 12.9" if c.server == "sglang" else "There are no g++ version bounds defined for CUDA version",
                            "launch", style="log" if c.server == "sglang" else "raw", lead=(20, 400))
        return Failure("toolchain.compile-failed", phase, exc, fatal, pre=pre_lines, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "ptxas":
        arch = pick(r, ["sm_121a", "sm_120a", "sm_103a", "sm_100f", "sm_110a"])
        ptx = f"/tmp/tmp{r.randint(10**7, 10**8)}.ptx"
        exc = tb(common + c.frames([(f"{c.sp}/triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", True),
                                    (f"{c.sp}/triton/compiler/compiler.py", "compile", "next_module = compile_ir(module, metadata)", True),
                                    (f"{c.sp}/triton/backends/nvidia/compiler.py", "<lambda>", "stages[\"cubin\"] = lambda src, metadata: self.make_cubin(src, metadata, options, self.target.arch)"),
                                    (f"{c.sp}/triton/backends/nvidia/compiler.py", "make_cubin", "raise PTXASError(f\"{error}\\n\"", True)])
                 + ["triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error",
                    "`ptxas` stderr:", f"ptxas fatal   : Value '{arch}' is not defined for option 'gpu-name'", "",
                    f"Repro command: {c.sp}/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name={arch} {ptx} -o {ptx}.o"])
        pre = Precursor(["please use at least NVCC 12.9 for the best DeepGEMM performance"], "use at least NVCC 12.9", "launch", style="log", lead=(20, 300)) if c.server == "sglang" and r.random() < 0.5 else None
        return Failure("toolchain.compile-failed", phase, exc, f"ptxas fatal   : Value '{arch}' is not defined for option 'gpu-name'",
                       capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)
    if kind == "triton-comp":
        ln = r.randint(8, 60)
        exc = tb(common + c.frames([(f"{c.sp}/triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", True),
                                    (f"{c.sp}/triton/compiler/compiler.py", "compile", "module = src.make_ir(options, codegen_fns, module_map, context)", True),
                                    (f"{c.sp}/triton/compiler/compiler.py", "make_ir", "return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns,", True)])
                 + [f"triton.compiler.errors.CompilationError: at {ln}:{r.randint(4, 30)}:",
                    "    offs_k = tl.arange(0, BLOCK_K)",
                    "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]",
                    "    acc = tl.dot(a, b, acc, out_dtype=tl.float32)",
                    "          ^",
                    pick(r, ["ValueError('Unsupported conversion from f16 to f8E4M3FN with rounding mode rtne')",
                             "AssertionError('Both operands must be same dtype. Got fp8e4nv and bf16')",
                             "ValueError('Cannot broadcast, rank mismatch: [32], [32, 64]')"])])
        return Failure("toolchain.compile-failed", phase, exc, "triton.compiler.errors.CompilationError", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind == "ld":
        libn = pick(r, ["-lcudart", "-lcuda", "-lnvrtc", "-lcublas"])
        pre_lines = [f"/usr/bin/ld: cannot find {libn}: No such file or directory", "collect2: error: ld returned 1 exit status",
                     "ninja: build stopped: subcommand failed."]
        exc = ninja_tail() + ["RuntimeError: Ninja build failed. Ninja output:", f"FAILED: {jitdir}/{op}/{op}.so"]
        return Failure("toolchain.compile-failed", phase, exc, "collect2: error: ld returned 1 exit status", pre=pre_lines, capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind == "passmanager":
        exc = tb(common + c.frames([(f"{c.sp}/torch/_inductor/runtime/triton_heuristics.py", "precompile", "self._precompile_worker()"),
                                    (f"{c.sp}/torch/_inductor/runtime/triton_heuristics.py", "_precompile_config", "binary = triton.compile(*compile_args, **compile_kwargs)", True),
                                    (f"{c.sp}/triton/compiler/compiler.py", "compile", "next_module = compile_ir(module, metadata)", True),
                                    (f"{c.sp}/triton/backends/nvidia/compiler.py", "make_llir", "pm.run(mod)")])
                 + ["RuntimeError: PassManager::run failed"])
        return Failure("toolchain.compile-failed", phase, exc, "RuntimeError: PassManager::run failed", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    if kind == "mapat":
        exc = tb(common + c.frames([(f"{c.sp}/triton/compiler/compiler.py", "compile", "next_module = compile_ir(module, metadata)", True),
                                    (f"{c.sp}/triton/backends/nvidia/compiler.py", "make_llir", "pm.run(mod)")])
                 + ["IndexError: map::at"])
        return Failure("toolchain.compile-failed", phase, exc, "IndexError: map::at", capture_wrap=phase == "cuda-graph-capture", variant=kind)
    pre_lines = ["/usr/bin/ld: cannot find -lcudart: No such file or directory" if r.random() < 0.3 else
                 f"{c.sp}/sglang/jit_kernel/csrc/{pick(r, ['rope.cuh', 'norm.cuh', 'elementwise/activation.cuh'])}({r.randint(10, 300)}): error: identifier \"__nv_bfloat162\" is undefined",
                 "ninja: build stopped: subcommand failed."]
    exc = tb(common + c.frames([(f"{c.sp}/tvm_ffi/cpp/extension.py", "build_ninja", "raise RuntimeError(f\"ninja exited with status {status.returncode}\")")])) + ["RuntimeError: ninja exited with status 1"]
    pre = Precursor(["please use at least NVCC 12.9 for the best DeepGEMM performance"], "use at least NVCC 12.9", "launch", style="log", lead=(30, 400)) if r.random() < 0.6 else None
    return Failure("toolchain.compile-failed", phase, exc, "ninja exited with status 1", pre=pre_lines, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)


# ------------------------------------------------------------------ gpu.out-of-memory
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


# ------------------------------------------------------------------ gpu.illegal-access
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


# ------------------------------------------------------------------ gpu.cuda-graph-capture
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


# ------------------------------------------------------------------ dist.nccl
NCCL_VERSIONS = ["2.21.5", "2.26.2", "2.27.3", "2.27.5", "2.28.3", "2.20.5"]


def nccl_warn(c: Ctx, rank: int, msg: str) -> str:
    r = c.rng
    return f"{c.host}:{r.randint(1000, 99999)}:{r.randint(1000, 99999)} [{rank}] {msg}"


def f_nccl(c: Ctx) -> Failure:
    r = c.rng
    ver = pick(r, NCCL_VERSIONS)
    kind = r.choices(["unhandled-cuda", "system", "internal", "remote", "invalid-usage", "watchdog"], weights=[3, 3, 2, 2, 1, 4])[0]
    rank = r.randrange(max(2, c.tp))
    warns = {
        "unhandled-cuda": ("ncclUnhandledCudaError: Call to CUDA function failed.", [f"Cuda failure '{pick(r, ['peer access is not supported between these two devices', 'out of memory', 'invalid device ordinal', 'operation not supported'])}'"],
                           [f"transport/p2p.cc:{r.randint(200, 800)} NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
                            f"enqueue.cc:{r.randint(1000, 2000)} NCCL WARN Cuda failure 'invalid argument'"]),
        "system": ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
                   [pick(r, [f"socketStartConnect: Connect to 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}<{r.randint(30000, 65000)}> failed : Software caused connection abort",
                             "Error while creating shared memory segment /dev/shm/nccl-" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6)) + f" (size {r.randint(5, 40) * 1048576 + 5000})",
                             "NET/IB : Unable to open device mlx5_0"])],
                   [f"misc/shmutils.cc:{r.randint(50, 120)} NCCL WARN Error: failed to extend /dev/shm/nccl-abcd12 to {r.randint(5, 40) * 1048576} bytes",
                    f"misc/socket.cc:{r.randint(400, 600)} NCCL WARN socketStartConnect: Connect to 10.0.{r.randint(0, 9)}.{r.randint(1, 99)}<{r.randint(30000, 65000)}> failed : Software caused connection abort"]),
        "internal": ("ncclInternalError: Internal check failed.", [f"Proxy Call to rank {r.randrange(max(2, c.tp))} failed (Connect)"],
                     [f"proxy.cc:{r.randint(1000, 1800)} NCCL WARN [Proxy Service {rank}] Failed to execute operation Connect from rank {rank}, retcode 3"]),
        "remote": ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                   [f"NET/IB : Got completion from peer 10.0.{r.randint(0, 9)}.{r.randint(1, 99)}<{r.randint(30000, 65000)}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.{r.randint(1, 99)} remoteGidsfe80::{r.randint(1000, 9999):x}"],
                   [f"transport/net_ib.cc:{r.randint(1200, 2400)} NCCL WARN NET/IB : Got completion from peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}> with status=12 opcode=0 len=0 vendor err 129 (Recv)"]),
        "invalid-usage": ("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", [f"Duplicate GPU detected : rank {rank} and rank 0 both on CUDA device {r.choice(['1000', '18000', 'e1000'])}"],
                          [f"init.cc:{r.randint(500, 1000)} NCCL WARN Duplicate GPU detected : rank {rank} and rank 0 both on CUDA device 1000"]),
    }
    pre = None
    if kind == "watchdog":
        op = pick(r, ["ALLREDUCE", "ALLGATHER", "_ALLGATHER_BASE", "BROADCAST", "GATHER", "_REDUCE_SCATTER_BASE"])
        seq = r.randint(2, 90000)
        to = pick(r, [600000, 1800000, 300000])
        ran = to + r.randint(1, 900)
        phase = r.choices(["serving", "load-weights", "cuda-graph-capture", "launch"], weights=[5, 1, 1, 1])[0]
        ts = f"E{r.randint(1, 12):02d}{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999999999):09d}"
        work = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={r.randint(1, 9000000)}, NumelOut={r.randint(1, 9000000)}, Timeout(ms)={to}) ran for {ran} milliseconds before timing out."
        pre_lines = [f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([632, 616, 685])}] [Rank {rank}] Watchdog caught collective operation timeout: {work}"]
        if r.random() < 0.6:
            pre_lines.append(f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([2271, 1664])}] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {seq - 1}")
            pre_lines.append(f"[rank{rank}]:[{ts} ProcessGroupNCCL.cpp:{r.choice([670, 681])}] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")
        whatl = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: {work}"
        cxx = ["terminate called after throwing an instance of 'c10::DistBackendError'", f"  what():  {whatl}",
               f"Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{r.choice([635, 618, 688])} (most recent call first):",
               f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libc10.so)",
               f"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x{r.randint(0x200, 0x300):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
               f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x{r.randint(0x600, 0x900):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
               f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f{r.randint(10**9, 10**10 - 1):x} in {c.sp}/torch/lib/libtorch_cuda.so)",
               f"frame #4: <unknown function> + 0x{r.randint(0xd0000, 0xfffff):x} (0x7f{r.randint(10**9, 10**10 - 1):x} in /lib/x86_64-linux-gnu/libstdc++.so.6)",
               f"frame #5: <unknown function> + 0x94ac3 (0x7f{r.randint(10**9, 10**10 - 1):x} in /lib/x86_64-linux-gnu/libc.so.6)", "", "Fatal Python error: Aborted"]
        if r.random() < 0.6:
            pre = Precursor([nccl_warn(c, rank, f"transport/net_ib.cc:{r.randint(1200, 2400)} NCCL WARN NET/IB : req {r.randint(1, 9)}/{r.randint(1, 9)} tag {r.randint(1, 99):x} peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}> collective mismatch error, local size {r.randint(1, 99999)} remote size {r.randint(1, 99999)}")]
                            if r.random() < 0.5 else [nccl_warn(c, rank, f"misc/socket.cc:{r.randint(40, 700)} NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.{r.randint(1, 99)}<{r.randint(30000, 65000)}>")],
                            "NCCL WARN", phase, style="nccl", lead=(30, 600))
        return Failure("dist.nccl", phase, [], "Watchdog caught collective operation timeout", scope="cxx", pre=pre_lines, cxx=cxx, precursor=pre, variant=kind)
    err, last_err, warn_lines = warns[kind]
    phase = r.choices(["launch", "load-weights", "cuda-graph-capture", "serving"], weights=[5, 1, 2, 2])[0]
    loc = f"/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{r.choice([3356, 3690, 2010, 1970, 3414])}"
    desc = {"unhandled-cuda": "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "system": "unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "internal": "internal error - please report this issue to the NCCL developers", "remote": "remote process exited or there was a network error",
            "invalid-usage": "invalid usage (run with NCCL_DEBUG=WARN for details)"}[kind]
    tail_frames = c.frames([pick(r, [("sglang/srt/distributed/parallel_state.py" if c.server == "sglang" else "vllm/distributed/parallel_state.py", "all_reduce", "torch.distributed.all_reduce(input_, group=self.device_group)"),
                                     ("sglang/srt/distributed/parallel_state.py" if c.server == "sglang" else "vllm/distributed/parallel_state.py", "init_distributed_environment", "torch.distributed.barrier()"),
                                     ("sglang/srt/distributed/device_communicators/pynccl.py" if c.server == "sglang" else "vllm/distributed/device_communicators/pynccl.py", "__init__",
                                      "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(", True)]),
                            (f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "return func(*args, **kwargs)", True),
                            (f"{c.sp}/torch/distributed/distributed_c10d.py", "all_reduce", "work = group.allreduce([tensor], opts)", True)])
    if r.random() < 0.35:
        exc = tb(head(c, phase) + tail_frames[:-3] + c.frames([("sglang/srt/distributed/device_communicators/pynccl_wrapper.py" if c.server == "sglang" else "vllm/distributed/device_communicators/pynccl_wrapper.py",
                                                                "NCCL_CHECK", "raise RuntimeError(f\"NCCL error: {error_str}\")")])) + [
            f"RuntimeError: NCCL error: {desc.split(' (')[0]}"]
        fatal = f"NCCL error: {desc.split(' (')[0]}"
    else:
        exc = tb(head(c, phase) + tail_frames) + [
            f"torch.distributed.DistBackendError: NCCL error in: {loc}, {desc}, NCCL version {ver}", err, "Last error:"] + last_err
        fatal = "NCCL error in:" if r.random() < 0.5 else err.split(":")[0]
    pre = Precursor([nccl_warn(c, rank, w) for w in warn_lines[:1]], "NCCL WARN", "launch" if phase == "launch" else pick(r, ["launch", phase]), style="nccl", lead=(0.5, 120)) if r.random() < 0.6 else None
    if pre is None and r.random() < 0.4 and kind == "unhandled-cuda":
        pre = Precursor(["Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify --disable-custom-all-reduce explicitly."],
                        "Custom allreduce is disabled because your platform lacks GPU P2P capability", "launch", style="log" if c.server == "sglang" else "vlog", vfile="custom_all_reduce.py", lead=(5, 60))
    return Failure("dist.nccl", phase, exc, fatal, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant=kind)


# ------------------------------------------------------------------ config.model-load
NEW_ARCHS = ["Qwen3NextForCausalLM", "Glm4vMoeForConditionalGeneration", "Qwen3OmniMoeForConditionalGeneration", "KimiK25ForCausalLM",
             "DeepseekV32ForCausalLM", "MiniMaxM2ForCausalLM", "Olmo3ForCausalLM", "SeedOssForCausalLM", "Ernie4_5_MoeForCausalLM",
             "HunYuanDenseV1ForCausalLM", "Step3VLForConditionalGeneration", "LongcatFlashForCausalLM", "BailingMoeV2ForCausalLM", "Apertus8BForCausalLM"]


def f_model_load(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["arch", "no-config", "model-type", "safetensors", "tokenizer", "gated", "not-found", "no-weights", "keyerror", "quant", "shard-missing"],
                     weights=[4, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1])[0]
    mp = pick(r, [f"/models/{c.model.hf.split('/')[1]}", f"/data/hf/{c.model.hf.split('/')[1]}", c.model.hf, f"/mnt/weights/{c.model.hf.split('/')[1].lower()}"])
    pre = None
    launch_frames = (head(c, "launch")[:4] if c.server == "sglang" else c.frames([
        ("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "vllm_config = engine_args.create_engine_config(usage_context=usage_context)"),
        ("vllm/engine/arg_utils.py", "create_engine_config", "model_config = self.create_model_config()"),
        ("vllm/engine/arg_utils.py", "create_model_config", "return ModelConfig(", True)]))
    phase = "launch"
    if kind == "arch":
        arch = pick(r, NEW_ARCHS)
        if c.server == "sglang":
            exc = tb(head(c, "load-weights") + c.frames([("sglang/srt/model_loader/utils.py", "get_model_architecture", "architectures = resolve_transformers_arch(model_config, architectures)"),
                                                        ("sglang/srt/models/registry.py", "_raise_for_unsupported", "raise ValueError(")])) + [
                f"ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: dict_keys(['BaichuanForCausalLM', 'ChatGLMModel', 'CohereForCausalLM', 'DbrxForCausalLM', 'DeepseekForCausalLM', 'DeepseekV2ForCausalLM', 'DeepseekV3ForCausalLM', 'ExaoneForCausalLM', 'GemmaForCausalLM', 'Gemma2ForCausalLM', 'GPT2LMHeadModel', 'GraniteForCausalLM', 'LlamaForCausalLM', 'MistralForCausalLM', 'MixtralForCausalLM', 'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'Qwen3ForCausalLM', 'Qwen3MoeForCausalLM'])"]
            phase = "load-weights"
            fatal = f"Model architectures ['{arch}'] are not supported for now"
            if r.random() < 0.6:
                mod = arch.lower().replace("forcausallm", "").replace("forconditionalgeneration", "")
                pre = Precursor([f"Ignore import error when loading sglang.srt.models.{mod}: cannot import name '{arch.replace('ForCausalLM', 'Config').replace('ForConditionalGeneration', 'Config')}' from 'transformers' ({c.sp}/transformers/__init__.py)"],
                                f"Ignore import error when loading sglang.srt.models.{mod}", "launch", style="log", lead=(3, 60))
        else:
            msg = pick(r, [f"Model architectures ['{arch}'] failed to be inspected. Please check the logs for more details.",
                           f"Model architectures ['{arch}'] are not supported for now. Supported architectures: dict_keys(['AquilaModel', 'AquilaForCausalLM', 'ArcticForCausalLM', 'BaiChuanForCausalLM', 'BloomForCausalLM', 'LlamaForCausalLM', 'MistralForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'])"])
            if "inspected" in msg:
                pre = Precursor([f"Error in inspecting model architecture '{arch}'"], f"Error in inspecting model architecture '{arch}'", "launch",
                                style="vlog", level="ERROR", vfile="registry.py", lead=(0.05, 2))
            exc = tb(launch_frames + c.frames([("vllm/config/model.py" if c.gen != "v06" else "vllm/config.py", "__post_init__", "self.multimodal_config = self._init_multimodal_config()"),
                                               ("vllm/model_executor/models/registry.py", "inspect_model_cls", "return self._raise_for_unsupported(architectures)"),
                                               ("vllm/model_executor/models/registry.py", "_raise_for_unsupported", "raise ValueError(")])) + [
                f"ValueError: {msg}"]
            fatal = f"Model architectures ['{arch}']"
    elif kind == "no-config":
        if c.server == "vllm" and r.random() < 0.5:
            last = "ValueError: Could not detect config format for no config file found. Ensure your model has either config.json (HF format) or params.json (Mistral format)."
            fatal = "Could not detect config format for no config file found"
        else:
            last = f"OSError: {mp} does not appear to have a file named config.json. Checkout 'https://huggingface.co/{mp}/tree/None' for available files."
            fatal = "does not appear to have a file named config.json"
        exc = tb(launch_frames + c.frames([(f"{c.sp}/transformers/configuration_utils.py", "get_config_dict", "config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)", True),
                                           (f"{c.sp}/transformers/utils/hub.py", "cached_files", "raise OSError(")])) + [last]
    elif kind == "model-type":
        mt = pick(r, ["qwen3_vl_moe", "qwen3_next", "glm4v_moe", "gpt_oss", "deepseek_v32", "gemma3n", "kimi_k2", "minimax_m2", "olmo3"])
        exc = tb(launch_frames + c.frames([(f"{c.sp}/transformers/models/auto/configuration_auto.py", "from_pretrained", "raise ValueError(")])) + [
            f"ValueError: The checkpoint you are trying to load has model type `{mt}` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.",
            "", "You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, and the checkpoint is very new, then there may not be a release version that supports this model yet. In this case, you can get the most up-to-date code by installing Transformers from source with the command `pip install git+https://github.com/huggingface/transformers.git`"]
        fatal = f"has model type `{mt}` but Transformers does not recognize this architecture"
    elif kind == "safetensors":
        phase = "load-weights"
        err = pick(r, ["HeaderTooLarge", "MetadataIncompleteBuffer", "InvalidHeaderDeserialization", "incomplete metadata, file not fully covered"])
        exc = tb(head(c, "load-weights") + c.frames([("sglang/srt/model_loader/weight_utils.py" if c.server == "sglang" else "vllm/model_executor/model_loader/weight_utils.py",
                                                      "safetensors_weights_iterator", "with safe_open(st_file, framework=\"pt\") as f:", True)])) + [
            f"safetensors_rust.SafetensorError: Error while deserializing header: {err}"]
        fatal = f"Error while deserializing header: {err}"
    elif kind == "tokenizer":
        tk = pick(r, ["LlamaTokenizerFast", "Qwen2TokenizerFast", "PreTrainedTokenizerFast", "GemmaTokenizerFast"])
        exc = tb(launch_frames[:2] + c.frames([("sglang/srt/hf_transformers_utils.py" if c.server == "sglang" else "vllm/transformers_utils/tokenizer.py", "get_tokenizer", "tokenizer = AutoTokenizer.from_pretrained(", True),
                                               (f"{c.sp}/transformers/tokenization_utils_base.py", "from_pretrained", "raise EnvironmentError(")])) + [
            f"OSError: Can't load tokenizer for '{mp}'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure '{mp}' is the correct path to a directory containing all relevant files for a {tk} tokenizer."]
        fatal = f"Can't load tokenizer for '{mp}'"
        if c.server == "sglang":
            # SGLang loads the tokenizer in the main process.
            return Failure("config.model-load", "launch", exc, fatal, scope="main", result="exit-code", variant=kind)
    elif kind == "gated":
        repo = pick(r, ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "google/gemma-3-27b-it", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"])
        rid = f"Root=1-{r.randbytes(4).hex()}-{r.randbytes(12).hex()}"
        exc = tb(launch_frames + c.frames([(f"{c.sp}/huggingface_hub/utils/_http.py", "hf_raise_for_status", "raise _format(GatedRepoError, message, response) from e")])) + [
            f"huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: {rid})", "",
            f"Cannot access gated repo for url https://huggingface.co/{repo}/resolve/main/config.json.",
            f"Access to model {repo} is restricted. You must have access to it and be authenticated to access it. Please log in."]
        fatal = "Cannot access gated repo for url"
    elif kind == "not-found":
        repo = pick(r, ["Qwen/Qwen3-8B-Instruct", "meta-llama/Llama-3.1-8B-instruct", "deepseek-ai/DeepSeek-V3.2", "openai/gpt-oss-20B", "Qwen/Qwen2.5-7B-Instruct-AWQ-4bit"])
        exc = tb(launch_frames + c.frames([(f"{c.sp}/huggingface_hub/utils/_http.py", "hf_raise_for_status", "raise _format(RepositoryNotFoundError, message, response) from e")])) + [
            f"huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: Root=1-{r.randbytes(4).hex()}-{r.randbytes(12).hex()})", "",
            f"Repository Not Found for url: https://huggingface.co/{repo}/resolve/main/config.json.",
            "Please make sure you specified the correct `repo_id` and `repo_type`.",
            "If you are trying to access a private or gated repo, make sure you are authenticated. For more details, see https://huggingface.co/docs/huggingface_hub/authentication"]
        fatal = "Repository Not Found for url"
    elif kind == "no-weights":
        phase = "load-weights"
        exc = tb(head(c, "load-weights") + c.frames([("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/default_loader.py", "_prepare_weights", "raise RuntimeError(")])) + [
            f"RuntimeError: Cannot find any model weights with `{mp}`"]
        fatal = "Cannot find any model weights with"
    elif kind == "keyerror":
        phase = "load-weights"
        key = pick(r, ["model.layers.0.mlp.experts.w13_weight", "model.layers.12.self_attn.qkv_proj.weight_scale", "lm_head.weight", "model.visual.blocks.0.attn.qkv.weight",
                       "model.layers.3.mlp.gate.e_score_correction_bias"])
        exc = tb(head(c, "load-weights") + c.frames([("sglang/srt/model_loader/loader.py" if c.server == "sglang" else "vllm/model_executor/model_loader/default_loader.py", "load_weights" if c.server == "vllm" else "load_weights_and_postprocess", "model.load_weights(weights)" if c.server == "sglang" else "loaded_weights = model.load_weights(", True),
                                                     ((f"sglang/srt/models/{c.model.arch.lower()[:6]}.py") if c.server == "sglang" else f"vllm/model_executor/models/{c.model.arch.lower()[:6]}.py", "load_weights", "param = params_dict[name]")])) + [f"KeyError: '{key}'"]
        fatal = f"KeyError: '{key}'"
    elif kind == "quant":
        q = pick(r, ["mxfp4", "nvfp4", "modelopt_fp4", "w4a8", "fp8_pertensor", "auto-round"])
        exc = tb(launch_frames + c.frames([("sglang/srt/configs/model_config.py" if c.server == "sglang" else "vllm/config/model.py", "_verify_quantization", "raise ValueError(")])) + [
            f"ValueError: Unknown quantization method: {q}. Must be one of ['awq', 'fp8', 'gptq', 'marlin', 'gptq_marlin', 'awq_marlin', 'bitsandbytes', 'compressed-tensors', 'moe_wna16', 'w8a8_int8', 'w8a8_fp8']."]
        fatal = f"Unknown quantization method: {q}"
    else:
        phase = "load-weights"
        n = c.model.shards
        k = r.randint(1, max(1, n))
        exc = tb(head(c, "load-weights") + c.frames([(f"{c.sp}/safetensors/torch.py", "load_file", "with safe_open(filename, framework=\"pt\", device=device) as f:")])) + [
            f"FileNotFoundError: No such file or directory: \"{mp}/model-{k:05d}-of-{n:05d}.safetensors\""]
        fatal = f"model-{k:05d}-of-{n:05d}.safetensors"
    if c.server == "sglang" and phase == "launch":
        return Failure("config.model-load", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    if c.server == "vllm" and phase == "launch":
        return Failure("config.model-load", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    return Failure("config.model-load", phase, exc, fatal, precursor=pre, variant=kind)


# ------------------------------------------------------------------ config.invalid-argument
SGLANG_USAGE = "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH] [--tokenizer-mode {auto,slow}] [--skip-tokenizer-init] [--load-format {auto,pt,safetensors,npcache,dummy,sharded_state,gguf,bitsandbytes,layered,remote}] [--trust-remote-code] [--dtype {auto,half,float16,bfloat16,float,float32}] [--kv-cache-dtype {auto,fp8_e5m2,fp8_e4m3}] [--quantization {awq,fp8,gptq,marlin,gptq_marlin,awq_marlin,bitsandbytes,gguf,modelopt,w8a8_int8,w8a8_fp8,moe_wna16}] [--context-length CONTEXT_LENGTH] [--device DEVICE] [--served-model-name SERVED_MODEL_NAME] [--chat-template CHAT_TEMPLATE] [--host HOST] [--port PORT] [--mem-fraction-static MEM_FRACTION_STATIC] [--tensor-parallel-size TENSOR_PARALLEL_SIZE] ..."
VLLM_USAGE = "usage: vllm serve [model_tag] [options]"


def f_invalid_arg(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["unrecognized", "invalid-choice", "invalid-int", "required", "heads", "max-len", "batched", "sglang-assert", "placement", "pydantic"],
                     weights=[4, 2, 2, 1, 3, 2, 1, 2, 1, 1])[0]
    if kind in ("heads", "max-len", "batched", "placement", "pydantic") and c.server == "sglang":
        kind = pick(r, ["sglang-assert", "sglang-assert", "heads", "unrecognized", "invalid-choice"])
    if kind == "sglang-assert" and c.server == "vllm":
        kind = "heads"
    prog = "launch_server.py" if c.server == "sglang" else pick(r, ["vllm serve", "api_server.py"])
    usage = SGLANG_USAGE if c.server == "sglang" else (VLLM_USAGE if prog == "vllm serve" else "usage: api_server.py [-h] [--host HOST] [--port PORT] [--uvicorn-log-level {debug,info,warning,error,critical,trace}] ... [--model MODEL] ...")
    if kind in ("unrecognized", "invalid-choice", "invalid-int", "required"):
        if kind == "unrecognized":
            bad = pick(r, ["--reasoning_parser qwen3", "--tp 4", "--enable-flashinfer-mla", "--max-model-length 32768", "--gpu-memory-utilisation 0.9",
                           "--disable-radix", "--enable-dp-attention-v2", "--tool_call_parser hermes", "--speculative-algo EAGLE3", "--chunked-prefill 8192",
                           "--kv-cache-type fp8", "--served-model my-model", "--enable-torch-compile-v2", "--num-scheduler-steps 8", "--use-v2-block-manager"])
            msg = f"{prog}: error: unrecognized arguments: {bad}"
            fatal = f"error: unrecognized arguments: {bad.split()[0]}"
        elif kind == "invalid-choice":
            arg, val, ch = pick(r, [("--dtype", "bf16", "'auto', 'half', 'float16', 'bfloat16', 'float', 'float32'"),
                                    ("--attention-backend", "fa4", "'flashinfer', 'triton', 'torch_native', 'fa3', 'flashmla', 'cutlass_mla', 'trtllm_mla', 'aiter'"),
                                    ("--kv-cache-dtype", "fp8_e4m3fn", "'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2'"),
                                    ("--load-format", "safetensor", "'auto', 'pt', 'safetensors', 'npcache', 'dummy', 'gguf', 'bitsandbytes'"),
                                    ("--tool-call-parser", "qwen3", "'llama3', 'mistral', 'qwen25', 'deepseekv3', 'pythonic', 'kimi_k2', 'gpt-oss'")])
            msg = f"{prog}: error: argument {arg}: invalid choice: '{val}' (choose from {ch})"
            fatal = f"error: argument {arg}: invalid choice: '{val}'"
        elif kind == "invalid-int":
            arg, val = pick(r, [("--tp-size/--tensor-parallel-size" if c.server == "sglang" else "--tensor-parallel-size/-tp", "auto"), ("--port", "${PORT}"),
                                ("--max-running-requests" if c.server == "sglang" else "--max-num-seqs", "1e3"), ("--context-length" if c.server == "sglang" else "--max-model-len", "32k")])
            msg = f"{prog}: error: argument {arg}: invalid int value: '{val}'"
            fatal = f"invalid int value: '{val}'"
        else:
            msg = f"{prog}: error: the following arguments are required: --model-path" if c.server == "sglang" else f"{prog}: error: the following arguments are required: model_tag"
            fatal = "error: the following arguments are required"
        exc = [usage, msg] if r.random() < 0.8 else [msg]
        return Failure("config.invalid-argument", "launch", exc, fatal, scope="argparse", result="exit-code", exit_status="status=2/INVALIDARGUMENT", variant=kind)
    if kind == "heads":
        tp = pick(r, [3, 5, 6, 8, 16])
        heads = pick(r, [28, 14, 40, 20, 12, 24])
        if c.server == "vllm":
            exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "config = VllmConfig(", True),
                               ("vllm/config/__init__.py" if c.gen != "v06" else "vllm/config.py", "__post_init__", "self.model_config.verify_with_parallel_config(self.parallel_config)"),
                               ("vllm/config/model.py" if c.gen != "v06" else "vllm/config.py", "verify_with_parallel_config", "raise ValueError(")])) + [
                f"ValueError: Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."]
            return Failure("config.invalid-argument", "launch", exc, "must be divisible by tensor parallel size", scope="main", result="exit-code", variant=kind)
        exc = tb(head(c, "load-weights")[:-2] + c.frames([("sglang/srt/layers/linear.py", "__init__", "self.num_heads = divide(self.total_num_heads, tp_size)"),
                                                         ("sglang/srt/distributed/utils.py", "divide", "ensure_divisibility(numerator, denominator)"),
                                                         ("sglang/srt/distributed/utils.py", "ensure_divisibility", "assert numerator % denominator == 0, \"{} is not divisible by {}\".format(")])) + [
            f"AssertionError: {heads} is not divisible by {tp}"]
        return Failure("config.invalid-argument", "load-weights", exc, f"AssertionError: {heads} is not divisible by {tp}", variant=kind)
    if kind == "sglang-assert":
        msg = pick(r, ["AssertionError: The argument --tp-size must be divisible by --dp-size when --enable-dp-attention is set",
                       "ValueError: --enable-dp-attention requires --dp-size > 1",
                       "ValueError: Speculative decoding with EAGLE3 requires --speculative-draft-model-path",
                       f"ValueError: The requested context length {r.choice([262144, 200000, 1048576])} is greater than the derived context length {r.choice([32768, 40960, 131072])}. Set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 to override.",
                       "ValueError: --chunked-prefill-size must be divisible by --page-size",
                       f"AssertionError: mem_fraction_static={r.choice([1.2, 0.0, -0.5])} must be in (0, 1)"])
        exc = tb(c.frames([("sglang/launch_server.py", "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
                           ("sglang/srt/server_args.py", "prepare_server_args", "return ServerArgs.from_cli_args(raw_args)"),
                           ("sglang/srt/server_args.py", "from_cli_args", "return cls(**{attr: getattr(args, attr) for attr in attrs})"),
                           ("<string>", "__init__"),
                           ("sglang/srt/server_args.py", "__post_init__", "self._handle_other_validations()" if c.gen != "old" else "self.check_server_args()")])) + [msg]
        return Failure("config.invalid-argument", "launch", exc, msg.split(": ", 1)[1][:70], scope="main", result="exit-code", variant=kind)
    if kind == "max-len":
        n = pick(r, [262144, 1048576, 200000, 131072])
        m = pick(r, [32768, 40960, 8192])
        exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_model_config", "return ModelConfig(", True),
                           (f"{c.sp}/pydantic/_internal/_dataclasses.py", "__init__", "s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)")])) + [
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
            f"  Value error, User-specified max_model_len ({n}) is greater than the derived max_model_len (max_position_embeddings={m} or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error. [type=value_error, input_value=ArgsKwargs((), {{'model': ...}}), input_type=ArgsKwargs]",
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"]
        return Failure("config.invalid-argument", "launch", exc, "is greater than the derived max_model_len", scope="main", result="exit-code", variant=kind)
    if kind == "batched":
        a = pick(r, [2048, 4096, 8192])
        b = pick(r, [16384, 32768, 131072])
        exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "scheduler_config = SchedulerConfig(", True),
                           ("vllm/config/scheduler.py" if c.gen != "v06" else "vllm/config.py", "verify_args" if c.gen != "v06" else "_verify_args", "raise ValueError(")])) + [
            f"ValueError: max_num_batched_tokens ({a}) is smaller than max_model_len ({b}). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."]
        return Failure("config.invalid-argument", "launch", exc, f"max_num_batched_tokens ({a}) is smaller than max_model_len", scope="main", result="exit-code", variant=kind)
    if kind == "placement":
        exc = tb(c.frames([("vllm/executor/ray_utils.py", "initialize_ray_cluster", "raise ValueError(")])) + [
            "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group."]
        return Failure("config.invalid-argument", "launch", exc, "The number of required GPUs exceeds the total number of available GPUs", scope="main", result="exit-code", variant=kind)
    exc = tb(c.frames([("vllm/engine/arg_utils.py", "create_engine_config", "speculative_config = self.create_speculative_config(", True),
                       (f"{c.sp}/pydantic/_internal/_dataclasses.py", "__init__", "s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)")])) + [
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig",
        f"  Value error, {pick(r, ['num_speculative_tokens must be provided with speculative model unless the draft model config contains an n_predict parameter.', 'Expected num_speculative_tokens to be greater than zero (0).'])} [type=value_error, input_value=ArgsKwargs((), {{}}), input_type=ArgsKwargs]"]
    return Failure("config.invalid-argument", "launch", exc, "validation error for SpeculativeConfig", scope="main", result="exit-code", variant=kind)


# ------------------------------------------------------------------ net.port-in-use
def f_port(c: Ctx) -> Failure:
    r = c.rng
    port = c.port
    pre = None
    if c.journald and r.random() < 0.6:
        opid = r.randint(1000, 90000)
        pre = Precursor([f"Found left-over process {opid} (python3) in control group while starting unit. Ignoring.",
                         "This usually indicates unclean termination of a previous run, or service implementation deficiencies."],
                        "Found left-over process", "launch", style="systemd", lead=(0.01, 0.5))
    if c.server == "sglang":
        kind = r.choices(["uvicorn", "zmq", "wait", "dist"], weights=[5, 2, 2, 2])[0]
        if kind == "uvicorn":
            ln = f"[Errno 98] error while attempting to bind on address ('{pick(r, ['0.0.0.0', '127.0.0.1', '::'])}', {port}): address already in use"
            return Failure("net.port-in-use", "ready", [], "[Errno 98] error while attempting to bind on address", scope="log", log_line=ln, log_level="ERROR",
                           result="exit-code", precursor=pre, variant=kind)
        if kind == "zmq":
            p2 = port + r.randint(1, 40)
            exc = tb(import_frames(c, [])[:3] + c.frames([("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, template_manager, scheduler_info = _launch_subprocesses(", True),
                                                          ("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", "tokenizer_manager = TokenizerManager(server_args, port_args)"),
                                                          ("sglang/srt/managers/tokenizer_manager.py", "__init__", "self.recv_from_detokenizer = get_zmq_socket(", True),
                                                          ("sglang/srt/utils/common.py" if c.gen != "old" else "sglang/srt/utils.py", "get_zmq_socket", "socket.bind(endpoint)"),
                                                          (f"{c.sp}/zmq/sugar/socket.py", "bind", "super().bind(addr)"),
                                                          ("_zmq.py", "zmq.backend.cython._zmq.Socket.bind"),
                                                          ("_zmq.py", "zmq.backend.cython._zmq._check_rc")])) + [
                f"zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:{p2}')"]
            return Failure("net.port-in-use", "launch", exc, "zmq.error.ZMQError: Address already in use", scope="main", result="exit-code", precursor=pre, variant=kind)
        if kind == "wait":
            n = r.randint(10, 60)
            name = pick(r, ["nccl_port", "port", "dist_init_addr"])
            return Failure("net.port-in-use", "launch", [f"{name} at {port} is not available in {n} seconds."], f"is not available in {n} seconds",
                           scope="log", log_line=f"{name} at {port} is not available in {n} seconds.", log_level="", result="exit-code",
                           pre=[f"port {port} is in use. Waiting for {i} seconds for {name} to be available." for i in range(2, min(n, 4))],
                           precursor=Precursor([f"port {port} is in use. Waiting for 1 seconds for {name} to be available."], "is in use. Waiting for 1 seconds",
                                               "launch", style="log", lead=(1, 2)), variant=kind)
    else:
        kind = r.choices(["oserror", "uvicorn", "dist"], weights=[6, 1, 2])[0]
        if kind in ("oserror", "uvicorn"):
            exc = tb(import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)"),
                                                          ("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))"),
                                                          (f"{c.sp}/uvloop/__init__.py", "run", "return __asyncio.run(", True),
                                                          ("vllm/entrypoints/openai/api_server.py", "run_server", "listen_address, sock = setup_server(args)"),
                                                          ("vllm/entrypoints/openai/api_server.py", "setup_server", "sock = create_server_socket(sock_addr)"),
                                                          ("vllm/entrypoints/openai/api_server.py", "create_server_socket", "sock.bind(addr)")])) + [
                "OSError: [Errno 98] Address already in use"]
            return Failure("net.port-in-use", "launch", exc, "OSError: [Errno 98] Address already in use", scope="main", result="exit-code", precursor=pre, variant=kind)
    p = pick(r, [29500, 29501, 20000 + r.randint(0, 9999), port + 1])
    exc = tb(head(c, "launch") + c.frames([(f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "func_return = func(*args, **kwargs)", True),
                                           (f"{c.sp}/torch/distributed/distributed_c10d.py", "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_tcp_rendezvous_handler", "store = _create_c10d_store(", True),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_create_c10d_store", "return TCPStore(", True)])) + [
        f"torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: {p}, useIPv6: 0, code: -98, name: EADDRINUSE, message: address already in use"]
    return Failure("net.port-in-use", "launch", exc, "EADDRINUSE, message: address already in use", precursor=pre, variant="dist")


# ------------------------------------------------------------------ host.out-of-memory
def f_host_oom(c: Ctx) -> Failure:
    r = c.rng
    kinds = ["memoryerror", "errno12", "cpualloc", "hicache"] + (["kernel", "kernel", "kernel", "cgroup"] if c.journald else [])
    kind = pick(r, kinds)
    if c.server == "vllm" and kind == "hicache":
        kind = "cpualloc"
    pre = None
    if c.server == "vllm" and r.random() < 0.5:
        tot = pick(r, [62.0, 125.6, 251.4, 30.9])
        pre = Precursor([f"Possibly too large swap space. {tot * 0.6:.2f} GiB out of the {tot:.2f} GiB total CPU memory is allocated for the swap space."],
                        "Possibly too large swap space", "launch", style="vlog", vfile="config.py", lead=(20, 300))
    phase = r.choices(["load-weights", "memory-plan", "serving"], weights=[5, 2, 2])[0]
    if kind in ("kernel", "cgroup"):
        pid = r.randint(2000, 99999)
        comm = pick(r, ["python3", "python", "sglang::schedul", "VLLM::EngineCor", "pt_main_thread", "VLLM::Worker_TP"])
        tvm = r.randint(80, 900) * 1048576
        anon = r.randint(40, 480) * 1048576
        kern = [f"{comm} invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
                f"oom-kill:constraint=CONSTRAINT_{'NONE' if kind == 'kernel' else 'MEMCG'},nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/system.slice/{'sglang' if c.server == 'sglang' else 'vllm'}.service,task={comm},pid={pid},uid=0",
                f"{'Out of memory' if kind == 'kernel' else 'Memory cgroup out of memory'}: Killed process {pid} ({comm}) total-vm:{tvm}kB, anon-rss:{anon}kB, file-rss:{r.randint(1000, 900000)}kB, shmem-rss:{r.randint(0, 9000000)}kB, UID:0 pgtables:{r.randint(1000, 900000)}kB oom_score_adj:0",
                f"oom_reaper: reaped process {pid} ({comm}), now anon-rss:0kB, file-rss:0kB, shmem-rss:{r.randint(0, 90000)}kB"]
        fatal = "Out of memory: Killed process" if kind == "kernel" else "Memory cgroup out of memory: Killed process"
        use_unit = r.random() < 0.5
        if use_unit:
            fatal = pick(r, [fatal, "A process of this unit has been killed by the OOM killer.", "Failed with result 'oom-kill'."])
        return Failure("host.out-of-memory", phase, [], fatal, scope="kernel", kernel=kern, result="oom-kill",
                       systemd=["A process of this unit has been killed by the OOM killer."], precursor=pre, variant=kind)
    if kind == "memoryerror":
        exc = tb(head(c, phase) + c.frames([pick(r, [(f"{c.sp}/safetensors/torch.py", "load_file", "result[k] = f.get_tensor(k)"),
                                                     (f"{c.sp}/torch/serialization.py", "load", "return _load(", True),
                                                     (f"{c.sp}/numpy/core/_methods.py" if r.random() < 0.5 else f"{c.sp}/torch/_utils.py", "_rebuild_tensor", "t = torch.empty((0,), dtype=storage.dtype, device=storage._untyped_storage.device)")])])) + ["MemoryError"]
        return Failure("host.out-of-memory", phase, exc, "MemoryError", precursor=pre, variant=kind)
    if kind == "errno12":
        exc = tb(head(c, phase) + c.frames([pick(r, [(f"{c.sp.rsplit('/', 2)[0]}/multiprocessing/popen_fork.py", "_launch", "self.pid = os.fork()"),
                                                     (f"{c.sp}/torch/multiprocessing/reductions.py", "reduce_storage", "fd, size = storage._share_fd_cpu_()"),
                                                     (f"{c.sp}/safetensors/torch.py", "load_file", "with safe_open(filename, framework=\"pt\", device=device) as f:")])])) + [
            "OSError: [Errno 12] Cannot allocate memory"]
        return Failure("host.out-of-memory", phase, exc, "[Errno 12] Cannot allocate memory", precursor=pre, variant=kind)
    if kind == "cpualloc":
        n = r.randint(2, 64) * 1073741824
        exc = tb(head(c, phase) + c.frames([(f"{c.sp}/torch/nn/modules/module.py", "_apply", "param_applied = fn(param)"),
                                            (f"{c.sp}/torch/_tensor.py" if r.random() < 0.5 else f"{c.sp}/torch/utils/_device.py", "pin_memory" if r.random() < 0.5 else "__torch_function__", "return func(*args, **kwargs)")])) + [
            f"RuntimeError: [enforce fail at alloc_cpu.cpp:{r.choice([114, 117, 121])}] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {n} bytes. Error code 12 (Cannot allocate memory)"]
        return Failure("host.out-of-memory", phase, exc, "DefaultCPUAllocator: can't allocate memory", precursor=pre, variant=kind)
    req, have = gib(r, 100, 800), gib(r, 10, 90)
    exc = tb(head(c, "memory-plan") + c.frames([("sglang/srt/mem_cache/memory_pool_host.py", "__init__", "raise ValueError(")])) + [
        f"ValueError: Not enough host memory available. Requesting {req:.2f} GB but only have {have:.2f} GB free. Please reduce the size of the hierarchical cache."]
    return Failure("host.out-of-memory", "memory-plan", exc, "Not enough host memory available", precursor=pre, variant=kind)


# ------------------------------------------------------------------ hang.timeout
def _store_timeout(c: Ctx) -> Failure:
    """torch.distributed's TCPStore gave up waiting for the other ranks to join
    (a rendezvous deadline, not an NCCL collective)."""
    r = c.rng
    world = max(c.tp, 2) * pick(r, [1, 1, 2])
    to = pick(r, [300, 600, 601, 900, 1800])
    exc = tb(head(c, "launch") + c.frames([(f"{c.sp}/torch/distributed/c10d_logger.py", "wrapper", "func_return = func(*args, **kwargs)", True),
                                           (f"{c.sp}/torch/distributed/distributed_c10d.py", "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_tcp_rendezvous_handler", "store = _create_c10d_store(", True),
                                           (f"{c.sp}/torch/distributed/rendezvous.py", "_create_c10d_store", "return TCPStore(", True)])) + [
        f"torch.distributed.DistStoreError: Timed out after {to} seconds waiting for clients. {r.randint(1, world - 1)}/{world} clients joined."]
    return Failure("hang.timeout", "launch", exc, "seconds waiting for clients.", scope="rank0", result="exit-code", variant="store-timeout")


def f_hang(c: Ctx) -> Failure:
    r = c.rng
    pre = None
    if c.server == "sglang":
        kinds = ["watchdog", "watchdog", "health", "warmup-timeout", "store-timeout"] + (["systemd-start"] if c.journald else [])
        kind = pick(r, kinds)
        if kind == "store-timeout":
            return _store_timeout(c)
        if kind == "watchdog":
            to = pick(r, [300, 300, 600, 1800, 120])
            ln = f"Watchdog timeout (self.watchdog_timeout={to})" if c.gen != "new" else f"Scheduler watchdog timeout (self.watchdog_timeout={to}, self.soft=False)"
            if r.random() < 0.6:
                pre = Precursor([f"Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}. last_heartbeat time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"],
                                "Health check failed. Server couldn't get a response from detokenizer", "serving", style="log", lead=(60, float(to)))
            dump = [f"self.cur_batch.batch_size()={r.randint(1, 64)}, self.cur_batch.reqs[0].rid='{r.randbytes(16).hex()}', self.cur_batch.forward_mode=ForwardMode.{pick(r, ['DECODE', 'EXTEND', 'MIXED'])}",
                    "Pyspy dump for PID " + str(r.randint(2000, 99999)) + ":" if r.random() < 0.5 else "py-spy not found; skipping stack dump. Install with `pip install py-spy`."]
            return Failure("hang.timeout", "serving", [], ln, scope="log", log_line=ln, log_level="", pre=dump, pre_scope="log", precursor=pre, variant=kind)
        if kind == "health":
            ln = f"Health check failed. Server couldn't get a response from detokenizer for last {pick(r, [20, 20, 60, 120])} seconds. tic start time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}. last_heartbeat time: {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
            return Failure("hang.timeout", "serving", [], "Server couldn't get a response from detokenizer", scope="log", log_line=ln, log_level="", result="exit-code", variant=kind)
        if kind == "warmup-timeout":
            to = pick(r, [600, 1800, 120])
            exc = tb(c.frames([("sglang/srt/entrypoints/http_server.py", "_execute_server_warmup", "res = requests.post(", True),
                               (f"{c.sp}/requests/api.py", "post", "return request(\"post\", url, data=data, json=json, **kwargs)"),
                               (f"{c.sp}/requests/adapters.py", "send", "raise ReadTimeout(e, request=request)")])) + [
                f"requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port={c.port}): Read timed out. (read timeout={to})"]
            return Failure("hang.timeout", "warmup", exc, "Read timed out. (read timeout=", scope="warmup", variant=kind)
        return Failure("hang.timeout", pick(r, ["load-weights", "cuda-graph-capture", "kernel-jit"]), [], "Start operation timed out. Terminating.", scope="systemd",
                       systemd=["Start operation timed out. Terminating."], result="timeout", variant=kind)
    kinds = ["rpc", "rpc", "engine-start", "shm", "store-timeout"] + (["systemd-start"] if c.journald else [])
    kind = pick(r, kinds)
    if kind == "store-timeout":
        return _store_timeout(c)
    if kind in ("rpc", "shm"):
        if r.random() < 0.7 or kind == "shm":
            pre = Precursor(["No available shared memory broadcast block found in 60 second. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization)."],
                            "No available shared memory broadcast block found in 60 second", "serving", style="vlog", vfile="shm_broadcast.py", lead=(60, 600))
        meth = pick(r, ["execute_model", "sample_tokens", "get_output"])
        exc = tb(vllm_core_head(c, "serving")[:12] + c.frames([("vllm/v1/executor/multiproc_executor.py", "collective_rpc", "raise TimeoutError(f\"RPC call to {method} timed out.\") from e")])) + [
            f"TimeoutError: RPC call to {meth} timed out."]
        return Failure("hang.timeout", "serving", exc, f"TimeoutError: RPC call to {meth} timed out.", result="exit-code", precursor=pre, variant=kind)
    if kind == "engine-start":
        exc = tb(c.frames([("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "async_llm = AsyncLLM.from_vllm_config(", True),
                           ("vllm/v1/engine/core_client.py", "__init__", "with launch_core_engines(vllm_config, executor_class,"),
                           ("vllm/v1/engine/utils.py", "wait_for_engine_startup", "raise TimeoutError(\"Timed out waiting for engines to send\"")])) + [
            "TimeoutError: Timed out waiting for engines to send initial message on input socket."]
        return Failure("hang.timeout", pick(r, ["load-weights", "launch"]), exc, "Timed out waiting for engines to send initial message", scope="main", result="exit-code", variant=kind)
    return Failure("hang.timeout", pick(r, ["load-weights", "cuda-graph-capture", "kernel-jit"]), [], "Start operation timed out. Terminating.", scope="systemd",
                   systemd=["Start operation timed out. Terminating."], result="timeout", variant=kind)


BUILDERS = {
    "env.module-missing": f_module_missing,
    "env.library-missing": f_library_missing,
    "env.abi-mismatch": f_abi_mismatch,
    "env.gpu-arch-unsupported": f_gpu_arch,
    "env.driver-too-old": f_driver,
    "toolchain.compiler-missing": f_compiler_missing,
    "toolchain.compile-failed": f_compile_failed,
    "gpu.out-of-memory": f_gpu_oom,
    "gpu.illegal-access": f_illegal,
    "gpu.cuda-graph-capture": f_graph,
    "dist.nccl": f_nccl,
    "config.model-load": f_model_load,
    "config.invalid-argument": f_invalid_arg,
    "net.port-in-use": f_port,
    "host.out-of-memory": f_host_oom,
    "hang.timeout": f_hang,
}
LABELS = list(BUILDERS)
