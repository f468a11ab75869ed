"""fix-cand24: a first line that only restates or wraps another gives way to the line that proves the
failure (``evidence_restated``, ``evidence_offered.wrapped_first``). Lines built here around the shapes
the programs print (a caller's message carrying its callee's reason, a logger's copy of an exception,
NCCL's pointer to its own log, Vulkan's lost device, a kernel assertion, libstdc++'s terminate
handler), never copied from the corpora."""
from __future__ import annotations

from types import SimpleNamespace

from helpers import classify_lines as _run

from forensics.diagnosis import evidence_offered, evidence_restated
from forensics.events import types as kinds
from forensics.events.types import Event


def _inc(lines: list[str]) -> SimpleNamespace:
    """A lifetime that kept ``lines`` (numbered from 1) as its last lines."""
    evs = tuple(Event(kinds.MESSAGE, i, t) for i, t in enumerate(lines, 1))
    return SimpleNamespace(outcome=SimpleNamespace(recent=evs, errors=(), before=()), error_lines=[], tracebacks=[])


def test_a_reason_is_the_text_after_the_last_colon_without_a_trailing_locator():
    assert evidence_restated._reason_of("Failed to start handler: Error loading model: Model type foo_bar not "
                                        "supported.") == "Model type foo_bar not supported."
    assert evidence_restated._reason_of("Fetch failed: Server returned nothing (no data) - http_utils.cc:41") == \
        "Server returned nothing (no data)"
    assert evidence_restated._reason_of("Request failed: timed out") is None  # too short to be any line's own
    assert evidence_restated._reason_of("Something went wrong") is None


def test_a_callers_message_gives_way_to_the_line_that_said_its_reason_first():
    d = _run(["INFO starting the model server",
              "ERROR:root:Model type foo_chat not supported by this loader.",
              "ERROR Failed to start handler: Error loading model: Model type foo_chat not supported by this loader.",
              "ERROR Application startup failed. Exiting."])
    assert d["verdict"] == "failed"
    assert d["evidence"][0]["text"].startswith("Model type foo_chat")  # (the logger's prefix peeled)
    assert d["evidence"][0]["line"] == 2


def test_reason_first_reads_the_kept_lines():
    inc = _inc(["starting", "Failed to initialize Python stub: TypeError: 'NoneType' object is not subscriptable",
                "Failed to create instance: TypeError: 'NoneType' object is not subscriptable",
                "failed to load 'm' version 1: Internal: TypeError: 'NoneType' object is not subscriptable"])
    ev = [{"line": 4, "text": inc.outcome.recent[3].text, "role": "cause"}]
    evidence_restated.reason_first(inc, ev)
    assert ev[0]["line"] == 2 and ev[1] == {"line": 4, "text": inc.outcome.recent[3].text, "role": "wrapper"}
    # a retry's report, or a warning that said the reason first, is no callee's error
    warned = _inc(["WARNING Fetch failed: the remote end closed the connection early, retrying",
                   "ERROR Loading the index failed: the remote end closed the connection early"])
    ev = [{"line": 2, "text": warned.outcome.recent[1].text, "role": "cause"}]
    evidence_restated.reason_first(warned, ev)
    assert ev[0]["line"] == 2


def test_nccl_details_are_the_warn_line_above_the_error():
    inc = _inc(["host:1:2 [0] init.cc:824 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1",
                "host:1:2 [0] NCCL INFO init.cc:1396 -> 5",
                '    raise RuntimeError(f"NCCL error: {error_str}")',
                "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)"])
    ev = [{"line": 4, "text": inc.outcome.recent[3].text, "role": "cause"}]
    evidence_restated.nccl_detail_first(inc, ev)
    assert ev[0]["line"] == 1 and ev[1]["role"] == "wrapper"


def test_the_terminate_handlers_message_is_joined_to_it():
    inc = _inc(["terminate called after throwing an instance of 'foo::ConnectError'",
                "  what():  connection reset by peer 10.0.0.2:4242"])
    ev = [{"line": 1, "text": inc.outcome.recent[0].text, "role": "cause"}]
    evidence_restated.own_message_joined(inc, ev)
    assert ev[0]["text"] == ("terminate called after throwing an instance of 'foo::ConnectError' what():  "
                             "connection reset by peer 10.0.0.2:4242")


