"""Issue 27 items 1 and 4 (ninth session): the proving line and the phase of an excerpt
without markers, read from the failing line itself; lines built here around the exact
wording the programs print (Python's assert and socketserver, ptxas, binutils ld, a
line that points at the error above, llama.cpp's warm-up run and its server's task
errors, a device runtime refusing a kernel launch), never copied from the corpora."""
from __future__ import annotations

from helpers import classify_lines as _run

SITE = "/usr/local/lib/python3.12/dist-packages"


def test_a_bare_assertion_error_gives_way_to_the_assert_statement():
    d = _run(["Traceback (most recent call last):",
              f'  File "{SITE}/myserver/models/attention.py", line 88, in __init__',
              "    assert self.num_heads % tp_size == 0",
              "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
              "AssertionError"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "assert self.num_heads % tp_size == 0"
    assert d["evidence"][0]["line"] == 5  # the exception's line: a quoted source line keeps none of its own
    assert any(e["text"] == "AssertionError" for e in d["evidence"][1:])
    # an assertion with its own message keeps it first
    d = _run(["Traceback (most recent call last):",
              f'  File "{SITE}/myserver/models/attention.py", line 88, in __init__',
              '    assert ok, "heads must divide"',
              "AssertionError: heads must divide"])
    assert d["evidence"][0]["text"] == "AssertionError: heads must divide"


def test_a_line_that_points_at_the_error_above_gives_way_to_it():
    d = _run(["CUDA error (/src/kernels/flash_fwd_launch_template.h:188): invalid argument",
              "",
              "2025-12-06 05:57:11.935 | ERROR | myapp.api:parse:306 - Engine core initialization failed. "
              "See root cause above. Failed core proc(s): {}"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("CUDA error (/src/kernels/flash_fwd_launch_template.h:188)")
    assert d["evidence"][1]["role"] == "wrapper"


def test_ptxas_own_error_comes_before_its_closing_words():
    d = _run(["ptxas /tmp/tmpxft_0001_00000000-10_gemm.compute_90.ptx, line 1203; error   : "
              "Instruction 'cvt with .e4m3x2' not supported on .target 'sm_75'",
              "ptxas fatal   : Ptx assembly aborted due to errors"])
    assert d["verdict"] == "failed"
    assert "not supported on .target 'sm_75'" in d["evidence"][0]["text"]


def test_the_linker_naming_a_file_it_cannot_read_proves_a_failed_build():
    d = _run(["[12/40] c++ -shared ops.o -o ops.so -L/usr/local/cuda/lib64 -lcurand",
              "FAILED: ops.so",
              "/usr/local/cuda/lib64/libcurand.so: file not recognized: File truncated",
              "collect2: error: ld returned 1 exit status",
              "ninja: build stopped: subcommand failed."])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].endswith("libcurand.so: file not recognized: File truncated")


def test_llama_cpp_warm_up_run_is_the_warm_up():
    d = _run(["llama_context: graph splits = 1",
              "common_init_from_params: warming up the model with an empty run - please wait ... "
              "(--no-warmup to disable)",
              "/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: ROCm error",
              "ggml_cuda_compute_forward: MUL_MAT failed",
              "ROCm error: invalid device function",
              "  current device: 0, in function ggml_cuda_compute_forward at /src/ggml-cuda.cu:2932"])
    assert d["verdict"] == "failed" and d["phase"] == "warmup"


def test_a_kernel_launch_the_runtime_refused_in_a_forward_pass_is_not_launch():
    # Nothing else says where: a missing kernel image found in ggml's forward (graph compute) is found
    # where kernels run, as a kernel's fault is.
    d = _run(["ggml_cuda_compute_forward: RMS_NORM failed",
              "CUDA error: no kernel image is available for execution on the device",
              "  current device: 0, in function ggml_cuda_compute_forward at /src/ggml-cuda.cu:2313",
              "/src/ggml-cuda.cu:72: CUDA error"])
    assert d["verdict"] == "failed" and d["phase"] == "serving"
    # without a forward pass named, the launch may be a start-up check's: launch, as before
    d = _run(["RuntimeError: CUDA error: no kernel image is available for execution on the device"])
    assert d["phase"] == "launch"
    # a driver that refuses the process at start-up stays at launch
    d = _run(["RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."])
    assert d["phase"] == "launch"


def test_llama_server_answering_a_request_with_an_error_was_serving():
    line = ("Mar 01 15:18:56 gpu-node-7 llama-server[4919]: srv    send_error: task id = {n}, error: request "
            "(65801 tokens) exceeds the available context size (65536 tokens), try increasing it")
    d = _run([line.format(n=n) for n in (120, 123, 126)])
    assert d["verdict"] == "ready" and d["phase"] == "serving"


def test_a_request_that_raised_in_python_socketserver_is_one_request():
    d = _run(["Starting httpd at 127.0.0.1 on port 8080...",
              '127.0.0.1 - - [02/Mar/2024 16:11:23] "POST /v1/chat/completions HTTP/1.1" 200 -',
              "----------------------------------------",
              "Exception occurred during processing of request from ('127.0.0.1', 55758)",
              "Traceback (most recent call last):",
              '  File "/usr/lib/python3.10/socketserver.py", line 316, in _handle_request_noblock',
              "    self.process_request(request, client_address)",
              '  File "/usr/lib/python3.10/socketserver.py", line 347, in process_request',
              "    self.finish_request(request, client_address)",
              '  File "/usr/lib/python3.10/socketserver.py", line 360, in finish_request',
              "    self.RequestHandlerClass(request, client_address, self)",
              '  File "/srv/app/server.py", line 120, in do_POST',
              "    body = json.loads(raw)",
              "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
              "----------------------------------------"])
    assert d["verdict"] == "ready" and d["phase"] == "serving"
    # binding the port at start-up runs in other socketserver methods: that failure is the server's
    d = _run(["Traceback (most recent call last):",
              '  File "/srv/app/server.py", line 200, in <module>',
              "    httpd = HTTPServer(('0.0.0.0', 8080), Handler)",
              '  File "/usr/lib/python3.10/socketserver.py", line 452, in __init__',
              "    self.server_bind()",
              '  File "/usr/lib/python3.10/socketserver.py", line 466, in server_bind',
              "    self.socket.bind(self.server_address)",
              "OSError: [Errno 98] Address already in use"])
    assert d["verdict"] == "failed"


def test_llama_cpp_running_out_while_building_its_context_is_the_memory_plan():
    # the weights are in (load_tensors); the KV cache or the compute buffers the graph allocator
    # reserves did not fit: the memory plan, though the allocation line reads like the loader's
    # (llama.cpp's common log: seconds since start, then the level letter)
    head = ["0.01.100.200 I load_tensors: loading model tensors, this can take a while... (mmap = true)",
            "0.02.100.200 I load_tensors: offloaded 49/49 layers to GPU",
            "0.02.300.100 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2720.00 MiB on device 0: "
            "cudaMalloc failed: out of memory"]
    for tail in (["0.02.300.105 E llama_kv_cache_init: failed to allocate buffer for kv cache",
                  "0.02.300.108 E llama_init_from_model: llama_kv_cache_init() failed for self-attention cache"],
                 ["0.02.300.105 E ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 296747136",
                  "0.02.300.106 E graph_reserve: failed to allocate compute buffers"]):
        d = _run(head + tail + ["0.02.400.000 E common_init_from_params: failed to create context with model 'm.gguf'",
                                "0.02.400.100 E main: exiting due to model loading error"])
        assert d["verdict"] == "failed" and d["root_cause"] == "gpu.out-of-memory" and d["phase"] == "memory-plan"


def test_a_compilers_error_on_a_line_a_warning_began_is_the_proving_line():
    # a library's advice printed without its newline, then nvcc's own error on the same line
    d = _run(["Warning: please use at least NVCC 12.9 for the best kernel performanceNVCC compilation failed: "
              "nvcc fatal   : Unsupported gpu architecture 'sm_100f'",
              "Traceback (most recent call last):",
              f'  File "{SITE}/mylib/jit.py", line 40, in build',
              "    compile_kernel(src)",
              'RuntimeError: Assertion error (csrc/jit/compiler.hpp:176): false and "NVCC compilation failed"'])
    assert d["verdict"] == "failed"
    assert "nvcc fatal   : Unsupported gpu architecture 'sm_100f'" in d["evidence"][0]["text"]


def test_a_build_tools_error_line_comes_before_the_summary_that_compilation_failed():
    d = _run(["[12:00:01] /src/model_lib/build.py:88: compiling model library",
              "error: unknown dtype `bool8`",
              "Traceback (most recent call last):",
              f'  File "{SITE}/mylib/interface/jit.py", line 124, in _run_jit',
              "    raise RuntimeError('Cannot find compilation output, compilation failed')",
              "RuntimeError: Cannot find compilation output, compilation failed"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "error: unknown dtype `bool8`"


def test_ollama_starting_a_runner_is_loading_a_model():
    d = _run(['time=2025-06-01T10:00:00.000Z level=INFO source=server.go:391 msg="starting llama server" '
              'cmd="/usr/lib/ollama/runners/cuda_v12/ollama_llama_server --model /root/.ollama/models/blobs/sha256-9f8e '
              '--ctx-size 8192 --port 40111"',
              'time=2025-06-01T10:00:00.010Z level=INFO source=server.go:591 msg="waiting for llama runner to start responding"',
              "/usr/lib/ollama/runners/cuda_v12/ollama_llama_server: error while loading shared libraries: libcudart.so.12: "
              "cannot open shared object file: No such file or directory",
              'time=2025-06-01T10:00:00.300Z level=ERROR source=sched.go:456 msg="error loading llama server" '
              'error="llama runner process has terminated: exit status 127"'])
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"


def test_tensorrt_llm_failing_once_its_engine_is_loaded_failed_loading_it():
    d = _run(["[TensorRT-LLM][INFO] Loaded engine size: 7421 MiB",
              "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: "
              "mismatched plugin field (/src/cpp/tensorrt_llm/plugins/common/plugin.cpp:120)"])
    assert d["verdict"] == "failed" and d["phase"] == "load-weights"


def test_a_failure_the_server_says_it_met_executing_a_request_is_serving():
    for line in ("[2025-06-01 12:00:01] Error executing request 5c1e: CUDA out of memory. Tried to allocate 80.00 MiB.",
                 "2025-06-01 12:00:01,000 - lmdeploy - ERROR - Engine loop failed with error: CUDA out of memory. "
                 "Tried to allocate 488.00 MiB."):
        d = _run(["[2025-06-01 12:00:00] Load weight end. type=LlamaForCausalLM, dtype=torch.float16", line])
        assert d["verdict"] == "failed" and d["phase"] == "serving", line


def test_a_compiler_run_the_program_reports_as_failed_is_the_compile_step():
    d = _run(["2024-09-21 16:17:37.000815:  4816  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with "
              "['neuronx-cc', 'compile', '--target=trn1', '--framework=XLA', '/tmp/work/model.hlo.pb', "
              "'--output', '/tmp/work/model.neff']: 2024-09-21T16:17:37Z [TEN404] Internal tensorizer error"])
    assert d["verdict"] == "failed" and d["phase"] == "kernel-jit"


def test_a_loader_restating_that_the_model_did_not_load_gives_way_to_the_reason_before_it():
    d = _run(["srv    load_model: loading model '/srv/models/qwen-7b.gguf'",
              "gguf_init_from_file_impl: invalid magic characters: 'PK\\x03\\x04', expected 'GGUF'",
              "llama_model_load: error loading model: llama_model_loader: failed to load model from /srv/models/qwen-7b.gguf",
              "srv    load_model: failed to load model, '/srv/models/qwen-7b.gguf'",
              "main: exiting due to model loading error"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("gguf_init_from_file_impl: invalid magic characters")


def test_restatements_printed_one_under_another_give_way_to_the_reason_above_them_all():
    # llama.cpp's older loader: the reason, then the loader's and its caller's restatements, each
    # saying only that the model (at a quoted path, or none) did not load
    d = _run(["llama.cpp: loading model from /srv/models/ggml-model-q4_1.bin",
              "error loading model: unexpectedly reached end of file",
              "llama_load_model_from_file: failed to load model",
              "llama_init_from_gpt_params: error: failed to load model '/srv/models/ggml-model-q4_1.bin'",
              "main: error: unable to load model"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "error loading model: unexpectedly reached end of file"


def test_a_restatement_over_a_cut_traceback_gives_way_to_a_reason_in_any_error_words():
    # the GGUF reader's reason names no "error" ("invalid magic number"), and the Python binding's cut
    # traceback after the restatements pushed them out of the lifetime's last lines
    d = _run(["gguf_init_from_file: invalid magic number 67676a74",
              "error loading model: llama_model_loader: failed to load model from /srv/models/llama-2-7b.ggmlv3.bin",
              "",
              "llama_load_model_from_file: failed to load model",
              "Traceback (most recent call last):",
              '  File "/srv/app/run.py", line 246, in <module>',
              "    main()",
              '  File "/usr/lib/python3/dist-packages/click/core.py", line 1157, in __call__',
              "    return self.main(*args, **kwargs)"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "gguf_init_from_file: invalid magic number 67676a74"


def test_initialising_a_named_context_failed_gives_way_to_the_reason_above_it():
    # whisper.cpp: each caller restates that the named thing did not load or initialise
    d = _run(["whisper_init_state: kv pad  size  =    2.36 MB",
              "map_rai_file: 32: Failed to open rai file '/srv/models/ggml-tiny-encoder-vitisai.rai'",
              "whisper_vitisai_init: Failed to mmap rai file '/srv/models/ggml-tiny-encoder-vitisai.rai'",
              "whisper_init_state: failed to load Vitis AI model from '/srv/models/ggml-tiny-encoder-vitisai.rai'",
              "error: failed to initialize whisper context"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("map_rai_file: 32: Failed to open rai file")


def test_an_allocation_of_a_size_that_failed_gives_way_to_the_runtimes_reason_beside_it():
    # ggml's Vulkan backend states the size; the Vulkan call's result code says why
    d = _run(["load_tensors: offloading 32 repeating layers to GPU",
              "ggml_vulkan: Device memory allocation of size 1879048192 failed.",
              "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
              "llama_model_load: error loading model: unable to allocate Vulkan0 buffer",
              "main: exiting due to model loading error"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory"
    assert any(e["text"].startswith("ggml_vulkan: Device memory allocation of size") for e in d["evidence"][1:])


def test_a_cut_tracebacks_first_line_is_listed_whatever_words_its_logger_put_before_the_header():
    # words that name no error ("Worker 3 stopped") are not offered as a carried message
    # (evidence_offered.carried_message): the line is then listed as the traceback's first line,
    # not dropped by both, which left only the frame
    d = _run(["INFO start", "[2026-03-14 09:00:12 TP0] Worker 3 stopped Traceback (most recent call last):",
              '  File "/opt/app/scheduler.py", line 3, in run', "    do()"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["line"] == 2 and d["evidence"][0]["text"].startswith("Worker 3 stopped Traceback")
