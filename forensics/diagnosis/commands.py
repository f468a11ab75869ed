"""CLI commands of the diagnosis stage: classify, signatures, eval."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from forensics import exitcodes
from forensics.envelope.readers import FORMATS
from forensics.errors import InputError
from forensics.options import color_option, journal_filter, journal_options, tz_option, want_color


def register(cli: click.Group) -> None:
    cli.add_command(classify)
    cli.add_command(signatures)
    cli.add_command(evaluate)
    cli.add_command(train_cmd)
    from forensics.diagnosis import extra_commands

    extra_commands.register(cli)


def _sigdirs(paths: tuple[str, ...]) -> list[Path] | None:
    return [Path(p) for p in paths] or None


class _EscapedStdout:
    """stdout for streamed JSON: lone surrogates (names that are not UTF-8) become ``\\uXXXX``."""

    def write(self, text: str) -> None:
        from forensics.report.outputs import json_text

        sys.stdout.write(json_text(text))


MODEL = click.option("--model", "model", metavar="FILE", default=None,
                     help="Classifier to use: a .scorer.json.gz, or a .skops model (checked against an exact type list).")


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "ndjson"]), default="text", show_default=True,
              help="json: one JSON object per input, one per line (schema: forensics/report/schema/"
                   "forensics.schema.json); ndjson is the same.")
@click.option("--input-format", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option("--signatures", "sigdirs", multiple=True, help="Signature files/directories (default: the shipped set).")
@click.option("--no-classifier", is_flag=True, help="Signatures only.")
@color_option
@click.option("--no-color", "no_color", is_flag=True, hidden=True)
@tz_option
@journal_options
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes for one big regular file (default: all cores, up to 4, for files over 48 MB).")
@MODEL
@click.argument("paths", nargs=-1)
def classify(fmt: str, input_format: str, sigdirs: tuple[str, ...], no_classifier: bool, color: str,
             no_color: bool, tz: str | None, since: str | None, until: str | None, units: tuple[str, ...],
             jobs: int | None, model: str | None, paths: tuple[str, ...]) -> int:
    """Diagnose why a server failed (stdin when no PATH). Exit 0: no failure, 1: failure found,
    2: unusable input.

    PATH: log files (plain, .gz, .xz, .bz2, .zst), directories, journald files
    (*.journal, *.journal~) or journal directories, - for stdin.
    """
    from forensics.diagnosis.run import diagnose_source, load_classifier
    from forensics.diagnosis.signatures import signature_set
    from forensics.envelope.clock import set_log_zone
    from forensics.ingest.sources import expand_paths
    from forensics.report import spool
    from forensics.report.outputs import json_text
    from forensics.report.text import render_text

    set_log_zone(tz)
    sset = signature_set(_sigdirs(sigdirs))
    clf = load_classifier(not no_classifier, model)
    any_failed = False
    use_color = want_color("never" if no_color else color)
    unreadable = read = 0
    filt = journal_filter(since, until, units)
    for src in expand_paths(paths, journal_filter=filt):
        try:
            res = diagnose_source(src, input_format, sset=sset, classifier=clf, jobs=jobs, spool=True)
        except InputError as e:
            if src.name == "-" or len(paths) == 1 and not Path(paths[0]).is_dir():
                raise  # the only input: a usage error (exit 2)
            click.echo(f"forensics: error: {e} (skipped)", err=True)
            unreadable += 1
            continue
        read += 1
        if filt and not src.journal:
            click.echo(f"forensics: warning: {src.name}: --since/--until/--unit apply to journal files only",
                       err=True)
        if res.get("stats", {}).get("truncated_gzip"):
            click.echo(f"forensics: warning: {src.name}: the {res['stats'].get('compression') or 'gzip'} "
                       f"stream ends early; analysed the {res['stats'].get('lines', 0)} lines before the cut",
                       err=True)
        any_failed = any_failed or res["verdict"] == "failed"
        if fmt == "text":
            click.echo(render_text(res, use_color), color=use_color)
        else:
            # One object per input, one per line, whatever the number of inputs
            # (streamed: a log of many lifetimes is never one string in memory).
            spool.dump(res, _EscapedStdout())
            sys.stdout.write("\n")
        for w in res.get("warnings") or ():
            click.echo(f"forensics: warning: {w}", err=True)
    if any_failed:
        return exitcodes.FAILURE  # a diagnosed failure is the news, even if another file was unreadable
    return exitcodes.USAGE if unreadable else exitcodes.OK


@click.group()
def signatures() -> None:
    """Inspect and test the rule signatures."""


@signatures.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--signatures", "sigdirs", multiple=True)
def sig_list(fmt: str, sigdirs: tuple[str, ...]) -> int:
    """List signatures (id, kind, label, title)."""
    from forensics.diagnosis.signatures import load_signatures

    sset = load_signatures(_sigdirs(sigdirs))
    if fmt == "json":
        click.echo(json.dumps([s.to_dict() for s in sset.signatures], indent=2))
        return 0
    w = max((len(s.id) for s in sset.signatures), default=10)
    click.echo(f"{'id':<{w}}  {'kind':<9}  {'root_cause':<26}  title")
    for s in sset.signatures:
        click.echo(f"{s.id:<{w}}  {s.kind:<9}  {s.root_cause:<26}  {s.title}")
    click.echo(f"{len(sset)} signatures (set {sset.digest})")
    return 0


@signatures.command("test")
@click.option("--signatures", "sigdirs", multiple=True)
def sig_test(sigdirs: tuple[str, ...]) -> int:
    """Run every signature's own examples; exit 1 when one fails."""
    from forensics.diagnosis.signatures import load_signatures, run_examples

    sset = load_signatures(_sigdirs(sigdirs))
    total, failures = run_examples(sset)
    for f in failures:
        click.echo(f"FAIL {f.signature} ({f.path}): expected {f.expected}: {f.example[:160]!r}")
    click.echo(f"{total - len(failures)}/{total} examples pass over {len(sset)} signatures")
    return exitcodes.FAILURE if failures else exitcodes.OK


