"""The lab's commands: ``forensics eval``, ``forensics train``, ``forensics corpus generate``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from forensics.cli.options import model_option, no_classifier_option
from forensics.errors import InputError


@click.command("eval")
@no_classifier_option()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--show-misses", is_flag=True, help="List every wrong answer.")
@click.option("--split", type=click.Choice(["train", "test"]), default=None, help="Only rows of this split.")
@click.option("--by", "by", multiple=True, type=click.Choice(["server", "family", "label", "shape", "batch", "excerpt"]),
              help="Also score each group of logs (repeatable): server, server family, label, shape, batch.")
@model_option
@click.argument("dirs", nargs=-1, required=True)
def evaluate(no_classifier: bool, fmt: str, show_misses: bool, split: str | None, by: tuple[str, ...],
             model: str | None, dirs: tuple[str, ...]) -> int:
    """Score diagnoses against labelled logs (NNN.log + labels.csv; a folder of such folders, such as
    corpora/public, is read batch by batch)."""
    from forensics.lab.evaluate import evaluate_dirs, render_report

    report = evaluate_dirs([Path(d) for d in dirs], use_classifier=not no_classifier, split=split, model=model,
                           by=by)
    for why in report.get("unreadable") or ():
        click.echo(f"forensics: warning: skipped {why}", err=True)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2, default=str))
    else:
        click.echo(render_report(report, show_misses))
    return 0


@click.command("train")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Model file to write (default: the one shipped in the package).")
@click.option("--seed", default=0, show_default=True)
@click.option("--with-public", is_flag=True,
              help="Train the classifier on corpora/public's failures too (with fold classifiers held out by family).")
@click.argument("corpora", nargs=-1)
def train_cmd(out: str | None, seed: int, with_public: bool, corpora: tuple[str, ...]) -> int:
    """Train the classifier on the train split of labelled corpora. Needs forensics[train]."""
    from forensics.extras import need

    need("train", "sklearn", "skops")
    from forensics.lab.train import DEFAULT_CORPORA, train_everything

    dirs = [Path(c) for c in (corpora or DEFAULT_CORPORA)]
    _check_corpora(dirs)
    if out is not None:  # an experiment: the classifier alone, the shipped models stay
        _train_classifier(dirs, Path(out), seed, with_public)
        return 0
    # One run reaches the fixed point: each part after those its training reads (lab.train.TRAIN_ORDER).
    train_everything({"death": lambda: _train_death(seed),
                      "classifier": lambda: _train_classifier(dirs, None, seed, with_public),
                      "decision": lambda: _train_decision(seed), "listing": lambda: _train_listing(seed)})
    return 0


def _check_corpora(dirs: list[Path]) -> None:
    """A mistyped corpus is a usage error before any step runs: the full run
    retrains (and rewrites) the shipped death model before it reads the corpora."""
    for d in dirs:
        if not d.is_dir():
            raise InputError(f"{d}: no such corpus directory")
        if not (d / "labels.csv").is_file():
            raise InputError(f"{d}: no labels.csv")


def _train_classifier(dirs: list[Path], out: Path | None, seed: int, with_public: bool) -> dict:
    from forensics.diagnosis.classifier.loader import MODEL_PATH
    from forensics.lab.public_corpus import PUBLIC_DIR, batch_dirs
    from forensics.lab.train import FOLD_DIR, train

    try:
        # The shipped model's fold classifiers (public families held out) feed the lab's honest figures.
        public = batch_dirs(PUBLIC_DIR) if with_public else None
        meta = train(dirs, out or MODEL_PATH, seed, public=public, folds_dir=None if out else FOLD_DIR)
    except ValueError as e:  # scikit-learn on a corpus it cannot learn from (too few examples, one class)
        raise InputError(f"cannot train on {', '.join(map(str, dirs))}: {str(e).splitlines()[0][:300]}") from None
    click.echo(f"trained on {meta['n_train']} incidents, {len(meta['labels'])} labels, corpus {meta['corpus_hash']}, "
               f"{len(meta['warning_templates'])} learned warning templates -> {out or MODEL_PATH}", err=True)
    return meta


def _train_death(seed: int) -> dict:
    from forensics.diagnosis.decision.phase_model import MODEL_PATH as PHASE_PATH
    from forensics.lab.decision_train import train_death_model

    death = train_death_model(PHASE_PATH.with_name("death.json"), seed)
    click.echo(f"death detector: held out, {death['detected']} of {death['failures']} failures no rule saw "
               f"detected, {death.get('healthy_over', 0)} of {death['healthy']} healthy start-ups (threshold {death['threshold']}); "
               f"after readiness {death.get('detected_up', 0)} of {death.get('failures_up', 0)}, "
               f"{death.get('healthy_up_over', 0)} of {death.get('healthy_up', 0)} healthy (threshold {death.get('threshold_up')})", err=True)
    return death


def _train_decision(seed: int) -> dict:
    # The label decision reads the classifier's answers: it is fitted after it, on the
    # public corpus and the project's rows the classifier did not train on.
    from forensics.diagnosis.decision.label_model import MODEL_PATH as DECISION_PATH
    from forensics.diagnosis.decision.phase_model import MODEL_PATH as PHASE_PATH
    from forensics.lab.decision_train import train_decision_models

    lm = train_decision_models(DECISION_PATH, PHASE_PATH, seed)
    o, ph = lm["crossval"]["overall"]["learned"], lm["crossval"]["overall"]["phase"]
    click.echo(f"label decision: {lm['rows']} failures, held-out-family top-1 "
               f"{(o['top1'] or 0):.1%}, ECE {o['ece']} -> {DECISION_PATH}; phase held out: learned {ph['learned']}, "
               f"rules {ph['rules']} of {ph['n']} ({'ships' if lm['ships']['phase'] else 'not shipped'})", err=True)
    h = lm["crossval"].get("held_out")
    if h:
        click.echo(f"label decision read as a family never met (its own signatures out): learned "
                   f"{h['learned']['correct']} vs the rules' {h['rules']['correct']} of {h['learned']['n']}, "
                   f"unknown below {lm['crossval']['unknown_below']}, ships {lm['ships']['label']}", err=True)
    return lm


def _train_listing(seed: int) -> dict:
    from forensics.lab.ew_train import train_listing_model

    ew = train_listing_model(seed=seed)
    lo, bo = ew["crossval"]["overall"]["learned"], ew["crossval"]["overall"]["bar"]
    click.echo(f"early-warning listing: held out, {lo['found']} of {lo['labelled']} labelled warnings listed "
               f"({bo['found']} by the hand-set bar), {lo['per_failure']} per failure; "
               f"{'ships' if ew['ships'] else 'not shipped'}", err=True)
    held = ew["held_out_recall"]["overall_public"]["held_out"]
    click.echo(f"early warnings, public families held out from the healthy baseline: {held['found']} of "
               f"{held['labelled']} found, {held['live']} printed live, {held['per_failure']} listed per failure, "
               f"{held['false_live']} false live on {held['healthy']} healthy logs", err=True)
    return ew


@click.group("corpus")
def corpus_group() -> None:
    """The project's labelled corpora."""


@corpus_group.command("generate")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--count", "per_label", type=click.IntRange(min=0), default=40, show_default=True, help="Failure logs per root cause.")
@click.option("--healthy", type=click.IntRange(min=0), default=110, show_default=True, help="Healthy or still-starting logs.")
@click.option("--out", type=click.Path(file_okay=False), required=True)
@click.option("--splice-real", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Collections whose train-split exception blocks may be spliced in (e.g. corpora/cpu).")
def corpus_generate(seed: int, per_label: int, healthy: int, out: str, splice_real: tuple[str, ...]) -> int:
    """Write a seeded, deterministic corpus of realistic logs and its labels.csv."""
    from forensics.lab.generator.generate import generate_corpus

    kwargs = {"splice_real": [Path(p) for p in splice_real]} if splice_real else {}
    rows = generate_corpus(seed, per_label, healthy, Path(out), **kwargs)
    click.echo(f"wrote {len(rows)} logs and labels.csv to {out}", err=True)
    return 0
