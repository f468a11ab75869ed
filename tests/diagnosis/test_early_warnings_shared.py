"""Early warnings that carry across server families (issue 28): what the
program that printed a line shares with other servers, not one family's wording.

* line shapes many programs print: ggml's common log (llama.cpp and the servers
  built on it, ``0.00.747.142 W fn: ...``) and Go's logfmt (Ollama, containerd:
  ``level=WARN``);
* resource arithmetic on one line: memory needed against memory available,
  devices required beyond those there, a count of zero of what a start-up looks
  for, an engine that generates nothing while requests run (report after report);
* shared libraries' wording: a CUDA error code a program went on after, a peer
  connection that broke (torch c10d), an undefined symbol in a native library;
* subjects that relate a warning to a failure: a quoted identifier, the CPU's
  instruction set, a wait that ran out, a GPU generation and the architecture a
  start-up stated.

Lines are built around the messages the programs print (Ollama's scheduler
``server.go``, llama.cpp ``common/log.cpp``, torch ``TCPStore.cpp``, vLLM's
``llm_engine.py`` metrics, SGLang's scheduler metrics, CUDA's ``cuda.h``).
"""
from __future__ import annotations

from forensics.diagnosis import early_warnings as E
from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.linking import _stated_arch
from forensics.diagnosis.early_warnings.live import live_decision
from forensics.diagnosis.early_warnings.resources import STALLED, ZERO_COUNT
from forensics.diagnosis.early_warnings.scoring import Failure, _topic
from forensics.diagnosis.early_warnings.vocab import cuda_error_label
from forensics.events import types as kinds
from forensics.events.types import Event

EMPTY = Baseline(frozenset(), {}, {}, 0)  # no healthy start-up printed anything: every line is news


def _ev(text: str, level: str | None = None) -> Event:
    return Event(kinds.LOG, 7, text, level=level)


def test_ggml_and_logfmt_levels_are_read():
    assert E.text_level(_ev("0.00.747.142 W common_fit_params: failed to fit params to free device memory")) == "WARNING"
    assert E.text_level(_ev("0.24.923.820 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 887.99 MiB")) \
        == "ERROR"
    assert E.text_level(_ev("0.00.408.510 I srv    load_model: loading model 'x'")) is None
    assert E.text_level(_ev('time=2025-10-19T15:17:57.097+08:00 level=WARN source=server.go:540 msg="x"')) == "WARNING"
    assert E.text_level(_ev('time=2025-10-19T15:17:57.097+08:00 level=ERROR source=sched.go:1 msg="x"')) == "ERROR"
    assert E.text_level(_ev('time=2025-10-19T15:17:57.097+08:00 level=INFO source=sched.go:1 msg="x"')) is None


def test_logging_libraries_headers_are_read_wherever_a_prefix_puts_them():
    """TurboMind's bracketed level after its tag, logrus's text formatter (Docker Compose),
    onnxruntime's logger and glog's full header after a build step's prefix carry a level."""
    assert E.text_level(_ev("[TM][WARNING] [ProcessInferRequests] [117] total sequence length (62534 + 3002) "
                            "exceeds `session_len` (65536), `max_new_tokens` is truncated to 3001")) == "WARNING"
    assert E.text_level(_ev("[TM][INFO] [LlamaBatch] session 1 finished")) is None
    assert E.text_level(_ev('WARN[0000] The "MODEL_NAME" variable is not set. Defaulting to a blank string.')) \
        == "WARNING"
    assert E.text_level(_ev("ERRO[0012] error waiting for container: context canceled")) == "ERROR"
    assert E.text_level(_ev("2023-12-28 18:17:04.075921870 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:1987 "
                            "CreateInferencePybindStateModule] Init provider bridge failed.")) == "WARNING"
    assert E.text_level(_ev("2023-12-28 18:17:04.075921870 [E:onnxruntime:, inference_session.cc:1 Initialize] "
                            "boom")) == "ERROR"
    assert E.text_level(_ev("#17 3.494 W0610 11:42:35.430000 7 site-packages/torch/utils/cpp_extension.py:140] "
                            "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'")) == "WARNING"
    assert E.text_level(_ev("#17 3.494 I0610 11:42:35.430000 7 site-packages/torch/x.py:1] fine")) is None
    assert E.text_level(_ev("the run W0610 was fine")) is None


