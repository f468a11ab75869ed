"""The blind second reading (``forensics.lab.agreement``): the record is whole and the figures
are what its rows say."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.diagnosis.taxonomy import LABELS
from forensics.lab import agreement as ag

REPO = Path(__file__).resolve().parents[2]


def _row(first: str, second: str, decision: str = "", verdict: str = "failed", phase: str = "launch",
         log: str = "batch-01/001.log") -> dict[str, str]:
    return {"group": "A", "blind": "001", "log": log, "first_verdict": verdict, "second_verdict": verdict,
            "first_label": first, "second_label": second, "first_phase": phase, "second_phase": phase,
            "first_early_warning": "", "second_early_warning": "",
            "verdict_decision": "", "label_decision": decision, "phase_decision": "", "adjudication_reason": ""}


RECORDS = (ag.READINGS, ag.READINGS.with_name("readings-84-91.csv"))


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_the_record_is_whole(record):
    rows = ag.load(record)
    assert len(rows) >= 100 and len({r["log"] for r in rows}) == len(rows)  # each log read once
    for r in rows:
        assert (REPO / "corpora" / "public" / r["log"]).is_file()
        for f in ag.FIELDS:  # every difference was adjudicated, and only differences were
            differs = r[f"first_{f}"] != r[f"second_{f}"]
            assert bool(r[f"{f}_decision"]) == differs, (r["log"], f)
            assert r[f"{f}_decision"] in ("", "first", "second", "both", "neither")
        for side in ("first", "second"):
            assert r[f"{side}_label"] in LABELS or (r[f"{side}_label"] == "" and r[f"{side}_verdict"] != "failed")


def test_the_figures_count_agreement_and_what_stands():
    rows = [_row("gpu.out-of-memory", "gpu.out-of-memory"), _row("dist.nccl", "unknown", "both"),
            _row("config.model-load", "unknown", "second"), _row("", "", verdict="ready", phase="ready")]
    fig = ag.figures(rows)
    assert fig["label_failures"] == {"agree": 1, "of": 3, "share": round(1 / 3, 4)}
    assert fig["label_stands"]["agree"] == 2 and fig["healthy"] == 1
    assert fig["decisions"]["label"] == {"both": 1, "second": 1}


def test_the_answers_are_set_beside_both_readings():
    rows = [_row("gpu.out-of-memory", "gpu.out-of-memory", log="batch-01/001.log"),
            _row("dist.nccl", "unknown", "both", log="batch-01/002.log")]
    holdout = {"families": {"x": {"cases": [{"path": "/w/corpora/public/batch-01/001.log", "answer": "gpu.out-of-memory"},
                                            {"path": "/w/corpora/public/batch-01/002.log", "answer": "unknown"}]}}}
    got = ag.against_answers(rows, *ag.holdout_answers(holdout))
    assert got["right_first"]["agree"] == 1 and got["right_second"]["agree"] == 2 and got["right_either"]["agree"] == 2
    assert got["right_where_readers_agree"]["agree"] == 1 and got["right_where_readers_split"]["agree"] == 0


def test_an_unreadable_record_or_holdout_is_exit_2(tmp_path, capsys):
    assert ag.main(["--readings", str(tmp_path / "missing.csv")]) == 2
    assert capsys.readouterr().err.startswith("error:")
    for text in ("{}", "[1]", "not json"):
        (tmp_path / "h.json").write_text(text)
        assert ag.main(["--holdout", str(tmp_path / "h.json")]) == 2
        assert capsys.readouterr().err.startswith("error:")


def test_the_first_looks_answers_are_the_ledgers():
    # batches 84-91 read a second time: their first looks' misses are the only answers not the label
    rows = ag.load(RECORDS[1])
    answers, _ = ag.first_look_answers(rows)
    failed = [r for r in rows if r["first_verdict"] == "failed"]
    assert len(answers) == len(failed) == 139
    right = sum(answers[r["log"]] == r["first_label"] for r in failed)
    assert right == 70  # the ledger's rows for batches 84-91 (hybrid top-1) add up to 70 of 139


def test_a_record_or_holdout_of_the_wrong_shape_is_exit_2_not_a_traceback(tmp_path, capsys):
    # a CSV without the record's columns, a row naming a log not in the corpus, a holdout whose
    # families or cases are not objects: one line on stderr and exit 2
    (tmp_path / "cols.csv").write_text("a,b\n1,2\n")
    row = {**_row("gpu.out-of-memory", "gpu.out-of-memory", log="batch-00/missing.log"),
           "first_early_warning": "x", "second_early_warning": "x"}
    (tmp_path / "missing.csv").write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n")
    for readings in ("cols.csv", "missing.csv"):
        assert ag.main(["--readings", str(tmp_path / readings)]) == 2
        assert capsys.readouterr().err.startswith("error:")
    for text in ('{"families": {"x": 5}}', '{"families": {"x": {"cases": [{"path": 3, "answer": "x"}]}}}',
                 '{"families": {"x": {"cases": [7]}}}'):
        (tmp_path / "h.json").write_text(text)
        assert ag.main(["--holdout", str(tmp_path / "h.json")]) == 2
        assert capsys.readouterr().err.startswith("error:")


def test_holdout_and_first_looks_together_are_refused_not_one_silently_dropped(tmp_path, capsys):
    (tmp_path / "h.json").write_text('{"families": {}}')
    with pytest.raises(SystemExit) as exc:
        ag.main(["--holdout", str(tmp_path / "h.json"), "--first-looks"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err
