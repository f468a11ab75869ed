"""Replay the corpus of every reader's fuzz target (fuzz/fuzz_*.py) through
its own checks, without atheris: seeds plus the inputs that once crashed."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARGETS = {"fuzz_envelope": "corpus-envelope", "fuzz_tables": "corpus-tables", "fuzz_files": "corpus-files",
           "fuzz_parse": "corpus", "fuzz_archives": "corpus-archives"}


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "fuzz" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


CASES = [(t, p) for t, c in TARGETS.items() for p in sorted((REPO / "fuzz" / c).iterdir()) if p.is_file()]


def test_every_target_has_a_corpus():
    for t, c in TARGETS.items():
        assert (REPO / "fuzz" / f"{t}.py").is_file(), t
        assert any((REPO / "fuzz" / c).iterdir()), c


@pytest.mark.parametrize("target,path", [c for c in CASES if c[0] != "fuzz_parse"],
                         ids=[f"{t}:{p.name}" for t, p in CASES if t != "fuzz_parse"])
def test_replay(target, path):
    _load(target).check_one(path.read_bytes())


@pytest.mark.slow
def test_short_archive_fuzz_run(tmp_path):
    """A bounded libFuzzer run of the archive target (new inputs go to tmp_path)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("atheris")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, str(REPO / "fuzz" / "fuzz_archives.py"), str(work), str(REPO / "fuzz" / "corpus-archives"),
         "-runs=1500", "-max_total_time=30", "-max_len=16384", "-timeout=20", "-rss_limit_mb=4096",
         f"-artifact_prefix={artifacts}/"],
        capture_output=True, timeout=180, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    crashes = sorted(p.name for p in artifacts.iterdir())
    tail = proc.stderr.decode("utf-8", "replace")[-4000:]
    assert proc.returncode == 0 and not crashes, f"fuzzer found {crashes} (copy them into fuzz/corpus-archives):\n{tail}"
