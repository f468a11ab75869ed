"""What the death detector reads (issue 27 item 3) for the bar after readiness: a healthy server that
served and was stopped, read up to its stop."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.decision import death
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.incidents import verdicts
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source


def death_event(text: str) -> Event:
    """One plain line as the parser gives it when no prefix names its level."""
    return Event(kind=kinds.MESSAGE, line=1, text=text)


def _incidents(tmp_path: Path, lines: list[str]) -> list:
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    kept: list = []
    diagnose_source(Source(str(p), p), use_classifier=False, keep_incidents=kept)
    return kept


_UP = ["INFO 06-01 12:00:00 [api_server.py:1895] vLLM API server version 0.11.0",
       "INFO:     Application startup complete.",
       'INFO:     127.0.0.1:50000 - "POST /v1/completions HTTP/1.1" 200 OK']


def test_a_stopped_servers_lines_before_its_stop_are_what_the_bar_after_readiness_learns_from(tmp_path):
    died = "ERROR 06-01 12:05:00 [client.py:300] Engine core proc EngineCore_0 died unexpectedly, shutting down client."
    stop = ["INFO:     Shutting down", "INFO:     Finished server process [4242]"]
    # (probes answered after it: an HTTP answer is no progress, ``_last_progress_up``)
    quiet = [f'INFO:     127.0.0.1:5000{k} - "GET /health HTTP/1.1" 200 OK' for k in range(1, 5)]
    [inc] = _incidents(tmp_path, _UP + [died] + quiet + stop)
    at = death.stopped_at(inc)
    assert at is not None and not death.consulted_up(inc)  # stopped: the detector itself does not read it
    assert [ev.text for ev in death.candidates(inc, up=True, end=at)] == [died.split("] ", 1)[1]]  # its message
    [inc] = _incidents(tmp_path, _UP + stop)  # nothing between the last answer and the stop
    assert death.stopped_at(inc) is not None and death.candidates(inc, up=True, end=death.stopped_at(inc)) == []
    [inc] = _incidents(tmp_path, _UP)  # never stopped: nothing to read up to
    assert death.stopped_at(inc) is None


def _verdict(tmp_path: Path, lines: list[str]) -> dict:
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    return diagnose_source(Source(str(p), p), use_classifier=False)


_SGLANG_UP = ["[2025-08-02 19:20:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
              "[2025-08-02 19:20:01] The server is fired up and ready to roll!",
              '[2025-08-02 19:24:24] INFO:     172.16.19.148:48308 - "POST /v1/completions HTTP/1.1" 200 OK']


def test_a_watchdog_that_fired_after_readiness_is_where_the_server_died(tmp_path):
    fired = "[2025-08-02 19:24:30 TP3] Watchdog timeout (self.watchdog_timeout=300)"
    assert death.says_it_died(death_event(fired))
    res = _verdict(tmp_path, _SGLANG_UP + [fired])
    assert res["verdict"] == "failed" and res["evidence"][0]["text"].startswith("Watchdog timeout")
    # its configuration named at start-up is no watchdog firing
    assert not death.says_it_died(death_event("[2025-08-02 19:20:00] watchdog_timeout=300, dist_timeout=None"))


def test_a_failed_health_check_and_a_router_with_no_backend_left_say_the_service_died():
    assert death.says_it_died(death_event("[2025-08-29 11:56:28] Health check failed. Server couldn't get a response "
                                          "from detokenizer for last 20 seconds."))
    assert death.says_it_died(death_event("Failed to select PD pair error=No available prefill workers"))
    assert not death.says_it_died(death_event('INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK'))


def test_a_dead_engines_exception_in_a_request_handler_is_the_engines_death(tmp_path):
    tb = ["ERROR 03-19 10:55:18 [serving_chat.py:677] Error in chat completion stream generator.",
          "ERROR 03-19 10:55:18 [serving_chat.py:677] Traceback (most recent call last):",
          'ERROR 03-19 10:55:18 [serving_chat.py:677]   File "/usr/local/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 359, in chat_completion_stream_generator',
          "ERROR 03-19 10:55:18 [serving_chat.py:677]     async for res in result_generator:",
          "ERROR 03-19 10:55:18 [serving_chat.py:677] vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not running."]
    res = _verdict(tmp_path, _UP + tb)
    assert res["verdict"] == "failed"
    # one request's own error (a bad argument) in the same handler is that request's: the server goes on
    bad = tb[:-1] + ["ERROR 03-19 10:55:18 [serving_chat.py:677] ValueError: max_tokens must be at least 1, got 0."]
    assert _verdict(tmp_path, _UP + bad)["verdict"] != "failed"


def test_an_error_after_the_shutdown_of_a_start_up_is_the_error_it_exits_on(tmp_path):
    # Triton's excerpt: it unloads what it loaded, then names why it exits
    down = ["I1110 14:00:09.525177 1 server.cc:260] Waiting for in-flight requests to complete.",
            "I1110 14:00:09.525194 1 model_repository_manager.cc:1230] unloading: cap:1",
            "I1110 14:00:09.541430 1 model_repository_manager.cc:1335] successfully unloaded 'cap' version 1",
            "I1110 14:00:10.525390 1 server.cc:298] Timeout 29: Found 0 live models and 0 in-flight non-inference requests"]
    res = _verdict(tmp_path, down + ["error: creating server: Internal - failed to load all models"])
    assert res["verdict"] == "failed" and res["evidence"][0]["text"].startswith("error: creating server")
    assert _verdict(tmp_path, down)["verdict"] != "failed"  # the same shutdown, ended quietly


def test_a_python_warning_is_a_warning_the_program_goes_on_after(tmp_path):
    warn = ("/opt/env/lib/python3.11/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
            "The NVIDIA driver on your system is too old (found version 6050).")
    assert verdicts.python_warning(death_event(warn))
    lines = ["Starting Flask server", "Running on local URL:  http://127.0.0.1:6969", warn,
             "  return torch._C._cuda_getDeviceCount() > 0", " * Serving Flask app 'routes'",
             "2024-08-04 12:13:30 | INFO | werkzeug | Press CTRL+C to quit"]
    assert _verdict(tmp_path, lines)["verdict"] != "failed"
    assert not verdicts.python_warning(death_event("RuntimeError: CUDA error: out of memory"))


def test_a_bracketed_warning_tag_is_below_error_level():
    assert not death.unhandled(death_event("[2026-02-05T07:15:19Z][inference.llama.cpp][W] failed to read current "
                                           "llama.cpp version: open x: The system cannot find the path specified."))
    assert death.unhandled(death_event("[2026-02-05T07:15:19Z][inference.llama.cpp][E] failed to load model"))


def test_a_shutdown_right_after_failing_answers_cleans_up_after_a_failure(tmp_path):
    # vLLM's API server fails the requests in flight once its engine is dead, then shuts itself down;
    # the device runtime's own error follows as the processes go
    failing = [f'INFO:     10.0.0.7:5274{k} - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'
               for k in range(3)]
    down = ["INFO:     Shutting down",
            "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:594 'an illegal memory access was encountered'",
            "INFO:     Waiting for application shutdown.", "INFO:     Application shutdown complete.",
            "INFO:     Finished server process [1]"]
    res = _verdict(tmp_path, _UP + failing + down)
    assert res["verdict"] == "failed" and "illegal memory access" in res["evidence"][0]["text"]
    # an operator's stop after the server answered 200: the same shutdown is no failure's cleanup
    [inc] = _incidents(tmp_path, _UP + ['INFO:     10.0.0.7:52750 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
                       + down[:1] + down[2:])
    assert not death.cleanup_of_a_failure(inc)


def test_a_stack_printed_to_show_where_a_warning_came_from_is_no_fatal_traceback(tmp_path):
    banner = ["A module that was compiled using NumPy 1.x cannot be run in",
              "NumPy 2.4.2 as it may crash. To support both 1.x and 2.x", "",
              "Traceback (most recent call last):  File \"/usr/local/bin/uvicorn\", line 6, in <module>",
              "    sys.exit(main())",
              '  File "/app/app/reranker_service.py", line 26, in <module>',
              "    import torch",
              '  File "/usr/local/lib/python3.12/site-packages/torch/nn/modules/transformer.py", line 20, in <module>',
              "    device: torch.device = torch.device(torch._C._get_default_device()),  # torch.device('cpu'),"]
    warn = ("/usr/local/lib/python3.12/site-packages/torch/nn/modules/transformer.py:20: UserWarning: Failed to "
            "initialize NumPy: _ARRAY_API not found (Triggered internally at /pytorch/torch/csrc/utils/tensor_numpy.cpp:84.)")
    goes_on = ["  device: torch.device = torch.device(torch._C._get_default_device()),  # torch.device('cpu'),",
               "INFO:     Started server process [1]", "INFO:     Waiting for application startup.",
               "Loading BGE-Reranker-v2-m3 model"]
    assert _verdict(tmp_path, banner + [warn] + goes_on)["verdict"] != "failed"
    # a warning of another place that merely follows the frames says nothing of where they came from
    other = ("/opt/conda/lib/python3.10/site-packages/huggingface_hub/file_download.py:1132: FutureWarning: "
             "`resume_download` is deprecated and will be removed in version 1.0.0.")
    [inc] = _incidents(tmp_path, banner + [other] + goes_on)
    [tb] = [t for t, _p, _a in inc.tracebacks]
    assert not verdicts.shows_a_warnings_origin(inc, tb)
    [inc] = _incidents(tmp_path, banner + [warn] + goes_on)
    assert verdicts.shows_a_warnings_origin(inc, inc.tracebacks[0][0])
    # the same frames ending in an exception of their own are the exception's, warning after it or not
    raised = banner + ["ImportError: numpy.core.multiarray failed to import", warn] + goes_on[:1]
    assert _verdict(tmp_path, raised)["verdict"] == "failed"


def test_a_dead_engines_exception_just_before_the_failing_answer_is_not_that_requests_own(tmp_path):
    # an excerpt that starts inside the handler's traceback: the 500 right after it is the dead engine's,
    # and the API server then shuts itself down (vLLM's front end once EngineCore is gone)
    tb = ["(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] Traceback (most recent call last):",
          '(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72]   File "/usr/local/lib/python3.12/site-packages/vllm/entrypoints/openai/chat_completion/serving.py", line 225, in render_chat_request',
          "(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72]     raise self.engine_client.dead_error",
          "(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
          '(APIServer pid=1) INFO:     10.1.6.81:16983 - "POST /v1/messages HTTP/1.1" 500 Internal Server Error',
          "(APIServer pid=1) INFO:     Shutting down"]
    res = _verdict(tmp_path, tb)
    assert res["verdict"] == "failed" and "EngineDeadError" in res["evidence"][0]["text"]
    # one request's own error there is that request's, as before
    bad = tb[:3] + ["(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] ValueError: max_tokens must be at least 1, got 0."] + tb[4:]
    assert _verdict(tmp_path, bad)["verdict"] != "failed"


_CHILD = ["Traceback (most recent call last):",
          '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
          "    self.run()",
          '  File "/usr/lib/python3.12/multiprocessing/process.py", line 108, in run',
          "    self._target(*self._args, **self._kwargs)",
          '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 334, in run_scheduler_process',
          "    scheduler.event_loop()"]


def test_a_child_process_that_died_is_not_survived_by_its_parents_answers(tmp_path):
    probes = ['[2026-01-28 08:52:46] INFO:     172.31.0.80:50570 - "GET /health HTTP/1.1" 200 OK'] * 3
    res = _verdict(tmp_path, _CHILD + ["RuntimeError: Scheduler terminated after 3 consecutive errors."] + probes)
    assert res["verdict"] == "failed" and res["evidence"][0]["text"].startswith("RuntimeError: Scheduler terminated")
    [inc] = _incidents(tmp_path, _CHILD + ["RuntimeError: boom"] + probes)
    assert verdicts.ended_a_child(inc.tracebacks[0][0])
    # an operator's Ctrl-C of the child is a stop, not its death
    assert _verdict(tmp_path, _CHILD + ["KeyboardInterrupt"] + probes)["verdict"] != "failed"


def test_a_chained_traceback_cut_before_its_exception_is_the_rest_of_the_requests_error(tmp_path):
    asgi = ['INFO:     10.0.0.1:50290 - "POST /v1/completions HTTP/1.1" 200 OK',
            "ERROR:    Exception in ASGI application",
            "Traceback (most recent call last):",
            '  File "/venv/lib/python3.10/site-packages/starlette/responses.py", line 238, in listen_for_disconnect',
            "    message = await receive()",
            '  File "/venv/lib/python3.10/site-packages/uvicorn/protocols/http/httptools_impl.py", line 553, in receive',
            "    await self.message_event.wait()",
            "ValueError: the client went away", "",
            "During handling of the above exception, another exception occurred:", "",
            "Traceback (most recent call last):"]
    assert _verdict(tmp_path, asgi)["verdict"] != "failed"
    [inc] = _incidents(tmp_path, asgi)
    assert verdicts.continues_a_request(inc, inc.tracebacks[-1][0])
    # after a start-up's own traceback the same cut one is no request's
    boot = ["Traceback (most recent call last):", '  File "/app/serve.py", line 3, in <module>', "    main()",
            "RuntimeError: no GPU", "", "During handling of the above exception, another exception occurred:", "",
            "Traceback (most recent call last):"]
    assert _verdict(tmp_path, boot)["verdict"] == "failed"


def test_a_cut_traceback_after_a_requests_with_no_chain_line_between_is_its_own(tmp_path):
    """Python prints "During handling ..." (or "The above exception ...") between chained tracebacks: a
    traceback right after a request's with none between is another report (here the engine loop's, the
    log cut while it was printed), not the rest of the request's."""
    request = ['INFO:     10.0.0.1:50290 - "POST /v1/completions HTTP/1.1" 200 OK',
               "ERROR:    Exception in ASGI application",
               "Traceback (most recent call last):",
               '  File "/venv/lib/python3.10/site-packages/starlette/responses.py", line 238, in listen_for_disconnect',
               "    message = await receive()",
               "ValueError: the client went away"]
    engine = ["Traceback (most recent call last):",
              '  File "/venv/lib/python3.10/site-packages/vllm/engine/async_llm_engine.py", line 800, in run_engine_loop',
              "    done, _ = await asyncio.wait("]
    for between in ([], [""]):
        assert _verdict(tmp_path, request + between + engine)["verdict"] == "failed", between
        [inc] = _incidents(tmp_path, request + between + engine)
        assert not verdicts.continues_a_request(inc, inc.tracebacks[-1][0])
    chained = request + ["", "During handling of the above exception, another exception occurred:", ""] + engine
    assert _verdict(tmp_path, chained)["verdict"] != "failed"


