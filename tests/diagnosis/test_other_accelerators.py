"""Issue 27: accelerators other than NVIDIA's. A device that runs out of memory or is lost, in
its own runtime's words (HIP, Vulkan through ggml, SYCL / Level Zero, Ascend CANN, libtpu), is a
failure of the right label, and the runtime's line is a proving line. Logs built here around
the exact strings the released programs print (see the signatures' references), never copied
from a corpus."""
from __future__ import annotations

import pytest

from forensics.incidents.outcome import is_error, proof_class
from forensics.diagnosis.decision.label_wording import says

from helpers import VLLM_START, classify_lines as _run

LLAMA_START = [
    "ggml_vulkan: Found 1 Vulkan devices:",
    "ggml_vulkan: 0 = AMD Radeon RX 6700 XT (RADV NAVI22) (radv) | uma: 0 | fp16: 1 | warp size: 64",
    "build: 4589 (eb7cf15a) with cc (GCC) 14.2.1 for x86_64-pc-linux-gnu",
    "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 15",
    "main: loading model",
    "llama_model_loader: loaded meta data with 35 key-value pairs and 292 tensors from /models/m.gguf (version GGUF V3 (latest))",
    "load_tensors: offloading 28 repeating layers to GPU",
]


def _vllm_tb(frames: list[str], exc: list[str]) -> list[str]:
    out = ["ERROR 07-01 09:40:00 [core.py:700] EngineCore failed to start.",
           "ERROR 07-01 09:40:00 [core.py:700] Traceback (most recent call last):"]
    for f in frames:
        out += [f'ERROR 07-01 09:40:00 [core.py:700]   File "/usr/local/lib/python3.12/site-packages/{f}", line 10, in run',
                "ERROR 07-01 09:40:00 [core.py:700]     x = y()"]
    return out + [f"ERROR 07-01 09:40:00 [core.py:700] {e}" for e in exc]


@pytest.mark.parametrize("line", [
    "EL0004: [PID: 3132] 2025-10-15-16:32:16.417.528 Failed to allocate memory.",
    "EZ9999: Inner Error!",
    "RuntimeError: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
    "ggml_vulkan: Device memory allocation of size 1037832192 failed.",
    "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
    "Callback: Queue 0x7f0000000000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29",
    "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm.",
    # ggml's CUDA backend built for HIP (ggml-cuda.cu's CUDA_CHECK prints the backend's name)
    "ROCm error: invalid device function",
    # ggml-vulkan's own check of a buffer against the device's limit
    "ggml_vulkan: Requested buffer size exceeds device buffer size limit: ErrorOutOfDeviceMemory",
    # Mesa RADV's amdgpu winsys prints only its failures
    "radv/amdgpu: Not enough memory for command submission.",
    "radv/amdgpu: The CS has been cancelled because the context is lost. This context is innocent.",
    # the HIP runtime (clr's hip_fatbin.cpp) finds no kernel built for the GPU
    ":1:hip_fatbin.cpp           :687 : 1143699 us:  No compatible code objects found for: gfx1152, value of "
    "HIP_FORCE_SPIRV_CODEOBJECT: 0",
])
def test_a_device_runtimes_own_error_is_an_error_that_proves(line):
    from forensics import parse

    ev = next(iter(parse(line + "\n")))
    assert is_error(ev)
    assert proof_class(line) == "runtime"


@pytest.mark.parametrize("line", [
    "INFO MODEL_PATH=/models/m.gguf LEVEL=3",
    "ggml_vulkan: Found 1 Vulkan devices:",
    "INFO 07-01 09:38:58 [tpu.py:100] TPU HBM per chip: 15.48 GiB",
    "ggml_vulkan: 0 = AMD Radeon RX 6700 XT (RADV NAVI22) (radv) | uma: 0 | fp16: 1 | warp size: 64",
    "ggml_cuda_init: found 1 ROCm devices:",
])
def test_an_accelerators_ordinary_line_is_no_error(line):
    from forensics import parse

    ev = next(iter(parse(line + "\n")))
    assert not is_error(ev)


def test_vulkan_out_of_device_memory_in_llama_server():
    d = _run(LLAMA_START + [
        "ggml_vulkan: Device memory allocation of size 1037832192 failed.",
        "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
        "alloc_tensor_range: failed to allocate Vulkan0 buffer of size 1037832192",
        "llama_model_load: error loading model: unable to allocate Vulkan0 buffer",
        "llama_model_load_from_file_impl: failed to load model",
        "common_init_from_params: failed to load model '/models/m.gguf'",
        "srv    load_model: failed to load model, '/models/m.gguf'",
        "main: exiting due to model loading error",
    ])
    assert d["verdict"] == "failed" and d["root_cause"] == "gpu.out-of-memory"


@pytest.mark.parametrize("exc,label", [
    (["RuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to reserve 10.55G at the bottom "
      "of memory. That was not possible. There are 7.86G free, 0B reserved, and 7.86G reservable."], "gpu.out-of-memory"),
    (["RuntimeError: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)"], "gpu.out-of-memory"),
    (["RuntimeError: HIP error: out of memory",
      "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."],
     "gpu.out-of-memory"),
    (["RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; 57.10 GiB already "
      "allocated; 57.10 GiB current active; 1.21 GiB free; 58.01 GiB reserved in total by PyTorch)"], "gpu.out-of-memory"),
    (["RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)"], "gpu.illegal-access"),
])
def test_a_device_failure_in_its_runtimes_words_gets_its_label(exc, label):
    d = _run(VLLM_START + _vllm_tb(["vllm/v1/worker/gpu_model_runner.py", "vllm/v1/worker/gpu_worker.py"], exc))
    assert d["verdict"] == "failed" and d["root_cause"] == label
    assert any(exc[0][:40] in e["text"] for e in d["evidence"][:2])


def test_the_runtimes_enum_names_say_whose_memory():
    assert says("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory") == ("gpu.out-of-memory",)
    assert says("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfHostMemory") == ("host.out-of-memory",)
    assert says("Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)") == ("gpu.out-of-memory",)


def test_torch_npus_pointer_gives_way_to_the_error_cann_appended():
    """torch_npu raises "The Inner error is reported as above" and appends CANN's own report to the
    exception's message: the error code's message (not its "Inner Error!" header) is the proving line."""
    d = _run(VLLM_START + _vllm_tb(["vllm/v1/worker/gpu_model_runner.py", "torch_npu/npu/utils.py"], [
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
        "working operator name is Cast.",
        "Since the operator is called asynchronously, the stacktrace may be inaccurate.",
        "[ERROR] 2025-07-01-09:40:00 (PID:12, Device:0, RankID:-1) ERR00100 PTA call acl api failed.",
        "EZ9999: Inner Error!",
        "EZ9999[PID: 12] 2025-07-01-09:40:00.000.001 (EZ9999):  Kernel task happen error, retCode=0x26, "
        "[aicore exception].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1493]",
    ]))
    assert d["verdict"] == "failed"
    assert "Kernel task happen error" in d["evidence"][0]["text"]
    assert any("Inner error is reported as above" in e["text"] for e in d["evidence"][1:])
