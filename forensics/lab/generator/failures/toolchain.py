"""Builders for the toolchain family: no compiler (nvcc, gcc, ninja) for a JIT build, and a JIT compile that fails."""

from __future__ import annotations

from collections.abc import Callable

from ..catalog import Ctx, Failure, Precursor, model_forward_frames, pick, tb
from .frames import attn_jit_frames, head


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
        return _nvcc_sh(c, kind, phase, jitdir, op, flashinfer_frames, common_head)
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
        return _missing_header(c, kind, phase, common_head)
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


def _missing_header(c: Ctx, kind: str, phase: str, common_head: list[str]) -> Failure:
    """Triton's launcher build (gcc) finds no Python.h or CUDA header."""
    r = c.rng
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


def _nvcc_sh(c: Ctx, kind: str, phase: str, jitdir: str, op: str, flashinfer_frames: list[str], common_head: list[str]) -> Failure:
    """FlashInfer's ninja build runs an nvcc that is not there."""
    r = c.rng
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


def _prec_cuda_runtime(c: Ctx) -> Precursor | None:
    if c.rng.random() < 0.5:
        return None
    return Precursor([f"No CUDA runtime is found, using CUDA_HOME='{pick(c.rng, ['/usr/local/cuda', '/usr', '/opt/cuda'])}'"],
                     "No CUDA runtime is found, using CUDA_HOME=", "launch", style="raw", lead=(30, 500))


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
        return _nvcc_build(c, kind, phase, jitdir, op, nvver, ninja_tail)
    if kind == "ptxas":
        return _ptxas(c, phase, common)
    if kind == "triton-comp":
        return _triton_comp(c, phase, common)
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


def _triton_comp(c: Ctx, phase: str, common: list[str]) -> Failure:
    r = c.rng
    kind = "triton-comp"
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


def _ptxas(c: Ctx, phase: str, common: list[str]) -> Failure:
    """Triton's bundled ptxas does not know the GPU."""
    r = c.rng
    kind = "ptxas"
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


def _nvcc_build(c: Ctx, kind: str, phase: str, jitdir: str, op: str, nvver: str, ninja_tail: Callable[[], list[str]]) -> Failure:
    """An nvcc compile inside FlashInfer's ninja build fails (code error, GNU version, CCCL headers, arch)."""
    r = c.rng
    pre = None
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
