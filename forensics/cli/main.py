"""Command line: wires the stages together, nothing more.

Every user-facing failure is one line on stderr and exit 2; a closed pipe
(``| head``) ends quietly; Ctrl-C / SIGTERM / SIGHUP print one short line, exit 130.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

import forensics.exitcodes as exitcodes
from forensics.cli.batch import batch_command, report_command
from forensics.cli.classify import classify
from forensics.cli.diff import diff_command
from forensics.cli.lab import corpus_group, evaluate, train_cmd
from forensics.cli.parse import parse
from forensics.cli.run import run_command
from forensics.cli.signatures import signatures
from forensics.cli.watch import watch_command
from forensics.errors import ForensicsError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="forensics")
def cli() -> None:
    """Find why an LLM inference server (SGLang, vLLM) failed to come up."""


for _command in (parse, classify, signatures, evaluate, train_cmd, batch_command, report_command, watch_command,
                 corpus_group, diff_command, run_command):
    cli.add_command(_command)


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
    code = _run(argv)
    sys.exit(_flush_stdout(code))


def _error(message: str) -> int:
    click.echo(message, err=True)
    return exitcodes.USAGE


def _run(argv: list[str] | None) -> int:
    """The command's exit status; every failure becomes one line on stderr."""
    try:
        rc = cli.main(args=argv, prog_name="forensics", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except SystemExit:
        # click turns a closed stdout (EPIPE, ``| head``) into sys.exit(1)
        # after wrapping stdout; for us a closed pipe ends quietly with 0.
        if not isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
            raise
        _quiet_broken_pipe()
        return 0
    except click.ClickException as e:
        e.show()
        return exitcodes.USAGE
    except click.exceptions.Abort:
        click.echo("forensics: interrupted", err=True)
        return exitcodes.INTERRUPTED
    except ForensicsError as e:
        code = _error(f"forensics: error: {e}")
        return getattr(e, "exit_code", code)
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 0
    except OSError as e:  # stdout on a full disk (/dev/full), an I/O error: one line, not a traceback
        _quiet_broken_pipe()
        where = f"{e.filename}" if e.filename else "cannot write the output"
        return _error(f"forensics: error: {where}: {e.strerror or e}")
    except (KeyboardInterrupt, Interrupted):
        click.echo("forensics: interrupted", err=True)
        return exitcodes.INTERRUPTED
    except RecursionError:
        return _error("forensics: error: input nests too deeply to analyse")
    except MemoryError:
        return _error("forensics: error: out of memory while reading the input")
    except Exception as e:  # a bug of ours: one line for the user, the traceback on request
        if os.environ.get("FORENSICS_DEBUG"):
            raise
        return _error(f"forensics: internal error: {type(e).__name__}: {e} "
                      "(set FORENSICS_DEBUG=1 for the traceback, and please report it)")


def _flush_stdout(code: int) -> int:
    """Flush what the command wrote; a write error there still gives one line (and exit 2)."""
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
    return code


def _quiet_broken_pipe() -> None:
    # Python flushes stdout again at exit; point it at devnull so that flush
    # cannot raise a second BrokenPipeError (and print a traceback).
    from forensics.report.outputs import silence_stdout

    silence_stdout()
