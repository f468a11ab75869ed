"""A traceback that another program (a benchmark client run in the same job) prints into
the server's log after the server became ready is not the server's failure (issue 27 item
4): the server's verdict is its own (taxonomy: ready, then shutdown at a clean stop)."""
from __future__ import annotations

from helpers import classify_lines as _run

_UP = ["(APIServer pid=4242) INFO:     Started server process [4242]",
       "(APIServer pid=4242) INFO:     Waiting for application startup.",
       "(APIServer pid=4242) INFO:     Application startup complete."]
_DOWN = ["(APIServer pid=4242) INFO:     Shutting down",
         "(APIServer pid=4242) INFO:     Waiting for application shutdown.",
         "(APIServer pid=4242) INFO:     Application shutdown complete."]


def _client_tb(files: list[tuple[str, str]]) -> list[str]:
    out = ["Traceback (most recent call last):",
           '  File "<frozen runpy>", line 198, in _run_module_as_main',
           '  File "<frozen runpy>", line 88, in _run_code']
    for path, fn in files:
        out += [f'  File "{path}", line 40, in {fn}', "    x = y()"]
    return out + ["KeyError: 'latency_ms'"]


_CLIENT = [("/scratch/me/bench/run_load.py", "<module>"), ("/scratch/me/bench/run_load.py", "main"),
           ("/scratch/me/bench/report.py", "summarise")]


def test_a_client_scripts_traceback_between_readiness_and_a_clean_stop_is_not_the_servers():
    d = _run(_UP + _client_tb(_CLIENT) + _DOWN)
    assert d["verdict"] == "ready" and d["root_cause"] is None and d["phase"] == "shutdown"


def test_a_traceback_through_an_installed_package_stays_a_failure():
    # the server's own code (frames in its package) failing after readiness: not another program
    frames = _CLIENT[:2] + [("/usr/local/lib/python3.12/site-packages/vllm/v1/engine/core.py", "run_busy_loop")]
    d = _run(_UP + _client_tb(frames) + _DOWN)
    assert d["verdict"] == "failed"


def test_a_client_scripts_traceback_with_no_clean_stop_after_it_is_not_cleared():
    d = _run(_UP + _client_tb(_CLIENT))
    assert d["verdict"] == "failed"
