"""Operators' stops: a lifetime that ended because someone stopped it (Ctrl-C, SIGTERM, a kill from
outside while all was well, a stop requested of its service) did not fail. The verdicts
(``verdicts.fatal_tracebacks``, ``verdicts.relevant``) and the death detector ask these before a
traceback, a wrapper's report or a kill may end a lifetime."""
from __future__ import annotations

import re

from forensics.events.types import Event
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Incident

# Exceptions that name a stop, not a failure: Python's Ctrl-C, exit and cancellations; the JVM's
# thread interrupt (``java.lang.InterruptedException``: a thread blocked in a wait is interrupted,
# which is how an executor's shutdownNow stops its workers, TorchServe's on every stop).
BENIGN_EXC = frozenset({"KeyboardInterrupt", "SystemExit", "GeneratorExit", "asyncio.CancelledError",
                        "asyncio.exceptions.CancelledError", "CancelledError", "BrokenPipeError",
                        "java.lang.InterruptedException"})


def _benign(tb: Event) -> bool:
    """A traceback whose every exception is a stop (KeyboardInterrupt, SystemExit, a cancellation)."""
    types = {e.exc_type for e in tb.data.get("chain") or ()}
    return bool(types) and types <= BENIGN_EXC


def a_stop(inc: Incident, tb: Event) -> bool:
    """A traceback that is an operator's stop: every exception a stop's, or frames cut right before one."""
    return _benign(tb) or _cut_before_a_stop(inc, tb)


def _cut_before_a_stop(inc: Incident, tb: Event) -> bool:
    """A traceback with no exception of its own whose exception line, right after it, is a stop's
    (Python 3.11 prints a source line of blanks under a frame, which ends the block: the frames of
    a Ctrl-C'd worker, then its bare "KeyboardInterrupt" as a block of its own)."""
    if tb.data.get("chain"):
        return False
    end = tb.end_line or tb.line
    return any(end < other.line <= end + 2 and not other.data.get("frames") and _benign(other)
               for other, _p, _a in inc.tracebacks)


def echoes_a_stop(inc: Incident, line: int) -> bool:
    """Before ``line`` an operator stopped the program (a KeyboardInterrupt / SystemExit
    traceback after a quiet start, or after a stop request) and nothing else went wrong:
    a wrapper's "Engine core initialization failed" there reports the stop, not a failure."""
    stops = [(ev.line, ev.end_line or ev.line) for ev, _phase, _after in inc.tracebacks
             if ev.line < line and _benign(ev) and (after_stop_request(inc, ev.line) or quiet_before(inc, ev.line))]
    return bool(stops) and all(any(a <= e.line <= b for a, b in stops) for e in outcome.errors_before(inc, line - 1))


def quiet_before(inc: Incident, line: int) -> bool:
    """Nothing went wrong before ``line``: no error-level line and no strong
    early warning. A KeyboardInterrupt/SystemExit traceback after such a quiet
    start is an operator's stop (SIGTERM, Ctrl-C), not a failure."""
    if any(e.line < line for e in outcome.errors_before(inc, line)):
        return False
    return not any(h.line < line and h.signature.strength == "strong" and h.signature.status != "experimental"
                   for h in inc.precursor_hits)


# A shell's job report of a kill from outside (bash: "line N: PID Killed  CMD", SIGKILL; "Terminated",
# SIGTERM; zsh's own words: "zsh: killed  CMD"), not of a crash (a segfault or an abort is the
# program's own failure).
_SHELL_KILL = re.compile(r"^(?:\S+: )?line \d+: +\d+ (?:Killed|Terminated)\b|^(?:\[\d+\][+-]? +)?(?:Killed|Terminated)(?: {2,}\S|$)"
                         r"|^zsh: (?:killed|terminated) +\S")


def killed_while_up(inc: Incident, ev: Event) -> bool:
    """A shell reports the server killed after it became ready, and nothing after readiness went
    wrong: no error-level line, no traceback, no failure's own line before the kill. The log proves
    only that someone or something sent the signal; a bare SIGKILL is not host OOM (taxonomy), and
    the OOM killer's own report ("Out of memory: Killed process"), where the log has it, is a
    failure line of its own. Kills during start-up (where host RAM peaks, while weights load) are
    not cleared: there the server never came up."""
    ready = inc.ready_line
    if ready is None or ev.line <= ready or not _SHELL_KILL.search(ev.text[:300]):
        return False
    if any(ready < e.line < ev.line for e in outcome.errors_before(inc, ev.line)):
        return False
    if any(ready < tb.line < ev.line for tb, _p, _a in inc.tracebacks):
        return False
    return not any(ready < h.line < ev.line for h in inc.failure_hits)


def after_stop_request(inc: Incident, line: int) -> bool:
    """``line`` came after someone asked the service to stop."""
    return inc.stop_requested_line is not None and line > inc.stop_requested_line
