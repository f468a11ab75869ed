"""``forensics train`` reaches its fixed point in one run: each learned part is fitted after the
parts whose answers its training rows read (``forensics.lab.train.TRAIN_ORDER``), so a second run
would change nothing (the classifier's rows read the death detector, the decision models read the
classifier, the early-warning listing reads the decided label)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from forensics.lab import train as lab_train


def test_every_part_comes_after_the_parts_its_training_reads():
    order = {name: i for i, name in enumerate(lab_train.TRAIN_ORDER)}
    reads = {"classifier": ("death",), "decision": ("death", "classifier"), "listing": ("classifier", "decision")}
    for part, before in reads.items():
        assert all(order[b] < order[part] for b in before), (part, before)


def test_the_steps_run_in_that_order_and_none_is_left_out():
    ran: list[str] = []
    got = lab_train.train_everything({n: (lambda n=n: ran.append(n) or n) for n in reversed(lab_train.TRAIN_ORDER)})
    assert ran == list(lab_train.TRAIN_ORDER) and list(got) == ran
    with pytest.raises(ValueError):
        lab_train.train_everything({"classifier": lambda: None})


def test_the_cli_trains_every_part_in_that_order(monkeypatch):
    from forensics.cli import lab as cli_lab

    ran: list[str] = []
    monkeypatch.setattr(cli_lab, "_train_death", lambda seed: ran.append("death"))
    monkeypatch.setattr(cli_lab, "_train_classifier", lambda dirs, out, seed, public: ran.append("classifier"))
    monkeypatch.setattr(cli_lab, "_train_decision", lambda seed: ran.append("decision"))
    monkeypatch.setattr(cli_lab, "_train_listing", lambda seed: ran.append("listing"))
    res = CliRunner().invoke(cli_lab.train_cmd, [])
    assert res.exit_code == 0, res.output
    assert ran == list(lab_train.TRAIN_ORDER)
    ran.clear()
    assert CliRunner().invoke(cli_lab.train_cmd, ["--out", "/tmp/never-written.skops"]).exit_code == 0
    assert ran == ["classifier"]  # an experiment's classifier alone: the shipped models stay
