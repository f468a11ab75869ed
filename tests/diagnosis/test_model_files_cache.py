"""A model built from one file never answers for another.

The learned parts build their model once per file read, keyed by the
identity of the file's data. CPython reuses an id once its object is freed
(the file cache keeps 8 files), so a key by id alone once gave a freed
file's model for the shipped one: one pinned answer moved on CI only, after
tests that read fold and temporary model files."""
from __future__ import annotations

import json

from forensics.diagnosis.decision import death, pair_model


def _death_file(path, bias: float) -> str:
    path.write_text(json.dumps({"version": f"t{bias}", "weights": {"killed": 1.0}, "bias": bias,
                                "threshold": 0.5, "threshold_up": None, "meta": {}}))
    return str(path)


def test_many_model_files_in_turn_each_answers_with_its_own(tmp_path, monkeypatch):
    pair_model._read.cache_clear()
    pair_model._SHIPPED.clear()
    try:
        for i in range(40):  # far past the file cache: freed ids come back
            monkeypatch.setenv("FORENSICS_DEATH_MODEL", _death_file(tmp_path / f"d{i}.json", float(i)))
            model = death.death_model()
            assert model is not None and model.bias == float(i)
            if i % 3 == 0:
                pair_model._read.cache_clear()  # as a fold's clean-up does
    finally:
        pair_model._read.cache_clear()
        pair_model._SHIPPED.clear()


def test_an_entry_left_at_a_reused_id_is_not_answered():
    data = {"n": 2}
    pair_model._SHIPPED[("x.json", id(data))] = ({"n": 1}, "built from another file")
    try:
        assert pair_model.built("x.json", data, lambda d: f"built from n={d['n']}") == "built from n=2"
    finally:
        pair_model._SHIPPED.clear()
