"""Stage 4: events -> incidents, one per process lifetime.

An incident keeps what diagnosis needs and nothing more (bounded memory on
endless input): its phase timeline, readiness, exit, the signature hits,
a capped list of tracebacks and the last error / warning lines.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator

from mypy_extensions import mypyc_attr

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.bulk import BULK, CLIENT, idle_stats, request_class
from forensics.events.phases import PERIODIC, PHASE_ORDER

MAX_TRACEBACKS = 64
MAX_HITS = 400
MAX_ERROR_LINES = 40
# Lines that read like trouble whatever their level (many loggers print none).
ALARM_RE = re.compile(r"(?i)error|fail|fatal|exception|abort|terminat|killed|timed? ?out|assert|not found|cannot|"
                      r"can't|unable|no such|insufficient|unsupported|not supported|invalid|denied|refused|"
                      r"out of memory|oom|illegal|mismatch|undefined|missing|no module|no kernel")
# The same search on lower-cased text: ~10x faster than (?i) over long lines
_ALARM_LOW = re.compile(ALARM_RE.pattern.replace("(?i)", "", 1))

_SGLANG_HINTS = ("server_args=ServerArgs", "The server is fired up", "Scheduler hit an exception", "sglang")
_VLLM_HINTS = ("vLLM", "EngineCore", "vllm")
_NON_PROCESS_UNIT_EVENTS = ("failed", "restart-scheduled", "stopped", "stopping", "consumed", "deactivated",
                            "other", "killing", "start-limit-hit", "failed-to-start", "oom-killed", "process-exited")


# The records stay ordinary Python classes when this module is compiled
# (forensics.native): the diagnosis copies them (copy, vars, dataclasses.replace).
@mypyc_attr(native_class=False)
@dataclass
class PhaseSpan:
    phase: str
    first_line: int
    last_line: int
    first_ts: datetime | None
    last_ts: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "first_line": self.first_line, "last_line": self.last_line,
                "first_ts": self.first_ts.isoformat() if self.first_ts else None,
                "last_ts": self.last_ts.isoformat() if self.last_ts else None}


@mypyc_attr(native_class=False)
@dataclass
class Hit:
    signature: Any  # forensics.diagnosis.signatures.Signature
    event: Event
    view: int
    phase: str | None
    after_ready: bool
    line: int
    text: str


@mypyc_attr(native_class=False)
@dataclass
class Incident:
    index: int
    source: str
    start_line: int
    end_line: int = 0
    start_ts: datetime | None = None
    end_ts: datetime | None = None
    server: str | None = None
    unit: str | None = None
    host: str | None = None  # the first host a line of the lifetime names (journald, syslog)
    pids: set[int] = field(default_factory=set)
    phases: dict[str, PhaseSpan] = field(default_factory=dict)
    phase: str | None = None  # current phase
    ready_line: int | None = None
    ready_ts: datetime | None = None
    shutdown_line: int | None = None
    exit: dict[str, Any] | None = None
    events: int = 0
    process_events: int = 0
    last_progress_ts: datetime | None = None
    last_progress_line: int = 0
    last_activity_line: int = 0  # last serving activity (access / batch stats)
    # The last HTTP answer (line, status) and the line of the last 2xx one: a server whose answers
    # turned to 5xx after an error still listens but no longer serves (diagnosis.decision.death).
    last_answer: tuple[int, int] | None = None
    last_ok_line: int = 0
    failure_hits: list[Hit] = field(default_factory=list)
    precursor_hits: list[Hit] = field(default_factory=list)
    wrapper_hits: list[Hit] = field(default_factory=list)
    tracebacks: list[tuple[Event, str | None, bool]] = field(default_factory=list)  # (event, phase, after_ready)
    error_lines: deque = field(default_factory=lambda: deque(maxlen=MAX_ERROR_LINES))
    warning_lines: deque = field(default_factory=lambda: deque(maxlen=200))
    dropped: int = 0
    ended: bool = False
    started: bool = False
    stop_requested_line: int | None = None  # systemd "Stopping ..." (an operator or a dependency asked it to stop)
    transitions: list[tuple[int, str]] = field(default_factory=list)  # (line, phase) at each change
    # Last start-up progress of each process (host, pid, rank): (line, phase order).
    progress_by_proc: dict[tuple, tuple[int, int]] = field(default_factory=dict)
    outcome: Any = None  # forensics.incidents.outcome.Outcome: the shape of the log (errors, proofs)
    ew_notes: Any = None  # early-warning candidates and facts, kept by the diagnosis hook (bounded)
    pending: Any = None  # events a waiting diagnosis hook has not matched yet (diagnosis.deferred; bounded)

    def phase_at(self, line: int) -> str | None:
        """The phase of the last marker at or before ``line`` (vLLM compiles
        before it plans memory, SGLang after: order comes from the log)."""
        best = None
        for at, phase in self.transitions:
            if at > line:
                break
            best = phase
        return best

    def reached(self) -> str | None:
        """The last phase the lifetime reached. A server that loads models on
        demand (Ollama, llama.cpp, Triton's explicit mode) goes back to loading
        after it listens; it is still ready (or serving) while it does."""
        phase = self.phase
        if self.ready_line is not None and phase is not None and PHASE_ORDER.get(phase, 0) < _READY:
            return "serving" if "serving" in self.phases else "ready"
        return phase

    @property
    def duration_s(self) -> float | None:
        if self.start_ts and self.end_ts:
            return max(0.0, (self.end_ts - self.start_ts).total_seconds())
        return None


# Python classes even where this module is compiled (forensics.native): they are
# copied, deep-copied or pickled (live readers fork them), which mypyc's native classes
# do not support.
@mypyc_attr(native_class=False)
class IncidentBuilder:
    """Consumes events in order; yields incidents as each lifetime closes."""

    def __init__(self, source: str, on_event: Callable[[Incident, Event], None] | None = None,
                 settle: Callable[[Incident], None] | None = None) -> None:
        self.source = source
        self.on_event = on_event
        # Called before the builder reads a lifetime's signature hits, for a
        # hook that matches lazily (diagnosis.deferred).
        self.settle = settle
        self.cur: Incident | None = None
        self.count = 0
        self._pending: list[Incident] = []

    def _new(self, ev: Event) -> Incident:
        inc = Incident(self.count, self.source, ev.line, ev.line, ev.ts, ev.ts)
        self.count += 1
        return inc

    def feed(self, ev: Event) -> Iterator[Incident]:
        cur = self.cur
        if cur is None:
            cur = self.cur = self._new(ev)
        elif self._starts_new_lifetime(cur, ev):
            yield cur
            cur = self.cur = self._new(ev)
        self._update(cur, ev)

    def finish(self) -> Iterator[Incident]:
        if self.cur is not None:
            yield self.cur
            self.cur = None

    def _starts_new_lifetime(self, cur: Incident, ev: Event) -> bool:
        kind = ev.kind
        if kind == kinds.JOURNAL_MARKER and ev.data.get("marker") == "boot":
            return cur.events > 0
        if kind == kinds.UNIT_LIFECYCLE:
            what = ev.data.get("event")
            if what in ("started", "starting"):
                # ExecStartPre output comes before "Started": same lifetime.
                return cur.process_events > 0 and (cur.started or cur.ended)
            return False
        if cur.ended and kind not in (kinds.UNIT_LIFECYCLE, kinds.JOURNAL_MARKER) and ev.pid != 1:
            return True
        if kind == kinds.PHASE_MARKER and ev.data.get("marker") == "server_args":
            # A known message logged only as a warning (vLLM's "Failed to import from vllm._C ...")
            # is not a failure of its own: the engine process that starts next is the same lifetime.
            if (cur.phase is not None and PHASE_ORDER.get(cur.phase, 0) > 0) or cur.ready_line:
                return True
            if self.settle is not None:
                self.settle(cur)
            return any(h.event.level not in ("WARNING", "INFO") for h in cur.failure_hits)
        return False

    def _update(self, inc: Incident, ev: Event) -> None:
        inc.events += 1
        inc.end_line = max(inc.end_line, ev.end_line or ev.line)
        if inc.host is None and ev.host:
            inc.host = ev.host
        if ev.ts is not None:
            if inc.start_ts is None:
                inc.start_ts = ev.ts
            if inc.end_ts is None or ev.ts >= inc.end_ts:
                inc.end_ts = ev.ts
        kind = ev.kind
        if kind == kinds.UNIT_LIFECYCLE:
            self._unit(inc, ev)
        elif kind != kinds.JOURNAL_MARKER:
            inc.process_events += 1
            if ev.pid is not None and ev.pid != 1 and len(inc.pids) < 64:
                inc.pids.add(ev.pid)
        if inc.server is None:
            t = ev.text
            if ev.rank and ev.rank.startswith(("TP", "DP", "PP", "EP")) or any(h in t for h in _SGLANG_HINTS):
                inc.server = "sglang"
            elif ev.logger and ev.level and any(h in t for h in _VLLM_HINTS):
                inc.server = "vllm"
        if kind == kinds.PHASE_MARKER:
            self._phase(inc, ev)
        elif kind == kinds.ACCESS:
            self._access(inc, ev)
        elif kind == kinds.CUDA_GRAPH_REGISTRATION:
            self._enter(inc, "cuda-graph-capture", ev)
        elif kind == kinds.TRACEBACK:
            if len(inc.tracebacks) < MAX_TRACEBACKS:
                inc.tracebacks.append((ev, inc.phase, inc.ready_line is not None))
            else:
                inc.dropped += 1
        if ev.level in ("ERROR", "CRITICAL") or kind == kinds.TRACEBACK:
            inc.error_lines.append(ev)
        elif kind in (kinds.MESSAGE, kinds.LOG) and ev.level != "INFO" and _ALARM_LOW.search(ev.text.lower()):
            inc.error_lines.append(ev)
        elif ev.level == "WARNING" or kind == kinds.PACKAGE_WALK_WARNING:
            inc.warning_lines.append(ev)
        if self.on_event is not None:
            self.on_event(inc, ev)

    def _unit(self, inc: Incident, ev: Event) -> None:
        what = ev.data.get("event")
        if what == "started":
            inc.started = True
        if inc.unit is None and ev.data.get("unit") and what not in ("other",):
            unit = ev.data["unit"]
            if "." in unit and " " not in unit:
                inc.unit = unit
        if what == "process-exited" and ev.data.get("process") == "main":
            inc.exit = {"code": ev.data.get("code"), "status": ev.data.get("status"),
                        "status_name": ev.data.get("status_name"), "line": ev.line}
            inc.ended = True
        elif what == "failed" and inc.exit is not None:
            inc.exit["result"] = ev.data.get("result")
        elif what == "failed" and inc.exit is None:
            inc.exit = {"result": ev.data.get("result"), "line": ev.line}
        elif what == "stopping":
            inc.stop_requested_line = inc.stop_requested_line or ev.line
            if inc.ready_line is not None:
                self._enter(inc, "shutdown", ev)
        elif what in ("deactivated", "stopped"):
            inc.ended = inc.ended or inc.process_events > 0

    def _access(self, inc: Incident, ev: Event) -> None:
        """An HTTP request. Any answer says the server is up; only a request
        (a POST, not a probe or a listing) starts serving. SGLang answers its
        own warm-up before its ready line: only a client's request (not
        /generate or /encode) says it was up then. The fast path (events.bulk)
        parses the first line of a run of access and batch lines, each line
        that raises the run's level (bulk_class) and its last line, so what a
        line does here depends only on that: once serving, every line is
        serving activity, probe or request alike."""
        cls = request_class(ev.data.get("method"), ev.data.get("path"))
        became = False
        if inc.ready_line is None:
            if inc.server == "sglang" and cls != CLIENT:
                if inc.phase is not None:
                    inc.last_progress_ts = ev.ts or inc.last_progress_ts
                return  # SGLang answers its own warm-up (and probes) before its ready line
            self._ready(inc, ev)  # it answers HTTP: up (an excerpt that begins after its ready line)
            became = True
        if inc.phase == "serving" or cls != BULK:
            self._enter(inc, "serving", ev)
        elif became:
            self._enter(inc, "ready", ev)
        inc.last_activity_line = ev.line
        status = ev.data.get("status")
        if isinstance(status, int):
            inc.last_answer = (ev.line, status)
            if 200 <= status < 300:
                inc.last_ok_line = ev.line

    def _ready(self, inc: Incident, ev: Event) -> None:
        if inc.ready_line is None:
            inc.ready_line = ev.line
            inc.ready_ts = ev.ts

    def _phase(self, inc: Incident, ev: Event) -> None:
        phase = ev.data["phase"]
        marker = ev.data.get("marker")
        if marker == "app_startup":
            # uvicorn's startup line means ready for vLLM; SGLang prints it before its warmup.
            phase = "warmup" if inc.server == "sglang" else "ready"
        if marker in PERIODIC and inc.phase == "serving":
            inc.last_activity_line = ev.line
            return  # a "still up" line printed on a timer (a worker's heart beat): serving goes on
        if phase == "serving":
            became = inc.ready_line is None
            if became:
                if marker == "batch_stats" and _THROUGHPUT not in ev.text and inc.phase is not None:
                    return  # SGLang's own warm-up batch, after its start-up lines
                self._ready(inc, ev)  # requests done: it was up (an excerpt that begins after its ready line)
            inc.last_activity_line = ev.line
            if marker == "batch_stats" and inc.phase != "serving" and idle_stats(ev.text):
                # An idle engine's statistics: up, not serving (as a probe, in _access).
                if became:
                    self._enter(inc, "ready", ev)
                return
        if phase == "ready":
            self._ready(inc, ev)
        if phase == "shutdown":
            inc.shutdown_line = inc.shutdown_line or ev.line
            if inc.ready_line is None:
                return  # killed during start-up: it died in the phase it was in
        self._enter(inc, phase, ev)

    def _enter(self, inc: Incident, phase: str, ev: Event) -> None:
        span = inc.phases.get(phase)
        if span is None:
            inc.phases[phase] = PhaseSpan(phase, ev.line, ev.line, ev.ts, ev.ts)
        else:
            span.last_line = ev.line
            span.last_ts = ev.ts or span.last_ts
        if inc.phase != phase and len(inc.transitions) < 2000:
            inc.transitions.append((ev.line, phase))
        inc.phase = phase
        inc.last_progress_ts = ev.ts or inc.last_progress_ts
        inc.last_progress_line = ev.line
        if phase not in ("serving", "shutdown"):
            key = proc_key(ev)
            if key in inc.progress_by_proc or len(inc.progress_by_proc) < 256:
                inc.progress_by_proc[key] = (ev.line, PHASE_ORDER[phase])


_READY = PHASE_ORDER["ready"]
_THROUGHPUT = "Avg prompt throughput: "  # vLLM's engine statistics: printed only once it serves


def proc_key(ev: Event) -> tuple:
    """Which process printed a line: its pid where the envelope has one
    (traceback lines carry no rank tag), else the rank tag."""
    return (ev.host, ev.pid) if ev.pid is not None else (ev.host, None, ev.rank)


def build_incidents(events: Iterable[Event], source: str = "-",
                    on_event: Callable[[Incident, Event], None] | None = None) -> Iterator[Incident]:
    b = IncidentBuilder(source, on_event)
    for ev in events:
        yield from b.feed(ev)
    yield from b.finish()
