"""What a server survives and where a healthy log is (issue 27 item 4): a metrics collector's
failure, a library the program calls optional, a thread that dies while the worker keeps
beating, a log that says nothing past launch."""
from __future__ import annotations

from pathlib import Path

import forensics

PUBLIC = Path(__file__).resolve().parents[2] / "corpora" / "public"

_TS_HEAD = (
    "2024-03-02T10:00:00,100 [INFO ] main org.pytorch.serve.ModelServer - Inference API bind to: http://0.0.0.0:8080\n"
    "2024-03-02T10:00:01,100 [DEBUG] W-9000-m_1.0 org.pytorch.serve.wlm.WorkerThread - W-9000-m_1.0 State change null -> WORKER_STARTED\n"
    "2024-03-02T10:00:05,523 [DEBUG] W-9000-m_1.0 org.pytorch.serve.wlm.WorkerThread - W-9000-m_1.0 State change WORKER_STARTED -> WORKER_MODEL_LOADED\n"
)
_METRICS_TB = (
    "2024-03-02T10:01:00,298 [ERROR] Thread-2 org.pytorch.serve.metrics.MetricCollector - Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.11/site-packages/ts/metrics/metric_collector.py", line 27, in <module>\n'
    "    system_metrics.collect_all(sys.modules['ts.metrics.system_metrics'], arguments.gpu)\n"
    '  File "/venv/lib/python3.11/site-packages/ts/metrics/system_metrics.py", line 64, in gpu_utilization\n'
    "    import nvgpu\n"
    "ModuleNotFoundError: No module named 'nvgpu'\n"
)


def test_a_metrics_collectors_traceback_is_not_the_servers_death():
    r = forensics.classify_text(_TS_HEAD + _METRICS_TB)
    assert r["verdict"] == "ready" and r["root_cause"] is None and r["phase"] == "ready"


def test_the_same_traceback_from_the_servers_own_logger_still_fails():
    r = forensics.classify_text(_TS_HEAD + _METRICS_TB.replace("org.pytorch.serve.metrics.MetricCollector", "MODEL_LOG"))
    assert r["verdict"] == "failed"


def test_a_library_the_program_calls_optional_is_no_failure():
    text = (
        "2024-03-02T10:00:01,100 [DEBUG] W-9000-m_1.0 org.pytorch.serve.wlm.WorkerThread - W-9000-m_1.0 State change null -> WORKER_STARTED\n"
        "2024-03-02T10:00:02,303 [WARN ] W-9000-m_1.0-stderr MODEL_LOG - 2024-03-02 10:00:02.302984: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory\n"
        "2024-03-02T10:00:02,304 [WARN ] W-9000-m_1.0-stderr MODEL_LOG - 2024-03-02 10:00:02.303053: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, please make sure the missing libraries mentioned above are installed properly.\n"
        "2024-03-02T10:00:03,500 [WARN ] W-9000-m_1.0-stderr MODEL_LOG - [nltk_data] Downloading package wordnet to /home/u/nltk_data...\n"
    )
    r = forensics.classify_text(text)
    assert r["verdict"] == "starting" and r["phase"] == "load-weights"


def test_a_log_with_no_step_past_launch_is_starting_at_launch():
    text = ("2025-05-26T15:30:33.178Z  INFO loader.find_and_load_service: Working directory: .\n"
            "2025-05-26T15:30:36.754Z  INFO __init__.resolve_current_platform_cls_qualname: Automatically detected platform cuda.\n")
    r = forensics.classify_text(text)
    assert r["verdict"] == "starting" and r["phase"] == "launch"


def test_a_worker_that_beats_after_a_requests_thread_died_stays_up():
    # batch-45/011: a generation thread's CUBLAS error on one request; the worker keeps sending
    # heart beats for minutes and is stopped by its operator.
    r = forensics.classify(PUBLIC / "batch-45" / "011.log")
    assert r["verdict"] == "ready" and r["root_cause"] is None


def test_heart_beats_after_requests_are_no_step_back_from_serving():
    text = (
        "2024-01-10 09:12:40 | INFO | model_worker | Loading the model vicuna-7b on worker 3f9a1c ...\n"
        "2024-01-10 09:13:00 | INFO | model_worker | Send heart beat. Models: ['vicuna-7b']. Semaphore: None. global_counter: 0\n"
        '2024-01-10 09:13:10 | INFO | stdout | INFO:     127.0.0.1:50566 - "POST /worker_generate_stream HTTP/1.1" 200 OK\n'
        "2024-01-10 09:13:40 | INFO | model_worker | Send heart beat. Models: ['vicuna-7b']. Semaphore: Semaphore(value=5, locked=False). global_counter: 1\n"
    )
    r = forensics.classify_text(text)
    assert r["verdict"] == "ready" and r["phase"] == "serving"


_LLAMA_SERVER = (
    "main: server is listening on http://0.0.0.0:8080 - starting the main loop\n"
    "srv  update_slots: all slots are idle\n"
    "srv    send_error: task id = 73000, error: request (65801 tokens) exceeds the available context size (65536 tokens), try increasing it\n"
    "srv    send_error: task id = 73003, error: request (65970 tokens) exceeds the available context size (65536 tokens), try increasing it\n"
)


def test_errors_a_server_sent_back_to_its_clients_are_not_where_it_died():
    from forensics.events.types import MESSAGE, Event
    from forensics.incidents import verdicts

    assert verdicts.replied_error(Event(MESSAGE, 3, _LLAMA_SERVER.splitlines()[2]))
    assert not verdicts.replied_error(Event(MESSAGE, 1, "srv  load_model: failed to load model, error: out of memory"))
    r = forensics.classify_text(_LLAMA_SERVER)
    assert r["verdict"] == "ready" and r["root_cause"] is None


def test_a_failure_scoped_to_one_request_is_not_where_the_server_died():
    from forensics.events.types import MESSAGE, Event
    from forensics.incidents import verdicts

    # SGLang's PD prefill server: one request's KV transfer to a decode peer that went away.
    pd = ("[2026-02-26 12:53:08 TP4] Prefill transfer failed for request rank=4 req.rid='af2f3f99db344fab' "
          "req.bootstrap_room=6989861766352545488 with exception KVTransferError(bootstrap_room=6989861766352545488): "
          "Decode instance could be dead, remote mooncake session 10.0.0.2:16324 is not alive")
    assert verdicts.replied_error(Event(MESSAGE, 1, pd))
    assert not verdicts.replied_error(Event(MESSAGE, 1, "[2026-02-26 12:53:08 TP4] Scheduler hit an exception: "
                                                        "RuntimeError: failed to allocate the KV cache for requests"))


def test_a_native_crash_handlers_report_is_a_death():
    text = ("I0310 06:25:38.962557 1 http_server.cc:4637] Started HTTPService at 0.0.0.0:8000\n"
            "Signal (11) received.\n"
            " 0# 0x000055815783D8AD in tritonserver\n"
            " 1# 0x00007F9D4E52F520 in /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    r = forensics.classify_text(text)
    assert r["verdict"] == "failed"