def test_a_logged_copy_gives_way_to_the_exception_listed_after_it():
    ev = [{"line": 10, "text": "[E] Failed to initialize executor on rank 0: CUDA out of memory. Tried to allocate "
                               "2.00 GiB. GPU 0 has a total capacity of 79.18 GiB", "role": "cause"},
          {"line": 40, "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                               "total capacity of 79.18 GiB", "role": "supporting"}]
    evidence_restated.exception_over_restatement(ev)
    assert ev[0]["line"] == 40 and ev[0]["role"] == "cause"
    assert ev[1]["line"] == 10


def test_an_exception_line_first_stays_before_a_later_copy():
    ev = [{"line": 10, "text": "ValueError: the value of max_model_len is larger than the model allows", "role": "cause"},
          {"line": 40, "text": "RuntimeError: the value of max_model_len is larger than the model allows",
           "role": "supporting"}]
    evidence_restated.exception_over_restatement(ev)
    assert ev[0]["line"] == 10


def test_a_lost_vulkan_device_gives_way_to_the_drivers_error_before_it():
    ev = [{"line": 42, "text": "what():  vk::Queue::submit: ErrorDeviceLost", "role": "cause"},
          {"line": 18, "text": "radv/amdgpu: Not enough memory for command submission.", "role": "runtime-error"}]
    evidence_restated.device_lost_gives_way(ev)
    assert ev[0]["line"] == 18 and ev[1]["role"] == "wrapper"


def test_a_fired_kernel_assertion_gives_way_to_the_assertion_line():
    ev = [{"line": 30, "text": "RuntimeError: CUDA error: device-side assert triggered", "role": "cause"}]
    offered = [{"line": 12, "text": "Indexing.cu:1289: indexSelectKernel: block: [0,0,0], thread: [5,0,0] "
                                    "Assertion `srcIndex < srcSelectDimSize` failed.", "role": "offered",
                "offer": "worded"}]
    evidence_restated.kernel_assert_first(ev, offered)
    assert ev[0]["line"] == 12 and ev[0]["role"] == "cause" and not offered


def test_a_first_line_in_no_words_of_failure_gives_way_to_the_offered_exception():
    ev = [{"line": 3, "text": "NCCL version 2.21.5+cuda12.4\n    main()", "role": "cause"},
          {"line": 20, "text": "ValueError: unknown parser 'foo'", "role": "offered", "offer": "chain"}]
    out = evidence_offered.wrapped_first(ev)
    assert out[0]["line"] == 20
    kept = [{"line": 3, "text": "assert self.model is not None", "role": "cause"},
            {"line": 20, "text": "KeyboardInterrupt: ^C", "role": "offered", "offer": "chain"}]
    assert evidence_offered.wrapped_first(kept)[0]["line"] == 3


def test_a_terminate_handlers_line_gets_the_message_printed_under_it():
    d = _run(["INFO serving on port 8080",
              "terminate called after throwing an instance of 'foo::ConnectError'",
              "  what():  [enforce fail at transport/pair.cc:112] connection reset by peer 10.0.0.2:4242",
              "Aborted (core dumped)"])
    assert d["verdict"] == "failed"
    first = d["evidence"][0]["text"]
    assert "connection reset by peer 10.0.0.2:4242" in first


def test_a_child_process_failure_gives_way_to_the_childs_own_exception():
    ev = [{"line": 9, "text": "subprocess.CalledProcessError: Command '['python3', '-m', 'pkg.inspect']' returned "
                              "non-zero exit status 1.", "role": "cause"}]
    offered = [{"line": 22, "text": "RuntimeError: Error raised in subprocess:\nTraceback (most recent call last):",
                "role": "offered", "offer": "exception"},
               {"line": 59, "text": "AttributeError: module 'foo.lang' has no attribute 'exp'", "role": "offered",
                "offer": "exception"},
               {"line": 80, "text": "KeyboardInterrupt", "role": "offered", "offer": "chain"}]
    evidence_restated.child_error_first(ev, offered)
    assert ev[0]["line"] == 59 and ev[1]["role"] == "wrapper"


def test_a_component_named_alone_as_failed_has_no_reason_of_its_own():
    from forensics.diagnosis.evidence import _NO_REASON

    for said in ("Failed to initialize FooConnector", "Foo memory registration failed.",
                 "Exception caught at file:/src/ggml-sycl.cpp, line:4221, func:operator()"):
        assert _NO_REASON.search(said), said
    for said in ("Failed to initialize FooConnector: bar not available", "Memory registration failed for 3 buffers "
                 "because the device is busy"):
        assert not _NO_REASON.search(said), said
