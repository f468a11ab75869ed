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


def run_cli(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (what users run)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "forensics", *args], input=input, capture_output=True,
                          timeout=timeout, env=env, cwd=REPO)


@pytest.fixture
def cli():
    return run_cli


SHARED_MISSING = (f"needs ../shared/corpora-real (the real labelled logs, not in the repository): "
                  f"lay shared/ beside the checkout ({REAL} is absent)")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=SHARED_MISSING)


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI a missing ../shared must fail the run, not skip tests quietly.
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") and not REAL.is_dir():
        pytest.exit(f"CI: {SHARED_MISSING}", returncode=2)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SHARED_MISSING in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} tests skipped: {SHARED_MISSING}", yellow=True, bold=True)