def test_memory_needed_against_available_on_one_line():
    ollama = ('time=2025-10-19T15:17:57.097+08:00 level=WARN source=server.go:540 msg="model request too large for '
              'system" requested="5.5 GiB" available="3.4 GiB" total="6.0 GiB" free="3.4 GiB" swap="0 B"')
    why = E.arithmetic(ollama, {})
    assert why is not None and "5.50 GiB needed" in why and "host memory" in why
    d = live_decision(_ev(ollama), base=EMPTY)
    assert d is not None and d["predicts"][0] == "host.out-of-memory"
    # the same program's healthy placement: needed below what is there
    assert E.arithmetic('msg="offload to gpu" layers=33 required="4765.5 MiB" used="4765.5 MiB" '
                        'available="73728.0 MiB" kv="1024.0 MiB"', {}) is None
    assert E.arithmetic("the model requires 120.0 GiB, 78.7 GiB of device memory free", {}) is not None
    # llama.cpp's parameter fit: a projection above the host's *total* memory cannot be fitted (Ollama
    # public batch-71/009's wording; live, host memory); one above the device's free memory is what
    # the fit corrects next (a healthy llama.cpp log of batch 31 projects 55217 MiB against 6968 free)
    over = "common_params_fit_impl: projected to use 3645 MiB of host memory vs. 2973 MiB of total host memory"
    assert "of total host memory" in (E.arithmetic(over, {}) or "")
    d = live_decision(_ev(over), base=EMPTY)
    assert d is not None and d["predicts"][0] == "host.out-of-memory"
    assert E.arithmetic("common_params_fit_impl: projected to use 924 MiB of host memory vs. 15730 MiB of total "
                        "host memory", {}) is None
    fit = "llama_params_fit_impl: projected to use 55217 MiB of device memory vs. 6968 MiB of free device memory"
    assert E.arithmetic(fit, {}) is None and live_decision(_ev(fit), base=EMPTY) is None
    # a threshold a program decides by is no need: it keeps the weights elsewhere and goes on
    assert E.arithmetic("keeps its DiT resident with 78.7 GiB of device memory available, below the 120.0 GiB "
                        "this model declares as its threshold", {}) is None


def test_devices_and_counts():
    assert E.arithmetic("The number of required NPUs exceeds the total number of available NPUs in the "
                        "placement group", {}) == "more devices required than are available"
    assert E.arithmetic("Placement group requires 8 GPUs but only 4 are available", {}) is not None
    assert E.arithmetic("Placement group requires 4 GPUs but only 8 are available", {}) is None
    assert E.arithmetic("INFO 11-12 22:55:02.833 ngc_profile.py:224] Detected 0 compatible profile(s).", {}) \
        == ZERO_COUNT
    assert E.arithmetic("Detected 2 compatible profile(s).", {}) is None
    d = live_decision(_ev("Detected 0 compatible profile(s)."), base=EMPTY)
    assert d is not None and d["predicts"] == ["env.gpu-arch-unsupported"]


def test_a_count_of_zero_that_healthy_start_ups_print_is_not_news():
    line = "Workers initialized: 0 total, 0 healthy"
    familiar = Baseline(frozenset({E.template(line)}), {}, {}, 10)
    assert live_decision(_ev(line), base=familiar) is None
    assert live_decision(_ev(line), base=EMPTY) is not None


def test_a_stall_is_two_reports_of_no_progress():
    vllm = ("INFO 02-03 13:14:04 llm_engine.py:706] Avg prompt throughput: 0.0 tokens/s, Avg generation "
            "throughput: 0.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs")
    assert E.arithmetic(vllm, {"stalls": 1}) is None  # one interval is a long prefill as often as not
    assert E.arithmetic(vllm, {"stalls": 2}) == STALLED
    assert E.arithmetic(vllm.replace("Running: 1", "Running: 0"), {"stalls": 2}) is None
    sglang = ("[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 2, #token: 300, token usage: 0.01, "
              "gen throughput (token/s): 0.00, #queue-req: 0")
    assert E.arithmetic(sglang, {"stalls": 2}) == STALLED
    assert E.arithmetic(sglang.replace("0.00, #queue", "41.20, #queue"), {"stalls": 2}) is None


