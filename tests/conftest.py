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


needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/corpora-real not present")
