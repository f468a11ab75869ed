"""``forensics run -- CMD``: supervise a server, pass its output through,
and tell systemd and Kubernetes where its start-up is and why it died."""
from __future__ import annotations

import click

from forensics.cli.options import input_format_option, no_classifier_option
from forensics.cli.watch import _probe_url, _seconds


def _address(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    if value is None:
        return None
    from forensics.drivers.status_http import parse_address

    return parse_address(value)


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--serve", metavar="HOST:PORT", default=None, callback=_address,
              help="Serve /livez, /readyz and /startupz (JSON) here, e.g. 0.0.0.0:8081.")
@click.option("--probe", metavar="URL", default=None, callback=_probe_url,
              help="/readyz also waits for this URL of the server to answer 2xx after the log says ready.")
@click.option("--probe-interval", type=float, default=5.0, show_default=True, callback=_seconds)
@click.option("--stall-timeout", type=float, default=300.0, show_default=True, callback=_seconds,
              help="Before readiness, no output for this long is a stall: /startupz says so and "
                   "systemd's WATCHDOG=1 pings stop.")
@click.option("--grace", type=float, default=2.0, show_default=True, callback=_seconds,
              help="After the first failure answer, wait this long for a better cause.")
@click.option("--annotate", metavar="FILE|-", default=None,
              help="Write watch's notes (phases, early warnings, the diagnosis) to FILE, or '-' for stderr "
                   "(between the server's lines). Default: none; the server's output is left alone.")
@click.option("--annotate-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--termination-log", metavar="PATH", default=None,
              help="Where the diagnosis goes when the server fails (default: /dev/termination-log when it "
                   "exists, for `kubectl describe pod`; '' for none).")
@click.option("--analysis-cpu", type=float, default=0.1, show_default=True, callback=_seconds,
              help="CPU (fraction of one core) the live analysis may use on average, after a 3 s burst; over "
                   "it, output with no error, warning, traceback or phase word is passed through unread (and "
                   "far over it, all of it until the budget recovers; never what is left when the child dies).")
@click.option("--group", is_flag=True,
              help="Forward signals to the child's whole process group, not only the child.")
@input_format_option()
@no_classifier_option(help=None)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- CMD [ARGS]...")
def run_command(serve: tuple[str, int] | None, probe: str | None, probe_interval: float, stall_timeout: float,
                grace: float, annotate: str | None, annotate_format: str, termination_log: str | None,
                analysis_cpu: float, group: bool, input_format: str, no_classifier: bool,
                command: tuple[str, ...]) -> int:
    """Start CMD as a child and supervise it: its stdout and stderr pass
    through unchanged; the live diagnosis (watch's) answers /startupz and
    systemd; on failure the diagnosis goes to the termination log and, after
    the server's last line, to stderr. Exits with the child's status
    (128+N when signal N killed it; 127/126 when CMD cannot be started).

    \b
    forensics run --serve 0.0.0.0:8081 -- python -m sglang.launch_server --model-path ...
    """
    from forensics.drivers.supervise import RunOptions, Supervisor, default_termination_log

    opts = RunOptions(command=list(command), serve=serve, probe=probe, probe_interval=probe_interval,
                      stall_timeout=stall_timeout, grace=grace, input_format=input_format,
                      use_classifier=not no_classifier, annotate=annotate, annotate_format=annotate_format,
                      termination_log=default_termination_log() if termination_log is None else termination_log,
                      group=group, analysis_cpu=analysis_cpu)
    return Supervisor(opts).run()