def test_shared_library_wording_is_live():
    # a CUDA driver error code returned to a program that went on: the label it proves
    nvshare = "[NVSHARE][WARN]: cuCtxSynchronize returned CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: operation not permitted"
    assert cuda_error_label(nvshare) == "gpu.cuda-graph-capture"
    d = live_decision(_ev(nvshare), base=EMPTY)
    assert d is not None and d["predicts"] == ["gpu.cuda-graph-capture"]
    assert cuda_error_label("Forward compatibility was attempted on non supported HW "
                            "(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) cuInit()=804") is None
    # torch c10d: a peer connection that broke, not one still being tried
    c10d = ("[c10d] recvValue failed on SocketImpl(fd=25, addr=[host-a]:53759, remote=[host-a]:53758): Failed to "
            "recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?")
    d = live_decision(_ev(c10d, "WARNING"), base=EMPTY)
    assert d is not None and "dist.nccl" in d["predicts"]
    assert live_decision(_ev("[c10d] The client socket has failed to connect to [host-a]:55240 (system error: "
                             "10049).", "WARNING"), base=EMPTY) is None
    # an undefined symbol is news even where the program disables a feature and goes on
    ascend = ("Failed to import vllm_ascend_C:/usr/lib/python3.11/site-packages/vllm_ascend/vllm_ascend_C.cpython-311"
              "-aarch64-linux-gnu.so: undefined symbol: _ZN2fe13PlatFormInfos. Sleep mode will be disabled.")
    assert live_decision(_ev(ascend, "WARNING"), base=EMPTY) is not None
    assert live_decision(_ev("Failed to import flash_attn: libfoo.so: cannot open shared object file. Falling back "
                             "to the Triton kernels.", "WARNING"), base=EMPTY) is None


def test_subjects_that_relate_a_warning_to_its_failure():
    warn = E.subjects("The model class DeepseekV3ForCausalLM has not defined `packed_modules_mapping`, this may "
                      "lead to incorrect mapping of quantized or ignored modules")
    fail = E.subjects("AttributeError: 'AscendQuantConfig' object has no attribute 'packed_modules_mapping'")
    assert "ident:packed_modules_mapping" in warn & fail
    assert "fam:cpu-isa" in E.subjects("cpu_common.go:18: INFO CPU does not have vector extensions") \
        & E.subjects("SIGILL: illegal instruction")
    assert "fam:cpu-isa" not in E.subjects("CUDA error: an illegal instruction was encountered")
    assert "fam:timeouts" in E.subjects("Worker timeout. address: 127.0.0.1:27734, check count remaining 4...") \
        & E.subjects("asyncio.exceptions.TimeoutError")
    assert {"arch:sm_120", "arch:blackwell"} <= E.subjects("SymmMemCommunicator: Device capability 12.0 not "
                                                          "supported, communicator is not available.")


def test_a_failure_about_an_unnamed_architecture_is_about_the_stated_one():
    fail = Failure("env.gpu-arch-unsupported", 9, None, "RuntimeError: Assertion error (hyperconnection.hpp:56): "
                   "Unsupported architecture", frozenset())
    _stated_arch(fail, frozenset({"arch:blackwell", "backend:flashinfer"}))
    assert fail.subjects == frozenset({"arch:blackwell"})
    named = Failure("env.gpu-arch-unsupported", 9, None, "no kernel image is available for sm_90",
                    frozenset({"arch:sm_90"}))
    _stated_arch(named, frozenset({"arch:blackwell"}))
    assert named.subjects == frozenset({"arch:sm_90"})


def test_memory_shortage_wording_is_the_memory_topic():
    line = "0.00.747.142 W common_fit_params: failed to fit params to free device memory: n_gpu_layers already set"
    assert _topic("gpu.out-of-memory", E.subjects(line), line) >= 1.0
    assert _topic("gpu.out-of-memory", frozenset(), "Memory profiling takes 3.1 seconds") < 1.0


def test_a_figure_compared_with_a_limit_relates_a_warning_to_its_failure():
    # transformers' tokenizer warning (tokenization_utils_base.py) and TensorRT-LLM's KV-cache check
    warn = E.subjects("Token indices sequence length is longer than the specified maximum sequence length for this "
                      "model (3646 > 2048). Running this sequence through the model will result in indexing errors")
    fail = E.subjects("AssertionError: The max KV cache length of input sequences (3646) exceeds the KV cache "
                      "manager's maximum supported length (2048).")
    assert "num:3646" in warn & fail
    # a figure in parentheses that is compared with nothing is no subject (a pid, a count)
    assert not any(s.startswith("num:") for s in E.subjects("Started server process (1234)"))


