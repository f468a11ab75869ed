"""The rules scored with a family's own signatures held out (``forensics.lab.rules_holdout``)."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.signatures import SignatureSet, signature_set
from forensics.lab import rules_holdout as rh
from forensics.lab.evaluate import read_labels
from forensics.pipeline import load_classifier

REPO = Path(__file__).resolve().parents[2]
# A real log (corpora/cpu: vLLM's CLI rejecting an argument), decided by a signature.
LOG = REPO / "corpora" / "cpu"


def test_own_signatures_are_those_only_one_public_family_matches():
    matched = {"a": {"vllm"}, "b": {"vllm", "sglang"}, "c": {"project:cpu"}, "d": {"tgi"},
               "e": {"tgi", "project:gpu"}}
    assert rh.own_signatures(matched) == {"vllm": {"a"}, "tgi": {"d"}}


def _decided_log() -> tuple[Path, dict]:
    sset, clf = signature_set(), load_classifier(True)
    for row in read_labels(LOG):
        res = rh._diagnose(row["_path"], sset, clf)
        if res and res.get("decided_by") == "signature" and res.get("signature"):
            return Path(row["_path"]), res
    raise AssertionError("no log of corpora/cpu is decided by a signature")


def test_recording_sees_the_deciding_signature_and_undo_restores_the_set():
    sset, clf = signature_set(), load_classifier(True)
    path, res = _decided_log()
    seen: set[str] = set()
    undo = rh._recording(sset, seen)
    try:
        again = rh._diagnose(str(path), sset, clf)
    finally:
        undo()
    assert again["root_cause"] == res["root_cause"]
    assert res["signature"] in seen
    assert "match_views" not in vars(sset) and "match_event" not in vars(sset)


def test_a_log_read_without_the_signature_that_decided_it_is_decided_otherwise():
    sset, clf = signature_set(), load_classifier(True)
    path, res = _decided_log()
    reduced = SignatureSet([s for s in sset.signatures if s.id != res["signature"]], "test-reduced")
    other = rh._diagnose(str(path), reduced, clf)
    assert other is not None and other.get("signature") != res["signature"]
    assert rh._score({"root_cause": res["root_cause"], "_path": str(path)}, res, sset)["top1"] == 1


def test_an_unwritable_json_path_is_refused_before_the_run(tmp_path, capsys):
    from forensics.lab import crossval

    for main in (rh.main, crossval.main):
        assert main(["--json", str(tmp_path / "missing" / "figures.json")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("forensics: --json ") and err.count("\n") == 1


def test_strictly_the_projects_reproductions_do_not_vouch_for_a_signature():
    matched = {"a": {"vllm"}, "b": {"vllm", "sglang"}, "e": {"tgi", "project:gpu"}, "c": {"project:cpu"}}
    assert rh.own_signatures(matched, project_vouches=False) == {"vllm": {"a"}, "tgi": {"e"}}


def test_a_family_is_read_by_a_classifier_that_never_saw_it():
    from types import SimpleNamespace

    from forensics.lab.train import family_folds, held_out_classifiers

    # Balanced by rows: the two largest families never share a fold; project rows ("") are in none.
    groups = ["vllm"] * 9 + ["sglang"] * 7 + ["tgi"] * 3 + ["triton"] * 3 + ["nim"] + [""] * 5
    folds = family_folds(groups, 3)
    assert set(folds) == {"vllm", "sglang", "tgi", "triton", "nim"}
    assert folds["vllm"] != folds["sglang"] and folds == family_folds(list(reversed(groups)), 3)
    # A classifier that never read the public corpus reads every family as it is.
    plain = SimpleNamespace(meta={"corpus_hash": "x"})
    assert held_out_classifiers(plain)("vllm") is plain
    assert held_out_classifiers(None)("vllm") is None


def test_a_healthy_log_is_scored_on_its_phase_and_verdict(tmp_path):
    from forensics.diagnosis.signatures import signature_set

    log = tmp_path / "x.log"  # a quiet vLLM start-up: nothing for watch to print live
    log.write_text("INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
                   "INFO 01-01 00:00:05 [launcher.py:29] Available routes are:\n"
                   "INFO:     Application startup complete.\n")
    row = {"_path": str(log), "phase": "shutdown", "verdict": "ready"}
    sset = signature_set()
    assert rh._score_healthy(row, {"verdict": "ready", "phase": "shutdown"}, sset) == \
        {"n": 1, "phase": 1, "verdict": 1, "called_failed": 0, "false_live": 0}
    assert rh._score_healthy(row, {"verdict": "failed", "phase": "serving"}, sset) == \
        {"n": 1, "phase": 0, "verdict": 0, "called_failed": 1, "false_live": 0}
