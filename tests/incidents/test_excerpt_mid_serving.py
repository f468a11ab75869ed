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
