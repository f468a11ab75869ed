"""The evidence ranker's training (issue 27 item 1): one softmax over each log's candidate lines,
fitted on logs read as a family never met. Lines are built here around programs' own wordings."""
from __future__ import annotations

from forensics.diagnosis.decision.evidence_rank import rank
from forensics.lab import decision_train as dt


def _row(group: str, right_first: bool) -> dt.Row:
    frame = {"line": 30, "text": 'File "/usr/lib/python3/dist-packages/engine/worker.py", line 212, in run',
             "role": "last-frame"}
    exc = {"line": 31, "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
           "role": "offered", "offer": "chain"}
    info = {"line": 12, "text": "INFO 07-01 09:38:58 [model.py:611] Resolved architecture: LlamaForCausalLM",
            "role": "offered", "offer": "quiet"}
    evidence = [(exc, True), (frame, False), (info, False)] if right_first else [(frame, False), (exc, True), (info, False)]
    return dt.Row(f"{group}.log", group, "gpu.out-of-memory", None, "gpu.out-of-memory", 0.5, evidence=evidence)


def test_the_ranker_learns_to_put_the_exception_before_a_frame_and_is_judged_per_family():
    rows = [_row(f"fam{i % 6}", right_first=i % 3 == 0) for i in range(36)]
    w = dt.fit_evidence(rows)
    ranked = rank([e for e, _ in _row("new", False).evidence], tuple(w))
    assert ranked[0]["text"].startswith("torch.OutOfMemoryError")
    cv = dt.evidence_crossval(rows)
    assert cv["overall"]["n"] == 36 and cv["overall"]["rules"] == 12
    assert cv["overall"]["learned"] == 36  # every held-out family's logs ranked right
    assert dt.clearly_better(cv["overall"]["learned"], cv["overall"]["rules"], cv["overall"]["n"])


def test_a_log_whose_proving_line_is_not_among_the_candidates_teaches_nothing():
    rows = [_row("fam0", False)]
    rows[0].evidence = [(e, False) for e, _ in rows[0].evidence]
    assert dt.evidence_rows(rows) == []
    assert dt.fit_evidence(rows) == [0.0] * len(dt.fit_evidence([_row("fam1", False)]))


def test_a_line_that_names_its_error_and_one_that_points_elsewhere_are_told_apart():
    from forensics.diagnosis.decision.evidence_rank import INDEX, entry_vector

    alloc = {"line": 10, "text": "ggml_vulkan: Device memory allocation of size 1879048192 failed.", "role": "cause"}
    named = {"line": 11, "text": "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "role": "offered"}
    wrapper = {"line": 40, "role": "wrapper",
               "text": "AsyncEngineDeadError: Task finished unexpectedly. See stack trace above for the actual cause."}
    entries = [alloc, named, wrapper]
    xs = [entry_vector(e, i, [10, 11, 40], alloc, None, entries) for i, e in enumerate(entries)]
    assert [x[INDEX["names_error"]] for x in xs] == [0.0, 1.0, 1.0]
    assert [x[INDEX["points_elsewhere"]] for x in xs] == [0.0, 0.0, 1.0]
    level = entry_vector({"line": 5, "text": 'time=2026-02-06T21:58:06 level=ERROR source=sched.go:490 msg="x"'}, 0, [5])
    assert level[INDEX["error_level"]] == 1.0 and level[INDEX["quiet_level"]] == 0.0
