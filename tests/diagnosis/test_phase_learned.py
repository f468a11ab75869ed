"""The learned phase decision (issue 27 item 4): what it reads beyond the rules' votes (where
failures of the label happen, counted over families; the failing lines' words; the order of
events), read at run time from the model's own file, and fitted without the row's own family."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.diagnosis.decision import pair_model
from forensics.diagnosis.decision.phase_features import FEATURES, PhaseInputs, pair_vector
from forensics.diagnosis.decision.phase_words import proba
from forensics.diagnosis.taxonomy import PHASES
from forensics.ingest.sources import Source
from forensics.lab.decision_train import Row
from forensics.lab.phase_train import WordCounts, phase_prior_table, with_phase_priors
from forensics.pipeline import diagnose_source

# vLLM V1 failing to read a checkpoint shard (safetensors' header check), no load marker printed.
LOG = """\
INFO 06-01 10:00:00 [api_server.py:1895] vLLM API server version 0.11.0
INFO 06-01 10:00:00 [utils.py:326] non-default args: {'model': 'org/model-7b'}
ERROR 06-01 10:00:40 [core.py:708] EngineCore failed to start.
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core
    engine_core = EngineCoreProc(*args, **kwargs)
  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 2120, in load_model
    self.model = get_model(vllm_config=self.vllm_config)
  File "/usr/local/lib/python3.12/dist-packages/safetensors/torch.py", line 311, in load_file
    with safe_open(filename, framework="pt", device=device) as f:
safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge
"""


def _model(tmp_path: Path, weights: dict[str, float], prior: dict | None) -> Path:
    data = {"version": "test", "features": list(FEATURES), "classes": list(PHASES),
            "weights": [weights.get(f, 0.0) for f in FEATURES], "temperature": 1.0, "prior": prior or {},
            "active": True, "meta": {"crossval": {}}}
    path = tmp_path / "phase.json"
    path.write_text(json.dumps(data))
    return path


def _phase(tmp_path: Path, monkeypatch, model: Path) -> str:
    monkeypatch.setenv("FORENSICS_PHASE_MODEL", str(model))
    pair_model._read.cache_clear()
    pair_model._SHIPPED.clear()
    log = tmp_path / "vllm.log"
    log.write_text(LOG)
    try:
        res = diagnose_source(Source(str(log), log))
    finally:
        pair_model._read.cache_clear()
        pair_model._SHIPPED.clear()
    return res["phase"]


def test_the_rules_answer_load_weights_and_a_model_reads_the_prior_of_its_own_file(tmp_path, monkeypatch):
    rules_only = _model(tmp_path, {"vote:rules": 5.0}, None)
    assert _phase(tmp_path, monkeypatch, rules_only) == "load-weights"
    # A model that trusts P(phase | label) over the rules answers from its own file's table.
    prior = {"label:config.model-load": {"memory-plan": 0.9, "load-weights": 0.1}}
    trusting = _model(tmp_path, {"vote:rules": 1.0, "prior:label": 5.0}, prior)
    assert _phase(tmp_path, monkeypatch, trusting) == "memory-plan"


def test_order_features_mark_a_fresh_marker_and_the_step_after_a_stale_one():
    fresh = PhaseInputs(rules="load-weights", marker="load-weights", marker_gap=1, label="config.model-load")
    stale = PhaseInputs(rules="load-weights", marker="load-weights", marker_gap=500, label="config.model-load")
    i_fresh, i_stale, i_next = (FEATURES.index(f) for f in ("marker_fresh", "marker_stale", "marker_stale_next"))
    assert pair_vector(fresh, "load-weights")[i_fresh] == 1.0 and pair_vector(fresh, "load-weights")[i_stale] == 0.0
    assert pair_vector(stale, "load-weights")[i_stale] == 1.0
    assert pair_vector(stale, "memory-plan")[i_next] == 1.0 and pair_vector(stale, "launch")[i_next] == 0.0


def _row(group: str, label: str, phase: str, words: str) -> Row:
    return Row(f"{group}.log", group, label, None, label, None, phase,
               PhaseInputs(rules="launch", label=label, words=words))


def test_a_training_row_reads_the_prior_and_the_words_of_the_other_families_only():
    oom = "torch.outofmemoryerror cuda out of memory fn_load_weights safetensors"
    rows = [_row("a", "gpu.out-of-memory", "load-weights", oom), _row("b", "gpu.out-of-memory", "load-weights", oom),
            _row("c", "gpu.out-of-memory", "load-weights", oom), _row("d", "gpu.out-of-memory", "memory-plan", oom),
            _row("e", "env.module-missing", "launch", "modulenotfounderror no module named")]
    table = phase_prior_table(rows)
    assert table["label:gpu.out-of-memory"]["load-weights"] > table["label:gpu.out-of-memory"]["memory-plan"]
    assert "label:env.module-missing" not in table  # one family carries it: no prior
    own, (test,) = with_phase_priors(rows, [_row("z", "gpu.out-of-memory", "memory-plan", oom)])
    # Row d's prior is counted without family d: it never saw its own memory-plan answer.
    assert own[3].phase_inputs.prior["label"] == {"load-weights": 0.75}
    assert max(test[0].phase_inputs.word_probs, key=test[0].phase_inputs.word_probs.get) == "load-weights"
    # The shipped table answers as the fitted arrays do (words only three families carry).
    shipped = WordCounts(rows).table()
    assert "modulenotfounderror" not in shipped["log_like"]
    got = proba(shipped, oom)
    assert max(got, key=got.get) == "load-weights" and abs(sum(got.values()) - 1) < 1e-9
