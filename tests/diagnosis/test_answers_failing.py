"""A server that still listens after an error and answers only 5xx (issue 27 item 3): failed at that error;
one request's exception answered 500, or a 5xx with 2xx answers after the error, is no death."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source

_FLASK = [" * Serving Flask app 'serve_model'", " * Debug mode: off",
          " * Running on http://127.0.0.1:1235", "Press CTRL+C to quit"]
_LOAD_ERROR = "2026-01-29 13:08:11,512 ERROR model_server: Error loading model: no registered model version found"


def _diagnose(tmp_path: Path, lines: list[str]) -> dict:
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    res = diagnose_source(Source(str(p), p), use_classifier=False)
    return json.loads(json.dumps(res, default=str))


def _answer(status: int, path: str = "/invocations", sec: int = 20) -> str:
    return f'127.0.0.1 - - [29/Jan/2026 13:08:{sec}] "POST {path} HTTP/1.1" {status} -'


def test_a_model_that_failed_to_load_behind_a_server_that_still_listens_is_failed(tmp_path):
    res = _diagnose(tmp_path, [_LOAD_ERROR] + _FLASK + [_answer(500), _answer(500, sec=21)])
    assert res["verdict"] == "failed"
    assert "Error loading model" in res["evidence"][0]["text"]


def test_answers_that_went_on_succeeding_after_the_error_are_no_death(tmp_path):
    res = _diagnose(tmp_path, [_LOAD_ERROR] + _FLASK + [_answer(500), _answer(200, sec=21)])
    assert res["verdict"] != "failed"
    res = _diagnose(tmp_path, _FLASK + [_answer(200), _LOAD_ERROR, _answer(200, sec=21), _answer(503, sec=22)])
    assert res["verdict"] != "failed"  # a 2xx after the error: that 503 is one request's
    res = _diagnose(tmp_path, _FLASK + [_answer(200), _LOAD_ERROR, _answer(503, sec=22)])
    assert res["verdict"] == "failed"  # served, then the error, then only 5xx


def test_one_requests_exception_logged_just_before_its_500_is_no_death(tmp_path):
    up = ["INFO:     Started server process [4242]", "INFO:     Waiting for application startup.",
          "INFO:     Application startup complete.",
          "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)"]
    tb = ["Traceback (most recent call last):",
          '  File "/app/serve/disagg_service.py", line 511, in _verify_ctx_response',
          "    raise ValueError(",
          "ValueError: Context server returned 4 choices, expecting 1.", ""]
    answer = 'INFO:     127.0.0.1:44784 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error'
    assert _diagnose(tmp_path, up + tb + [answer])["verdict"] != "failed"
    # the same error well before its 500s, nothing served in between: the server no longer serves
    quiet = [f'INFO:     127.0.0.1:4478{k} - "GET /v1/models HTTP/1.1" 500 Internal Server Error' for k in range(3)]
    assert _diagnose(tmp_path, up + [_LOAD_ERROR] + quiet)["verdict"] == "failed"


def test_a_request_for_what_the_server_does_not_implement_is_no_death(tmp_path):
    # a start-up error the server came up past, then one request answered 501 (a route's feature it
    # does not have) or 505: the answer is about the request, as a 404 would be
    for status in (501, 505):
        res = _diagnose(tmp_path, [_LOAD_ERROR] + _FLASK + [_answer(status)])
        assert res["verdict"] != "failed", status
    assert _diagnose(tmp_path, [_LOAD_ERROR] + _FLASK + [_answer(503)])["verdict"] == "failed"


def test_a_503_while_the_server_shuts_down_is_no_death(tmp_path):
    # served, an error it went on past, then a graceful stop: a probe answered 503 while it drains
    up = ["INFO:     Started server process [4242]", "INFO:     Waiting for application startup.",
          "INFO:     Application startup complete.",
          "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
          'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
    stop = ["INFO:     Shutting down", 'INFO:     127.0.0.1:51299 - "GET /health HTTP/1.1" 503 Service Unavailable',
            "INFO:     Waiting for application shutdown.", "INFO:     Application shutdown complete.",
            "INFO:     Finished server process [4242]"]
    res = _diagnose(tmp_path, up + [_LOAD_ERROR] + stop)
    assert res["verdict"] != "failed"
