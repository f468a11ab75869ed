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
    # the log ends at the warning: nothing shows the process went past it
    cut = "".join(NEURON.splitlines(keepends=True)[:2])
    assert api.classify_text(cut)["incidents"][-1]["root_cause"] == "env.library-missing"
