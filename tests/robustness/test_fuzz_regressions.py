"""Replay every file of fuzz/corpus (seeds and inputs that once crashed)
through parse + classify, with the fuzz target's own checks; plus a short,
bounded atheris run (marked ``slow``) so CI exercises the target itself."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fuzz" / "corpus"
TARGET = REPO / "fuzz" / "fuzz_parse.py"


def _load_target():
    spec = importlib.util.spec_from_file_location("fuzz_parse", TARGET)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


FILES = sorted(p for p in CORPUS.iterdir() if p.is_file()) if CORPUS.is_dir() else []


def test_corpus_is_not_empty():
    assert FILES, "fuzz/corpus has no files"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_replay(path):
    _load_target().check_one(path.read_bytes())


def test_replay_through_cli():
    """The whole corpus directory through the real CLI: exit 0/1, no traceback."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "forensics", "classify", "--format", "ndjson", str(CORPUS)],
                          capture_output=True, timeout=300, cwd=REPO, env=env)
    assert b"Traceback (most recent call last)" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    results = [json.loads(ln) for ln in proc.stdout.split(b"\n") if ln.strip()]
    assert len(results) == len(FILES)


@pytest.mark.slow
def test_short_fuzz_run(tmp_path):
    """A bounded libFuzzer run (new inputs go to tmp_path, never into fuzz/corpus)."""
    pytest.importorskip("atheris")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, str(TARGET), str(work), str(CORPUS), "-runs=1500", "-max_total_time=30",
         "-max_len=8192", "-timeout=20", "-rss_limit_mb=4096", f"-artifact_prefix={artifacts}/"],
        capture_output=True, timeout=180, cwd=REPO, env=env)
    tail = proc.stderr.decode("utf-8", "replace")[-4000:]
    crashes = sorted(p.name for p in artifacts.iterdir())
    assert proc.returncode == 0 and not crashes, f"fuzzer found {crashes} (copy them into fuzz/corpus):\n{tail}"
