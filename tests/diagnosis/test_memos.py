"""Answers never depend on what the text memos hold: a crash loop classified
twice in one process, with every memo shrunk so that it is cleared over and
over, gives the answer a fresh process gives."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_FRESH = "import forensics, json, sys; print(json.dumps(forensics.classify(sys.argv[1]), sort_keys=True, default=str))"


def _answer(path: Path) -> str:
    import forensics

    return json.dumps(forensics.classify(str(path)), sort_keys=True, default=str)


@pytest.fixture(scope="module")
def crash_loop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("memo") / "crashloop-12.log"
    subprocess.run([sys.executable, str(ROOT / "bench" / "crashloop.py"), "--lifetimes", "12", "--seed", "5",
                    "-o", str(out)], check=True, cwd=ROOT, capture_output=True, timeout=120)
    return out


def _tiny_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = importlib.import_module
    for module, name in [("forensics.diagnosis.signatures", "LINE_MEMO"),
                         ("forensics.diagnosis.literal_gate", "ONE_KEPT"),
                         ("forensics.diagnosis.early_warnings.candidates", "VERDICTS"),
                         ("forensics.diagnosis.early_warnings.candidates", "TEMPLATES_KEPT"),
                         ("forensics.diagnosis.early_warnings.subjects", "SUBJECTS_KEPT"),
                         ("forensics.diagnosis.early_warnings.subjects", "MODULES_KEPT"),
                         ("forensics.diagnosis.early_warnings.scoring", "TRAITS_KEPT"),
                         ("forensics.events.textmemo", "LIMIT"),
                         ("forensics.events.catalogue_index", "RX_MEMO"),
                         ("forensics.events.catalogue_index", "WORDS_MEMO"),
                         ("forensics.events.catalogue_index", "ENTRIES_MEMO"),
                         ("forensics.events.catalogue_blocks", "RECENT"),
                         ("forensics.events.catalogue_packed", "MODULES_KEPT"),
                         ("forensics.envelope.journald", "SEEN_LIMIT")]:
        assert hasattr(mod(module), name), (module, name)
        monkeypatch.setattr(mod(module), name, 3)


def test_warm_and_cleared_memos_give_the_fresh_answer(crash_loop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fresh = subprocess.run([sys.executable, "-c", _FRESH, str(crash_loop)], check=True, capture_output=True,
                           text=True, env=env, timeout=300).stdout.strip()
    assert json.loads(fresh)["incidents"], "the crash loop has lifetimes"
    first = _answer(crash_loop)
    assert first == fresh
    _tiny_memos(monkeypatch)
    assert _answer(crash_loop) == fresh  # warm memos, cleared every few entries
    assert _answer(crash_loop) == fresh
