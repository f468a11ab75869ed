"""Wording that says a failure follows (``early_warnings/wording.yaml``) after the fact: a line
holding an any-level class is a candidate whatever its level, it weighs more when what it says
follows is the failure that came, and a class read after the fact only is not announced live.
Subject families that relate such a line to its failure: a CPU emulated in software and the
instruction it lacked; DeepGEMM's import and the CUDA toolkit it needs."""
from __future__ import annotations

import pytest

from forensics.diagnosis.early_warnings import subjects
from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.candidates import Candidate, _judge
from forensics.diagnosis.early_warnings.live import live_decision
from forensics.diagnosis.early_warnings.scoring import LIST_THRESHOLD, Failure, score_candidate
from forensics.events import types as kinds
from forensics.events.types import Event

EMPTY = Baseline(frozenset(), {}, {}, 0)


@pytest.mark.parametrize("line", [
    "    runnable due to low free GPU memory.",  # NIM's profile selection, a continuation line at INFO
    "* You haven't downloaded any model yet.",  # text-generation-webui's banner, no level
    "<jemalloc>: (This is the expected behaviour if you are running under QEMU)",
])
def test_an_any_level_class_makes_an_unlevelled_line_a_candidate(line: str) -> None:
    assert _judge(Event(kinds.MESSAGE, 3, line))[2] is not None


def test_a_plain_line_is_still_no_candidate() -> None:
    assert _judge(Event(kinds.MESSAGE, 3, "15:17:21-977651 INFO     Loading \"Hermes-2-7B.Q5_K_M\""))[2] is None


def _failure(label: str, text: str) -> Failure:
    return Failure(label, 20, None, text, subjects(text))


def test_a_line_that_says_the_failure_follows_is_listed() -> None:
    cand = Candidate(Event(kinds.LOG, 9, "0.02.839.307 W operator(): failed to measure the memory of the extra "
                                         "model, fitting without it"), "WARNING")
    oom = _failure("gpu.out-of-memory", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 489.00 MiB on "
                                        "device 0: cudaMalloc failed: out of memory")
    score, reasons, _ = score_candidate(cand, oom, EMPTY, {})
    assert score >= LIST_THRESHOLD and any("memory-unmeasured" in r for r in reasons)
    port = _failure("net.port-in-use", "OSError: [Errno 98] Address already in use")
    other, reasons, _ = score_candidate(cand, port, EMPTY, {})
    assert other < score and not any("memory-unmeasured" in r for r in reasons)


def test_a_missing_model_foretold_at_no_level() -> None:
    cand = Candidate(Event(kinds.MESSAGE, 4, "* You haven't downloaded any model yet."), None)
    fail = _failure("config.model-load", "15:17:21-978834 ERROR    The path to the model does not exist. Exiting.")
    score, reasons, _ = score_candidate(cand, fail, EMPTY, {})
    assert score >= LIST_THRESHOLD and any("model-not-there" in r for r in reasons)


def test_a_class_read_after_the_fact_only_is_not_announced() -> None:
    line = "INFO 02-23 00:50:03 __init__.py:187] No platform detected, vLLM is running on UnspecifiedPlatform"
    d = live_decision(Event(kinds.LOG, 3, line, level="INFO"), base=EMPTY)
    assert d is None or "nothing-detected" not in d["why"]
    qemu = "<jemalloc>: (This is the expected behaviour if you are running under QEMU)"
    assert live_decision(Event(kinds.MESSAGE, 3, qemu), base=EMPTY) is None


def test_an_emulated_cpu_and_its_illegal_instruction_are_one_subject() -> None:
    warn = subjects("<jemalloc>: (This is the expected behaviour if you are running under QEMU)")
    fail = subjects("qemu: uncaught target signal 4 (Illegal instruction) - core dumped")
    assert "fam:cpu-isa" in warn & fail


def test_deep_gemm_failing_to_import_is_about_the_cuda_toolkit() -> None:
    warn = subjects("Module vllm.third_party.deep_gemm was found but failed to import")
    fail = subjects("RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist")
    assert "fam:cuda-toolkit" in warn & fail


def test_stats_reports_of_a_stalled_engine_reach_the_warnings():
    # The serving bulk (batch statistics) is skipped by signatures and warnings, except a
    # report of requests running with no tokens coming: report after report, that is how
    # a hung collective shows before the watchdog kills the engine (public batch-13/006).
    from pathlib import Path

    import forensics

    log = Path(__file__).resolve().parents[2] / "corpora" / "public" / "batch-13" / "006.log"
    r = forensics.classify(log)
    assert r["root_cause"] == "dist.nccl"
    assert any("Running: 1 reqs" in w["text"] and "stalled" in w["why"] for w in r["early_warnings"])

