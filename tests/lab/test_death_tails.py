"""The death detector's cross-validation scores a healthy log by the lines the detector reads at
run time, in the lifetimes it is consulted on: nothing else may set its threshold."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.signatures import signature_set
from forensics.ingest.sources import Source
from forensics.lab.decision_train import _read_at_run_time
from forensics.pipeline import diagnose_source

PUBLIC = Path(__file__).resolve().parents[2] / "corpora" / "public"


def _incidents(rel: str) -> list:
    path = PUBLIC / rel
    kept: list = []
    diagnose_source(Source(str(path), path), sset=signature_set(), use_classifier=False, keep_incidents=kept)
    return kept


def test_an_operator_stop_gives_the_detector_nothing_to_read():
    # vLLM stopped with Ctrl-C during torch.compile: the parent's "Engine core initialization
    # failed" (0.93 by the shipped model) echoes the stop, and the lifetime shut down.
    assert _read_at_run_time(_incidents("batch-02/026.log")) == []


def test_a_llama_cpp_server_that_listened_and_stopped_is_not_read():
    # llama.cpp (common_log format) answering requests with 500s, then stopped: ready, shut down.
    assert _read_at_run_time(_incidents("batch-30/003.log")) == []


def test_a_start_up_that_died_unnoticed_is_read():
    # a failure no rule calls failed must still give the detector its last lines
    tails = [t for rel in ("batch-13/015.log", "batch-01/001.log", "batch-26/006.log")
             for t in _read_at_run_time(_incidents(rel))]
    assert tails


def test_a_server_that_answered_a_local_client_is_not_read():
    # no readiness line, but a client's HTTP 400 from the server on 127.0.0.1: it was up
    assert _read_at_run_time(_incidents("batch-11/018.log")) == []


def test_the_bar_lets_through_a_fixed_share_of_healthy_logs_and_then_detects_the_most():
    from forensics.lab.decision_train import HEALTHY_SHARE, death_threshold

    # held-out best lines of 100 healthy logs, three of them outliers (a TPU host's harmless ERROR ...)
    healthy = [0.05] * 96 + [0.65, 0.7, 0.8, 0.964]
    deaths = [0.6 + 0.01 * i for i in range(40)]
    t = death_threshold(healthy, deaths)
    assert int(HEALTHY_SHARE * 100) == 3 and 0.65 < t <= 0.652 + 1e-9  # three of four outliers over: the lowest such bar
    assert death_threshold(healthy[:96] + [0.964], deaths) <= 0.052 + 1e-9  # one outlier: every death found
    # more outliers than the share: only the highest healthy scores may stay over
    crowded = [0.05] * 90 + [0.9] * 10
    assert death_threshold(crowded, [0.95, 0.99]) > 0.9
    assert death_threshold([0.3], [0.9]) == 0.302 and death_threshold([], [0.9]) == 0.5


def test_an_exception_line_that_names_a_stop_is_no_death():
    # A notebook cell stopped with Ctrl-C while vLLM loaded weights: the KeyboardInterrupt line has the
    # resource tracker's warning run onto it (stderr, no line break); the operator stopped it.
    from forensics.diagnosis.decision.death import _stop_exception

    assert _stop_exception("KeyboardInterrupt: /usr/lib/python3.10/multiprocessing/resource_tracker.py:224: "
                           "UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects")
    assert _stop_exception("KeyboardInterrupt") and _stop_exception("  SystemExit: 2")
    assert not _stop_exception("RuntimeError: CUDA error: out of memory")
    assert not _stop_exception("ERROR 08-13 15:01:07 [tpu_info.py:26] Unable to poll TPU GCE Metadata.")


def test_a_server_that_answered_and_then_lost_its_runner_is_read_after_readiness():
    # Ollama on ROCm (gfx1151): the runner started, the first chat's kernel fails ('ROCm error: invalid
    # device function'), the server answers that chat and then reports its runner's exit status at ERROR.
    from forensics.diagnosis.decision.death import candidates, consulted, consulted_up

    inc = _incidents("batch-70/004.log")[-1]
    assert not consulted(inc) and consulted_up(inc)
    read = [ev.text for ev in candidates(inc, up=True)]
    assert any("llama runner terminated" in t for t in read)
    assert not any("ROCm error" in t for t in read)  # the 200 answer after it was progress: not where it died
    assert any("llama runner terminated" in t for t in _read_at_run_time([inc], up=True))
    assert _read_at_run_time([inc]) == []  # not a start-up: the start-up bar never weighs it


def test_a_ready_server_stopped_by_its_operator_is_not_read_after_readiness():
    # llama.cpp answering requests with 500s, then stopped: the stop ended it, not a death.
    assert _read_at_run_time(_incidents("batch-30/003.log"), up=True) == []

