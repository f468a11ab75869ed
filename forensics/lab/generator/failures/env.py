"""Builders for the environment family: a missing module or shared library, an ABI mismatch, a GPU architecture the build has no kernels for, a driver too old for the CUDA runtime."""

from __future__ import annotations

from ..catalog import Ctx, Failure, Precursor, import_frames, model_forward_frames, pick, tb
from .frames import cuda_error, head, torch_cuda_frames
from .vocab import ABI_SOS, IMPORT_NAMES, IMPORT_SITES, LIBS, LIB_SITES, MISSING_MODULES, SYMBOLS


def f_module_missing(c: Ctx) -> Failure:
    r = c.rng
    kind = r.choices(["mnf", "cannot-import", "cute", "mnf-model", "please-install"], weights=[5, 2, 2, 2, 3])[0]
    if kind == "cute":
        return _fa_cute(c)
    if kind == "mnf-model":
        return _model_module(c)
    site, src = pick(r, [s for s in IMPORT_SITES if s[0].startswith(c.server)])
    if kind == "please-install":
        return _please_install(c, site, src)
    return _import_failed(c, kind, site, src)


def _import_failed(c: Ctx, kind: str, site: str, src: str) -> Failure:
    """No module named X / cannot import name Y, at launch or later."""
    r = c.rng
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


def _please_install(c: Ctx, site: str, src: str) -> Failure:
    r = c.rng
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


def _model_module(c: Ctx) -> Failure:
    """A model file imports a package the install lacks."""
    r = c.rng
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


def _fa_cute(c: Ctx) -> Failure:
    """FlashAttention's vendored CUTE interface without flash_attn.cute."""
    r = c.rng
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
        pre = _abi_precursor(c, so, last)
    phase = r.choices(["launch", "load-weights", "kernel-jit", "warmup"], weights=[6, 2, 1, 1])[0]
    if phase == "launch":
        exc = tb(import_frames(c, [("sglang/srt/layers/activation.py" if c.server == "sglang" else "vllm/model_executor/layers/activation.py",
                                    "from sgl_kernel import silu_and_mul" if c.server == "sglang" else "from vllm import _custom_ops as ops"), (site, src)]) + [last])
        return Failure("env.abi-mismatch", phase, exc, fatal, scope="main", result="exit-code", precursor=pre, variant=kind)
    exc = tb(head(c, phase) + c.frames([(site, "<module>", src)]) + [last])
    return Failure("env.abi-mismatch", phase, exc, fatal, precursor=pre, variant=kind)


def _abi_precursor(c: Ctx, so: str, last: str) -> Precursor:
    """A warning that announces the broken extension: xFormers', vLLM's _C import, or g++ bounds."""
    r = c.rng
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
    return pre


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
    if kind == "no-kernel-image":
        return _no_kernel_image(c)
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
        return _ampere(c)
    if kind == "bf16":
        return _bf16(c)
    if kind == "cutlass":
        return _cutlass(c)
    phase = pick(r, ["memory-plan", "kernel-jit", "warmup"])
    exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([
        (f"{c.sp}/triton/runtime/jit.py", "run", "kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata,", True),
        (f"{c.sp}/triton/compiler/compiler.py", "__getattribute__", "self._init_handles()"),
        (f"{c.sp}/triton/compiler/compiler.py", "_init_handles", "self.module, self.function, self.n_regs, self.n_spills, self.n_max_threads = driver.active.utils.load_binary(", True)])
        + ["RuntimeError: Triton Error [CUDA]: device kernel image is invalid"])
    return Failure("env.gpu-arch-unsupported", phase, exc, "Triton Error [CUDA]: device kernel image is invalid", variant="triton-image")


def _cutlass(c: Ctx) -> Failure:
    r = c.rng
    phase = pick(r, ["memory-plan", "cuda-graph-capture", "warmup"])
    cap = pick(r, [120, 121, 103, 89])
    exc = tb(head(c, phase) + model_forward_frames(c) + c.frames([
        ("vllm/model_executor/layers/quantization/utils/w8a8_utils.py" if c.server == "vllm" else "sglang/srt/layers/quantization/fp8_utils.py",
         "cutlass_w8a8_scaled_mm", "output = ops.cutlass_scaled_mm(qinput,", True),
        ("vllm/_custom_ops.py" if c.server == "vllm" else "sgl_kernel/gemm.py", "cutlass_scaled_mm", "torch.ops._C.cutlass_scaled_mm(out, a, b, scale_a, scale_b, bias)")])
        + [f"NotImplementedError: No compiled cutlass_scaled_mm for CUDA device capability: {cap}"])
    pre = Precursor(torch_arch_warning(c, c.gpu.name if c.gpu.sm >= 100 else "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120 if c.gpu.sm < 100 else c.gpu.sm),
                    "is not compatible with the current PyTorch installation", "launch", style="raw", lead=(30, 300))
    return Failure("env.gpu-arch-unsupported", phase, exc, "No compiled cutlass_scaled_mm for CUDA device capability", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant="cutlass")


def _bf16(c: Ctx) -> Failure:
    r = c.rng
    phase = "launch"
    gpu = pick(r, [("Tesla T4", "7.5"), ("Tesla V100-SXM2-16GB", "7.0"), ("Quadro RTX 6000", "7.5"), ("NVIDIA GeForce RTX 2080 Ti", "7.5")])
    msg = (f"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu[0]} GPU has compute capability {gpu[1]}. "
           "You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.")
    exc = tb(head(c, "launch") + c.frames([("vllm/v1/worker/gpu_worker.py" if c.gen != "v06" else "vllm/worker/worker.py", "init_device", "_check_if_gpu_supports_dtype(self.model_config.dtype)"),
                                           ("vllm/platforms/cuda.py" if c.gen != "v06" else "vllm/worker/worker.py", "check_if_supports_dtype" if c.gen != "v06" else "_check_if_gpu_supports_dtype", "raise ValueError(", )]) + [msg])
    return Failure("env.gpu-arch-unsupported", phase, exc, "Bfloat16 is only supported on GPUs with compute capability of at least 8.0", variant="bf16")


def _ampere(c: Ctx) -> Failure:
    """FlashAttention 2 on a pre-Ampere GPU."""
    r = c.rng
    pre = None
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
    return Failure("env.gpu-arch-unsupported", phase, exc, "FlashAttention only supports Ampere GPUs or newer", capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant="ampere")


def _no_kernel_image(c: Ctx) -> Failure:
    """The build ships no kernel for this GPU; torch warned at start-up."""
    r = c.rng
    gname, sm = c.gpu.name, c.gpu.sm
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
    return Failure("env.gpu-arch-unsupported", phase, exc, fatal, capture_wrap=phase == "cuda-graph-capture", precursor=pre, variant="no-kernel-image")


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
