"""``forensics watch`` adapted to ``forensics run``: the same live answer,
read from the pump's backlog instead of a descriptor, written to
``StartupState`` (and printed only with ``--annotate``), and kept going
after a failure (a server may live on after what looked fatal, or hang).

Imported in the analysis thread: it loads the signatures, grammars and
model (a second or so) while the child is already starting.
"""
from __future__ import annotations

import json
import math
import sys
import time
from typing import Any, Callable

from forensics.drivers.passthrough import EOF, Annotations, Backlog
from forensics.drivers.startup import StartupState
from forensics.drivers.watch import EARLY_LINES, IDLE_TICK, LiveLines, Watcher
from forensics.drivers.watch_options import WatchOptions, answer
from forensics.events.bulk import BlockThinner, BulkGate


class FedLines(LiveLines):
    """``LiveLines`` over the backlog. Runs of serving lines are thinned as
    they arrive, as classify thins them (not among the first lines: the
    plan may still change there, and a replay needs them all; not while a
    traceback is open)."""

    def __init__(self, backlog: Backlog, state: StartupState, tick: Callable[[], None],
                 tb_open: Callable[[], bool]) -> None:
        super().__init__(-1, tick)
        self.backlog = backlog
        self.state = state
        self.gate = BulkGate()
        self.thinner = BlockThinner(self.gate)
        self.tb_open = tb_open

    def _fill(self) -> None:
        got = self.backlog.get(IDLE_TICK)
        if got is EOF:
            for n, text in self.thinner.finish():
                self._item(n, text)
            self.incomplete_last = self.backlog.incomplete_last
            self.eof = True
        elif got is not None:
            block, start = got
            if start <= EARLY_LINES:
                self.gate.open = False
                items = self.thinner.finish() + self.thinner.block(block, start)
            else:
                self.gate.open = not self.tb_open()
                items = self.thinner.block(block, start)
            for n, text in items:
                self._item(n, text)
            self.state.lines_skipped = self.backlog.dropped_lines
        self.tick()

    def _item(self, n: int, text: str) -> None:
        self.n = n
        self.queue.append((n, text))
        if n == len(self.early) + 1 and n <= EARLY_LINES:  # contiguous: a replay may use them
            self.early.append((n, text))
        self.last_line_at = time.monotonic()
        self.state.lines_read = n


class RunWatcher(Watcher):
    """The watcher's answer, written to ``StartupState``; printed only to
    ``annotations``; ``on_final`` gets each failure answer that stands."""

    def __init__(self, command: list[str], state: StartupState, backlog: Backlog, annotations: Annotations | None,
                 on_final: Callable[[dict[str, Any]], None], probe: str | None = None, probe_interval: float = 5.0,
                 grace: float = 2.0, input_format: str = "auto", use_classifier: bool = True,
                 annotate_format: str = "text") -> None:
        # No stall or ready deadline ends it: the child's life does (stalls are StartupState's).
        opts = WatchOptions(stall_timeout=math.inf, probe=probe, probe_interval=probe_interval, fmt=annotate_format,
                            input_format=input_format, until="failure", use_classifier=use_classifier, grace=grace)
        super().__init__(opts, out=sys.stderr)
        self.command, self.state, self.backlog = command, state, backlog
        self.annotations, self.on_final = annotations, on_final
        self._ev: Any = None  # the event being announced (its text is a phase's detail)
        self.concluded: tuple | None = None  # the final answer last given

    def open_lines(self, fd: int) -> LiveLines:
        return FedLines(self.backlog, self.state, self.tick,
                        lambda: bool(self.pipe is not None and self.pipe.parser.tb.open))

    def emit(self, kind: str, message: str, **fields: Any) -> None:
        state = self.state
        if kind == "phase":
            state.on_phase(fields["phase"], fields.get("line"), self._ev.text if self._ev is not None else message)
        elif kind == "early_warning":
            state.on_warning(fields)
        elif kind == "ready_log":
            state.on_log_ready()
        elif kind == "ready":
            state.on_ready(fields.get("status"))
        elif kind == "probe_failed":
            state.on_probe(fields.get("status"))
        elif kind == "started":
            message = f"watching {' '.join(self.command)[:200]}"
        if self.annotations is None:
            return
        elapsed = time.monotonic() - self.start
        if self.opts.fmt == "json":
            self.annotations.write(json.dumps({"event": kind, "elapsed_s": round(elapsed, 3), **fields},
                                              default=str, ensure_ascii=True) + "\n")
        else:
            self.annotations.write(f"forensics: [{elapsed:7.1f}s] {message}\n")

    def _write_text(self, text: str) -> None:
        if self.annotations is not None:
            self.annotations.write("".join(f"forensics: {ln}\n" for ln in text.rstrip("\n").split("\n")))

    def announce(self, ev: Any, inc: Any, done: list) -> None:
        self._ev = ev
        super().announce(ev, inc, done)

    def report(self, kind: str, top: dict[str, Any], final: bool = False, changed: bool = True) -> None:
        self.state.on_diagnosis(top, final)
        if top.get("verdict") != "failed":
            self.concluded = None
        if self.annotations is not None:
            super().report(kind, top, final, changed)
        if final:
            self.on_final(top)

    def evaluate(self, now: float, include_open: bool = False, eof: bool = False) -> dict[str, Any]:
        # After a conclusion, go on judging classify's full view (as the grace period did).
        return super().evaluate(now, include_open or self.concluded is not None, eof)

    def conclude(self, top: dict[str, Any] | None = None) -> None:
        """The answer stands, but the server may live on: give it once as
        final and keep watching (watch would exit here)."""
        top = self.evaluate(time.monotonic(), include_open=True) if top is None else top
        self.report_at = self.refined_at = None  # the grace period is over
        if top["verdict"] != "failed" or answer(top) == self.concluded:
            return
        self.concluded = self.reported = answer(top)
        self.report("failure_update", top, final=True)

    def _end_of_stream(self) -> int:
        if self.pipe is not None:
            top = self.evaluate(time.monotonic(), eof=True)
            if top["verdict"] == "failed":
                self.conclude(top)
        return 0
