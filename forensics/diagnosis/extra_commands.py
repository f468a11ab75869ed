"""Commands added by later stages (train, batch, watch, corpus)."""
from __future__ import annotations

import click

from forensics.envelope.readers import FORMATS


def register(cli: click.Group) -> None:
    # ``from forensics import batch`` would give the API function of that name.
    from forensics.batch import register as register_batch

    register_batch(cli)
    cli.add_command(watch_command)
    cli.add_command(corpus_group)
    cli.add_command(diff_command)


@click.command("diff")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--input-format", default="auto", show_default=True, help="Force the outer log format of both inputs.")
@click.option("--good-incident", type=click.IntRange(min=0), default=None,
              help="Lifetime of GOOD to use (default: its last healthy one).")
@click.option("--bad-incident", type=click.IntRange(min=0), default=None,
              help="Lifetime of BAD to use (default: its last failed one).")
@click.option("--no-classifier", is_flag=True, help="Signatures only.")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
@click.argument("good")
@click.argument("bad")
def diff_command(fmt: str, input_format: str, good_incident: int | None, bad_incident: int | None,
                 no_classifier: bool, color: bool | None, good: str, bad: str) -> int:
    """What changed between a run that worked (GOOD) and one that failed (BAD).

    Files, .gz, any input format; `-` reads one of them from stdin. Exit 0: no
    difference that matters, 1: BAD failed and differences were found, 2: usage
    or unreadable input.
    """
    import json
    import sys

    from forensics.drivers.diff import diff_paths
    from forensics.envelope.readers import FORMATS
    from forensics.report.diff import render_diff

    if input_format not in FORMATS:
        raise click.BadParameter(f"{input_format!r} is not one of {', '.join(FORMATS)}", param_hint="--input-format")
    result = diff_paths(good, bad, input_format, good_incident, bad_incident, use_classifier=not no_classifier)
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2, default=str))
    else:
        use_color = sys.stdout.isatty() if color is None else color
        click.echo(render_diff(result, use_color), color=use_color)
    return int(result["exit"])


@click.group("corpus")
def corpus_group() -> None:
    """The project's labelled corpora."""


@corpus_group.command("generate")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--count", "per_label", type=int, default=40, show_default=True, help="Failure logs per root cause.")
@click.option("--healthy", type=int, default=110, show_default=True, help="Healthy or still-starting logs.")
@click.option("--out", type=click.Path(file_okay=False), required=True)
@click.option("--splice-real", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Collections whose train-split exception blocks may be spliced in (e.g. corpora/cpu).")
def corpus_generate(seed: int, per_label: int, healthy: int, out: str, splice_real: tuple[str, ...]) -> int:
    """Write a seeded, deterministic corpus of realistic logs and its labels.csv."""
    from pathlib import Path

    from forensics.corpus.generate import generate_corpus

    kwargs = {"splice_real": [Path(p) for p in splice_real]} if splice_real else {}
    rows = generate_corpus(seed, per_label, healthy, Path(out), **kwargs)
    click.echo(f"wrote {len(rows)} logs and labels.csv to {out}", err=True)
    return 0


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Timeouts are finite and above zero (NaN or inf would never fire)."""
    import math

    from forensics.errors import ForensicsError

    if value is not None and not (math.isfinite(value) and value > 0):
        raise ForensicsError(f"--{(param.name or '').replace('_', '-')} must be a number of seconds above 0, "
                             f"not {value!r}")
    return value


def _probe_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from forensics.errors import ForensicsError

    if value is not None and not value.lower().startswith(("http://", "https://")):
        raise ForensicsError(f"--probe must be an http:// or https:// URL, not {value!r}")
    return value


@click.command("watch")
@click.option("--stall-timeout", type=float, default=300.0, show_default=True, callback=_seconds,
              help="Exit 3 when no log line arrives for this many seconds before readiness.")
@click.option("--ready-timeout", type=float, default=None, callback=_seconds,
              help="Exit 4 when not ready after this many seconds.")
@click.option("--probe", metavar="URL", default=None, callback=_probe_url,
              help="Also poll this health URL (e.g. http://127.0.0.1:30000/health); ready when both agree.")
@click.option("--probe-interval", type=float, default=5.0, show_default=True, callback=_seconds)
@click.option("--grace", type=float, default=2.0, show_default=True, callback=_seconds,
              help="After the first failure report, wait this long for a better cause (failure_update).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: one object per notable event, for other tools.")
@click.option("--input-format", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option("--until", type=click.Choice(["ready", "failure"]), default="ready", show_default=True,
              help="ready: exit at readiness; failure: keep watching a serving server until it fails.")
@click.option("--no-classifier", is_flag=True)
def watch_command(stall_timeout: float, ready_timeout: float | None, probe: str | None, probe_interval: float,
                  grace: float, fmt: str, input_format: str, until: str, no_classifier: bool) -> int:
    """Follow a live log on stdin: exit 0 ready, 1 failed (with the diagnosis),
    3 stalled, 4 not ready in time.

    \b
    journalctl -fu sglang.service -o json | forensics watch --stall-timeout 600
    """
    import sys

    from forensics.watch import WatchOptions, Watcher

    opts = WatchOptions(stall_timeout=stall_timeout, ready_timeout=ready_timeout, probe=probe,
                        probe_interval=probe_interval, fmt=fmt, input_format=input_format, until=until,
                        use_classifier=not no_classifier, grace=grace)
    return Watcher(opts).run(sys.stdin.fileno())
