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
import re
import sys
import time
from typing import Any, Callable

from forensics.drivers.passthrough import EOF, Annotations, Backlog
from forensics.drivers.startup import StartupState
from forensics.drivers.live_lines import EARLY_LINES, IDLE_TICK, LiveLines
from forensics.drivers.watch import Watcher
from forensics.drivers.watch_options import WatchOptions, answer
from forensics.events.bulk import BlockThinner, BulkGate
from forensics.events.phases import MARKER_KEYWORDS

# Over its CPU budget the analysis still reads every block that holds one of
# these (a failure's words, a traceback's frames, a phase marker); the others
# are skipped (counted). Literals, searched at C speed over the whole block.
FAILURE_WORDS = ("Traceback", "rror", "RROR", "xception", "WARN", "Warn", "warn", "FATAL", "Fatal", "fatal",
                 "CRITICAL", "Critical", "ill", "ignal", "bort", "fail", "Fail", "FAIL", "panic", "OOM",
                 "out of memory", '  File "', "eady", "xit", "ault", "Assert", "denied", "not found", "No such",
                 "Unexpected", "timeout", "Timeout", "timed out", "refused", "Errno", "Check failed")
BURST_CPU_S = 3.0  # CPU seconds of credit: a start-up's burst (eight ranks' tracebacks) is read whole
_interesting: list[Any] = []


def interesting(block: bytes) -> bool:
    """Whether a block holds a line the diagnosis may need (see FAILURE_WORDS)."""
    if not _interesting:
        words = sorted(set(FAILURE_WORDS) | set(MARKER_KEYWORDS))
        rx = b"|".join(re.escape(w.encode()) for w in words)
        try:
            import re2

            opts = re2.Options()
            opts.encoding = re2.Options.Encoding.LATIN1
            opts.log_errors = False
            _interesting.append(re2.compile(rx, opts).search)
        except ImportError:  # pragma: no cover - google-re2 is a core dependency
            _interesting.append(re.compile(rx).search)
    return _interesting[0](block) is not None


class FedLines(LiveLines):
    """``LiveLines`` over the backlog. Runs of serving lines are thinned as
    they arrive, as classify thins them (not among the first lines: the
    plan may still change there, and a replay needs them all; not while a
    traceback is open)."""

    def __init__(self, backlog: Backlog, state: StartupState, tick: Callable[[], None],
                 tb_open: Callable[[], bool], cpu_budget: float = math.inf) -> None:
        super().__init__(-1, tick)
        self.backlog = backlog
        self.state = state
        self.gate = BulkGate()
        self.thinner = BlockThinner(self.gate)
        self.tb_open = tb_open
        # A token bucket of CPU seconds: refilled at ``cpu_budget`` of a core,
        # spent by everything this thread does (parsing, evaluations).
        self.cpu_budget = cpu_budget
        self.credit = BURST_CPU_S
        self.clock = (time.monotonic(), time.thread_time())
        self.skipped = 0

    def _spend(self) -> bool:
        """Update the credit; True when the analysis is over its budget."""
        wall, cpu = time.monotonic(), time.thread_time()
        self.credit = min(BURST_CPU_S, self.credit + (wall - self.clock[0]) * self.cpu_budget - (cpu - self.clock[1]))
        self.clock = (wall, cpu)
        return self.credit < 0

    def _skips(self, got: tuple[bytes, int]) -> bool:
        """Over budget: skip a block with nothing a diagnosis needs; far over
        it (a flood of warnings), any block. Never the first lines, a block
        inside a traceback, or what is left once the child is dead (how it
        died is there)."""
        if got[1] <= EARLY_LINES or self.backlog.closed or self.tb_open():
            return False
        return self.credit < -BURST_CPU_S or not interesting(got[0])

    def _fill(self) -> None:
        got = self.backlog.get(IDLE_TICK)
        if got is not None and got is not EOF and self._spend() and self._skips(got):
            self.skipped += got[0].count(b"\n")
            self.state.lines_skipped = self.backlog.dropped_lines + self.skipped
            got = None
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
            self.state.lines_skipped = self.backlog.dropped_lines + self.skipped
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
                 annotate_format: str = "text", cpu_budget: float = math.inf) -> None:
        # No stall or ready deadline ends it: the child's life does (stalls are StartupState's).
        opts = WatchOptions(stall_timeout=math.inf, probe=probe, probe_interval=probe_interval, fmt=annotate_format,
                            input_format=input_format, until="failure", use_classifier=use_classifier, grace=grace)
        super().__init__(opts, out=sys.stderr)
        self.command, self.state, self.backlog = command, state, backlog
        self.annotations, self.on_final = annotations, on_final
        self.cpu_budget = cpu_budget
        self._ev: Any = None  # the event being announced (its text is a phase's detail)
        self.concluded: tuple | None = None  # the final answer last given

    def open_lines(self, fd: int) -> LiveLines:
        return FedLines(self.backlog, self.state, self.tick,
                        lambda: bool(self.pipe is not None and self.pipe.parser.tb.open), self.cpu_budget)

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
