"""A test harness that runs a server and then checks it (SGLang's nightly CI: unittest's
assertGreaterEqual on the measured throughput, assertLessEqual on the latency) prints a
traceback when a check fails: the server served and the harness judged it, so the
server's verdict is its own (ready). A harness that shows the server died still fails it,
and an AssertionError the server's own code raises is the server's failure."""
from __future__ import annotations

from helpers import classify_lines as _run

_UP = ["[2026-01-01 10:00:00] INFO:     Started server process [4242]",
       "[2026-01-01 10:00:00] INFO:     Waiting for application startup.",
       "[2026-01-01 10:00:00] INFO:     Application startup complete.",
       "[2026-01-01 10:00:01] The server is fired up and ready to roll!",
       '[2026-01-01 10:00:02] INFO:     127.0.0.1:40000 - "POST /generate HTTP/1.1" 200 OK']

_PY = "/usr/local/python3.11/lib/python3.11"


def _check_failed() -> list[str]:
    return ["Traceback (most recent call last):",
            f'  File "{_PY}/site-packages/sglang/srt/utils/common.py", line 2527, in retry',
            "    return fn()",
            f'  File "{_PY}/site-packages/sglang/test/test_utils.py", line 1704, in <lambda>',
            "    lambda: super(CustomTestCase, self)._callTestMethod(method),",
            f'  File "{_PY}/unittest/case.py", line 579, in _callTestMethod',
            "    if method() is not None:",
            '  File "/data/ci/sglang/test/nightly/perf/test_qwen3_32b_in2k_out2k.py", line 91, in test_qwen3_32b',
            "    self.run_throughput()",
            f'  File "{_PY}/unittest/case.py", line 1277, in assertGreaterEqual',
            "    self.fail(self._formatMessage(msg, standardMsg))",
            f'  File "{_PY}/unittest/case.py", line 703, in fail',
            "    raise self.failureException(msg)",
            "AssertionError: 1963.81 not greater than or equal to 2078.337634408602"]


def _runner_gives_up() -> list[str]:
    # unittest's retry wrapper re-raises after its last try: Python prints the chain
    return ["",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            f'  File "{_PY}/site-packages/sglang/test/test_utils.py", line 1703, in _callTestMethod',
            "    retry(",
            f'  File "{_PY}/site-packages/sglang/srt/utils/common.py", line 2535, in retry',
            '    raise Exception(f"retry() exceed maximum number of retries.")',
            "Exception: retry() exceed maximum number of retries.",
            "",
            "----------------------------------------------------------------------",
            "Ran 1 test in 556.292s",
            "",
            "FAILED (errors=1)"]


def test_a_harness_check_of_a_served_server_failing_is_not_the_servers_failure():
    d = _run(_UP + _check_failed() + _runner_gives_up())
    assert d["verdict"] == "ready" and d["root_cause"] is None


def test_the_check_failing_after_the_server_died_stays_a_failure():
    d = _run(_UP + ["Segmentation fault (core dumped)", "Main process exited, code=dumped, status=11/SEGV"]
             + _check_failed())
    assert d["verdict"] == "failed"


def test_an_assertion_in_the_servers_own_code_stays_a_failure():
    tb = ["Traceback (most recent call last):",
          f'  File "{_PY}/site-packages/sglang/srt/managers/scheduler.py", line 2300, in event_loop_normal',
          "    self.process_batch_result(batch, result)",
          f'  File "{_PY}/site-packages/sglang/srt/managers/scheduler.py", line 1800, in process_batch_result',
          "    assert len(reqs) == len(ids)",
          "AssertionError"]
    d = _run(_UP + tb)
    assert d["verdict"] == "failed"
