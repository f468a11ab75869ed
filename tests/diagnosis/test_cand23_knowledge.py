"""fix-cand23: knowledge true of the programs that the held-out misses lacked (issue 27): torch's glog
header with a path, a memory plan that left nothing for the KV cache, vLLM's model inspection
subprocess. Logs built here around the programs' own messages."""
from __future__ import annotations

import pytest

from forensics.diagnosis.early_warnings.resources import no_memory_left
from forensics.events.prefixes import peel_prefix
from helpers import classify_lines as _run


@pytest.mark.parametrize("line, message, level", [
    # torch's logger: glog's header with the file's path under site-packages, and dynamo's compile id
    ("E0106 03:23:01.677000 37645 site-packages/torch/_subclasses/fake_tensor.py:2721] [0/0] failed while "
     "attempting to run meta for npu.npu_quant_matmul.default",
     "failed while attempting to run meta for npu.npu_quant_matmul.default", "ERROR"),
    ("W0911 10:24:10.440000 1 torch/utils/cpp_extension.py:2425] TORCH_CUDA_ARCH_LIST is not set",
     "TORCH_CUDA_ARCH_LIST is not set", "WARNING"),
    ("W0101 00:00:00.000000 1234 torch/_dynamo/convert_frame.py:844] [0/8_1] torch._dynamo hit config.recompile_limit (8)",
     "torch._dynamo hit config.recompile_limit (8)", "WARNING"),
    # glog's own header, a bare file name, as before
    ("I0101 00:00:00.000000 1234 server.cc:12] model loaded", "model loaded", "INFO"),
])
def test_torch_glog_header_with_a_path_is_peeled(line: str, message: str, level: str) -> None:
    text, prefix = peel_prefix(line, 2025)
    assert text == message and prefix.level == level


def test_a_relayed_traceback_under_torch_glog_headers_is_read_as_one():
    head = "[rank0]:E0106 03:23:01.677000 37645 site-packages/torch/_subclasses/fake_tensor.py:2721] [0/0] "
    res = _run([
        "INFO 01-06 03:22:53 [model_runner_v1.py:2243] Loading model weights took 45.6571 GB",
        head + "failed while attempting to run meta for npu.npu_quant_matmul.default",
        head + "Traceback (most recent call last):",
        head + '  File "/usr/lib/python3.11/site-packages/torch/_subclasses/fake_tensor.py", line 2717, in _dispatch_impl',
        head + "    r = func(*args, **kwargs)",
        head + "RuntimeError: When output_dtype is float16, scale's dtype must be float32",
        "Traceback (most recent call last):",
        '  File "/srv/worker.py", line 10, in <module>',
        "    main()",
        "RuntimeError: When output_dtype is float16, scale's dtype must be float32",
    ])
    assert not res["evidence"][0]["text"].lstrip().startswith(("[rank0]", "E0106"))
    assert 'File "' not in res["evidence"][0]["text"].splitlines()[0]


@pytest.mark.parametrize("line, short", [
    ("(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB", True),
    ("INFO 10-18 09:54:36 [gpu_worker.py:298] Available KV cache memory: -0.12 GiB", True),
    ("INFO 05-02 10:00:00 [llm_engine.py:300] # GPU blocks: 0, # CPU blocks: 256", True),
    ("INFO 06-01 10:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 0 tokens", True),
    ("INFO 06-01 10:00:20 [gpu_worker.py:298] Available KV cache memory: 64.73 GiB", False),
    ("INFO 05-02 10:00:00 [llm_engine.py:300] # GPU blocks: 1200, # CPU blocks: 256", False),
    # SGLang's "avail mem" after its pool is what it left free on purpose, not the cache's budget
    ("[2025-06-01 10:00:00] Load weight end. type=Qwen3ForCausalLM, avail mem=-0.10 GB, mem usage=15.3 GB.", False),
    ("INFO 06-01 10:00:20 [kv_cache_utils.py:1091] Maximum concurrency for 4096 tokens per request: 0.50x", False),
])
def test_a_memory_plan_that_left_nothing_for_the_kv_cache(line: str, short: bool) -> None:
    assert no_memory_left(line) is short


def test_a_start_up_that_died_after_a_negative_kv_budget_ran_out_of_device_memory():
    """The traceback was cut after its first frames: no signature knows the failure, the plan before it does."""
    res = _run([
        "(EngineCore_0 pid=5839) INFO 08-20 18:03:50 [gpu_model_runner.py:1953] Model loading took 65.9651 GiB",
        "(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB",
        "(EngineCore_0 pid=5839) ERROR 08-20 18:04:22 [core.py:700] EngineCore failed to start.",
        "(EngineCore_0 pid=5839) ERROR 08-20 18:04:22 [core.py:700] Traceback (most recent call last):",
        '(EngineCore_0 pid=5839) ERROR 08-20 18:04:22 [core.py:700]   File "/srv/vllm/v1/engine/core.py", line 691, in run_engine_core',
    ])
    assert res["verdict"] == "failed" and res["root_cause"] == "gpu.out-of-memory"


def test_the_inspection_subprocess_error_gives_way_to_the_childs_exception():
    """vLLM's registry raises "Error raised in subprocess:" with the child's stderr as its message, then
    ModelConfig's validator says the architecture "failed to be inspected": the child's exception decides."""
    tag = "(APIServer pid=1) ERROR 06-10 23:08:47 [registry.py:963] "
    res = _run([
        tag + "Error in inspecting model architecture 'Gemma4ForConditionalGeneration'",
        tag + "Traceback (most recent call last):",
        tag + '  File "/usr/lib/python3.12/subprocess.py", line 502, in check_returncode',
        tag + "    raise CalledProcessError(self.returncode, self.args, self.stdout,",
        tag + "subprocess.CalledProcessError: Command '['/usr/bin/python3', '-m', 'vllm.model_executor.models.registry']' "
              "returned non-zero exit status 1.",
        tag + "",
        tag + "The above exception was the direct cause of the following exception:",
        tag + "",
        tag + "Traceback (most recent call last):",
        tag + '  File "/srv/vllm/model_executor/models/registry.py", line 870, in _run_in_subprocess',
        tag + '    raise RuntimeError(f"Error raised in subprocess:\\n"',
        tag + "RuntimeError: Error raised in subprocess:",
        tag + "Traceback (most recent call last):",
        tag + '  File "/srv/vllm/model_executor/layers/fla/ops/op.py", line 26, in <module>',
        tag + "    exp = tl.exp",
        tag + "AttributeError: module 'triton.language' has no attribute 'exp'",
        "(APIServer pid=1) Traceback (most recent call last):",
        '(APIServer pid=1)   File "/srv/vllm/entrypoints/openai/api_server.py", line 1920, in <module>',
        "(APIServer pid=1)     uvloop.run(run_server(args))",
        "(APIServer pid=1) pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        "(APIServer pid=1)   Value error, Model architectures ['Gemma4ForConditionalGeneration'] failed to be inspected. "
        "Please check the logs for more details.",
    ])
    assert res["evidence"][0]["text"].startswith("AttributeError: module 'triton.language' has no attribute 'exp'")
    assert res.get("signature") != "vllm.config-validation-error"
