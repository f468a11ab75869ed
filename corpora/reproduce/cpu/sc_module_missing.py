"""env.module-missing: real import failures."""
import importlib
import os
import sys
import textwrap

import common


def _pkg(root, name, files):
    """Create a small on-disk package tree `name` under root with given files."""
    for rel, body in files.items():
        p = os.path.join(root, name, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(textwrap.dedent(body))
    if root not in sys.path:
        sys.path.insert(0, root)


def nested_sgl_kernel():
    # an installed sgl_kernel without the compiled flash_ops submodule
    root = common.workdir("site-sglkernel")
    _pkg(root, "sgl_kernel", {"__init__.py": "__version__ = '0.3.9.post2'\n"})
    importlib.invalidate_caches()
    def load_attention_backend():
        from sgl_kernel.flash_ops import fwd  # noqa: F401
    load_attention_backend()


def vllm_C():
    root = common.workdir("site-vllm")
    _pkg(root, "vllm_stub", {"__init__.py": "", "_custom_ops.py": """
        import importlib
        def _load():
            return importlib.import_module('vllm_flash_attn._vllm_fa3_C')
        """})
    _pkg(root, "vllm_flash_attn", {"__init__.py": "__version__ = '2.7.4'\n"})
    importlib.invalidate_caches()
    import vllm_stub._custom_ops as ops
    ops._load()


def top_level_missing():
    import flashinfer  # noqa: F401  (not installed)


def triton_missing():
    def get_triton_kernel():
        import triton  # noqa: F401
        import triton.language as tl  # noqa: F401
    get_triton_kernel()


def cannot_import_torch():
    from torch.nn.attention import sdpa_kernel_v2  # noqa: F401


def cannot_import_numpy():
    from numpy.core.multiarray import _reconstruct_v3  # noqa: F401


def cannot_import_json():
    from json import JSONDecodeErrorV2  # noqa: F401


def cannot_import_transformers():
    from transformers import Qwen9ForCausalLM  # noqa: F401


def vendored_cute():
    # A package whose __init__ re-raises a vendored-component failure, like
    # SGLang's vendored FlashAttention CUTE interface.
    root = common.workdir("site-vendored")
    _pkg(root, "cutlass_dsl_stub", {
        "__init__.py": "",
        "cute/__init__.py": "",
        "cute/experimental/__init__.py": "from cutlass_dsl_stub._mlir_libs import _cutlass_ir  # compiled part missing\n",
    })
    _pkg(root, "sgl_attn_vendored", {"__init__.py": """
        try:
            from cutlass_dsl_stub.cute.experimental import tcgen05_copy
        except ImportError as e:
            raise ImportError(
                "Vendored FlashAttention CUTE is not available (cannot import flash_attn.cute)"
            ) from e
        """})
    importlib.invalidate_caches()
    import logging, pkgutil
    import cutlass_dsl_stub
    log = logging.getLogger("cutlass")
    def onerror(name):
        log.warning(f"Unexpected error during package walk: {name}")
    # real package walk; the failing subpackage import triggers onerror
    for _ in pkgutil.walk_packages(cutlass_dsl_stub.__path__, "cutlass_dsl_stub.", onerror=onerror):
        pass
    import time; time.sleep(1.2)
    import sgl_attn_vendored  # noqa: F401


VARIANTS = {
    "nested_sgl_kernel": nested_sgl_kernel,
    "vllm_C": vllm_C,
    "top_level_missing": top_level_missing,
    "triton_missing": triton_missing,
    "cannot_import_torch": cannot_import_torch,
    "cannot_import_numpy": cannot_import_numpy,
    "cannot_import_json": cannot_import_json,
    "cannot_import_transformers": cannot_import_transformers,
    "vendored_cute": vendored_cute,
}

if __name__ == "__main__":
    common.main(VARIANTS)
