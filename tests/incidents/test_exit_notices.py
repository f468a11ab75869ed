"""Issue 27 (phase on healthy logs): what a process prints as it exits, whoever ended it (the resource
tracker's leaked semaphores, torch.distributed's undestroyed process group, Slurm's time limit), is no
operator's stop (taxonomy.md: shutdown is a clean operator stop after readiness). After readiness and
on its own it leaves the server where it was; after a stop it is part of the stop."""
from __future__ import annotations

from forensics.api import classify

# SGLang serving, as its smoke harnesses end it (public batch-28/006's shape).
_SERVED = ["[2026-05-25 17:29:01] The server is fired up and ready to roll!",
           '[2026-05-25 17:29:35] INFO:     127.0.0.1:56386 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
_READY = ["[2026-05-25 17:29:01] The server is fired up and ready to roll!"]
_TRACKER = ["/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: "
            "There appear to be 2 leaked semaphore objects to clean up at shutdown",
            "  warnings.warn('resource_tracker: There appear to be %d '"]
_PG = ["[rank0]:[W201 00:05:08.318920119 ProcessGroupNCCL.cpp:1524] Warning: WARNING: destroy_process_group() was "
       "not called before program exit, which can leak resources."]
_TIME_LIMIT = ["slurmstepd: error: *** JOB 5858 ON gpuh05 CANCELLED AT 2025-12-21T02:31:17 DUE TO TIME LIMIT ***"]
_SCANCEL = ["slurmstepd: error: *** JOB 4462 ON hickory CANCELLED AT 2025-08-04T16:56:16 ***"]
_STOP = ["[2025-12-18 09:25:21] SIGTERM received. signum=None frame=None. Draining requests and shutting down..."]


def _phase(lines: list[str]) -> tuple[str, str]:
    d = classify("\n".join(lines) + "\n")
    return d["verdict"], d["phase"]


def test_an_exit_notice_after_serving_leaves_the_server_serving():
    assert _phase(_SERVED + _TRACKER) == ("ready", "serving")
    assert _phase(_SERVED + _PG) == ("ready", "serving")
    assert _phase(_SERVED + _TIME_LIMIT) == ("ready", "serving")


def test_an_exit_notice_after_readiness_alone_leaves_it_ready():
    assert _phase(_READY + _TRACKER) == ("ready", "ready")


def test_after_a_stop_the_exit_notices_are_the_stop():
    assert _phase(_SERVED + _STOP + _TRACKER) == ("ready", "shutdown")
    assert _phase(_SERVED + _SCANCEL) == ("ready", "shutdown")


def test_a_programs_own_shutdown_lines_are_the_stop():
    # vLLM V0's executor closing its workers at the engine's close; production-stack's router lifespan teardown.
    done = ['INFO 07-23 20:50:10 metrics.py:349] Avg prompt throughput: 2.0 tokens/s, Avg generation throughput: '
            '0.4 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs',
            "INFO 07-23 20:50:22 multiproc_worker_utils.py:140] Terminating local vLLM worker processes",
            "(VllmWorkerProcess pid=532) INFO 07-23 20:50:22 multiproc_worker_utils.py:247] Worker exiting"]
    assert _phase(["INFO 07-23 20:49:00 launcher.py:28] Available routes are:",
                   "INFO:     Application startup complete."] + done + _PG) == ("ready", "shutdown")
    router = ['INFO:     10.0.0.5:50432 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
              "INFO:     Closing engine stats scraper", "INFO:     Closing service discovery module"]
    assert _phase(["INFO:     Application startup complete."] + router) == ("ready", "shutdown")
