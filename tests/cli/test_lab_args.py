"""The lab commands' argument checks: a mistyped corpus or a negative count is
a one-line usage error (exit 2) before any work, never a run that goes ahead."""
from __future__ import annotations

import pytest

pytest.importorskip("sklearn")  # forensics train needs the train extra before it reads its arguments
pytest.importorskip("skops")


@pytest.fixture
def no_training(monkeypatch):
    """Record whether training started instead of running it (it rewrites the shipped models)."""
    import forensics.lab.train as lab_train

    started = []
    monkeypatch.setattr(lab_train, "train_everything", lambda steps: started.append(sorted(steps)) or {})
    return started


@pytest.mark.parametrize("make", ["missing", "no-labels"])
def test_train_refuses_a_mistyped_corpus_before_its_first_step(tmp_path, no_training, make, capsys):
    """`forensics train corpora/genrated` (no --out: every part, the death model first) used to retrain and
    rewrite the shipped death model, then stop at the classifier with 'no labels.csv'."""
    from forensics.cli.main import _run

    corpus = tmp_path / "genrated"
    if make == "no-labels":
        corpus.mkdir()
        (corpus / "a.log").write_text("INFO 05-02 10:11:12 [api_server.py:1090] vLLM API server version 0.10.1\n")
    rc = _run(["train", str(corpus)])  # the CLI's own error handling, in process (nothing is trained)
    err = capsys.readouterr().err
    assert rc == 2 and no_training == [], err
    assert err.startswith(f"forensics: error: {corpus}: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("opt", ["--count", "--healthy"])
def test_corpus_generate_refuses_a_negative_count(tmp_path, opt):
    from click.testing import CliRunner

    from forensics.cli.main import cli

    res = CliRunner().invoke(cli, ["corpus", "generate", opt, "-5", "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and "-5" in res.output
    assert not (tmp_path / "c").exists()
