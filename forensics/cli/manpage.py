"""``forensics(1)``, written from click's own help of every command, so the
man page says what ``--help`` says. ``python -m forensics.cli.manpage`` prints it;
the wheel ships ``forensics/man/forensics.1`` (a test keeps it current)."""
from __future__ import annotations

import click

from forensics.versions import __version__


def _roff(text: str) -> str:
    out = []
    for ln in text.splitlines():
        ln = ln.replace("\\", "\\e").replace("-", "\\-")
        if ln.startswith((".", "'")):
            ln = "\\&" + ln
        out.append(ln)
    return "\n".join(out)


def _walk(cmd: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            out.extend(_walk(cmd.commands[name], path + [name]))
    return out


def render(cli: click.Group) -> str:
    lines = [f'.TH FORENSICS 1 "" "forensics {__version__}" "User Commands"', ".SH NAME",
             "forensics \\- why an LLM inference server failed, from its logs", ".SH SYNOPSIS",
             ".B forensics\nCOMMAND [OPTIONS] [PATH ...]", ".SH DESCRIPTION", _roff(cli.help or "")]
    settings = {"terminal_width": 80, "max_content_width": 80, **cli.context_settings}
    root = click.Context(cli, info_name="forensics", **settings)
    for path, cmd in _walk(cli, ["forensics"])[1:]:
        # Parented like a real invocation, so group settings (-h) carry over.
        with click.Context(cmd, info_name=path[-1], parent=root) as ctx:
            lines += [".SH " + " ".join(path).upper().replace("-", "\\-"), ".nf", _roff(cmd.get_help(ctx)), ".fi"]
    lines += [".SH EXIT STATUS",
              "0 no failure found (watch: the server became ready); 1 a failure was diagnosed; "
              "2 usage error or unusable input; 3 watch: no progress for \\-\\-stall\\-timeout; "
              "4 watch: \\-\\-ready\\-timeout passed; 130 interrupted.",
              ".SH ENVIRONMENT",
              "NO_COLOR, FORCE_COLOR, TERM=dumb: colour of the text report (see \\-\\-color). "
              "TZ: the default of \\-\\-tz. FORENSICS_DEBUG=1: print the traceback of an internal error.",
              ".SH SHELL COMPLETION",
              'eval "$(_FORENSICS_COMPLETE=bash_source forensics)" (zsh_source, fish_source for other shells).',
              ""]
    return "\n".join(lines)


def main() -> None:
    from forensics.cli.main import cli

    click.echo(render(cli), nl=False)


if __name__ == "__main__":
    main()
