"""``forensics parse``: the structured events of logs, as NDJSON."""
from __future__ import annotations

import json
import os
import sys

import click

import forensics.exitcodes as exitcodes
from forensics.errors import InputError

from forensics.cli.options import (input_format_option, jobs_option, journal_filter, journal_options,
                                   skip_unreadable, sources_of, tz_option)
from forensics.events.types import KINDS as EVENT_KINDS


@click.command()
@input_format_option("Force the outer log format instead of sniffing it.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(EVENT_KINDS), metavar="KIND",
              help=f"Only print events of this kind (repeatable): {', '.join(EVENT_KINDS)}.")
@click.option("--stats/--no-stats", default=False, help="Print line accounting to stderr at the end.")
@jobs_option()
@tz_option
@journal_options
@click.argument("paths", nargs=-1)
def parse(input_format: str, kinds: tuple[str, ...], stats: bool, jobs: int | None, tz: str | None,
          since: str | None, until: str | None, units: tuple[str, ...], paths: tuple[str, ...]) -> int:
    """Print the structured events of logs as NDJSON (stdin when no PATH).

    PATH: log files (plain, .gz, .xz, .bz2, .zst), directories, journald files
    or journal directories, - for stdin.
    """
    from forensics.envelope.clock import set_log_zone
    from forensics.pipeline import write_events

    set_log_zone(tz)
    out = sys.stdout
    if out is None:  # started with fd 1 closed: like click.echo, print nothing
        out = open(os.devnull, "w")
    wanted = frozenset(kinds)
    unreadable = 0
    for src in sources_of(paths, journal_filter(since, until, units)):
        try:
            st = write_events(src, out.write, input_format, jobs, wanted)
        except InputError as e:
            skip_unreadable(src, paths, e)  # as classify
            unreadable += 1
            continue
        if stats and st is not None:
            click.echo(json.dumps({"source": src.name, **st.to_dict()}), err=True)
    return exitcodes.USAGE if unreadable else exitcodes.OK
