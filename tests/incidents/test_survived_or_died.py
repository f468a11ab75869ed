"""Issue 27 (failures not seen, healthy logs called failed): what a server survives (one
request's error, a client's error status, a warning it went on from, an extension that failed
to load before it said again that it is up) and what ends a start-up without an error of its
own (the interpreter's resource tracker cleaning up)."""
from __future__ import annotations

from helpers import VLLM_START, classify_lines as _run

XINF = "/opt/conda/lib/python3.11/site-packages/xinference"


def _worker_error(message: str) -> list[str]:
    return [
        f"2025-03-01 10:00:00,100 xinference.model.llm.transformers.utils 3101 ERROR    Internal error for batch inference: {message}.",
        "Traceback (most recent call last):",
        f'  File "{XINF}/model/llm/transformers/utils.py", line 480, in batch_inference_one_step',
        "    _batch_inference_one_step_internal(",
        '  File "/opt/conda/lib/python3.11/site-packages/bitsandbytes/backends/cuda.py", line 360, in igemmlt',
        f'    raise Exception("{message}")',
        f"Exception: {message}",
    ]


def _request_report(message: str) -> list[str]:
    return [
        f"2025-03-01 10:00:00,110 xinference.api.restful_api 3001 ERROR    Chat completion stream got an error: [address=0.0.0.0:41000, pid=3101] {message}",
        "Traceback (most recent call last):",
        f'  File "{XINF}/api/restful_api.py", line 2010, in stream_results',
        "    async for item in iterator:",
        f'  File "{XINF}/core/model.py", line 671, in _queue_consumer',
        "    raise RuntimeError(res[len(XINFERENCE_STREAMING_ERROR_FLAG) :])",
        f"RuntimeError: [address=0.0.0.0:41000, pid=3101] {message}",
    ]


def test_a_workers_error_that_the_request_handler_reports_failed_that_request_only():
    message = "matmul kernel returned an error status"
    assert _run(_worker_error(message) + _request_report(message))["verdict"] != "failed"
    # The same error with nothing that answered a request: it ended the run.
    assert _run(_worker_error(message))["verdict"] == "failed"
    # A request handler reporting something else says nothing about this error.
    assert _run(_worker_error(message) + _request_report("the engine is dead"))["verdict"] == "failed"


def test_a_clients_error_status_is_the_servers_answer_not_its_failure():
    lines = [
        "ready target",
        "Traceback (most recent call last):",
        '  File "/home/ci/bench/check.py", line 40, in <module>',
        "    requests.post(URL + '/flush_cache', timeout=60).raise_for_status()",
        '  File "/opt/venv/lib/python3.12/site-packages/requests/models.py", line 1024, in raise_for_status',
        "    raise HTTPError(http_error_msg, response=self)",
        "requests.exceptions.HTTPError: 400 Client Error: Bad Request for url: http://127.0.0.1:30000/flush_cache",
    ]
    assert _run(lines)["verdict"] != "failed"
    refused = lines[:-1] + ["requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=30000): "
                            "Max retries exceeded with url: /flush_cache (Caused by NewConnectionError('Connection refused'))"]
    assert _run(refused)["verdict"] == "failed"  # nothing answered: not a server's reply



def test_uvicorns_asgi_report_before_a_traceback_that_lost_its_frames_is_one_requests():
    """A logger that prefixes every line (tabbyAPI's) strips the frames' indentation, so the
    traceback does not take uvicorn's "Exception in ASGI application" as its carrier: the line
    before it still says one request failed."""
    stamp = "2025-05-07 14:50:47.950 ERROR:    "
    lines = [
        '2025-05-07 14:50:47.943 INFO:     127.0.0.1:58408 - "POST /v1/chat/completions HTTP/1.1" 500',
        stamp + "Exception in ASGI application",
        stamp + "Traceback (most recent call last):",
        stamp + '  File "/opt/venv/lib/python3.12/site-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi',
        stamp + "    result = await app(  # type: ignore[func-returns-value]",
    ]
    assert _run(lines)["verdict"] != "failed"
    # The same traceback with no such report before it, in a start-up, is a failure.
    started = [VLLM_START[0], stamp + "Traceback (most recent call last):", *lines[3:],
               stamp + "RuntimeError: CUDA error: an illegal memory access was encountered"]
    assert _run(started)["verdict"] == "failed"

WEBUI_UP = [
    "main: server is listening on http://127.0.0.1:40123 - starting the main loop",
    "10:00:05-100000 INFO     Loading the extension \"memory\"",
    "10:00:05-200000 ERROR    Failed to load the extension \"memory\".",
    "Traceback (most recent call last):",
    '  File "/srv/text-generation-webui/modules/extensions.py", line 37, in load_extensions',
    '    extension = importlib.import_module(f"extensions.{name}.script")',
    '  File "/srv/text-generation-webui/extensions/memory/script.py", line 12',
    "    import chromadb",
    "ModuleNotFoundError: No module named 'chromadb'",
]


def test_a_server_that_says_again_it_is_up_after_a_traceback_survived_it():
    assert _run(WEBUI_UP + ["", "Running on local URL:  http://127.0.0.1:7860"])["verdict"] != "failed"


