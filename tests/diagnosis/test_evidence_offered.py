"""Issue 27 item 1 (twelfth session): lines near the evidence that the rules did not list. A death
line listed first gives way to the error printed just before it; the other neighbours are offered
to the learned ranker and never listed unless it puts them first. Lines built here around the
exact wordings the programs print (Go's runtime on a signal, systemd's exit report, ggml's abort
macro and its Metal backend), never copied from the corpora."""
from __future__ import annotations

import pytest

from helpers import classify_lines as _run

from forensics.diagnosis import evidence_offered
from forensics.diagnosis.decision import evidence_rank


def test_a_go_runtime_abort_gives_way_to_the_error_printed_before_it():
    d = _run(["llama_new_context_with_model: n_ctx = 8192",
              "ggml_metal_graph_compute: command buffer 0 failed with status 5",
              "SIGABRT: abort",
              "PC=0x19d3e0a4c m=5 sigcode=0",
              "signal arrived during cgo execution"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "ggml_metal_graph_compute: command buffer 0 failed with status 5"
    assert d["evidence"][0]["role"] == "cause"
    assert any(e["text"] == "SIGABRT: abort" for e in d["evidence"][1:])


def test_systemd_exit_report_gives_way_to_the_services_own_panic():
    # Go's runtime prints "panic: runtime error: ..." at no level; systemd reports the exit after it
    d = _run(["Jun 01 12:00:01 gpu-node-7 systemd[1]: Started myserver.service - My Server.",
              "Jun 01 12:00:02 gpu-node-7 myserver[4021]: panic: runtime error: invalid memory address or nil "
              "pointer dereference",
              "Jun 01 12:00:02 gpu-node-7 myserver[4021]: [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 "
              "pc=0x5c3a1b]",
              "Jun 01 12:00:02 gpu-node-7 systemd[1]: myserver.service: Main process exited, code=exited, "
              "status=2/INVALIDARGUMENT",
              "Jun 01 12:00:02 gpu-node-7 systemd[1]: myserver.service: Failed with result 'exit-code'."])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("panic: runtime error: invalid memory address")
    assert "Main process exited" in d["evidence"][1]["text"]


def test_a_death_line_after_ordinary_lines_stays_first():
    d = _run(["llama_new_context_with_model: n_ctx = 8192",
              "llama_new_context_with_model: graph splits = 1",
              "SIGABRT: abort",
              "PC=0x19d3e0a4c m=5 sigcode=0"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "SIGABRT: abort"
    assert all(e["role"] != "offered" for e in d["evidence"])


def test_offered_lines_not_ranked_first_are_not_listed():
    listed = [{"line": 9, "text": "/src/ggml-cuda/reduce.cu:169: Fatal error", "role": "cause"},
              {"line": 4, "text": "ggml_cuda_op_reduce: ncclAllReduce failed with status 1", "role": "offered",
               "offer": "worded"}]
    assert evidence_offered.settle(listed) == listed[:1]
    promoted = evidence_offered.settle(listed[::-1])
    assert promoted[0] == {"line": 4, "text": "ggml_cuda_op_reduce: ncclAllReduce failed with status 1", "role": "cause"}
    assert len(promoted) == 2


def test_the_ranker_reads_where_an_offered_line_stands_and_what_the_catalogue_says():
    lead = {"line": 9, "text": "SIGABRT: abort", "role": "cause"}
    before = {"line": 8, "text": "CUDA error: an illegal memory access was encountered", "role": "offered",
              "offer": "error"}
    x = evidence_rank.entry_vector(before, 1, [9, 8], lead, None)
    on = {f for f, v in zip(evidence_rank.FEATURES, x) if v}
    assert {"role:offered", "offer:error", "before_first", "near_first", "offered_over_weak"} <= on
    assert "after_first" not in on
    # a weight on offered lines that outweighs the rules' first puts the offered line first
    w = tuple(3.0 if f == "offered_over_weak" else 0.0 for f in evidence_rank.FEATURES)
    assert evidence_rank.rank([lead, before], w)[0] is before
    assert evidence_rank.rank([lead, before], tuple(0.0 for _ in evidence_rank.FEATURES))[0] is lead


def test_a_first_line_that_ends_where_its_detail_begins_gets_the_detail():
    # CMake prints "CMake Error at FILE:LINE (COMMAND):" and the message indented on the next lines
    d = _run(["-- Detecting CUDA compile features - done",
              "CMake Error at CMakeLists.txt:112 (find_package):",
              "  Could not find a package configuration file provided by \"TensorRT\" with any of the",
              "",
              "-- Configuring incomplete, errors occurred!"])
    assert d["verdict"] == "failed"
    first = d["evidence"][0]["text"]
    assert first.startswith("CMake Error at CMakeLists.txt:112 (find_package):")
    assert "Could not find a package configuration file" in first


# -- thirteenth session (evidence15): a frame listed first gives way; lines the catalogue knows as errors --

_FRAME = {"line": 14, "text": 'File "/usr/lib/python3/dist-packages/engine/worker.py", line 212, in run',
          "role": "last-frame"}


def test_a_frame_listed_first_gives_way_to_the_error_that_states_the_failure():
    # a cut traceback (frames, no exception line): PyTorch's allocator message printed before it
    evidence = [dict(_FRAME)]
    offered = [{"line": 9, "text": "Process worker-1:", "role": "offered", "offer": "error"},
               {"line": 6, "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                "role": "offered", "offer": "exception"},
               {"line": 12, "text": '  File "/usr/lib/python3/dist-packages/engine/loop.py", line 40, in step',
                "role": "offered", "offer": "worded"}]
    evidence_offered.frame_gives_way(evidence, offered)
    assert evidence[0] == {"line": 6, "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                           "role": "cause"}
    assert evidence[1] == _FRAME
    assert [e["line"] for e in offered] == [9, 12]


def test_a_frame_gives_way_to_the_first_line_that_is_no_frame_when_none_states_an_error():
    evidence = [dict(_FRAME), {"line": 15, "text": "worker exited with code 1", "role": "wrapper"}]
    evidence_offered.frame_gives_way(evidence, [])
    assert [e["line"] for e in evidence] == [15, 14]


def test_a_line_that_states_the_error_is_not_moved():
    evidence = [{"line": 6, "text": "RuntimeError: CUDA error: an illegal memory access was encountered",
                 "role": "cause"}, dict(_FRAME)]
    offered = [{"line": 5, "text": "ERROR engine step failed", "role": "offered", "offer": "error"}]
    evidence_offered.frame_gives_way(evidence, offered)
    assert [e["line"] for e in evidence] == [6, 14] and len(offered) == 1


def test_a_cut_traceback_lists_the_error_logged_before_it_first():
    # a frames-only traceback whose exception line was cut; the error the program logged just before
    d = _run(["2025-06-01 12:00:00,001 - INFO - Loading weights from /models/llama-3-8b",
              "2025-06-01 12:00:04,112 - INFO - could not start the engine: KeyError: 'rope_theta'",
              "Traceback (most recent call last):",
              '  File "/app/server.py", line 88, in <module>',
              "    main()",
              '  File "/app/engine.py", line 140, in __init__',
              "    self.model = load(args.model)"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].endswith("could not start the engine: KeyError: 'rope_theta'")
    assert d["evidence"][1]["role"] == "last-frame"


def test_a_message_the_catalogue_has_at_error_level_is_offered_whatever_its_level_and_distance():
    # a Rich console wraps PyTorch's allocator message under its ERROR line: the message itself has no
    # level, and the death twelve lines further down is all the rules list
    from forensics.events.types import Event
    from forensics.incidents.lifetimes import Incident
    from forensics.incidents.outcome import Outcome

    inc = Incident(0, "-", 1, 20)
    inc.outcome = Outcome()
    texts = {1: "ERROR    2025-06-01 12:00:04,248 server ERROR: CUDA   batch_handler.py:574",
             2: "         out of memory. Tried to allocate 3.88 GiB. GPU 0",
             3: "         has a total capacity of 44.42 GiB of which 920.81"}
    texts.update({n: f"         frame {n}" for n in range(4, 15)})
    for n, t in texts.items():
        inc.outcome.recent.append(Event("message", n, t, level="ERROR" if n == 1 else None))
    from forensics.diagnosis.decision.label_model import RECORDER

    listed = [{"line": 14, "text": "Error: the engine exited with code 1", "role": "cause"}]
    token = RECORDER.set([])  # as the training reads it (a shipped ranker reads them too)
    try:
        out = evidence_offered.offered(inc, listed, [])
    finally:
        RECORDER.reset(token)
    known = [e for e in out if e["offer"] == "known"]
    assert [e["line"] for e in known] == [2]
    assert evidence_rank.INDEX["offer:known"] >= 0
    # with no ranker to read them, the catalogue is not asked (a short log's classify stays as fast)
    if evidence_rank.ranker() is None:
        assert not [e for e in evidence_offered.offered(inc, listed, []) if e["offer"] == "known"]


def test_the_message_a_logger_printed_on_a_cut_tracebacks_first_line_is_listed_first():
    # Python's logging with the exception formatted inline: the message and "Traceback (most recent
    # call last):" on one line, then frames only (the paste was cut before the exception line)
    d = _run(["2025-05-20 08:52:36 node-1 app.worker.manager[1] INFO Load embeddings model: bge-large",
              "2025-05-20 08:52:36 node-1 app.worker.manager[1] ERROR Error starting worker manager: model m-7b "
              "start failed, Traceback (most recent call last):",
              '  File "/app/worker/manager.py", line 631, in _start_worker',
              "    await self.run_blocking_func(",
              '  File "/app/worker/manager.py", line 146, in run_blocking_func'])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].endswith("Error starting worker manager: model m-7b start failed")
    assert d["evidence"][1]["role"] == "last-frame"


def test_a_carrier_that_ends_where_the_traceback_begins_names_nothing():
    from forensics.events.types import Event

    tb = Event("traceback", 1, "x", data={"carrier": "[TP0] Scheduler hit an exception:"})
    assert evidence_offered.carried_message(tb) is None
    tb = Event("traceback", 1, "x", data={"carrier": "ERROR Error starting worker: start failed,"})
    assert evidence_offered.carried_message(tb) == "ERROR Error starting worker: start failed"


# Ray re-raises a task's exception in the caller as RayTaskError(<its type>), its message where the
# task ran; the remote traceback follows it, ending in the task's own exception line.
_RAY = ["INFO 05-02 10:01:11 ray_gpu_executor.py:120] Initializing the Ray cluster with 2 workers.",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/executor/ray_gpu_executor.py", line 391, in _run_workers',
        "    ray_worker_outputs = ray.get(ray_worker_outputs)",
        '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 2667, in get',
        "    raise value.as_instanceof_cause()",
        "ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method() (pid=5974, ip=10.0.0.2, "
        "actor_id=8d2f, repr=<vllm.executor.ray_utils.RayWorkerWrapper object at 0x7f3b2c>)",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker_base.py", line 383, in execute_method',
        "    raise e",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 123, in init_device',
        '    raise ValueError(f"Expected a cuda device, but got: {self.device}")',
        "ValueError: Expected a cuda device, but got: npu:0"]


def test_a_ray_task_error_gives_way_to_the_exception_it_wraps():
    d = _run(_RAY)
    assert d["verdict"] == "failed"
    assert d["evidence"][0] == {"line": 12, "text": "ValueError: Expected a cuda device, but got: npu:0", "role": "cause"}
    assert d["evidence"][1]["text"].startswith("ray.exceptions.RayTaskError(ValueError)")
    assert d["evidence"][1]["role"] == "wrapper"


def test_a_wrapper_keeps_its_place_when_no_candidate_is_the_type_it_names():
    ev = [{"line": 7, "text": "ray.exceptions.RayTaskError(ValueError): ray::Worker.run() (pid=5, ip=10.0.0.2)",
           "role": "cause"},
          {"line": 3, "text": "RuntimeError: CUDA error: out of memory", "role": "offered", "offer": "exception"}]
    assert evidence_offered.wrapped_first([dict(e) for e in ev]) == ev


def test_a_start_up_summary_gives_way_to_an_offered_exception_but_not_to_another_wrapper():
    lead = {"line": 13, "text": "EngineCore failed to start.", "role": "wrapper"}
    dead = {"line": 90, "text": "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack "
                                "trace (above) for the root cause.", "role": "offered", "offer": "chain"}
    key = {"line": 103, "text": "KeyError: 'layers.0.mlp.gate_up_proj.deq_scale'", "role": "offered",
           "offer": "exception"}
    assert evidence_offered.wrapped_first([dict(lead), dict(dead)]) == [lead, dead]
    got = evidence_offered.wrapped_first([dict(lead), dict(dead), dict(key)])
    assert got[0] == {"line": 103, "text": key["text"], "role": "cause"}
    assert got[1] == lead
    # an error line a program logged (not an exception) is left to the ranker
    logged = {"line": 12, "text": "[ERROR] 2025-07-30-10:15:05 ERR01100 OPS call acl api failed", "role": "offered",
              "offer": "error"}
    assert evidence_offered.wrapped_first([dict(lead), logged])[0] == lead


# -- nineteenth session (fix-cand): a cut traceback's own first line --

def test_a_cut_traceback_whose_logger_only_said_it_caught_an_exception_lists_that_line_first():
    # SGLang's scheduler logs "Scheduler hit an exception: Traceback ..." and the paste ends in the
    # frames: the line it began on says that (and which component) failed, the last frame only where;
    # the supervisor's restatement stays behind both
    d = _run(["[2026-06-28 13:36:54] Received sigquit from a child process. It usually means the child failed.",
              "[2026-06-28 13:36:54] kill_process_tree called: parent_pid=39, include_parent=True, pid=39",
              "[2026-06-28 13:36:54 TP0] Scheduler hit an exception: Traceback (most recent call last):",
              '  File "/srv/app/managers/scheduler.py", line 4285, in run_scheduler_process',
              "    scheduler = Scheduler(",
              '  File "/srv/app/runner/eager_runner.py", line 128, in __init__',
              "    self.warmup()"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "Scheduler hit an exception: Traceback (most recent call last):"
    assert d["evidence"][0]["line"] == 3
    assert d["evidence"][1]["role"] == "last-frame"


def test_a_cut_traceback_header_gives_way_to_a_line_that_states_the_error():
    evidence = [dict(_FRAME), {"line": 3, "text": "Scheduler hit an exception: Traceback (most recent call last):",
                               "role": "cause"}]
    offered = [{"line": 2, "text": "RuntimeError: CUDA error: an illegal memory access was encountered",
                "role": "offered", "offer": "exception"}]
    evidence_offered.frame_gives_way(evidence, offered)
    assert [e["line"] for e in evidence] == [2, 14, 3]


def test_a_traceback_cut_after_its_header_gives_way_to_the_message_its_logger_printed_before_it():
    # Python's logger.exception("msg") prints the message, then the traceback; a paste cut right
    # after the header keeps only the two lines: the message says what failed
    d = _run(["ERROR 11-22 06:57:51 [connector.py:548] Handshake with c00824be-282f failed",
              "ERROR 11-22 06:57:51 [connector.py:548] Traceback (most recent call last):"])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"] == "Handshake with c00824be-282f failed"
    assert d["evidence"][1]["role"] == "wrapper"


def _chained(first: list[str], then: list[str], words: str = "The above exception was the direct cause of "
             "the following exception:") -> list[str]:
    return (["INFO 05-01 10:00:00 Loading model weights", "Traceback (most recent call last):",
             '  File "/app/load.py", line 10, in load', "    cfg = CONFIG_MAPPING[model_type]"] + first +
            ["", words, "", "Traceback (most recent call last):", '  File "/app/serve.py", line 3, in main',
             "    raise ValueError("] + then)


def test_a_lookup_failure_gives_way_to_the_explanation_chained_after_it():
    # transformers' AutoConfig: a KeyError on the model type, then its own ValueError from it
    d = _run(_chained(["KeyError: 'glm_moe_dsa'"],
                      ["ValueError: The checkpoint you are trying to load has model type `glm_moe_dsa` but "
                       "Transformers does not recognize this architecture."]))
    assert d["evidence"][0]["text"].startswith("ValueError: The checkpoint you are trying to load has model type")
    assert d["evidence"][0]["role"] == "cause"


def test_an_errno_failure_gives_way_to_the_library_word_for_it_during_handling():
    d = _run(_chained(["OSError: [Errno 101] Network is unreachable"],
                      ["OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find "
                       "it in the cached files."], "During handling of the above exception, another exception occurred:"))
    assert d["evidence"][0]["text"].startswith("OSError: We couldn't connect to 'https://huggingface.co'")
    assert d["evidence"][0]["role"] == "cause"
    assert {"line": 5, "text": "OSError: [Errno 101] Network is unreachable", "role": "root"} in d["evidence"][1:]


def test_a_specific_first_exception_or_a_restatement_keeps_its_place():
    # the first names the failure itself: the chained wrapper stays behind it
    d = _run(_chained(["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 594.00 MiB."],
                      ["RuntimeError: Failed to warm up the sampler"]))
    assert d["evidence"][0]["text"].startswith("torch.OutOfMemoryError: CUDA out of memory")
    # a low-level first restated by the last: the first stays
    d = _run(_chained(["TimeoutError: Server failed to start within the timeout period."],
                      ["RuntimeError: Failed to start prefill node: Server failed to start within the timeout period."]))
    assert d["evidence"][0]["text"].startswith("TimeoutError: Server failed to start")
    # a lookup failure under a wrapper that only says start-up failed and points back: the first stays
    d = _run(_chained(["KeyError: 'model.layers.0.self_attn.q_proj.weight'"],
                      ["RuntimeError: Engine process failed to start. See stack trace for the root cause."]))
    assert d["evidence"][0]["text"] == "KeyError: 'model.layers.0.self_attn.q_proj.weight'"
    # a transport error over another: both low level, the first stays
    d = _run(_chained(["ConnectionResetError: [Errno 104] Connection reset by peer"],
                      ["requests.exceptions.ConnectionError: ('Connection aborted.', ConnectionResetError(104, "
                       "'Connection reset by peer'))"]))
    assert d["evidence"][0]["text"].startswith("ConnectionResetError: [Errno 104]")
    # a stop raised while handling it (sys.exit in the except block): the first stays
    d = _run(_chained(["KeyError: 'glm_moe_dsa'"], ["SystemExit: 1"],
                      "During handling of the above exception, another exception occurred:"))
    assert d["evidence"][0]["text"] == "KeyError: 'glm_moe_dsa'"


def test_a_bug_in_the_handler_raised_last_does_not_displace_the_failure_it_handled():
    # the except block names an undefined logger, or its message cannot be encoded: Python raises that
    # last, but the failure is still the first exception's
    for last in ("NameError: name 'logger' is not defined", "UnboundLocalError: cannot access local variable "
                 "'cfg' where it is not associated with a value", "UnicodeEncodeError: 'ascii' codec can't encode "
                 "character '\\u2019' in position 10: ordinal not in range(128)"):
        d = _run(_chained(["KeyError: 'glm_moe_dsa'"], [last],
                          "During handling of the above exception, another exception occurred:"))
        assert d["evidence"][0]["text"] == "KeyError: 'glm_moe_dsa'", last


def test_a_state_dump_at_error_level_is_not_the_error_a_cut_traceback_came_with():
    # vLLM dumps its scheduler's state at ERROR level when its engine dies, then says the engine hit
    # a fatal error and prints the traceback (cut here): the dump names no failure
    d = _run(["ERROR 08-21 21:56:03 [dump_input.py:79] Dumping scheduler stats: SchedulerStats(num_running_reqs=1, "
              "num_waiting_reqs=0, kv_cache_usage=0.27)",
              "ERROR 08-21 21:56:03 [core.py:634] EngineCore encountered a fatal error.",
              "ERROR 08-21 21:56:03 [core.py:634] Traceback (most recent call last):",
              'ERROR 08-21 21:56:03 [core.py:634]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", '
              "line 625, in run_engine_core",
              "ERROR 08-21 21:56:03 [core.py:634]     engine_core.run_busy_loop()",
              'ERROR 08-21 21:56:03 [core.py:634]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", '
              "line 267, in step",
              "ERROR 08-21 21:56:03 [core.py:634]     model_output = self.execute_model_with_error_logging("])
    assert d["verdict"] == "failed"
    assert not d["evidence"][0]["text"].startswith("Dumping scheduler stats")


def test_a_pointer_to_the_error_above_does_not_give_way_to_a_line_logged_as_information():
    d = _run(["INFO 04-08 04:00:01 [ray_distributed_executor.py:127] Shutting down Ray distributed executor. If you "
              "see error log from logging.cc regarding SIGTERM received, please ignore because this is the expected "
              "termination process in Ray.",
              "CRITICAL 04-08 04:00:01 [core_client.py:361] Got fatal signal from worker processes, shutting down. "
              "See stack trace above for root cause issue."])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("Got fatal signal from worker processes")


def test_a_shells_report_of_its_jobs_death_gives_way_to_the_jobs_last_error():
    # zsh reports a job killed by a signal as "zsh: abort <command>": glibc's assert printed why just before
    d = _run(["srv  log_server_r: done request: POST /completion 127.0.0.1 200",
              "widget-server: /src/widget/sampler.cpp:1094: void sampler_apply(sampler*): Assertion `found' failed.",
              "zsh: abort      ./run-widget-server"])
    assert d["verdict"] == "failed"
    assert "Assertion `found' failed." in d["evidence"][0]["text"]
    assert any(e["text"].startswith("zsh: abort") for e in d["evidence"][1:])


@pytest.mark.parametrize("report", ["./run-widget.sh: line 12:  4242 Aborted                 ./widget-server",
                                    "bash: line 1:  4242 Bus error               ./widget-server"])
def test_bashs_report_of_its_jobs_death_gives_way_to_the_jobs_last_error(report):
    # bash (a script's name or "bash" before it) capitalises the signal's name and pads the pid (review22)
    d = _run(["srv  log_server_r: done request: POST /completion 127.0.0.1 200",
              "widget-server: /src/widget/sampler.cpp:1094: void sampler_apply(sampler*): Assertion `found' failed.",
              report])
    assert "Assertion `found' failed." in d["evidence"][0]["text"], d["evidence"]


def test_a_pointer_raised_at_the_end_of_a_traceback_points_above_the_traceback():
    # torch_npu's "The Inner error is reported as above" ends a worker's traceback: the error it points
    # at was printed before the traceback's first line, not among its frames
    frames = []
    for i in range(12):
        frames += [f'  File "/opt/widget/layer{i}.py", line {10 + i}, in forward', f"    return self.op{i}(x)"]
    d = _run(["[rank3]:[E227 10:31:13.476680270 compiler_depend.ts:444] WidgetOperation setup failed!",
              "",
              "(Worker_TP0 pid=277) ERROR 02-27 10:31:15 [multiproc_executor.py:822] WorkerProc hit an exception.",
              "(Worker_TP0 pid=277) ERROR 02-27 10:31:15 [multiproc_executor.py:822] Traceback (most recent call last):"]
             + [f"(Worker_TP0 pid=277) ERROR 02-27 10:31:15 [multiproc_executor.py:822] {f}" for f in frames]
             + ["(Worker_TP0 pid=277) ERROR 02-27 10:31:15 [multiproc_executor.py:822] RuntimeError: The Inner error is "
                "reported as above. The process exits for this inner error, and the current working operator name is "
                "WidgetOperation."])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].endswith("WidgetOperation setup failed!"), d["evidence"]
