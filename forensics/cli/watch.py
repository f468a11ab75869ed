"""``forensics watch``: follow a live log on stdin."""
from __future__ import annotations

import math

import click

from forensics.cli.options import input_format_option, no_classifier_option
from forensics.errors import ForensicsError


def _seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Timeouts are finite and above zero (NaN or inf would never fire)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ForensicsError(f"--{(param.name or '').replace('_', '-')} must be a number of seconds above 0, "
                             f"not {value!r}")
    return value


def _probe_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
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
@input_format_option()
@click.option("--until", type=click.Choice(["ready", "failure"]), default="ready", show_default=True,
              help="ready: exit at readiness; failure: keep watching a serving server until it fails.")
@no_classifier_option(help=None)
def watch_command(stall_timeout: float, ready_timeout: float | None, probe: str | None, probe_interval: float,
                  grace: float, fmt: str, input_format: str, until: str, no_classifier: bool) -> int:
    """Follow a live log on stdin: exit 0 ready, 1 failed (with the diagnosis),
    3 stalled, 4 not ready in time.

    \b
    journalctl -fu sglang.service -o json | forensics watch --stall-timeout 600
    """
    from forensics.drivers.watch import Watcher
    from forensics.drivers.watch_options import WatchOptions
    from forensics.ingest.sources import stdin_fd

    fd = stdin_fd()  # a closed stdin is a usage error before the watch starts

    opts = WatchOptions(stall_timeout=stall_timeout, ready_timeout=ready_timeout, probe=probe,
                        probe_interval=probe_interval, fmt=fmt, input_format=input_format, until=until,
                        use_classifier=not no_classifier, grace=grace)
    return Watcher(opts).run(fd)
