"""Where the session's shared reference answers live (tests/conftest.py's ``reference_answers``):
in this session's own temporary folder, never one an earlier session left, whatever the
environment says."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

# Stands in for tests/reference_answers.py: says where the fixture asked for the reference.
STUB = '''\
def start(where):
    print("REFERENCE-AT", where)


def wait(where):
    return {}
'''
PROBE = '''\
def test_asks(reference_answers):
    reference_answers()
'''


def test_a_pytest_started_from_an_xdist_worker_keeps_its_reference_in_its_own_folder(tmp_path: Path):
    """A pytest run inside an xdist worker's test inherits PYTEST_XDIST_WORKER; with no xdist of its
    own, its reference must sit in its own basetemp, not the parent (pytest-of-<user>, where an
    earlier session's reference-answers.json would be taken for this session's)."""
    tests = tmp_path / "checkout" / "tests"
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    (tests / "reference_answers.py").write_text(STUB)
    (tests / "test_probe.py").write_text(PROBE)
    base = tmp_path / "bt"
    # Without CI: the stub checkout has no ../shared, which under CI=true stops a run at once.
    env = {**{k: v for k, v in os.environ.items() if k != "CI"},
           "PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "2"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist",
                        f"--basetemp={base}", str(tests)], capture_output=True, text=True, cwd=tests.parent,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    at = [ln.split(" ", 1)[1] for ln in p.stdout.splitlines() if ln.startswith("REFERENCE-AT ")]
    assert at == [str(base.resolve())] or at == [str(base)], p.stdout[-2000:]


def test_a_reference_process_killed_mid_run_fails_the_wait_saying_how(tmp_path: Path, monkeypatch):
    """Killed from outside (the OOM killer's SIGKILL), the background process leaves no reference and no
    word in its stderr: the tests waiting on it fail, saying it was killed, and it is not started again."""
    import signal
    import time

    import pytest
    import reference_answers as R

    monkeypatch.setattr(R, "_STARTED", [])  # only this test's process (the session's own is not waited on)
    R.start(tmp_path)
    time.sleep(1)
    os.kill(R._STARTED[0].pid, signal.SIGKILL)
    with pytest.raises(AssertionError, match=r"failed \(exit status -9"):
        R.wait(tmp_path)
    R.start(tmp_path)
    assert len(R._STARTED) == 1  # the failure stands for the session: no second computation
