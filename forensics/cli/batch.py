"""``forensics batch`` (many logs into one table, one row per incident) and
``forensics report`` (its summary)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from forensics.cli.options import input_format_option, jobs_option, no_classifier_option, tz_option
from forensics.drivers.batch import ENGINES, run_batch


@click.command("batch")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, metavar="FILE",
              help="Table to write: .parquet, .csv or .jsonl (by suffix), one row per incident.")
@jobs_option("Worker processes (default: the number of CPUs).")
@click.option("--engine", type=click.Choice(ENGINES), default="processes", show_default=True)
@click.option("--scheduler", metavar="ADDR", default=None,
              help="dask scheduler address (tcp://host:8786); default: a local cluster.")
@click.option("--summary", is_flag=True, help="Print counts by root cause and phase, top signatures, early warnings.")
@input_format_option()
@no_classifier_option()
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@tz_option
def batch_command(paths: tuple[str, ...], out: str, jobs: int | None, engine: str, scheduler: str | None,
                  summary: bool, input_format: str, no_classifier: bool, progress: bool | None,
                  tz: str | None) -> int:
    """Diagnose many logs (files, directories, .gz/.xz/.bz2/.zst, journal files) into one table,
    one row per incident. Needs forensics[batch]."""
    from forensics.extras import need

    need("batch", "pandas", *(("pyarrow",) if out.endswith(".parquet") else ()))
    from forensics.envelope.clock import set_log_zone

    set_log_zone(tz)  # workers inherit it (FORENSICS_TZ)
    from forensics.report.frames import table_format, write_table
    from forensics.report.summary import render_summary, summary_line

    table_format(out)  # an unknown suffix is a usage error before any work
    t0 = time.monotonic()
    df = run_batch(list(paths), jobs=jobs, engine=engine, scheduler=scheduler, progress=progress,
                   input_format=input_format, use_classifier=not no_classifier)
    write_table(df, out)
    files = df.attrs.get("files")
    click.echo(f"forensics: batch: {summary_line(df, files)}; {df.attrs.get('lines', 0):,} lines in "
               f"{time.monotonic() - t0:.1f} s -> {out}", err=True)
    if summary:
        click.echo(render_summary(df, files=files))
    return 0


@click.command("report")
@click.argument("table", metavar="FILE")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Rows per ranking.")
@click.option("--html", "html_out", metavar="OUT.html", default=None,
              help="Also write a self-contained HTML page: the counts, charts (failures over time, phase, lead "
                   "time, signatures, hosts, units, crash loops) and a sortable table of every incident. "
                   "Needs forensics[html].")
def report_command(table: str, top: int, html_out: str | None) -> int:
    """Summarise a table written by `forensics batch` (.parquet, .csv, .jsonl)."""
    from forensics.extras import need

    need("batch", "pandas")
    if html_out is not None:
        need("html", "matplotlib")
    from forensics.report.frames import read_table
    from forensics.report.summary import render_summary

    df = read_table(table)
    files = df.attrs.get("files")
    n_files = int(files) if files is not None else None
    click.echo(render_summary(df, top=top, files=n_files))
    if html_out is not None:
        _write_batch_page(df, table, html_out, top, n_files)
    return 0


def _write_batch_page(df: Any, table: str, out: str, top: int, files: int | None) -> None:
    from forensics.atomic import atomic_path
    from forensics.errors import InputError
    from forensics.report.html.batch_page import render_batch_page

    page = render_batch_page(df, Path(table).name, top=top, files=files)
    try:
        with atomic_path(out) as tmp:
            tmp.write_text(page, encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot write {out}: {e.strerror or e}") from None
    click.echo(f"forensics: report: page written to {out} ({len(page.encode('utf-8', 'replace')) / 1e6:.1f} MB)",
               err=True)
