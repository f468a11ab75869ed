"""The failure builders' vocabulary, as data: module, library, symbol and
version names and the usage texts the programs print (one table per use)."""

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
NCCL_VERSIONS = ["2.21.5", "2.26.2", "2.27.3", "2.27.5", "2.28.3", "2.20.5"]
NEW_ARCHS = ["Qwen3NextForCausalLM", "Glm4vMoeForConditionalGeneration", "Qwen3OmniMoeForConditionalGeneration", "KimiK25ForCausalLM",
             "DeepseekV32ForCausalLM", "MiniMaxM2ForCausalLM", "Olmo3ForCausalLM", "SeedOssForCausalLM", "Ernie4_5_MoeForCausalLM",
             "HunYuanDenseV1ForCausalLM", "Step3VLForConditionalGeneration", "LongcatFlashForCausalLM", "BailingMoeV2ForCausalLM", "Apertus8BForCausalLM"]
SGLANG_USAGE = "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH] [--tokenizer-mode {auto,slow}] [--skip-tokenizer-init] [--load-format {auto,pt,safetensors,npcache,dummy,sharded_state,gguf,bitsandbytes,layered,remote}] [--trust-remote-code] [--dtype {auto,half,float16,bfloat16,float,float32}] [--kv-cache-dtype {auto,fp8_e5m2,fp8_e4m3}] [--quantization {awq,fp8,gptq,marlin,gptq_marlin,awq_marlin,bitsandbytes,gguf,modelopt,w8a8_int8,w8a8_fp8,moe_wna16}] [--context-length CONTEXT_LENGTH] [--device DEVICE] [--served-model-name SERVED_MODEL_NAME] [--chat-template CHAT_TEMPLATE] [--host HOST] [--port PORT] [--mem-fraction-static MEM_FRACTION_STATIC] [--tensor-parallel-size TENSOR_PARALLEL_SIZE] ..."
VLLM_USAGE = "usage: vllm serve [model_tag] [options]"
