"""Diagnosis acceptance on the seed incidents and on real logs."""
from __future__ import annotations

import json

import pytest

from forensics import classify
from forensics.lab.evaluate import evaluate_dirs

from conftest import CORPORA, REAL, needs_real, run_cli

SEEDS = CORPORA / "seeds"


def _json(*args, input=None):
    p = run_cli("classify", "--format", "json", *args, input=input)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize("name", ["seed1.short.log", "seed1.short-iso.log", "seed1.json.log", "seed1.short-iso-precise.log"])
def test_seed1_full_renderings(name):
    # Verdict, cause, phase, evidence and warning lines are approved answers:
    # tests/fixtures/seeds/<name>.expected.json. What holds beyond them:
    rc, d = _json(str(SEEDS / name))
    assert rc == 1
    assert d["confidence"] >= 0.9
    walk = [w for w in d["early_warnings"] if "cutlass.cute.experimental" in w["text"]]
    assert walk and walk[0]["lead_seconds"] > 60
    assert walk[0]["line"] < d["evidence"][0]["line"]


def test_seed1_from_stdin():
    rc, d = _json(input=(SEEDS / "seed1.short.log").read_bytes())
    assert rc == 1 and d["source"] == "-" and d["root_cause"] == "env.module-missing"


def test_seed2_full_log():
    # cause, phase and evidence: tests/fixtures/seeds/seed2.full.expected.json
    rc, d = _json(str(SEEDS / "seed2.full.log"))
    assert rc == 1
    # The "Capture cuda graph failed" wrapper never decides.
    assert d["signature"] and "capture" not in d["signature"]


def test_seed2_tail30_is_only_as_sure_as_the_evidence():
    # verdict, phase and truncated: tests/fixtures/seeds/seed2.tail30.expected.json
    rc, d = _json(str(SEEDS / "seed2.tail30.log"))
    assert rc == 1 and d["truncated"] is True
    assert d["root_cause"] in ("unknown", "toolchain.compiler-missing", "toolchain.compile-failed")
    if d["root_cause"] == "unknown":
        # Read through the map of how far ``unknown`` leads, refit with each family held out: a near tie
        # reads what such answers are right held out (0.63), never the surer reading of a clear lead.
        assert d["confidence"] < 0.7
    else:
        assert d["confidence"] <= 0.8
    # Issue 27: the cut is inside FlashInfer's planning, which JIT-builds its kernels: a toolchain
    # label first or second among the candidates, and the reason said.
    toolchain = ("toolchain.compiler-missing", "toolchain.compile-failed")
    assert {c["label"] for c in d["candidates"][:2]} & set(toolchain)
    assert "FlashInfer" in d["classifier"]["jit_site"] and "JIT build" in d["summary"]


@needs_real
def test_real_dev_rules_only():
    r = evaluate_dirs([REAL / "dev"], use_classifier=False)
    assert r["modes"]["rules"]["accuracy"] >= 0.90
    assert r["evidence_hit_rate"] >= 0.90


@needs_real
def test_real_early_warnings():
    r = evaluate_dirs([REAL / "early-warning"], use_classifier=False)
    assert r["early_warning_recall"] >= 0.80


@needs_real
def test_real_healthy_none_failed_and_verdicts_match():
    r = evaluate_dirs([REAL / "healthy"], use_classifier=True)
    for mode in r["modes"].values():
        assert mode["healthy_called_failed"] == 0
    assert r["healthy_verdicts"]["match"] == r["healthy_verdicts"]["n"]


def test_a_cause_logged_as_a_warning_is_shown_with_the_fatal_error_it_led_to():
    lines = [
        "INFO 06-01 12:00:00 [api_server.py:1000] vLLM API server version 0.6.3",
        "WARNING 06-01 12:00:01 [_custom_ops.py:20] Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')",
        "INFO 06-01 12:00:05 [config.py:100] Loading model config",
        "Traceback (most recent call last):",
        '  File "/v/_custom_ops.py", line 40, in <module>',
        "    torch.ops._C.scalar_types",
        "RuntimeError: Tried to instantiate class '_C.ScalarType', but it does not exist! Ensure that it is registered via torch::class_",
    ]
    d = classify("\n".join(lines) + "\n")
    assert d["root_cause"] == "env.library-missing"
    assert d["evidence"][0]["role"] == "fatal" and "Tried to instantiate class" in d["evidence"][0]["text"]
    assert any("cannot open shared object file" in w["text"] for w in d["early_warnings"])


def test_a_summary_names_the_phase_it_reports_never_none(tmp_path):
    """A start-up cut before any marker (one pasted line of a vLLM launch) still gets a phase in the
    answer (inferred: launch); the one-line summary names that phase, not the lifetime's missing marker."""
    log = tmp_path / "cut.log"
    log.write_text("INFO 05-02 10:11:12 [api_server.py:1090] vLLM API server version 0.10.1\n")
    res = classify(str(log))
    assert res["verdict"] == "starting"
    assert "None" not in res["summary"]
    assert f"phase {res['phase']}" in res["summary"]
