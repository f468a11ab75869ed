"""Issue 27 item 3: a log's lifetimes judged together. A lifetime that failed, after which the same
program came up again (a restart that reached readiness), is survived: the log's top level is the
later lifetime, the failed one stays listed. A failure after the last start that came up, or a
later start of another program, is still the answer."""
from __future__ import annotations

from forensics.api import classify

from conftest import REPO, run_cli


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


def test_a_restart_that_came_up_is_survived():
    d = classify(_journal(_bind_fails("vllm.service", 4242, 0), _comes_up("vllm.service", 4300, 10)))
    assert [i["verdict"] for i in d["incidents"]] == ["failed", "ready"]
    assert d["incidents"][0]["root_cause"] == "net.port-in-use"  # the failed start stays listed
    assert (d["verdict"], d["root_cause"], d["phase"], d["incident"]) == ("ready", None, "serving", 1)


def test_a_failure_after_the_last_start_that_came_up_is_the_answer():
    d = classify(_journal(_comes_up("vllm.service", 4242, 0), _bind_fails("vllm.service", 4300, 10)))
    assert (d["verdict"], d["root_cause"], d["incident"]) == ("failed", "net.port-in-use", 1)
    d = classify(_journal(_bind_fails("vllm.service", 4200, 0), _comes_up("vllm.service", 4242, 10),
                          _bind_fails("vllm.service", 4300, 20)))
    assert (d["verdict"], d["incident"]) == ("failed", 2)


def test_another_unit_that_came_up_does_not_clear_a_failure():
    d = classify(_journal(_bind_fails("vllm.service", 4242, 0), _comes_up("sglang.service", 4300, 10)))
    assert (d["verdict"], d["root_cause"], d["incident"]) == ("failed", "net.port-in-use", 0)


def test_a_controller_restarted_on_another_port_is_ready_in_text_and_json():
    """A real log (public batch-42/007, LLaVA's controller): the first start cannot bind its port,
    the operator starts it again on another one 16 s later and it serves until the file ends."""
    log = REPO / "corpora/public/batch-42/007.log"
    d = classify(log.read_text())
    assert (d["verdict"], d["phase"]) == ("ready", "serving")
    assert [i["verdict"] for i in d["incidents"]] == ["failed", "ready"]
    proc = run_cli("classify", str(log))
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "READY" in out and "failed (net.port-in-use), ready" in out


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
