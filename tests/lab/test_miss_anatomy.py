"""Why a held-out miss happened, decided by code (``forensics.lab.miss_anatomy``)."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.signatures import signature_set
from forensics.lab import miss_anatomy as ma
from forensics.lab import rules_holdout as rh
from forensics.lab.evaluate import read_labels
from forensics.pipeline import load_classifier

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "corpora" / "cpu"  # real logs reproduced on the project's machines, labelled


def _facts(**kw):
    base = {"answer": "gpu.out-of-memory", "truth": "gpu.out-of-memory", "evidence_rank": 0, "known": True}
    return {**base, **kw}


def test_buckets_follow_the_order_of_the_doc():
    assert ma.bucket(_facts(answer="none", evidence_rank=None, known=False)) == "e"
    assert ma.bucket(_facts(evidence_rank=None, known=False)) == "a"
    assert ma.bucket(_facts(evidence_rank=2, known=False)) == "b"
    assert ma.bucket(_facts(evidence_rank=2)) == "c"
    assert ma.bucket(_facts(answer="config.model-load")) == "d"
    assert ma.bucket(_facts(answer="config.model-load", known=False)) == "b"


def test_the_catalogue_knows_torchs_out_of_memory_line_and_not_a_made_up_one():
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB"
    status, labels = ma.catalogue_status([line], "gpu.out-of-memory")
    assert status == "right" and "gpu.out-of-memory" in labels
    assert ma.catalogue_status([line], "net.port-in-use")[0] == "other-label"
    assert ma.catalogue_status(["zqxj wvut plokm hgfd"], "gpu.out-of-memory") == ("no-entry", [])


def test_a_real_log_read_right_is_no_miss_and_a_mislabelled_copy_is_bucketed_from_its_facts():
    sset, clf = signature_set(), load_classifier(True)
    row = next(r for r in read_labels(LOG) if r.get("root_cause") and r.get("fatal_substring"))
    res = rh._diagnose(row["_path"], sset, clf)
    case = rh._case(row, res, rh._score(row, res, sset))
    right = ma.case_facts(case, res, sset)
    assert right["fatal_lines"] and right["evidence_rank"] is not None
    # The same diagnosis against another label: a miss whose evidence is still the labelled line,
    # so the label decision (or the knowledge of that line) is to blame, never the ranker.
    wrong = ma.case_facts({**case, "truth": "hang.timeout"}, res, sset)
    assert ma.is_miss({**case, "truth": "hang.timeout"})
    assert wrong["bucket"] in ("b", "d") and wrong["known"] == ("hang.timeout" in wrong["signature_labels"])
