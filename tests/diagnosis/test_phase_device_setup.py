"""Issue 27 (phase of failures): a worker setting up its device (vLLM's Worker.init_device: the device
index, the distributed environment, the start-up memory check) runs before the executor asks it to load
the model: a failure there is launch, by its frames or, where the frames are cut, by the check's words.
Lines built here around the wording vLLM prints (never copied from the corpora)."""
from __future__ import annotations

from helpers import classify_lines as _run, frames_traceback

_tb = frames_traceback


_TO_DEVICE = [("vllm/v1/engine/core.py", "__init__"), ("vllm/v1/executor/uniproc_executor.py", "_init_executor"),
              ("vllm/v1/worker/worker_base.py", "init_device"), ("vllm/v1/worker/gpu_worker.py", "init_device"),
              ("torch/cuda/__init__.py", "_lazy_init")]


# The process that started the engine (an evaluation harness loading its model through vLLM's LLM):
# its own frames name the harness's model load, which waited for the engine's start-up.
_CALLER = [("harness/models/vllm_model.py", "load_model"), ("vllm/entrypoints/llm.py", "__init__"),
           ("vllm/v1/engine/core_client.py", "wait_for_engine_startup")]


def test_a_failure_inside_the_workers_device_set_up_is_launch():
    d = _run(_tb(_TO_DEVICE, "RuntimeError: The NVIDIA driver on your system is too old (found version 12080).") +
             _tb(_CALLER, "RuntimeError: Engine core initialization failed. See root cause above. "
                          "Failed core proc(s): {}"))
    assert d["verdict"] == "failed" and d["phase"] == "launch"


def test_the_model_load_after_it_is_still_the_load():
    load = [("vllm/v1/engine/core.py", "__init__"), ("vllm/v1/executor/uniproc_executor.py", "_init_executor"),
            ("vllm/v1/worker/gpu_worker.py", "load_model"), ("vllm/model_executor/model_loader/base_loader.py",
                                                            "load_model")]
    d = _run(_tb(load, "RuntimeError: some weight could not be read"))
    assert d["phase"] == "load-weights"


def test_the_start_up_memory_check_is_launch_even_without_its_frames():
    line = ("(EngineCore pid=438) ValueError: Free memory on device cuda:0 (22.71/124.0 GiB) on startup is less "
            "than desired GPU memory utilization (0.9, 111.6 GiB). Decrease GPU memory utilization or reduce GPU "
            "memory used by other processes.")
    # (each line behind the line number and journald prefix of a grep over the journal: no frame is read)
    head = "133:Aug 24 01:02:31 dgx serve.sh[959645]: "
    d = _run([head + "(EngineCore pid=438) ERROR 08-24 01:02:31 [core.py:1349] EngineCore failed to start.",
              head + line, "140:Aug 24 01:02:32 dgx systemd[1]: serve.service: Main process exited, code=exited, "
                           "status=1/FAILURE"])
    assert d["verdict"] == "failed" and d["phase"] == "launch"


def test_dynamos_runtime_failing_to_reach_its_services_is_launch():
    # Dynamo's DistributedRuntime connects to etcd and NATS as the process starts, before any engine.
    for exc in ('Exception: Failed to connect to etcd server with config ClientOptions { etcd_url: '
                '["http://localhost:2379"], etcd_connect_options: None, attach_lease: true }',
                "Exception: Failed to connect to NATS: IO error: Connection refused (os error 111)"):
        d = _run(_tb([("dynamo/frontend/main.py", "async_main")], exc))
        assert d["verdict"] == "failed" and d["phase"] == "launch", exc
