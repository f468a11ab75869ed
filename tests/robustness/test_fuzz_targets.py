"""Replay the corpus of every reader's fuzz target (fuzz/fuzz_*.py) through
its own checks, without atheris: seeds plus the inputs that once crashed."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARGETS = {"fuzz_envelope": "corpus-envelope", "fuzz_tables": "corpus-tables", "fuzz_files": "corpus-files",
           "fuzz_parse": "corpus"}


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
