"""Command-line options shared by several commands, each declared once here
(spelling, check, default, help): journal filters, time zone, colour,
--input-format, --no-classifier, --jobs, --model, --signatures."""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, TextIO

import click

from forensics.envelope.readers import FORMATS
from forensics.ingest.journal import JournalFilter

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

JOBS_HELP = ("Processes for one big regular file (default: one; a split was measured to cost more than "
             "it saves, for parse and classify alike).")
SIGNATURES_ONLY = "Signatures only."


def input_format_option(help: str | None = None, metavar: str | None = None) -> Decorator:
    """``--input-format``: one of ``FORMATS`` (anything else: click's usage error, exit 2)."""
    return click.option("--input-format", "input_format", type=click.Choice(FORMATS), default="auto",
                        show_default=True, help=help, metavar=metavar)


def no_classifier_option(help: str | None = SIGNATURES_ONLY) -> Decorator:
    return click.option("--no-classifier", "no_classifier", is_flag=True, help=help)


def jobs_option(help: str = JOBS_HELP) -> Decorator:
    return click.option("--jobs", "-j", "jobs", type=click.IntRange(min=1), default=None, help=help)


def signatures_option(help: str | None = None) -> Decorator:
    return click.option("--signatures", "sigdirs", multiple=True, help=help)


model_option: Decorator = click.option(
    "--model", "model", metavar="FILE", default=None,
    help="Classifier to use: a .scorer.json.gz, or a .skops model (checked against an exact type list).")


def journal_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--since``/``--until``/``--unit``, as journalctl spells them (passed to it)."""
    f = click.option("--unit", "-u", "units", multiple=True, metavar="UNIT",
                     help="Journal files: only this unit's entries (journalctl -u; repeatable).")(f)
    f = click.option("--until", "-U", "until", metavar="TIME", default=None,
                     help="Journal files: entries up to TIME (journalctl --until).")(f)
    f = click.option("--since", "-S", "since", metavar="TIME", default=None,
                     help='Journal files: entries from TIME on (journalctl --since: "2026-03-14 09:00", '
                          '"yesterday", "-1h").')(f)
    return f


def journal_filter(since: str | None, until: str | None, units: tuple[str, ...]) -> JournalFilter | None:
    filt = JournalFilter(since, until, tuple(units))
    return filt or None


def tz_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--tz", "tz", metavar="ZONE", default=None,
                        help="Time zone of log times printed without one (journalctl short, syslog, "
                             "vLLM): an IANA name (Europe/Berlin) or UTC. Default: this machine's zone "
                             "(TZ, else /etc/localtime).")(f)


def color_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--color", "--colour", "color", type=click.Choice(["auto", "always", "never"]),
                        default="auto", show_default=True,
                        help="Colour the text report. auto: when stdout is a terminal, unless NO_COLOR "
                             "is set or TERM=dumb; FORCE_COLOR forces it.")(f)


def want_color(choice: str | bool | None, stream: TextIO | None = None,
               env: dict[str, str] | None = None) -> bool:
    """The colour decision (https://no-color.org, FORCE_COLOR): an explicit
    ``always``/``never`` wins; else NO_COLOR (any non-empty value) turns it
    off, FORCE_COLOR (non-empty, not ``0``) on, TERM=dumb off, and otherwise
    colour only on a terminal."""
    if choice is True or choice == "always":
        return True
    if choice is False or choice == "never":
        return False
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    force = env.get("FORCE_COLOR")
    if force and force != "0":
        return True
    if env.get("TERM") == "dumb":
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def skip_unreadable(src: Any, paths: tuple[str, ...], err: Exception) -> None:
    """An input that could not be read: the only input is a usage error (re-raised, exit 2); one among
    several (a binary beside the logs of a folder) is skipped with one line and the others still read."""
    from pathlib import Path

    if src.name == "-" or len(paths) == 1 and not Path(paths[0]).is_dir():
        raise err
    click.echo(f"forensics: error: {err} (skipped)", err=True)


def sources_of(paths: tuple[str, ...], filt: JournalFilter | None = None) -> Any:
    """``expand_paths`` for a command that reads logs, with what could not be
    read inside a directory or an archive (a member past the limit, an
    encrypted one, an archive cut short) said on stderr as it is met."""
    from forensics.ingest.sources import expand_paths

    skipped: list[str] = []

    def say() -> None:
        for note in skipped:
            click.echo(f"forensics: warning: {note} (skipped)", err=True)
        skipped.clear()

    for src in expand_paths(paths, skipped, journal_filter=filt):
        say()
        yield src
    say()
