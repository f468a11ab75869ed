"""Whole-log answers carried in-band: every log of the fixture corpora has an
approved expectation (tests/fixtures/<corpus>/<name>.expected.json) and
classify must give it. After an intended change:
``FORENSICS_UPDATE_FIXTURES=1 python -m pytest tests/pipeline/test_fixtures.py`` rewrites
them; review ``git diff tests/fixtures`` and commit."""
from __future__ import annotations

import pytest

import approved as A

SIDECARS = A.sidecars()


@pytest.mark.parametrize("sidecar", SIDECARS, ids=lambda p: p.relative_to(A.FIXTURES).as_posix())
def test_classify_gives_the_approved_answer(sidecar):
    doc = A.read_sidecar(sidecar)
    log = A.log_of(sidecar, doc)
    assert log.is_file(), f"{sidecar.relative_to(A.REPO)}: its log {log} is gone (delete the sidecar)"
    diff = A.mismatch(sidecar)
    if diff and A.UPDATE:
        A.write_sidecar(sidecar, log, doc)
        return
    assert diff is None, (f"{log.relative_to(A.REPO)} no longer gives its approved answer "
                          f"(intended? FORENSICS_UPDATE_FIXTURES=1 re-approves):\n{diff}")


def test_every_fixture_corpus_log_has_an_expectation():
    missing = [log for log in A.corpus_logs() if not A.sidecar_for(log).is_file()]
    if missing and A.UPDATE:
        for log in missing:
            A.write_sidecar(A.sidecar_for(log), log, {})
        return
    assert not missing, (f"{len(missing)} fixture logs have no approved answer, e.g. {missing[0]}: "
                         f"FORENSICS_UPDATE_FIXTURES=1 writes them")


def test_the_fixtures_are_the_ones_the_expectations_name():
    # Two logs never share a sidecar name (a corpus folder name is the key).
    logs = A.corpus_logs()
    assert len({A.sidecar_for(p) for p in logs}) == len(logs)
    sidecars = A.sidecars()  # read again: an update run may have just written some
    assert len(sidecars) >= len(logs) >= 200
    assert {"failed", "ready"} <= {A.read_sidecar(s)["expected"]["verdict"] for s in sidecars}
