"""``forensics diff GOOD BAD``: what changed between a run that worked and one that failed."""
from __future__ import annotations

import json
import sys

import click

from forensics.cli.options import input_format_option, no_classifier_option


@click.command("diff")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
# metavar TEXT: the help has always shown it so (the value is checked like every --input-format).
@input_format_option(help="Force the outer log format of both inputs.", metavar="TEXT")
@click.option("--good-incident", type=click.IntRange(min=0), default=None,
              help="Lifetime of GOOD to use (default: its last healthy one).")
@click.option("--bad-incident", type=click.IntRange(min=0), default=None,
              help="Lifetime of BAD to use (default: its last failed one).")
@no_classifier_option()
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
    from forensics.drivers.diff import diff_paths
    from forensics.report.diff import render_diff
    from forensics.report.text import plain

    result = diff_paths(good, bad, input_format, good_incident, bad_incident, use_classifier=not no_classifier)
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2, default=str))
    else:
        use_color = sys.stdout.isatty() if color is None else color
        click.echo(render_diff(result, click.style if use_color else plain), color=use_color)
    return int(result["exit"])
