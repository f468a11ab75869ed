"""``forensics watch``: follow a live log (stdin) and say the moment the
server is ready, has failed, or has stalled.

The answer is ``classify``'s answer on the bytes read so far. The same
stages run (envelope plan from the first lines, records, events, incidents,
diagnosis); what a file reader settles by looking at the next line (a
journal entry that continues on the next line, a traceback that may go on)
is settled here by evaluating a *copy* of the pipeline as if the stream
ended now. So a verdict never waits for the stream to go quiet:

- every pause (``QUIET``), and every ``SNAP_EVERY`` while lines keep coming,
  the copy is closed and diagnosed; a traceback counts from its exception
  line (its structure says it is complete), one still in its frames only
  after a real stall (``TB_STALL``), reported as far as it got;
- the first diagnosis that says "failed" is printed at once (``failure``);
  while the grace period runs (``--grace`` seconds, longer while a
  traceback is still being printed, never more than ``TB_GRACE``) a better
  answer is printed as ``failure_update`` (the inner error after a wrapper,
  the other ranks); the process-death line or the end of the grace period
  ends the watch, and the last answer printed is classify's on those bytes.

Single-threaded except for the health probe. The clock (stall, ready and
grace deadlines) runs on elapsed time, whether or not newlines arrive.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator, TextIO

import forensics.exitcodes as exitcodes
from forensics.diagnosis.diagnose import record_hits
from forensics.diagnosis.early_warnings import live_early_warnings as early_warnings_for
from forensics.diagnosis.signatures import signature_set
from forensics.diagnosis.warm import warm_up
from forensics.drivers.watch_options import (QUIET, REFINE_EVERY, SNAP_EVERY, TB_GRACE, TB_STALL, WatchExit,
                                             WatchOptions, answer, ready_line)
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.parser import SAMPLE_LINES, SourcePlan, plan_source
from forensics.incidents.lifetimes import Incident
from forensics.drivers.live_lines import IDLE_TICK, LiveLines
from forensics.pipeline import LivePipeline, assemble, load_classifier

# --------------------------------------------------------------------- the hook
# Which early warnings to print for the event that just arrived is decided in
# one place, ``forensics.diagnosis.early_warnings.live_early_warnings``
# (imported above as ``early_warnings_for``): a precursor signature, or a line
# unusual against the healthy baseline and about a failure topic.


# The events after which a failure may be decided (a traceback complete, a
# process's end): in a burst of lines they are evaluated without waiting for
# SNAP_EVERY (at most every QUIET), until a failure is printed.
DECISIVE_KINDS = frozenset({kinds.TRACEBACK, kinds.UNIT_LIFECYCLE})


class _Replan(Exception):
    """The plan made from the first lines changed: the pipeline starts again at line 1."""

# --------------------------------------------------------------------- the watcher
class Watcher:
    def __init__(self, opts: WatchOptions, out: TextIO = sys.stdout) -> None:
        self.opts = opts
        self.out = out
        self.out_closed = False
        self.sset = signature_set()
        self.on_hit = record_hits(self.sset)
        self.clf = load_classifier(opts.use_classifier)
        # Build the grammars and the diagnosis tables (warm_up) and load the
        # model now, not in the middle of the first failure (they take a while
        # on a busy machine, and the failure is on the clock).
        warm_up()
        if self.clf is not None:
            getattr(self.clf, "model", None)
        self.start = time.monotonic()
        self.live: LiveLines | None = None
        self.pipe: LivePipeline | None = None
        self.plan: SourcePlan | None = None  # the pipeline's plan, made from the first ``planned_at`` lines
        self.planned_at = 0
        self.dirty = False
        self.decisive = False  # since the last evaluation, an event arrived that may decide a failure
        self.replaying = False  # a new pipeline is being fed the lines already read (it knows only some)
        self.last_eval = 0.0
        self.stall_evaluated = False  # the current pause already had its stall evaluation
        self.reported: tuple | None = None  # the answer last printed
        self.report_at: float | None = None
        self.refined_at: float | None = None  # the answer last changed (the grace period restarts)
        self.open_tracebacks = False  # in the last evaluation, a traceback was still being printed
        self.last_phase: str | None = None  # the phase the current lifetime had reached at the last evaluation
        self.log_ready_at: float | None = None
        self.ready_confirmed = False
        self.announced: set = set()  # for the early-warning hook
        self.seen: set[tuple] = set()  # phases, graph registrations, restarts already printed
        self.probe_thread: threading.Thread | None = None
        self.probe_result: tuple[bool, Any] | None = None
        self.next_probe = 0.0

    # -- output --------------------------------------------------------------
    def emit(self, kind: str, message: str, **fields: Any) -> None:
        if self.out_closed:
            return  # nobody reads any more; the exit status still tells the outcome
        try:
            if self.opts.fmt == "json":
                rec = {"event": kind, "elapsed_s": round(time.monotonic() - self.start, 3), **fields}
                self.out.write(json.dumps(rec, default=str, ensure_ascii=True) + "\n")
            else:
                self.out.write(f"[{time.monotonic() - self.start:7.1f}s] {message}\n")
            self.out.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._stdout_gone()

    def _write_text(self, text: str) -> None:
        if self.out_closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._stdout_gone()

    def _stdout_gone(self) -> None:
        # ``watch | head -1``: the reader left. That is not readiness: keep
        # watching silently and let the exit status say what happened.
        self.out_closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    # -- the clock -------------------------------------------------------------
    def tick(self) -> None:
        if self.replaying:
            return  # a new pipeline is catching up on the lines read: nothing to judge by yet (a few ms)
        now = time.monotonic()
        live = self.live
        last_line_at = live.last_line_at if live is not None else self.start
        # Quiet: every line that arrived is handled and nothing new came for a while.
        quiet = now - last_line_at if live is None or not live.queue else 0.0
        if self.pipe is not None:
            every = SNAP_EVERY if self.report_at is None else REFINE_EVERY
            if self.decisive and self.report_at is None:
                every = QUIET  # a traceback or an exit arrived in a burst: the failure may be here
            if self.dirty and (quiet >= QUIET or now - self.last_eval >= every):
                self.evaluate(now)
            if quiet >= TB_STALL and not self.stall_evaluated and (self.pipe.parser.tb.open or self.pipe.held):
                self.stall_evaluated = True
                self.evaluate(now, include_open=True)
        if self.report_at is not None:
            # The grace period runs from the last change of the answer (a message
            # still being printed keeps refining it), never longer than TB_GRACE.
            limit = max(self.opts.grace, TB_GRACE) if self.open_tracebacks else self.opts.grace
            since = now - max(self.report_at, self.refined_at or self.report_at)
            # Lines that arrived during the grace period are read before it ends
            # (under load the watcher may wake up behind the stream): the answer
            # must not depend on how fast this machine is.
            caught_up = live is None or not live.behind()
            if (since >= limit and caught_up) or now - self.report_at >= max(self.opts.grace, TB_GRACE):
                self.conclude()
        self.check_probe(now)
        if self.ready_confirmed or self.report_at is not None:
            return
        if self.opts.ready_timeout is not None and now - self.start >= self.opts.ready_timeout:
            phase = self._phase()
            self.emit("ready_timeout", f"NOT READY after {self.opts.ready_timeout:g}s (phase {phase or 'unknown'})",
                      phase=phase, log_ready=self.log_ready_at is not None)
            raise WatchExit(exitcodes.READY_TIMEOUT)
        if self.opts.until == "ready" or self.log_ready_at is None or (live is not None and live.eof):
            since = max(last_line_at, self.log_ready_at or 0.0)
            if now - since >= self.opts.stall_timeout:
                phase = self._phase()
                what = "the probe never agreed after the log said ready" if self.log_ready_at is not None else \
                    f"no log line in phase {phase or 'unknown'}"
                self.emit("stalled", f"STALLED: {what} for {now - since:.0f}s", phase=phase,
                          quiet_s=round(now - since, 1), log_ready=self.log_ready_at is not None)
                raise WatchExit(exitcodes.STALLED)

    def _phase(self) -> str | None:
        if self.pipe is not None and self.dirty:
            self.evaluate(time.monotonic())
        return self.last_phase

    # -- the probe (a thread: a slow endpoint never holds up the log) -------------
    def check_probe(self, now: float) -> None:
        if not self.opts.probe or self.log_ready_at is None or self.ready_confirmed:
            return
        if self.probe_result is not None:
            ok, status = self.probe_result
            self.probe_result = None
            self.probe_thread = None
            if ok:
                self.ready_confirmed = True
                self.emit("ready", f"READY: log and probe {self.opts.probe} agree (HTTP {status})",
                          probe=self.opts.probe, status=status, lines_read=self.live.consumed if self.live else 0)
                if self.opts.until == "ready":
                    raise WatchExit(exitcodes.OK)
                return
            self.emit("probe_failed", f"probe {self.opts.probe} failed after log readiness: {status}",
                      probe=self.opts.probe, status=status)
        if self.probe_thread is None and now >= self.next_probe:
            self.next_probe = now + self.opts.probe_interval
            self.probe_thread = threading.Thread(target=self._probe, daemon=True)
            self.probe_thread.start()

    def _probe(self) -> None:
        url = self.opts.probe or ""
        try:
            with urllib.request.urlopen(url, timeout=min(5.0, self.opts.probe_interval)) as resp:  # noqa: S310 - http(s) checked
                status: Any = int(resp.status)
                ok = 200 <= status < 300
        except urllib.error.HTTPError as e:
            ok, status = False, e.code
        except Exception as e:  # any odd answer (garbage, resets, timeouts) is "not ready yet"
            ok, status = False, f"{type(e).__name__}: {str(getattr(e, 'reason', e))[:200]}"
        self.probe_result = (ok, status)

    # -- evaluation ------------------------------------------------------------
    def evaluate(self, now: float, include_open: bool = False, eof: bool = False) -> dict[str, Any]:
        """classify's answer if the stream ended now, and what it means."""
        assert self.pipe is not None and self.live is not None
        self._replan_if_stale()  # never an answer on a plan older than the lines read (classify plans them all)
        # Once a failure is printed, refine on exactly classify's view.
        include_open = include_open or eof or self.report_at is not None
        results, fed, stats = self.pipe.snapshot(include_open, eof and self.live.incomplete_last)
        self.last_eval = now
        self.dirty = False
        self.decisive = False
        self.open_tracebacks = any(t.state != "exc" for t in self.pipe.parser.tb.open.values())
        for ev, inc, done in fed:
            self.announce(ev, inc, done)
        stats["lines"] = self.live.consumed
        self.last_phase = results[-1].get("reached_phase") if results else None
        top = assemble("-", results, stats, self.sset, self.clf)
        if top["verdict"] == "failed":
            ans = answer(top)
            if self.reported is None:
                self.reported, self.report_at = ans, now
                self.report("failure", top)
            elif ans != self.reported:
                self.reported, self.refined_at = ans, now
                self.report("failure_update", top)
            main = results[top["incident"]]
            if not eof and (main.get("exit") is not None or top["incident"] < len(results) - 1):
                # The process-death line (or a new lifetime) ends it, on classify's full view.
                self.conclude(top if include_open else None)
            return top
        if self.reported is not None:
            # What looked fatal was handled (the process went on): say so, keep watching.
            self.reported = self.report_at = self.refined_at = None
            self.report("failure_update", top)
        last = results[-1] if results else None
        if last is not None and last["verdict"] == "ready" and self.log_ready_at is None:
            self.on_log_ready(now, ready_line(last))
        return top

    def on_log_ready(self, now: float, line: int | None) -> None:
        self.log_ready_at = now
        if self.opts.probe:
            self.emit("ready_log", "log says ready; waiting for the probe to agree", line=line)
            self.next_probe = 0.0
            self.check_probe(now)
            return
        self.ready_confirmed = True
        self.emit("ready", f"READY (line {line})", line=line, lines_read=self.live.consumed if self.live else 0)
        if self.opts.until == "ready":
            raise WatchExit(exitcodes.OK)

    def conclude(self, top: dict[str, Any] | None = None) -> None:
        """The grace period is over or the process died: the answer stands.
        It is printed once more, marked final (classify's answer on the
        lines read, ``lines_read`` of them)."""
        now = time.monotonic()
        top = self.evaluate(now, include_open=True) if top is None else top
        if top["verdict"] != "failed":
            return
        changed = answer(top) != self.reported
        self.reported = answer(top)
        self.report("failure_update", top, final=True, changed=changed)
        raise WatchExit(exitcodes.FAILURE)

    def report(self, kind: str, top: dict[str, Any], final: bool = False, changed: bool = True) -> None:
        read = self.live.consumed if self.live else 0
        if self.opts.fmt == "json":
            self.emit(kind, "", lines_read=read, final=final, diagnosis=top)
            return
        if final:  # the whole diagnosis, once, at the end
            from forensics.report.text import render_text

            self._write_text(render_text({**top, "source": "-"}) + "\n")
            return
        if kind == "failure":
            self.emit(kind, f"FAILED: {top['root_cause']} ({top.get('signature') or top.get('decided_by')}, "
                      f"confidence {top['confidence']}) after line {read}; refining for up to {self.opts.grace:g}s")
        else:
            self.emit(kind, f"UPDATE: {top['verdict']} {top.get('root_cause') or ''} "
                      f"({top.get('signature') or top.get('decided_by') or '-'})")

    def announce(self, ev: Event, inc: Incident | None, done: list[Incident]) -> None:
        for old in done:
            key = ("restart", old.index)
            if key not in self.seen:
                self.seen.add(key)
                self.emit("restart", "process lifetime ended; a new one begins", incident=old.index)
        if inc is None:
            return
        for w in early_warnings_for(inc, ev, self.announced):
            self.emit("early_warning", f"EARLY WARNING (line {w['line']}, predicts {', '.join(w['predicts'])}): "
                      f"{w['text'][:200]}", **w)
        if ev.kind == kinds.CUDA_GRAPH_REGISTRATION and ("graphs", ev.line) not in self.seen:
            self.seen.add(("graphs", ev.line))
            self.emit("cuda_graph_registration", f"{ev.data['count']} cuda graph addresses registered",
                      line=ev.line, count=ev.data["count"])
        if inc.phase is not None and ("phase", inc.index, inc.phase) not in self.seen:
            self.seen.add(("phase", inc.index, inc.phase))
            since = ""
            if inc.start_ts is not None and ev.ts is not None:
                since = f" ({(ev.ts - inc.start_ts).total_seconds():.0f}s into the log)"
            self.emit("phase", f"phase {inc.phase}: {ev.text[:160]}{since}", phase=inc.phase, line=ev.line)

    # -- driving ------------------------------------------------------------------
    def run(self, fd: int) -> int:
        try:
            return self._run(fd)
        except WatchExit as e:
            return e.code

    def _plan(self) -> SourcePlan:
        live = self.live
        assert live is not None
        return plan_source(live.early[:min(live.consumed, SAMPLE_LINES)], self.opts.input_format)

    def _plan_due(self, n: int) -> bool:
        """Whether to plan again after line ``n`` (< SAMPLE_LINES lines so far). Planning costs
        ~1.5 ms, so a burst of lines is planned at powers of two only, and whenever the stream
        pauses; ``evaluate`` plans whatever lines arrived since (``_replan_if_stale``): a plan that
        changes restarts the pipeline at line 1 either way, so the answers are those of planning
        every line."""
        live = self.live
        assert live is not None
        return n & (n - 1) == 0 or n >= SAMPLE_LINES or not live.queue

    def _replan_if_stale(self) -> None:
        """Plan the lines read since the last plan (while they are among the first SAMPLE_LINES);
        if the plan changed, raise ``_Replan`` (``_run`` starts the pipeline again at line 1).
        Whatever decides an answer (an evaluation, the stream's end) comes here first."""
        live = self.live
        assert live is not None
        if live.consumed != self.planned_at and self.planned_at < SAMPLE_LINES and live.consumed <= len(live.early):
            self.planned_at = live.consumed
            if self._plan() != self.plan:
                raise _Replan

    def open_lines(self, fd: int) -> LiveLines:
        """The numbered lines to watch (``forensics run`` feeds its own)."""
        return LiveLines(fd, self.tick)

    def _run(self, fd: int) -> int:
        live = self.live = self.open_lines(fd)
        self.emit("started", f"watching stdin (stall timeout {self.opts.stall_timeout:g}s)")
        replay: list[tuple[int, str]] = []
        while True:
            # The plan (format, year, wrappers) comes from the first lines, as
            # classify makes it; while there are fewer than SAMPLE_LINES of
            # them it may change, and then the pipeline starts again at line 1.
            if not replay:
                try:
                    replay = [next(live)]
                except StopIteration:
                    break
            plan = self.plan = self._plan()
            self.pipe = pipe = LivePipeline(plan, self.on_hit, self.clf)
            self.dirty = True
            self.planned_at = live.consumed
            try:
                for rec in pipe.records(itertools.chain(self._replayed(replay), live)):
                    for ev, inc, done in pipe.feed(rec):
                        self.announce(ev, inc, done)
                        if ev.kind in DECISIVE_KINDS or done:
                            self.decisive = True
                    self.dirty = True
                    self.stall_evaluated = False
                    if self._plan_due(live.consumed):
                        self._replan_if_stale()
                    self.tick()
                self._replan_if_stale()  # the stream ended: its last lines are planned too
            except _Replan:  # raised here, or by an evaluation inside the clock
                replay, self.replaying = live.early[:live.consumed], False
                continue
            break
        return self._end_of_stream()

    def _replayed(self, replay: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        """The lines already read, for a new pipeline: no evaluation until it has had them all
        (its answer would be on fewer lines than ``lines_read`` says)."""
        self.replaying = True
        try:
            yield from replay
        finally:
            self.replaying = False

    def _end_of_stream(self) -> int:
        live = self.live
        assert live is not None
        if self.pipe is None:
            self.emit("ended", "stream ended with no log lines")
            return exitcodes.STALLED
        top = self.evaluate(time.monotonic(), eof=True)
        if top["verdict"] == "failed":
            self.conclude(top)
        # The log said ready and a probe must agree: the stream is over but
        # the server may still answer; the deadlines still hold.
        while self.log_ready_at is not None and not self.ready_confirmed:
            time.sleep(IDLE_TICK)
            self.tick()
        if self.ready_confirmed:
            return exitcodes.OK
        self.emit("ended", f"stream ended while {top['verdict']} (phase {top.get('phase') or 'unknown'})",
                  verdict=top["verdict"], phase=top.get("phase"))
        return exitcodes.STALLED
