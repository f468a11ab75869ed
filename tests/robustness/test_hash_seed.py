"""No answer depends on Python's hash seed (a set's iteration order): the full
classify JSON of every corpus log, real set and seed is the same under two
seeds. A tie between two classifier candidates was once ordered by a set."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO


def _answers(tmp_path, seed: str) -> dict[str, str]:
    out = tmp_path / f"answers-{seed}.json"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, str(REPO / "bench" / "answers.py"), "--out", str(out)], env=env, check=True,
                   capture_output=True, timeout=900)
    return json.loads(out.read_text())


def test_every_answer_is_the_same_under_two_hash_seeds(tmp_path):
    a, b = _answers(tmp_path, "1"), _answers(tmp_path, "2")
    assert len(a) > 900 and a.keys() == b.keys()
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, differ[:20]
