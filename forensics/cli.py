"""Command line: wires the stages together, nothing more.

Every user-facing failure is one line on stderr and exit 2; a closed pipe
(``| head``) ends quietly; Ctrl-C / SIGTERM / SIGHUP print one short line, exit 130.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

import click

from forensics import exitcodes
from forensics.envelope.readers import FORMATS
from forensics.errors import ForensicsError
from forensics.events.model import KINDS as EVENT_KINDS
from forensics.options import journal_filter, journal_options, tz_option

INPUT_FORMAT = click.option("--input-format", "input_format", type=click.Choice(FORMATS), default="auto",
                            show_default=True, help="Force the outer log format instead of sniffing it.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="forensics")
def cli() -> None:
    """Find why an LLM inference server (SGLang, vLLM) failed to come up."""


@cli.command()
@INPUT_FORMAT
@click.option("--kind", "kinds", multiple=True, type=click.Choice(EVENT_KINDS), metavar="KIND",
              help=f"Only print events of this kind (repeatable): {', '.join(EVENT_KINDS)}.")
@click.option("--stats/--no-stats", default=False, help="Print line accounting to stderr at the end.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes for one big regular file (default: all cores, up to 4, for files over 48 MB).")
@tz_option
@journal_options
@click.argument("paths", nargs=-1)
def parse(input_format: str, kinds: tuple[str, ...], stats: bool, jobs: int | None, tz: str | None,
          since: str | None, until: str | None, units: tuple[str, ...], paths: tuple[str, ...]) -> None:
    """Print the structured events of logs as NDJSON (stdin when no PATH).

    PATH: log files (plain, .gz, .xz, .bz2, .zst), directories, journald files
    or journal directories, - for stdin.
    """
    from forensics.envelope.clock import set_log_zone
    from forensics.events.parser import iter_source_events
    from forensics.ingest.sources import expand_paths

    set_log_zone(tz)

    out = sys.stdout
    if out is None:  # started with fd 1 closed: like click.echo, print nothing
        out = open(os.devnull, "w")
    write = out.write
    wanted = frozenset(kinds)
    from forensics.events.parallel import auto_jobs, parallel_batches

    for src in expand_paths(paths, journal_filter=journal_filter(since, until, units)):
        holder: list = []
        ts_cache: list = [None, None]
        name = src.name
        n_jobs = auto_jobs(src.path, jobs) if src.path is not None else 1
        if n_jobs > 1 and not wanted:
            for batch in parallel_batches(src, n_jobs, "parse", input_format, stats_out=holder):
                if batch:
                    write("\n".join(batch))
                    write("\n")
        else:
            for ev in iter_source_events(src, input_format, parser_out=holder):
                if wanted and ev.kind not in wanted:
                    continue
                write(ev.to_json(name, ts_cache))
                write("\n")
        if stats and holder:
            st = holder[0] if not hasattr(holder[0], "stats") else holder[0].stats
            click.echo(json.dumps({"source": src.name, **st.to_dict()}), err=True)


def _register_optional_commands() -> None:
    # Commands live beside the stage they drive; each module adds itself.
    from forensics.diagnosis import commands as diagnosis_commands

    diagnosis_commands.register(cli)


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. Not a KeyboardInterrupt, so click does not print
    its own blank line for it."""


def _on_signal(signum: int, frame: Any) -> None:
    raise Interrupted


def main(argv: list[str] | None = None) -> None:
    from forensics.report.outputs import prepare_std_streams

    prepare_std_streams()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        _register_optional_commands()
        rc = cli.main(args=argv, prog_name="forensics", standalone_mode=False)
        code = rc if isinstance(rc, int) else 0
    except click.exceptions.Exit as e:
        code = e.exit_code
    except SystemExit:
        # click turns a closed stdout (EPIPE, ``| head``) into sys.exit(1)
        # after wrapping stdout; for us a closed pipe ends quietly with 0.
        if not isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
            raise
        _quiet_broken_pipe()
        code = 0
    except click.ClickException as e:
        e.show()
        code = exitcodes.USAGE
    except click.exceptions.Abort:
        click.echo("forensics: interrupted", err=True)
        code = exitcodes.INTERRUPTED
    except ForensicsError as e:
        click.echo(f"forensics: error: {e}", err=True)
        code = exitcodes.USAGE
    except BrokenPipeError:
        _quiet_broken_pipe()
        code = 0
    except OSError as e:  # stdout on a full disk (/dev/full), an I/O error: one line, not a traceback
        _quiet_broken_pipe()
        where = f"{e.filename}" if e.filename else "cannot write the output"
        click.echo(f"forensics: error: {where}: {e.strerror or e}", err=True)
        code = exitcodes.USAGE
    except (KeyboardInterrupt, Interrupted):
        click.echo("forensics: interrupted", err=True)
        code = exitcodes.INTERRUPTED
    except RecursionError:
        click.echo("forensics: error: input nests too deeply to analyse", err=True)
        code = exitcodes.USAGE
    except MemoryError:
        click.echo("forensics: error: out of memory while reading the input", err=True)
        code = exitcodes.USAGE
    except Exception as e:  # a bug of ours: one line for the user, the traceback on request
        if os.environ.get("FORENSICS_DEBUG"):
            raise
        click.echo(f"forensics: internal error: {type(e).__name__}: {e} "
                   "(set FORENSICS_DEBUG=1 for the traceback, and please report it)", err=True)
        code = exitcodes.USAGE
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as e:
        _quiet_broken_pipe()
        click.echo(f"forensics: error: cannot write the output: {e.strerror or e}", err=True)
        code = exitcodes.USAGE if code == 0 else code
    except Exception:
        pass
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    # Python flushes stdout again at exit; point it at devnull so that flush
    # cannot raise a second BrokenPipeError (and print a traceback).
    from forensics.report.outputs import silence_stdout

    silence_stdout()
