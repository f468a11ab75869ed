"""Issue 27 (phase on healthy logs): a program's own shutdown lines are the stop (taxonomy.md: shutdown is
the log ending in a clean stop after readiness): vLLM V0's executor closing its workers at the engine's
close, vLLM production-stack's router tearing down its lifespan. Lines built here around their wording."""
from __future__ import annotations

from forensics.api import classify


def _phase(lines: list[str]) -> tuple[str, str]:
    d = classify("\n".join(lines) + "\n")
    return d["verdict"], d["phase"]


def test_a_programs_own_shutdown_lines_are_the_stop():
    done = ['INFO 07-23 20:50:10 metrics.py:349] Avg prompt throughput: 2.0 tokens/s, Avg generation throughput: '
            '0.4 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs',
            "INFO 07-23 20:50:22 multiproc_worker_utils.py:140] Terminating local vLLM worker processes",
            "(VllmWorkerProcess pid=532) INFO 07-23 20:50:22 multiproc_worker_utils.py:247] Worker exiting"]
    assert _phase(["INFO 07-23 20:49:00 launcher.py:28] Available routes are:",
                   "INFO:     Application startup complete."] + done) == ("ready", "shutdown")
    router = ['INFO:     10.0.0.5:50432 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
              "INFO:     Closing engine stats scraper", "INFO:     Closing service discovery module"]
    assert _phase(["INFO:     Application startup complete."] + router) == ("ready", "shutdown")
