"""Without ../shared the real-corpus tests print ONE clear line (not a quiet
skip); with CI=true the run fails instead."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REPO

PROBE = '''\
from conftest import needs_real, shared_logs

CASES = shared_logs("corpora-real/healthy")


@needs_real
def test_a():
    pass


@needs_real
def test_b():
    pass


def test_c():
    assert CASES == []
'''


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    tests = tmp_path / "checkout" / "tests"  # no shared/ beside this checkout
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    (tests / "test_probe.py").write_text(textwrap.dedent(PROBE))
    run_env = {k: v for k, v in os.environ.items() if k != "CI"} | env
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                          capture_output=True, cwd=tests.parent, env=run_env, timeout=120)


def test_one_line_names_what_did_not_run(tmp_path):
    p = _pytest(tmp_path)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    lines = [ln for ln in out.splitlines() if "corpora-real missing" in ln]
    assert lines == ["../shared/corpora-real missing: 2 real-corpus tests not run; test_probe.py ran without "
                     "their real-corpus cases (lay shared/ beside the checkout; in CI this fails)"], out


def test_in_ci_a_missing_shared_fails_the_run(tmp_path):
    p = _pytest(tmp_path, CI="true")
    out = p.stdout.decode() + p.stderr.decode()
    assert p.returncode != 0 and "CI: needs ../shared/corpora-real" in out, out
    assert " passed" not in out