def test_amd_gpu_management_library_is_the_driver_topic():
    # torch/cuda/__init__.py on ROCm: amdsmi is AMD's counterpart of NVML, which reads the driver
    line = "/opt/venv/lib/python3.10/site-packages/torch/cuda/__init__.py:814: UserWarning: Can't initialize amdsmi - Error code: 34"
    assert _topic("env.driver-too-old", E.subjects(line), line) >= 0.4
    assert _topic("env.driver-too-old", frozenset(), "Using AiterCustomAllreduce for ROCm.") == 0.0


def test_a_native_library_named_in_words_is_a_library():
    # koboldcpp's start-up (koboldcpp.py): the BLAS library it looked for, before its own .so fails to load
    line = "Warning: OpenBLAS library file not found. Non-BLAS library will be used."
    assert {s for s in E.subjects(line) if s.startswith("lib:")} == {"lib:openblas"}
    assert "lib:openblas" in E.subjects("OSError: libopenblas.so.0: cannot open shared object file")
    assert _topic("env.abi-mismatch", E.subjects(line), line) >= 0.6
    assert not any(s.startswith("lib:") for s in E.subjects("the library is missing"))


def test_the_running_servers_own_package_is_no_shared_subject():
    # vLLM's own start-up warnings name the package vllm, and so does every frame of its failures:
    # in a vLLM log that is no relation (a plugin of it, vllm_ascend, neither). A compiled part of it
    # (vllm_ascend_C) still is one.
    from forensics.diagnosis.early_warnings.candidates import Candidate
    from forensics.diagnosis.early_warnings.scoring import _own_package, score_candidate

    fail = Failure("config.model-load", 20, None, 'File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/'
                   'model_loader/utils.py", line 120, in initialize_model\nValueError: bad model',
                   E.subjects("vllm.model_executor.model_loader ValueError: bad model"))
    cand = Candidate(_ev("/usr/local/lib/python3.12/dist-packages/vllm/connections.py:8: RuntimeWarning: "
                         "Failed to read commit hash", "WARNING"), "WARNING")
    _, reasons_other, _ = score_candidate(cand, fail, EMPTY, {}, server=None)
    _, reasons_vllm, _ = score_candidate(cand, fail, EMPTY, {}, server="vllm")
    assert any("same package as the failure: vllm" in r for r in reasons_other)
    assert not any("same package" in r for r in reasons_vllm)
    assert _own_package("vllm_ascend", "vllm") and not _own_package("vllm_ascend_c", "vllm")
    assert not _own_package("vllm", "sglang") and not _own_package("vllm", None)


def test_the_running_servers_own_module_one_generic_layer_down_is_no_shared_subject():
    # SGLang's start-up notice that an optional model file did not import names sglang.srt, and so does
    # every frame of an SGLang failure: in an SGLang log that is no relation. A module of the server that
    # says more (vllm._C, its compiled ops) still is one.
    from forensics.diagnosis.early_warnings.candidates import Candidate
    from forensics.diagnosis.early_warnings.scoring import _server_itself, score_candidate

    fail = Failure("gpu.out-of-memory", 40, None, 'File "/sgl-workspace/sglang/python/sglang/srt/model_executor/'
                   'model_runner.py", line 300, in init_memory_pool\nRuntimeError: Not enough memory',
                   E.subjects("sglang.srt.model_executor.model_runner RuntimeError: Not enough memory"))
    cand = Candidate(_ev("Ignore import error when loading sglang.srt.models.mimo_v2: No module named 'torchcodec'",
                         None), None)
    _, reasons_other, _ = score_candidate(cand, fail, EMPTY, {}, server=None)
    _, reasons_sglang, _ = score_candidate(cand, fail, EMPTY, {}, server="sglang")
    assert any("sglang.srt" in r for r in reasons_other)
    assert not any("sglang.srt" in r for r in reasons_sglang)
    assert _server_itself("mod:sglang.srt", "sglang.srt", "sglang")
    assert not _server_itself("mod:vllm._c", "vllm._c", "vllm")
    assert not _server_itself("mod:sglang.srt", "sglang.srt", "vllm")
