"""What says a failure happened at launch whatever start-up markers came before it: the command
line's parser refusing the arguments, the program itself missing, the server's listening socket
refused its address. Nothing had started (split from phase_infer, which reads the steps)."""
from __future__ import annotations

import re


# A command line's parser rejecting it (argparse, click): printed before the program does anything
# else, so the process died at launch whatever an earlier process's markers say.
_USAGE_ERROR = re.compile(
    r"\berror: (?:unrecognized arguments|argument [-\w/]+: |the following arguments are required|invalid choice)|"
    r"^Error: (?:No such option|Invalid value for|Missing option|Got unexpected extra argument)", re.M)


# The program itself could not be started: a shell running a script line ("line 31: /opt/x/bin/ollama:
# No such file or directory", "vllm: command not found") or a launcher's exec of an executable
# ("[Errno 2] No such file or directory: '/env/bin/vllm'"). Not a compiler or build tool that a JIT
# build runs (nvcc, gcc, ninja ...): that is the build's own failure (kernel-jit).
_PROGRAM_MISSING = re.compile(
    r"(?:^|\n)(?:[^\n]*: )?line \d+: (?:[^\s:]*/)?(?P<sh>[\w.+-]+): (?:No such file or directory|command not found)\s*(?:\n|$)|"
    r"\[Errno 2\] No such file or directory: '[^'\n]*/bin/(?P<ex>[\w.+-]+)'")
# A compiler's or a build tool's name, with a target triple before it or a version after it
# (x86_64-linux-gnu-gcc, gcc-14, clang++-18).
_BUILD_TOOL = re.compile(r"(?:.*-)?(?:gcc|g\+\+|cc|c\+\+|clang(?:\+\+)?|nvcc|hipcc|ninja|make|cmake|ptxas|cicc|"
                         r"ld|as|nvlink|fatbinary|cl(?:\.exe)?|icpx|dpcpp)(?:-\d+(?:\.\d+)*)?(?:\.exe)?")


def program_missing(text: str) -> bool:
    """The failing lines say the program (not a compiler a build runs) could not be found to start."""
    for m in _PROGRAM_MISSING.finditer(text[:4000]):
        if not _BUILD_TOOL.fullmatch((m.group("sh") or m.group("ex") or "").lower()):
            return True
    return False


def is_usage_error(text: str) -> bool:
    """The failing lines are a command-line parser's usage error."""
    return _USAGE_ERROR.search(text[:4000]) is not None


# uvicorn (and asyncio's create_server under it) binds its socket after the application's
# start-up ("Application startup complete.") and before "Uvicorn running on": a bind that
# failed means the server never listened, whatever the start-up lines before it said. So for any
# server's listening socket refused its address (the OS's EADDRINUSE: Linux errno 98, macOS 48,
# Windows 10048; Go's "bind: address already in use"): the taxonomy's launch, as the public labels
# read it whatever step the server had printed before (a model fetched, weights loaded). Not
# ZeroMQ's "Address already in use (addr='tcp://...')": a server's internal channels, bound by
# the step that opens them.
_BIND_FAILED = re.compile(r"\berror while attempting to bind on address\b|"
                          r"\[Errno (?:98|48|10048)\] [Aa]ddress already in use\s*$|\bbind: address already in use\b",
                          re.M)


def never_listened(text: str) -> bool:
    """The failing lines say the HTTP server could not bind its address."""
    return _BIND_FAILED.search(text[:4000]) is not None