@click.command("eval")
@click.option("--no-classifier", is_flag=True, help="Signatures only.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--show-misses", is_flag=True, help="List every wrong answer.")
@click.option("--split", type=click.Choice(["train", "test"]), default=None, help="Only rows of this split.")
@MODEL
@click.argument("dirs", nargs=-1, required=True)
def evaluate(no_classifier: bool, fmt: str, show_misses: bool, split: str | None, model: str | None,
             dirs: tuple[str, ...]) -> int:
    """Score diagnoses against labelled logs (NNN.log + labels.csv)."""
    from forensics.diagnosis.evaluate import evaluate_dirs, render_report

    report = evaluate_dirs([Path(d) for d in dirs], use_classifier=not no_classifier, split=split, model=model)
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
@click.argument("corpora", nargs=-1)
def train_cmd(out: str | None, seed: int, corpora: tuple[str, ...]) -> int:
    """Train the classifier on the train split of labelled corpora. Needs forensics[train]."""
    from forensics.extras import need

    need("train", "sklearn", "skops")
    from forensics.diagnosis.classifier import MODEL_PATH
    from forensics.diagnosis.train import DEFAULT_CORPORA, train

    dirs = [Path(c) for c in (corpora or DEFAULT_CORPORA)]
    try:
        meta = train(dirs, Path(out) if out else MODEL_PATH, seed)
    except ValueError as e:  # scikit-learn on a corpus it cannot learn from (too few examples, one class)
        raise InputError(f"cannot train on {', '.join(map(str, dirs))}: {str(e).splitlines()[0][:300]}") from None
    click.echo(f"trained on {meta['n_train']} incidents, {len(meta['labels'])} labels, corpus {meta['corpus_hash']}, "
               f"{len(meta['warning_templates'])} learned warning templates -> {out or MODEL_PATH}", err=True)
    return 0
