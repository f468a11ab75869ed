"""One builder per taxonomy label: returns a :class:`~forensics.lab.generator.catalog.Failure` with the
exception text, the proving substring, the phase and an optional genuine
precursor.  Builders pick one of many catalog entries at random; the
vocabulary they draw from is data (:mod:`.vocab`)."""

from __future__ import annotations

from .config import f_invalid_arg, f_model_load
from .dist import f_nccl
from .env import f_abi_mismatch, f_driver, f_gpu_arch, f_library_missing, f_module_missing
from .gpu import f_gpu_oom, f_graph, f_illegal
from .hang import f_hang
from .host import f_host_oom
from .net import f_port
from .toolchain import f_compile_failed, f_compiler_missing

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