def test_a_supervisors_word_that_its_child_ended_is_a_death_at_any_level(tmp_path):
    # a process manager logs its child's end as its own routine (DEBUG, WARN), yet the child died
    assert death.reports_an_end(death_event("[DEBUG] <qwen-coder> cmd.Wait() returned error: signal: aborted (core dumped)"))
    assert death.reports_an_end(death_event("[WARN] <MiniMax-M2.5-AWQ> ExitError >> exit status 137, exit code: 137"))
    # a client's cancel, a clean exit: no end of a process
    assert not death.reports_an_end(death_event("INFO 12-26 20:02:43 engine.py:285] Aborted request chatcmpl-d3e0."))
    assert not death.reports_an_end(death_event("[DEBUG] <qwen-coder> cmd.Wait() returned error: exit status 0"))
    res = _verdict(tmp_path, _UP + ['[DEBUG] supervisor: backend "qwen" ended: signal: segmentation fault (core dumped)'])
    assert res["verdict"] == "failed" and "core dumped" in res["evidence"][0]["text"]


_BENTO_UP = ['[INFO] [cli] Starting production HTTP BentoServer from "_service:svc" listening on http://0.0.0.0:3000 (Press CTRL+C to quit)']


def test_a_supervisors_expired_start_up_deadline_is_the_end_at_any_level_and_any_score(tmp_path):
    # Ollama's scheduler words its runner's start-up timeout inside an info-level "Load failed"; BentoML's
    # API server at warning level: a deadline that exists to end a stuck start-up, whatever the level
    load_failed = ('time=2026-01-04T10:23:12.805-06:00 level=INFO source=sched.go:470 msg="Load failed" '
                   'model=/m error="timed out waiting for llama runner to start - progress 0.82 - "')
    assert death.decides(death_event(load_failed)) and death.reports_an_end(death_event(load_failed))
    assert not death.decides(death_event('time=2026-01-04T10:01:38.849-06:00 level=INFO source=server.go:1372 '
                                         'msg="waiting for server to become available" status="llm server loading model"'))
    assert not death.decides(death_event("--startup-timeout 600"))
    res = _verdict(tmp_path, _BENTO_UP + ["[WARNING] [api_server:llm-llama-service:1] Timed out waiting for runner to be ready"])
    assert res["verdict"] == "failed" and res["evidence"][0]["text"].endswith("Timed out waiting for runner to be ready")


def test_ucx_and_opencl_errors_are_a_runtimes_own():
    from forensics.incidents import outcome
    ucx = ("[1745700389.902821] [labinit01:6274 :0]     ib_mlx5_log.c:179  UCX  ERROR Local protection error on "
           "mlx5_0:1/RoCE (synd 0x4 vend 0x51 hw_synd 0/2)")
    assert outcome.proof_class(ucx) == "runtime"
    assert outcome.proof_class("[GPU] clFinish, error code: -5 CL_OUT_OF_RESOURCES") == "runtime"
    assert outcome.is_error(death_event("[GPU] clFinish, error code: -5 CL_OUT_OF_RESOURCES"))
    # a device listing's property names are no error
    assert outcome.proof_class("  CL_DEVICE_NAME: Intel(R) Arc(TM) A770 Graphics") is None
    assert not outcome.is_error(death_event("  CL_DEVICE_MAX_COMPUTE_UNITS: 512"))
    assert outcome.proof_class("[1745700389.9] [host:6274 :0] ucp_worker.c:1783 UCX  INFO  ep_cfg[0]: tag(rc_mlx5/mlx5_0:1)") is None
