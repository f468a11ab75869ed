"""Start-up warnings across a lifetime boundary that is no process exit.

The incidents stage starts a new lifetime at a start-up marker (SGLang's
``server_args=ServerArgs(...)``, a V1 engine core initialising again). What a
process printed before that marker -- import-time ``UserWarning``s, "Ignore
import error when loading ..." -- is then cut off from the failure it
predicted, though the same process printed both. The collector below is the
streaming hook of one incident builder: when a new lifetime begins and the old
one did not exit, it carries the old one's candidates and facts over, so
linking sees them. Only when it is the same process: the same pid, or, where
the log names none, an old "lifetime" that is only a preamble (no start-up
phase reached, no traceback).
"""
from __future__ import annotations

from typing import Any, Callable

from forensics.diagnosis.early_warnings.candidates import Notes, collect
from forensics.events.types import Event

MAX_CARRIED = 64  # the latest candidates of the previous lifetime


def continues(prev: Any, inc: Any) -> bool:
    """Is ``inc`` the same process going on after ``prev``'s boundary?"""
    if prev.exit is not None or prev.ended:
        return False  # a process exit (systemd, a supervisor): a new process
    if prev.pids and inc.pids:
        return bool(prev.pids & inc.pids)
    return not prev.transitions and not prev.tracebacks


def carry(prev: Any, inc: Any) -> None:
    """Give ``inc`` the candidates and facts ``prev`` collected."""
    old: Notes | None = prev.ew_notes
    if old is None:
        return
    cands = sorted(old.candidates(), key=lambda c: c.event.line)[-MAX_CARRIED:]
    if not cands and not old.facts:
        return
    notes = inc.ew_notes
    if notes is None:
        notes = inc.ew_notes = Notes()
    notes.carried = cands
    notes.facts = {**old.facts, **notes.facts}


class Collector:
    """``collect`` for one incident builder, carrying start-up warnings over a
    boundary that is no process exit (see the module's docstring)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: Any = None

    def __call__(self, inc: Any, ev: Event) -> None:
        self.enter(inc)
        collect(inc, ev)

    def enter(self, inc: Any, before_carry: Callable[[Any], None] | None = None) -> None:
        """``inc`` has an event to collect: when it is a new lifetime that
        continues the last one, carry that one's notes over (``before_carry``
        first brings them up to date, for a hook that collects late)."""
        last = self._last
        if inc is not last:
            if last is not None and continues(last, inc):
                if before_carry is not None:
                    before_carry(last)
                carry(last, inc)
            self._last = inc
