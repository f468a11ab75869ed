"""Signature matching and early-warning collection that wait until a
lifetime's answer is read.

A text report reads in full only the first lifetimes it lists and the
top-level one (``report.shown``). Of every other lifetime it needs one thing:
did it fail? A lifetime whose main process systemd saw exit with a failure has
failed whatever its lines say (``verdicts.exit_failed``), and in a crash loop
that is nearly every lifetime. Matching their lines against the signature set
and collecting their early-warning candidates was then most of classify's
per-event time, spent on answers nobody reads.

So this hook keeps the events of such a lifetime (bounded: past
``MAX_PENDING`` it catches up), each with the phase and
readiness the lifetime had when the event arrived, and runs the eager hook's
matching over them only when something asks:

* the incidents stage, when a start-up marker's boundary depends on the
  failure hits so far (``IncidentBuilder(settle=...)``);
* the early-warning carry, when the next lifetime continues this one;
* ``failed(inc)``, when the exit does not decide;
* the composer, before it diagnoses the lifetime in full.

Replayed in order, with the state each event saw, the hits and notes are the
eager hook's (``diagnose.record_hits``): the outcome bookkeeping, which the
failed-or-not judgement reads, still runs as each event arrives, and the
carry is decided at the same event as there.
"""
from __future__ import annotations

from typing import Any

from forensics.diagnosis.diagnose import lifetime_failed, match_into, matched_kind
from forensics.diagnosis.early_warnings import collect
from forensics.diagnosis.early_warnings.carry import Collector
from forensics.diagnosis.signatures import SignatureSet
from forensics.events.types import Event
from forensics.incidents import outcome, verdicts
from forensics.incidents.lifetimes import Incident

# Events kept per waiting lifetime. At most four lifetimes are held at once:
# the current one, the last failed one, the last one and the one early
# warnings last saw. A longer lifetime is matched so far whenever it has this
# many waiting.
MAX_PENDING = 2048

# ``Incident.pending``: None before the hook has seen the lifetime; SETTLED for
# a lifetime matched eagerly; else the (event, phase, after_ready) waiting.
SETTLED = ()


class DeferringHook:
    """An IncidentBuilder hook like ``record_hits(sset)`` for every lifetime
    from index ``eager_below`` on, which waits as the module says."""

    __slots__ = ("_sset", "_eager_below", "_carry")

    def __init__(self, sset: SignatureSet, eager_below: int) -> None:
        self._sset = sset
        self._eager_below = eager_below
        self._carry = Collector()  # the carry across a boundary that is no exit, as the eager hook's

    def __call__(self, inc: Incident, ev: Event) -> None:
        outcome.observe(inc, ev)
        if not matched_kind(ev):
            return
        self._carry.enter(inc, self.settle)
        pending = inc.pending
        if pending is None:
            if inc.index < self._eager_below:
                pending = inc.pending = SETTLED
            else:
                pending = inc.pending = []
        if pending is SETTLED:
            collect(inc, ev)
            match_into(self._sset, inc, ev, inc.phase, inc.ready_line is not None)
            return
        pending.append((ev, inc.phase, inc.ready_line is not None))
        if len(pending) >= MAX_PENDING:
            self.settle(inc)

    def settle(self, inc: Incident) -> None:
        """Match what ``inc`` has kept waiting, in order, so its hits and
        notes are up to date (later events wait again)."""
        pending: Any = inc.pending
        if not pending:
            return
        inc.pending = []
        sset = self._sset
        for ev, phase, after_ready in pending:
            collect(inc, ev)
            match_into(sset, inc, ev, phase, after_ready)

    def failed(self, inc: Incident) -> bool:
        """``diagnose.lifetime_failed(inc)``, matching its lines only when its
        exit does not already say it failed."""
        if verdicts.exit_failed(inc):
            return True
        self.settle(inc)
        return lifetime_failed(inc)
