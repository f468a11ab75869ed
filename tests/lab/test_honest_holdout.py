"""The held-out figures with the learned parts refit per fold (``forensics.lab.honest_holdout``):
a family's logs never reach the rows its own fold's models are fitted or thresholded on."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.diagnosis.decision.label_features import DecisionInputs
from forensics.lab import decision_train as dt
from forensics.lab import honest_holdout as hh

LABELS = ("env.module-missing", "gpu.out-of-memory", "config.model-load")
PROOFS = ("ModuleNotFoundError: No module named 'x'", "torch.OutOfMemoryError: CUDA out of memory",
          "OSError: cannot load the model config")


def _rows(families: list[str], per: int = 6) -> list[dt.Row]:
    rows = []
    for fam in families:
        for i in range(per):
            k = i % len(LABELS)
            inp = DecisionInputs(rule_label=LABELS[k] if i % 2 else None, rule_strength="weak",
                                 clf={LABELS[k]: 0.6, LABELS[(k + 1) % 3]: 0.3}, proof=PROOFS[k])
            rows.append(dt.Row(f"{fam}/{i}.log", fam, LABELS[k], inp, LABELS[k], 0.6))
    return rows


FAMILIES = [f"fam{i}" for i in range(10)]


def test_every_family_is_in_exactly_one_fold_and_the_largest_alone():
    groups = ["big"] * 40 + ["mid"] * 12 + [f for f in FAMILIES for _ in range(3)] + ["project:cpu"] * 9
    table = hh.fold_table(groups, 4)
    assert set(table) == {"big", "mid", *FAMILIES}  # the project's corpora are in no fold
    assert [f for f, k in table.items() if k == table["big"]] == ["big"]
    assert hh.fold_table(list(reversed(groups)), 4) == table  # deterministic


def test_a_familys_rows_never_reach_its_own_folds_label_model(monkeypatch):
    rows = _rows(FAMILIES) + _rows(["project:cpu"])
    held = _rows(FAMILIES)
    fitted: list[set[str]] = []
    thresholded: list[set[str]] = []
    real_fit, real_below = dt.fit, dt.fit_unknown_below
    calibrated: list[set[str]] = []
    monkeypatch.setattr(dt, "fit", lambda rs, seed=0, folds=5, held=None, unknown_below=dt.UNKNOWN_BELOW:
                        fitted.append({r.group for r in rs}) or calibrated.append({r.group for r in held or ()})
                        or real_fit(rs, seed, folds, held, unknown_below))
    monkeypatch.setattr(dt, "fit_unknown_below", lambda got: thresholded.append({r.group for r, _ in got}) or
                        real_below(got))
    drop = {"fam3", "fam7"}
    data = hh.fit_label(rows, held, drop, {"meta": {"ships": {"label": True}}}, seed=0)
    assert len(fitted) == hh.INNER + 1 and all(not (g & drop) for g in fitted)
    assert "project:cpu" in fitted[-1] and fitted[-1] == set(FAMILIES) - drop | {"project:cpu"}
    assert thresholded and not (thresholded[0] & drop)
    # The temperatures' held-out readings: never a dropped family's, and only the fitted families'.
    assert all(not (c & drop) and c <= f for c, f in zip(calibrated, fitted)) and calibrated[-1]
    assert data["meta"]["rows"] == len(rows) - 12 and data["unknown_below"] in dt.UNKNOWN_GRID
    assert data["calibration"]  # the fold's confidence maps, fitted without the fold too
    # The prior table counts the training rows only: each key's counts sum to its training rows.
    assert data["prior"] == dt.prior_table([r for r in rows if r.group not in drop])


def _death_logs() -> list[dt.DeathLog]:
    words = ("boom", "crash", "fatal", "abort")
    logs = []
    for n, fam in enumerate(FAMILIES + ["project:gpu"]):
        for i in range(4):
            failed = i % 2 == 0
            texts = [f"RuntimeError: {words[(n + i) % 4]} in step {i}", f"INFO loading shard {n}", "INFO ready"]
            logs.append(dt.DeathLog(f"{fam}/{i}", fam, failed, texts, 0 if failed else None, None, texts[1:]))
    return logs


def test_the_death_detectors_fit_without_a_fold_is_fit_death_on_the_other_logs():
    logs = _death_logs()
    docs = hh.DeathDocs(logs)
    for drop in (set(), {"fam2"}, {"fam0", "fam5", "project:gpu"}):
        assert docs.fit(drop) == dt.fit_death(hh.training(logs, drop))


def test_a_familys_logs_never_reach_its_own_folds_death_detector(monkeypatch):
    logs = _death_logs()
    docs = hh.DeathDocs(logs)
    fitted: list[set[str]] = []
    real = hh.DeathDocs.fit
    monkeypatch.setattr(hh.DeathDocs, "fit", lambda self, drop, seed=0: fitted.append(set(drop)) or
                        real(self, drop, seed))
    data = hh.fit_death(logs, {"fam0"}, seed=0, docs=docs)
    # One fit per training group with a healthy log the detector reads, and the fold's own.
    assert len(fitted) == len(FAMILIES) + 1 and all("fam0" in d for d in fitted) and fitted[-1] == {"fam0"}
    assert 0 < data["threshold"] <= 0.999 and data["meta"]["logs"] == len(logs) - 4


def test_a_group_with_failures_only_is_held_out_too(monkeypatch):
    # As death_crossval does: a family whose logs are all failures still weighs on the threshold,
    # with its proving lines scored by a fit without it (a fold that skipped it counted a third
    # fewer deaths than the shipped choice, and set its threshold far higher).
    logs = [g for g in _death_logs() if not (g.group == "fam3" and not g.failed)]
    docs = hh.DeathDocs(logs)
    fitted: list[set[str]] = []
    real = hh.DeathDocs.fit
    monkeypatch.setattr(hh.DeathDocs, "fit", lambda self, drop, seed=0: fitted.append(set(drop)) or
                        real(self, drop, seed))
    hh.fit_death(logs, {"fam0"}, seed=0, docs=docs)
    assert {"fam0", "fam3"} in fitted


def test_the_folds_baseline_leaves_out_its_healthy_logs(tmp_path):
    # Each family has as many healthy logs as the baseline needs to call a warning usual
    # (ew_baseline.MIN_HEALTHY_LOGS); scans are (log, server, templates, shapes, subjects, contexts).
    from forensics.lab.ew_baseline import MIN_HEALTHY_LOGS

    scans, groups_of = [], {}
    for fam in ("a", "b"):
        for i in range(MIN_HEALTHY_LOGS):
            log = tmp_path / f"{fam}{i}.log"
            log.write_text(f"{fam} {i} ready\n")
            scans.append((log, fam, {f"template of {fam}"}, set(), {f"subject-{fam}"}, set()))
            groups_of[log] = fam
    base = hh.fold_baseline(scans, groups_of, {"a"})
    assert base.n_logs == MIN_HEALTHY_LOGS and base.usual("template of b") and not base.usual("template of a")


def test_reading_with_a_fold_switches_the_models_and_restores_the_shipped(tmp_path, monkeypatch):
    from forensics.diagnosis.decision.label_model import label_model

    monkeypatch.delenv("FORENSICS_DECISION_MODEL", raising=False)
    monkeypatch.delenv("FORENSICS_DEATH_MODEL", raising=False)
    shipped = label_model()
    data = hh.fit_label(_rows(FAMILIES), _rows(FAMILIES), {"fam1"}, {"meta": {}}, seed=0)
    path = tmp_path / "decision.json"
    path.write_text(json.dumps(data))
    fold = hh.Fold(0, ["fam1"], path, Path(tmp_path / "no-death.json"), None)
    with hh.reading_with(fold):
        assert label_model() is not None and label_model().version == data["version"]
    after = label_model()
    assert (after is None) == (shipped is None) and (after is None or after.version == shipped.version)


@pytest.mark.parametrize("batch", ["batch-45"])
def test_the_ledger_pairs_a_first_look_with_the_same_logs_now(batch):
    looks = hh.first_looks(Path(__file__).resolve().parents[2] / "corpora" / "public")
    assert looks[batch]["failures"] >= looks[batch]["right"] and looks[batch]["missed"]
    case = {"path": f"corpora/public/{batch}/001.log", "truth": "x", "answer": "x"}
    out = {"families": {"f": {"cases": [case]}}, "healthy": {}}
    row = next(r for r in hh.ledger(out, Path(__file__).resolve().parents[2] / "corpora" / "public")
               if r["batch"] == batch)
    assert row["honest"] == [1, 1] and row["new_families"] == ["f"]


def test_a_familys_healthy_and_failed_logs_are_both_scored(tmp_path):
    # read_family passes each log's signature set to the healthy scoring too (the live warnings it
    # counts are read with the fold's signatures): a healthy log and a failure of one family.
    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import load_classifier

    ok = tmp_path / "ok.log"
    ok.write_text("INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.0\n"
                  "INFO:     Started server process [12]\n"
                  "INFO:     Application startup complete.\n"
                  "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n")
    bad = tmp_path / "bad.log"
    bad.write_text("INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.0\n"
                   "Traceback (most recent call last):\n"
                   "  File \"/usr/lib/python3.12/runpy.py\", line 198, in _run_module_as_main\n"
                   "ModuleNotFoundError: No module named 'vllm._C'\n")
    rows = [({"_path": str(ok), "verdict": "ready", "phase": "ready", "root_cause": ""}, "vllm"),
            ({"_path": str(bad), "verdict": "failed", "phase": "starting", "root_cause": "env.module-missing",
              "fatal_substring": "No module named 'vllm._C'", "early_warning_substring": ""}, "vllm"),
            ({"_path": str(bad), "root_cause": "env.module-missing"}, "sglang")]
    sset = signature_set()
    tot, healthy, cases, hcases = hh.read_family("vllm", rows, lambda row: sset, load_classifier(True))
    assert healthy["n"] == 1 and healthy["called_failed"] == 0 and healthy["false_live"] == 0
    assert tot["n"] == 1 and len(cases) == 1 and len(hcases) == 1  # the other family's log is not read


def test_the_bar_after_readiness_weighs_only_what_the_detector_reads_after_readiness():
    # Ready logs (the rules' verdict without the detector) are weighed on the lines the detector reads
    # after readiness: a healthy one's over the bar would be called failed; a start-up's lines never are.
    logs = _death_logs()
    for k, g in enumerate(logs):
        if k % 4 == 1:  # a healthy log that became ready and printed a worker's death-shaped line
            g.verdict, g.tail_up = "ready", ["ERROR worker process died, exit status 1"]
        elif k % 4 == 2:  # a failure its rules did not see, whose server had become ready
            g.verdict, g.tail_up = "ready", ['level=ERROR msg="llama runner terminated" error="exit status 2"']
    up_healthy = [g for g in logs if dt.consulted_healthy_up(g)]
    up_failed = [g for g in logs if dt.scored_failure_up(g)]
    assert up_healthy and up_failed and not any(dt.consulted_healthy(g) for g in up_healthy)
    data = hh.fit_death(logs, {"fam0"}, seed=0)
    assert 0.0 < data["threshold_up"] <= 0.999
    w, b = data["weights"], data["bias"]
    # no healthy log of the training groups is over the bar it set from their held-out scores alone
    sc = dt.held_out_scores(w, b, [g for g in hh.training(logs, {"fam0"})])
    assert len(sc["healthy_up"]) == len([g for g in up_healthy if g.group != "fam0"])


def test_a_fixed_bar_is_every_folds_bar_and_skips_the_inner_folds(monkeypatch):
    # --unknown-below: branches compared without each fold's pick on a flat curve moving it.
    rows, held = _rows(FAMILIES) + _rows(["project:cpu"]), _rows(FAMILIES)
    picked: list[int] = []
    monkeypatch.setattr(dt, "fit_unknown_below", lambda got: picked.append(1) or (0.5, []))
    data = hh.fit_label(rows, held, {"fam1"}, {"meta": {"ships": {"label": True}}}, seed=0, bar=0.25)
    assert data["unknown_below"] == 0.25 and not picked
    assert hh.fit_label(rows, held, {"fam1"}, {}, seed=0)["unknown_below"] == 0.5 and picked


def test_a_fixed_bar_outside_zero_to_one_is_refused(capsys):
    assert hh.main(["--unknown-below", "1.5"]) == 2
    assert "--unknown-below" in capsys.readouterr().err
