"""``forensics classify``: diagnose logs, text or one JSON object per input."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

import forensics.exitcodes as exitcodes
from forensics.cli.options import (color_option, input_format_option, jobs_option, journal_filter, journal_options,
                                   model_option, no_classifier_option, signatures_option, skip_unreadable, sources_of,
                                   tz_option, want_color)
from forensics.errors import InputError


def sigdirs_of(paths: tuple[str, ...]) -> list[Path] | None:
    """``--signatures`` as paths; None: the shipped set."""
    return [Path(p) for p in paths] or None


def given_set(paths: tuple[str, ...], load: Any) -> Any:
    """``load(sigdirs_of(paths))``; ``--signatures`` that hold no signature is a usage error: an empty set
    would be answered by the shipped one (a falsy set is replaced) or pass its test over nothing."""
    sset = load(sigdirs_of(paths))
    if paths and not sset.signatures:
        raise InputError(f"--signatures {' '.join(paths)}: no signature in it (rule files are *.yaml, *.yml)")
    return sset


class _EscapedStdout:
    """stdout for streamed JSON: lone surrogates (names that are not UTF-8) become ``\\uXXXX``."""

    def write(self, text: str) -> None:
        from forensics.report.outputs import json_text

        sys.stdout.write(json_text(text))


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "ndjson", "html"]), default="text",
              show_default=True,
              help="json: one JSON object per input, one per line (schema: forensics/report/schema/"
                   "forensics.schema.json); ndjson is the same. html: one self-contained page per input "
                   "(needs forensics[html]).")
@click.option("--out", "out", metavar="PATH", default=None,
              help="html: write the page to PATH (a directory: one page per input, named after it) "
                   "instead of stdout.")
@input_format_option()
@signatures_option("Signature files/directories (default: the shipped set).")
@no_classifier_option()
@color_option
@click.option("--no-color", "no_color", is_flag=True, hidden=True)
@tz_option
@journal_options
@jobs_option()
@model_option
@click.argument("paths", nargs=-1)
def classify(fmt: str, input_format: str, sigdirs: tuple[str, ...], no_classifier: bool, color: str,
             no_color: bool, tz: str | None, since: str | None, until: str | None, units: tuple[str, ...],
             jobs: int | None, model: str | None, out: str | None, paths: tuple[str, ...]) -> int:
    """Diagnose why a server failed (stdin when no PATH). Exit 0: no failure, 1: failure found,
    2: unusable input.

    PATH: log files (plain, .gz, .xz, .bz2, .zst), directories, journald files
    (*.journal, *.journal~) or journal directories, - for stdin.
    """
    from forensics.diagnosis.signatures import signature_set
    from forensics.envelope.clock import set_log_zone
    from forensics.pipeline import diagnose_source, load_classifier

    pages = _html_pages(fmt, out, paths)
    set_log_zone(tz)
    sset = given_set(sigdirs, signature_set)
    clf = load_classifier(not no_classifier, model)
    any_failed = False
    use_color = want_color("never" if no_color else color)
    unreadable = 0
    filt = journal_filter(since, until, units)
    for src in sources_of(paths, filt):
        try:
            if pages is not None:
                any_failed = pages.write(src, input_format, sset, clf, jobs) or any_failed
                continue
            res = diagnose_source(src, input_format, sset=sset, classifier=clf, jobs=jobs, spool=fmt != "text",
                                  shown_only=fmt == "text")
        except InputError as e:
            skip_unreadable(src, paths, e)
            unreadable += 1
            continue
        if filt and not src.journal:
            click.echo(f"forensics: warning: {src.name}: --since/--until/--unit apply to journal files only",
                       err=True)
        any_failed = any_failed or res["verdict"] == "failed"
        _print_result(src.name, res, fmt, use_color)
    if any_failed:
        return exitcodes.FAILURE  # a diagnosed failure is the news, even if another file was unreadable
    return exitcodes.USAGE if unreadable else exitcodes.OK


def _html_pages(fmt: str, out: str | None, paths: tuple[str, ...]) -> "HtmlPages | None":
    """The page writer for ``--format html`` (None for the other formats); usage errors first."""
    if fmt != "html":
        if out is not None:
            raise click.UsageError("--out goes with --format html")
        return None
    from forensics.extras import need

    need("html", "matplotlib")
    several = len(paths) > 1 or any(Path(p).is_dir() for p in paths)
    if several and (out is None or not Path(out).is_dir()):
        raise click.UsageError("--format html makes one page per input: give --out DIR (an existing directory) "
                               "for several inputs")
    return HtmlPages(out)


class HtmlPages:
    """Writes one page per input: to stdout, to ``--out FILE``, or into ``--out DIR``."""

    def __init__(self, out: str | None) -> None:
        self.out = Path(out) if out else None
        self.names: set[str] = set()

    def write(self, src: Any, input_format: str, sset: Any, clf: Any, jobs: int | None) -> bool:
        """Diagnose ``src`` (every lifetime in full) and write its page; True when it failed."""
        from forensics.ingest.reread import rereadable
        from forensics.pipeline import diagnose_source
        from forensics.report.html.log_page import page_for_source

        with rereadable(src) as again:
            res = diagnose_source(again, input_format, sset=sset, classifier=clf, jobs=jobs)
            page = page_for_source(res, again)
        self._emit(src.name, page)
        for w in res.get("warnings") or ():
            click.echo(f"forensics: warning: {w}", err=True)
        return res["verdict"] == "failed"

    def _emit(self, name: str, page: str) -> None:
        from forensics.atomic import atomic_path

        if self.out is None:
            sys.stdout.write(page)
            return
        target = self.out
        if self.out.is_dir():
            stem = "stdin" if name == "-" else Path(name).name
            base, n = stem, 1
            while stem in self.names:  # two inputs of one name from different folders
                n += 1
                stem = f"{base}.{n}"
            self.names.add(stem)
            target = self.out / f"{stem}.html"
        try:
            with atomic_path(target) as tmp:
                tmp.write_text(page, encoding="utf-8", errors="replace")
        except OSError as e:
            raise InputError(f"cannot write {target}: {e.strerror or e}") from None
        click.echo(f"forensics: page written to {target}", err=True)


def _print_result(name: str, res: dict, fmt: str, use_color: bool) -> None:
    from forensics.report import spool
    from forensics.report.text import plain, render_text

    if res.get("stats", {}).get("truncated_gzip"):
        click.echo(f"forensics: warning: {name}: the {res['stats'].get('compression') or 'gzip'} "
                   f"stream ends early; analysed the {res['stats'].get('lines', 0)} lines before the cut",
                   err=True)
    if fmt == "text":
        click.echo(render_text(res, click.style if use_color else plain), color=use_color)
    else:
        # One object per input, one per line, whatever the number of inputs
        # (streamed: a log of many lifetimes is never one string in memory).
        spool.dump(res, _EscapedStdout())
        sys.stdout.write("\n")
    for w in res.get("warnings") or ():
        click.echo(f"forensics: warning: {w}", err=True)