def test_a_warning_level_failure_message_the_program_went_on_from_is_not_the_failure():
    warned = VLLM_START + [
        "(EngineCore_DP0 pid=43) WARNING 06-29 18:27:21 [interface.py:225] Failed to import from vllm._C: "
        "ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')",
        "(EngineCore_DP0 pid=43) INFO 06-29 18:27:21 [parallel_state.py:1234] world_size=1 rank=0 local_rank=0 backend=gloo",
        "(EngineCore_DP0 pid=43) INFO 06-29 18:27:22 [parallel_state.py:1445] rank 0 in world size 1 is assigned as DP rank 0",
    ]
    assert _run(warned)["verdict"] != "failed"
    # Only the warning's own continuation lines after it: nothing says the program went on.
    cut = VLLM_START + [
        "WARNING 05-15 15:12:09 model_runner_base.py:143] Failed to pickle inputs of failed execution: CUDA error: unspecified launch failure",
        "WARNING 05-15 15:12:09 model_runner_base.py:143] For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    ]
    assert _run(cut)["verdict"] == "failed"


LEAK = "/usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be 4 leaked semaphore objects to clean up at shutdown"


def test_the_resource_tracker_cleaning_up_during_start_up_ends_it():
    loading = VLLM_START + [
        "(EngineCore_DP0 pid=9) INFO 07-01 09:39:00 [gpu_model_runner.py:2000] Starting to load model m...",
        "Loading safetensors checkpoint shards:  40% Completed | 4/10 [00:40<01:00, 10.00s/it]",
        LEAK, "  warnings.warn('resource_tracker: There appear to be %d '",
    ]
    d = _run(loading)
    assert d["verdict"] == "failed"
    assert "leaked semaphore objects" in d["evidence"][0]["text"]


def test_the_resource_tracker_after_a_clean_stop_of_a_ready_server_is_no_failure():
    lines = VLLM_START + [
        "INFO:     Application startup complete.",
        "INFO:     127.0.0.1:43692 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
        "INFO:     Shutting down",
        "INFO:     Finished server process [1200]",
        LEAK,
    ]
    assert _run(lines)["verdict"] != "failed"


def test_an_excerpt_that_begins_at_the_operators_stop_is_in_the_shutdown_phase():
    lines = ["^C(EngineCore pid=42) INFO 05-26 19:19:56 [core.py:1155] [shutdown] EngineCore: trigger received signal=SIGINT",
             "(APIServer pid=41) INFO 05-26 19:19:56 [launcher.py:100] [shutdown] API server: shutdown triggered"]
    d = _run(lines)
    assert d["verdict"] != "failed" and d["phase"] == "shutdown"


TRITON_UP = [
    "I0301 10:00:00.000000 1 server.cc:674] Started server",
    "I0301 10:00:00.100000 1 model_lifecycle.cc:473] loading: llama:1",
]


def test_tritons_model_load_failures_are_failures_named_by_their_reason():
    backend = TRITON_UP + [
        "E0301 10:00:01.000000 1 model_lifecycle.cc:654] \"failed to load 'llama' version 1: Invalid argument: "
        "unable to find backend library for backend 'tensorrtllm', try specifying runtime on the model configuration.\"",
        "I0301 10:00:01.000100 1 model_lifecycle.cc:789] \"failed to load 'llama'\"",
        "I0301 10:00:01.100000 1 python_be.cc:2249] \"TRITONBACKEND_ModelInstanceInitialize: bls_0_0 (CPU device 0)\"",
    ]
    d = _run(backend)
    assert (d["verdict"], d["root_cause"]) == ("failed", "env.library-missing")
    shape = TRITON_UP + [
        "E0301 10:00:01.000000 1 model_lifecycle.cc:621] failed to load 'yolo' version 1: Invalid argument: model 'yolo', "
        "tensor 'images': the model expects 4 dimensions (shape [1,3,640,640]) but the model configuration specifies "
        "3 dimensions (shape [3,640,640])",
    ]
    d = _run(shape)
    assert (d["verdict"], d["root_cause"]) == ("failed", "config.model-load")


def test_an_ngc_containers_cuda_check_names_the_cuda_error():
    lines = ["ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be available.",
             "   [[ System has unsupported display driver / cuda driver combination (error 803) ]]", "   "]
    d = _run(lines)
    assert (d["verdict"], d["root_cause"]) == ("failed", "env.driver-too-old")
    assert "(error 803)" in d["evidence"][0]["text"]


def test_a_native_backtrace_is_where_an_error_was_raised_its_message_is_the_line_above():
    frames = [
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:686 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 56 (0x7f0a1c2d3e54 in libc10.so)",
        "frame #1: void c10d::tcputil::recvBytes<unsigned int>(int, unsigned int*, unsigned long) + 352 (0x7f0a2b1f1d8 in libtorch_cpu.so)",
        "frame #2: c10d::TCPStore::ping() + 200 (0x7f0a2b1daa8 in libtorch_cpu.so)",
    ]
    lines = VLLM_START + [
        "[W1028 11:51:17.703484000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host 10.0.0.2:29500 "
        "- retrying (try=10, timeout=1800000ms, delay=30805ms): Failed to recv, got 0 bytes.",
        *frames,
    ]
    d = _run(lines)
    if d["verdict"] == "failed":  # (whether the learned detector calls it is its own threshold's business)
        assert "TCP client failed to connect" in d["evidence"][0]["text"], d["evidence"]
