"""The waiting hook (diagnosis.deferred) records what the eager hook records:
the same signature hits (with the phase and readiness each event saw), the
same early-warning candidates, carried candidates and facts, the same
lifetime boundaries, on every corpus log, real set and seed, however often a
waiting lifetime catches up."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from forensics.api import parse
from forensics.diagnosis import deferred
from forensics.diagnosis.deferred import DeferringHook
from forensics.diagnosis.diagnose import lifetime_failed, record_hits
from forensics.diagnosis.signatures import signature_set
from forensics.incidents import verdicts
from forensics.incidents.lifetimes import IncidentBuilder

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import answers  # noqa: E402  (bench/answers.py: every corpus log, real set and seed)
import crashloop  # noqa: E402


@pytest.fixture(scope="module")
def sset():
    return signature_set()


def _hits(hits) -> list[tuple]:
    return [(h.signature.id, h.line, h.view, h.phase, h.after_ready, h.text) for h in hits]


def _record(inc) -> tuple:
    notes = inc.ew_notes
    cands = [] if notes is None else [(c.event.line, c.level, c.count) for c in notes.candidates()]
    carried = [] if notes is None else [c.event.line for c in notes.carried]
    facts = {} if notes is None else dict(notes.facts)
    return (inc.index, inc.start_line, inc.end_line, _hits(inc.failure_hits), _hits(inc.precursor_hits),
            _hits(inc.wrapper_hits), inc.dropped, cands, carried, facts, lifetime_failed(inc))


def _eager(events, sset) -> list[tuple]:
    return [_record(inc) for inc in _lifetimes(IncidentBuilder("x", record_hits(sset)), events)]


def _waiting(events, sset, eager_below: int) -> list[tuple]:
    hook = DeferringHook(sset, eager_below)
    # Settled only after the whole log: what the carry and the boundaries read
    # must have caught up on its own.
    incs = list(_lifetimes(IncidentBuilder("x", hook, settle=hook.settle), events))
    for inc in incs:
        hook.settle(inc)
    return [_record(inc) for inc in incs]


def _lifetimes(builder, events):
    for ev in events:
        yield from builder.feed(ev)
    yield from builder.finish()


def test_same_hits_notes_and_boundaries_on_every_corpus_log(sset, monkeypatch):
    monkeypatch.setattr(deferred, "MAX_PENDING", 5)
    logs = [p for _, p in answers.corpus_logs()]
    assert len(logs) > 900
    differ = []
    for path in logs:
        events = list(parse(path))
        want = _eager(events, sset)
        if _waiting(events, sset, 0) != want or _waiting(events, sset, 1) != want:
            differ.append(str(path))
    assert not differ, differ[:10]


@pytest.mark.parametrize("pending", [2, deferred.MAX_PENDING])
def test_same_on_a_crash_loop(sset, monkeypatch, pending, tmp_path):
    monkeypatch.setattr(deferred, "MAX_PENDING", pending)
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=60, seed=13)
    log = tmp_path / "loop.log"
    log.write_bytes(buf.getvalue())
    events = list(parse(log))
    want = _eager(events, sset)
    assert len(want) >= 60
    assert _waiting(events, sset, 8) == want


def test_a_lifetime_exited_with_a_failure_is_failed_without_matching_its_lines(sset, tmp_path):
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=30, seed=11)
    log = tmp_path / "loop.log"
    log.write_bytes(buf.getvalue())
    hook = DeferringHook(sset, 0)
    waited = 0
    for inc in _lifetimes(IncidentBuilder("x", hook, settle=hook.settle), parse(log)):
        kept = inc.pending
        n = len(kept or ())
        if verdicts.exit_failed(inc) and n:
            assert hook.failed(inc)
            assert inc.pending is kept and len(kept) == n  # judged failed by its exit: its lines still wait
            waited += 1
    assert waited >= 10


def test_the_wait_is_bounded(sset, monkeypatch, tmp_path):
    monkeypatch.setattr(deferred, "MAX_PENDING", 7)
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=5, seed=3)
    log = tmp_path / "loop.log"
    log.write_bytes(buf.getvalue())
    hook = DeferringHook(sset, 0)
    builder = IncidentBuilder("x", hook, settle=hook.settle)
    longest = 0
    for ev in parse(log):
        for _ in builder.feed(ev):
            pass
        cur = builder.cur
        longest = max(longest, len(cur.pending or ()))
    assert 0 < longest < 7
