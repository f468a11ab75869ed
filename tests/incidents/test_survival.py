"""Issue 27 item 3: progress and death across a log's lifetimes. The top level is the last failed
lifetime, else the last one (design.md), even where the same program came up again later; what proves
a server served (a benchmark's answered requests) and what says it died after serving."""
from __future__ import annotations

from forensics.api import classify

from conftest import REPO


def _journal(*lifetimes: list[str]) -> str:
    return "\n".join(line for lt in lifetimes for line in lt) + "\n"


def _start(unit: str, pid: int, sec: int) -> list[str]:
    return [f"Jun 01 12:00:{sec:02d} gpu-node-7 systemd[1]: Started {unit} - LLM server.",
            f"Jun 01 12:00:{sec:02d} gpu-node-7 python3[{pid}]: INFO 06-01 12:00:{sec:02d} [api_server.py:1895] "
            "vLLM API server version 0.11.0"]


def _bind_fails(unit: str, pid: int, sec: int) -> list[str]:
    return _start(unit, pid, sec) + [
        f"Jun 01 12:00:{sec + 2:02d} gpu-node-7 python3[{pid}]: ERROR:    [Errno 98] error while attempting to bind "
        "on address ('0.0.0.0', 8000): address already in use",
        f"Jun 01 12:00:{sec + 2:02d} gpu-node-7 systemd[1]: {unit}: Main process exited, code=exited, status=1/FAILURE",
        f"Jun 01 12:00:{sec + 2:02d} gpu-node-7 systemd[1]: {unit}: Failed with result 'exit-code'.",
        f"Jun 01 12:00:{sec + 4:02d} gpu-node-7 systemd[1]: {unit}: Scheduled restart job, restart counter is at 1."]


def _comes_up(unit: str, pid: int, sec: int) -> list[str]:
    return _start(unit, pid, sec) + [
        f"Jun 01 12:00:{sec + 1:02d} gpu-node-7 python3[{pid}]: INFO 06-01 12:00:{sec + 1:02d} "
        "[gpu_model_runner.py:2602] Starting to load model m...",
        f"Jun 01 12:00:{sec + 3:02d} gpu-node-7 python3[{pid}]: INFO:     Application startup complete.",
        f"Jun 01 12:00:{sec + 4:02d} gpu-node-7 python3[{pid}]: INFO:     127.0.0.1:50000 - "
        '"POST /v1/completions HTTP/1.1" 200 OK']


def test_a_failed_lifetime_stays_the_answer_when_the_program_came_up_again():
    # design.md's contract: the top level is the last failed lifetime, else the last one. (survival13
    # measured the alternative, the last lifetime when the same program came up after the failure:
    # one public healthy log, batch-42/007, changes; a contract change is not ours to take.)
    d = classify(_journal(_bind_fails("vllm.service", 4242, 0), _comes_up("vllm.service", 4300, 10)))
    assert [i["verdict"] for i in d["incidents"]] == ["failed", "ready"]
    assert (d["verdict"], d["root_cause"], d["incident"]) == ("failed", "net.port-in-use", 0)
    d = classify(_journal(_comes_up("vllm.service", 4242, 0), _bind_fails("vllm.service", 4300, 10)))
    assert (d["verdict"], d["root_cause"], d["incident"]) == ("failed", "net.port-in-use", 1)


def test_a_serving_benchmarks_answered_requests_prove_a_server_served():
    """A real log (public batch-58/001: a harness starts vLLM on a TPU slice, then runs ``vllm bench
    serve``): the server's own output is elsewhere; the benchmark's result block ("Successful requests:
    640") proves a server answered requests, and the client's later ERROR line about the TPU metadata
    server does not end it."""
    d = classify((REPO / "corpora/public/batch-58/001.log").read_text())
    assert (d["verdict"], d["phase"], d["root_cause"]) == ("ready", "serving", None)


def test_a_benchmark_that_got_no_answer_proves_nothing():
    block = ["============ Serving Benchmark Result ============",
             "Successful requests:                     {}         ",
             "Benchmark duration (s):                  12.01     "]
    served = classify("\n".join(line.format(8) for line in block) + "\n")
    none = classify("\n".join(line.format(0) for line in block) + "\n")
    assert (served["verdict"], served["phase"]) == ("ready", "serving")
    assert none["verdict"] != "ready" and none["phase"] != "serving"


def test_an_engine_loop_that_died_after_serving_is_a_failure():
    """Progress before an error does not clear it when the program then says it died: vLLM V0's
    engine loop ends on an error no rule knows, after the server answered requests."""
    up = ["INFO 04-02 10:20:00 api_server.py:300] vLLM API server version 0.7.3",
          "INFO 04-02 10:21:01 llm_engine.py:429] init engine (profile, create kv cache, warmup model) took 11.03 seconds",
          "INFO:     Application startup complete.",
          'INFO:     10.0.1.7:50000 - "POST /v1/completions HTTP/1.1" 200 OK',
          "INFO 04-02 10:21:28 async_llm_engine.py:209] Added request c7596666544a4782b71560d60238fd87.",
          "ERROR 04-02 10:22:28 async_llm_engine.py:837] The model worker stopped answering the engine"]
    assert classify("\n".join(up) + "\n")["verdict"] != "failed"  # an error line alone, after serving
    dead = classify("\n".join(up + ["ERROR 04-02 10:22:28 async_llm_engine.py:66] Engine background task failed"]) + "\n")
    assert (dead["verdict"], dead["phase"]) == ("failed", "serving")
    assert "stopped answering the engine" in dead["evidence"][0]["text"]  # the error before the death
