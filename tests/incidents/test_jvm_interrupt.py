"""The JVM's thread interrupt (``java.lang.InterruptedException``) names a stop, as Ctrl-C does in
Python: after readiness it is no failure; where a worker really failed, its own error decides."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.signatures import signature_set
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source

PUBLIC = Path(__file__).resolve().parents[2] / "corpora" / "public"


def _diagnose(rel: str) -> dict:
    path = PUBLIC / rel
    return diagnose_source(Source(str(path), path), sset=signature_set(), use_classifier=False)


def test_the_jvms_thread_interrupt_at_an_operators_stop_is_no_failure():
    # TorchServe stopped by its operator after serving: each worker thread's wait is interrupted
    # (java.lang.InterruptedException stacks) before 'Torchserve stopped.'.
    res = _diagnose("batch-61/016.log")
    assert res["verdict"] == "ready" and res["root_cause"] is None


def test_a_worker_that_failed_is_still_failed_and_its_own_error_is_the_evidence():
    # the same server's next start: the handler's import fails (ModuleNotFoundError), the worker
    # threads are interrupted after it: the import error, not the interrupt, is what the log proves
    res = _diagnose("batch-61/018.log")
    assert res["verdict"] == "failed"
    assert not any("InterruptedException" in (e.get("text") or "")[:60] for e in res["evidence"][:1])
