"""A log that ends on error-level lines is a failure (issue 27 item 3: a failure is never "no
failure"): before readiness even when the program logged its clean-up between its error and its
exit; not after readiness by that alone. Lines no signature knows, so
that the rule itself decides (signatures off)."""
from __future__ import annotations

from pathlib import Path

from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source


def _verdict(tmp_path: Path, lines: list[str]) -> str:
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    from forensics.diagnosis.signatures import SignatureSet

    res = diagnose_source(Source(str(p), p), sset=SignatureSet([], "none"), use_classifier=False)
    return res["verdict"]


# llama.cpp's server: an error, its clean-up, then its exit on that error (a launch failure no
# signature of the set knows).
_CLEANUP = ["0.00.064.257 I cmn  common_param: common_params_print_info: verbosity = 3",
            "0.00.065.436 E srv         start: failed to open the model cache directory, errno 13",
            "0.00.065.441 I srv    operator(): operator(): cleaning up before exit...",
            "0.00.065.581 E srv  llama_server: exiting due to HTTP server error"]

_UP = ["INFO 06-01 12:00:00 [api_server.py:1895] vLLM API server version 0.11.0",
       "INFO:     Application startup complete.",
       'INFO:     127.0.0.1:50000 - "POST /v1/completions HTTP/1.1" 200 OK',
       "INFO 06-01 12:00:05 [metrics.py:540] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 12.2 tokens/s"]


def test_an_error_then_the_programs_clean_up_then_its_exit_is_a_failure(tmp_path):
    assert _verdict(tmp_path, _CLEANUP) == "failed"


def test_a_ready_server_whose_log_ends_on_an_error_line_is_not_called_failed_by_that_alone(tmp_path):
    # A ready server's last error line is mostly one request's (a session finished with an error,
    # an error reply streamed to a client): on corpora/public it called 4 healthy logs failed for 2
    # failures found, so after readiness only the death detector's shapes read the end.
    err = "ERROR 06-01 12:00:06 [serving_chat.py:665] Error in chat completion stream generator."
    assert _verdict(tmp_path, _UP + [err]) != "failed"


def test_a_ready_engines_loop_logging_the_bare_repr_of_what_ended_it_died(tmp_path):
    # vLLM V0's engine process logs the exception that ended its loop as a bare repr, then raises:
    # every later request fails (death_shapes.yaml: __bare_exception_repr__).
    died = "ERROR 06-01 12:00:06 [engine.py:163] KeyError('chatcmpl-2fdd35648efc418db366c6690c29c4da')"
    assert _verdict(tmp_path, _UP + [died]) == "failed"
