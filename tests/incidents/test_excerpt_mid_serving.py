"""An excerpt that starts after the ready line (a paste of a serving server):
a traceback followed by more serving activity is one request's error, while
the same traceback at the end of the excerpt, or followed by a death, is not."""
from forensics import api

TRACEBACK = """\
(APIServer pid=1) ERROR 03-19 13:38:16 [serving_chat.py:240] Error in preprocessing prompt inputs
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/workspace/vllm/vllm/renderers/mistral.py", line 40, in safe_apply_chat_template
(APIServer pid=1)     raise ValueError(str(e)) from e
(APIServer pid=1) ValueError: Unexpected role 'tool' after role 'user'
"""
STATS = ("(APIServer pid=1) INFO 03-19 13:38:17 [loggers.py:259] Engine 000: Avg prompt throughput: 193.6 tokens/s, "
         "Avg generation throughput: 4.2 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, "
         "Prefix cache hit rate: 0.0%\n")
ACCESS = '(APIServer pid=1) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'


def verdicts(text: str) -> list[str]:
    return [inc["verdict"] for inc in api.classify_text(text)["incidents"]]


def test_traceback_then_serving_is_not_a_failure() -> None:
    assert "failed" not in verdicts(TRACEBACK + STATS + ACCESS)


def test_the_same_traceback_before_a_death_is_a_failure() -> None:
    death = "(APIServer pid=1) ERROR 03-19 13:38:18 [core_client.py:600] Engine core proc EngineCore_0 died unexpectedly, shutting down client.\n"
    assert "failed" in verdicts(STATS + TRACEBACK + death)


# vLLM on a Neuron host logs the missing CUDA library at WARNING and goes on loading the model.
NEURON = """INFO 06-29 18:27:05 [__init__.py:216] Automatically detected platform neuron.
WARNING 06-29 18:27:06 [interface.py:225] Failed to import from vllm._C: ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')
INFO 06-29 18:27:10 [core.py:74] Initializing a V1 LLM engine (v0.11.0) with config: model='google/gemma-3-12b-it'
INFO 06-29 18:27:21 [default_loader.py:267] Loading weights took 12.20 seconds
"""


def test_a_failure_message_logged_as_a_warning_that_the_process_went_past_is_not_the_failure() -> None:
    inc = api.classify_text(NEURON)["incidents"][-1]
    assert inc["verdict"] != "failed" and inc["root_cause"] is None


def test_the_same_warning_with_no_progress_after_it_is_the_failure() -> None:
    # the log ends at the warning: nothing shows the process went past it. The library is one the
    # environment installs (the CUDA runtime): libcuda, the driver's own, is no library-missing
    # failure by itself (signatures/env-library-missing.yaml: vLLM goes on wherever no driver is seen)
    cut = "".join(NEURON.splitlines(keepends=True)[:2]).replace("libcuda.so.1", "libcudart.so.12")
    assert api.classify_text(cut)["incidents"][-1]["root_cause"] == "env.library-missing"


def test_the_driver_library_missing_at_the_end_is_not_called_a_missing_library() -> None:
    cut = "".join(NEURON.splitlines(keepends=True)[:2])
    assert api.classify_text(cut)["incidents"][-1]["root_cause"] != "env.library-missing"


# SGLang's launch_server lives in entrypoints/http_server.py beside its request handlers; a
# traceback that unwound to runpy's top (python -m sglang.launch_server) ended the interpreter.
LAUNCH_TB = """\
[2025-10-21 20:46:04] server_args=ServerArgs(model_path='/models/DeepSeek-V3-0324', tp_size=8, port=30000)
Traceback (most recent call last):
  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code
    exec(code, run_globals)
  File "/sgl-workspace/sglang/python/sglang/launch_server.py", line 21, in <module>
    launch_server(server_args)
  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 1319, in launch_server
    tokenizer_manager, template_manager, scheduler_info = _launch_subprocesses(
  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/engine.py", line 722, in _init_tokenizer_manager
    tokenizer_manager = TokenizerManager(server_args, port_args)
  File "/sgl-workspace/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 230, in __init__
    self.tokenizer = get_tokenizer(server_args.tokenizer_path)
KeyError: 'deepseek_v3'
"""
# The same file's request handler, its traceback beginning in the ASGI server's loop, then serving.
REQUEST_TB = """\
[2025-10-21 20:50:01] ERROR:    Exception in callback
Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/starlette/routing.py", line 74, in app
    response = await f(request)
  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 520, in openai_v1_chat_completions
    return await raw_request.app.state.openai_serving_chat.handle_request(request, raw_request)
KeyError: 'deepseek_v3'
[2025-10-21 20:50:02] INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK
[2025-10-21 20:50:03] Decode batch. #running-req: 1, #token: 512, token usage: 0.01, gen throughput (token/s): 40.12, #queue-req: 0
"""


def test_a_traceback_unwound_to_the_main_program_is_a_failure_not_a_request() -> None:
    assert verdicts(LAUNCH_TB)[-1] == "failed"


def test_a_request_handlers_traceback_in_the_same_file_is_still_one_request() -> None:
    assert "failed" not in verdicts(REQUEST_TB)
