"""Issue 27 item 1 (twelfth session): lines near the evidence that the rules did not list. A death
line listed first gives way to the error printed just before it; the other neighbours are offered
to the learned ranker and never listed unless it puts them first. Lines built here around the
exact wordings the programs print (Go's runtime on a signal, systemd's exit report, ggml's abort
macro and its Metal backend), never copied from the corpora."""
from __future__ import annotations

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
