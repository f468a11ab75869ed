"""Issue 13 item 2: the generator draws failures and warnings from the message
catalogue, and the classifier reads what the catalogue says a failing line is.
Logs here are built around exact program strings (catalogue templates and
signature examples), never copied from corpora-real."""
from __future__ import annotations

import csv
from collections import Counter

from forensics import classify
from forensics.lab.generator.from_catalogue import POOL_RULES, pool
from forensics.lab.generator.pastes import build_paste, write_pastes
from forensics.diagnosis.catalogue_features import line_facts
from forensics.diagnosis.features import TEXT_FIELDS, incident_features
from forensics.diagnosis.taxonomy import FAILURE_LABELS
from forensics.events.catalogue import lookup_all

from conftest import CORPORA


def test_line_facts_name_the_catalogue_label_package_and_exception():
    facts = line_facts("RuntimeError: CUDA error: invalid device ordinal")
    assert "label:config.invalid-argument" in facts and "pkg:cuda-runtime" in facts
    # a warning that carries a caught exception: both messages are read
    facts = line_facts("Could not import Flash Attention enabled models: No module named 'vllm'")
    assert "label:env.module-missing" in facts and "pkg:tgi" in facts
    facts = line_facts("ValueError: type fp8e4nv not supported in this architecture. "
                       "The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')")
    assert "label:env.gpu-arch-unsupported" in facts and "exc:ValueError" in facts


def test_a_template_that_says_nothing_of_its_own_is_not_a_fact():
    # sglang logs "RuntimeError {e}.": it matches every RuntimeError line
    assert any(e.template == "RuntimeError {e}." for e in lookup_all("RuntimeError: foo bar baz."))
    assert line_facts("RuntimeError: foo bar baz.") == ()
    assert line_facts("a line no program prints at all, surely") == ()


def _incident(tmp_path, text: str):  # type: ignore[no-untyped-def]
    from forensics.pipeline import diagnose_source
    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import Source

    p = tmp_path / "t.log"
    p.write_text(text, encoding="utf-8")
    incs: list = []
    res = diagnose_source(Source(str(p), p), sset=signature_set(), use_classifier=False, keep_incidents=incs)
    return incs[res.get("incident") or 0], res


def test_the_catalogue_field_of_a_failure(tmp_path):
    text = "\n".join([
        "[2026-03-01 10:00:00] Init torch distributed begin.",
        "[2026-03-01 10:00:01 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 476, in set_device',
        "    torch._C._cuda_setDevice(device)",
        "RuntimeError: CUDA error: invalid device ordinal",
    ]) + "\n"
    inc, res = _incident(tmp_path, text)
    f = incident_features(inc, res.get("phase"), res["evidence"][0]["line"])
    assert set(TEXT_FIELDS) <= set(f)
    toks = f["catalogue"].split()
    assert "catp_label_config.invalid-argument" in toks and "catp_pkg_cuda-runtime" in toks


def test_the_pool_teaches_every_label_with_its_own_words():
    import re

    p = pool()
    assert set(p["failures"]) == set(FAILURE_LABELS)
    for label, items in p["failures"].items():
        assert items, label
        for d in items:
            assert d["label"] == label and re.search(POOL_RULES[label], d["template"], re.I), (label, d)
            assert d["release"] and d["id"].startswith(d["package"] + ":")
    # compilers and build tools teach only building (and target architectures)
    assert not any(d["package"] in ("ptxas", "ninja") for lab in ("gpu.illegal-access", "dist.nccl")
                   for d in p["failures"].get(lab, []))


def test_pastes_are_deterministic_and_their_proof_survives(tmp_path):
    a = build_paste(7, 3, "env.module-missing", 1)
    b = build_paste(7, 3, "env.module-missing", 1)
    assert a is not None and a == b
    rows = write_pastes(7, tmp_path, 2, list(FAILURE_LABELS))
    assert Counter(r["root_cause"] for r in rows) == {lab: 2 for lab in FAILURE_LABELS}
    for r in rows:
        text = (tmp_path / f"{r['id']}.log").read_text(encoding="utf-8")
        assert r["fatal_substring"] and r["fatal_substring"] in text, r
        assert not r["early_warning_substring"] or r["early_warning_substring"] in text, r


def test_pastes_are_failures_that_the_tool_detects(tmp_path):
    rows = write_pastes(11, tmp_path, 3, list(FAILURE_LABELS))
    failed = sum(classify((tmp_path / f"{r['id']}.log").read_text(encoding="utf-8"))["verdict"] == "failed"
                 for r in rows)
    assert failed >= 0.85 * len(rows), (failed, len(rows))


def test_the_committed_corpus_holds_catalogue_pastes_of_every_label():
    rows = list(csv.DictReader(open(CORPORA / "generated" / "labels.csv", encoding="utf-8")))
    pastes = [r for r in rows if "renderer=paste-" in r["note"]]
    assert {r["root_cause"] for r in pastes} == set(FAILURE_LABELS)
    servers = {r["note"].split("server=")[1].split(" ")[0] for r in pastes}
    assert {"tgi", "lmdeploy", "vllm-v1", "vllm-ascend", "sglang"} <= servers, servers
