from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL = SHARED / "corpora-real"
CORPORA = REPO / "corpora"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def run_python(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python ARGS`` of this checkout in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, *args], input=input, capture_output=True,
                          timeout=timeout, env=env, cwd=REPO)


def run_cli(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (what users run)."""
    return run_python("-m", "forensics", *args, input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def reference_answers(tmp_path_factory):
    """A callable giving the normal path's answers of every corpus log
    (``tests/reference_answers.py``): computed once per session in the
    background from the first test that asks, shared by every xdist worker."""
    import reference_answers as R

    where = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        where = where.parent  # the session's folder, above each worker's own
    R.start(where)
    return lambda: R.wait(where)


SHARED_MISSING = (f"needs ../shared/corpora-real (the real labelled logs, not in the repository): "
                  f"lay shared/ beside the checkout ({REAL} is absent)")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=SHARED_MISSING)

# Modules that quietly leave out their real-corpus cases when ../shared is absent
# (a parametrize list built from a glob): named in the one summary line.
_WITHOUT_REAL: set[str] = set()


def shared_logs(folder: str, pattern: str = "*.log") -> list[Path]:
    """The files of one folder of ../shared (e.g. "corpora-real/healthy"), sorted;
    [] when it is absent, and then the caller is named in the summary line."""
    where = SHARED / folder
    if not where.is_dir():
        _WITHOUT_REAL.add(Path(sys._getframe(1).f_code.co_filename).name)
        return []
    return sorted(where.glob(pattern))


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI a missing ../shared must fail the run, not skip tests quietly.
    if IN_CI and not REAL.is_dir():
        pytest.exit(f"CI: {SHARED_MISSING}", returncode=2)


def shared_missing_line(skipped: int, without: list[str]) -> str | None:
    """The one line a run without ../shared prints (None when nothing was left out)."""
    if not skipped and not without:
        return None
    also = f"; {', '.join(without)} ran without their real-corpus cases" if without else ""
    return (f"../shared/corpora-real missing: {skipped} real-corpus tests not run{also} "
            f"(lay shared/ beside the checkout; in CI this fails)")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SHARED_MISSING in str(r.longrepr)]
    line = shared_missing_line(len(skipped), sorted(_WITHOUT_REAL))
    if line:
        terminalreporter.write_line(line, yellow=True, bold=True)

