"""uvicorn's order (a fact of the program): "Started server process", "Waiting for application
startup.", the app's lifespan start-up (where many servers load their model), then "Application
startup complete." and "Uvicorn running on". A traceback through Starlette's lifespan is the
start-up failing, not one request's: the server was never ready."""
from __future__ import annotations

import forensics

HEAD = """INFO:     Started server process [13]
INFO:     Waiting for application startup.
2025-03-02 10:00:01,100 - app.main - INFO - Loading model from /models/llama-3-8b.gguf
"""
LIFESPAN_TRACEBACK = """ERROR:    Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/starlette/routing.py", line 677, in lifespan
    async with self.lifespan_context(app) as maybe_state:
  File "/usr/local/lib/python3.11/site-packages/starlette/routing.py", line 566, in __aenter__
    await self._router.startup()
  File "/usr/local/lib/python3.11/site-packages/starlette/routing.py", line 654, in startup
    await handler()
  File "/app/main.py", line 40, in startup
    model = load_model(settings.model_path)
"""
END = """  File "/app/model.py", line 12, in load_model
    raise FileNotFoundError(f"model file not found: {path}")
FileNotFoundError: model file not found: /models/llama-3-8b.gguf

ERROR:    Application startup failed. Exiting.
"""


def _classify(tmp_path, text):
    log = tmp_path / "server.log"
    log.write_text(text, encoding="utf-8")
    return forensics.classify(log)


def test_a_failed_lifespan_start_up_is_a_failure_before_readiness(tmp_path):
    r = _classify(tmp_path, HEAD + LIFESPAN_TRACEBACK + END)
    assert r["verdict"] == "failed" and r["phase"] not in ("ready", "serving")
    assert any("model file not found" in e["text"] for e in r["evidence"])


def test_a_lifespan_traceback_cut_short_is_still_no_ready_server(tmp_path):
    # An excerpt that ends inside the start-up's traceback: never "ready, no failure found".
    r = _classify(tmp_path, HEAD + LIFESPAN_TRACEBACK)
    assert r["verdict"] == "failed" and r["phase"] not in ("ready", "serving")


def test_started_server_process_alone_is_starting_not_ready(tmp_path):
    r = _classify(tmp_path, "INFO:     Started server process [13]\nINFO:     Waiting for application startup.\n")
    assert r["verdict"] == "starting" and r["phase"] == "warmup"


def test_a_request_traceback_after_startup_complete_leaves_it_serving(tmp_path):
    text = (HEAD + "INFO:     Application startup complete.\n"
            "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
            'INFO:     127.0.0.1:50312 - "POST /v1/completions HTTP/1.1" 200 OK\n'
            "ERROR:    Exception in ASGI application\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.11/site-packages/starlette/routing.py", line 74, in app\n'
            "    response = await func(request)\n"
            '  File "/app/main.py", line 80, in complete\n'
            "    prompt = body['prompt']\n"
            "KeyError: 'prompt'\n"
            'INFO:     127.0.0.1:50313 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error\n')
    r = _classify(tmp_path, text)
    assert r["verdict"] == "ready" and r["phase"] == "serving"
