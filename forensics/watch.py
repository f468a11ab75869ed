"""``forensics watch``: follow a live log (stdin) and say the moment the
server is ready, has failed, or has stalled.

Single-threaded: the line source waits on stdin with ``select`` and, while
the stream is quiet, runs the clock (stall and ready deadlines, closing a
traceback whose exception line has arrived, health probes). Everything else
is the same pipeline as ``classify``: envelope -> events -> incident ->
diagnosis, so the answer printed here is the answer ``classify`` gives.
"""
from __future__ import annotations

import json
import os
import select
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Iterator, TextIO

from forensics import exitcodes
from forensics.diagnosis.diagnose import diagnose_incident, record_hits
from forensics.diagnosis.early_warnings import live_early_warnings
from forensics.diagnosis.run import load_classifier
from forensics.diagnosis.signatures import signature_set
from forensics.envelope.formats import Clock, detect_format, iter_records
from forensics.events import model as K
from forensics.events.parser import EventParser
from forensics.incidents.lifetimes import Incident, IncidentBuilder

IDLE_TICK = 0.05  # seconds between clock checks while the stream is quiet
SETTLE = 0.25  # after a failure appears, wait this long for the lines that complete it
QUIET_FLUSH = 0.15  # close a traceback whose exception line came and nothing followed


class WatchExit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class WatchOptions:
    stall_timeout: float = 300.0
    ready_timeout: float | None = None
    probe: str | None = None
    probe_interval: float = 5.0
    fmt: str = "text"  # text | json
    input_format: str = "auto"
    until: str = "ready"  # ready | failure (keep watching a serving server)
    use_classifier: bool = True


def _live_lines(fd: int, on_idle: Callable[[], None]) -> Iterator[tuple[int, str]]:
    """Numbered lines from a file descriptor as they arrive; ``on_idle`` runs
    whenever no complete line has arrived for IDLE_TICK seconds."""
    buf = b""
    n = 0
    while True:
        ready, _, _ = select.select([fd], [], [], IDLE_TICK)
        if not ready:
            on_idle()
            continue
        try:
            data = os.read(fd, 1 << 16)
        except InterruptedError:  # pragma: no cover - EINTR is retried by Python
            continue
        if not data:
            if buf:
                n += 1
                yield n, buf.decode("utf-8", "replace").rstrip("\r")
            return
        buf += data
        if b"\n" not in data:
            if len(buf) > (8 << 20):  # a monster line: keep its head
                n += 1
                yield n, buf[: 64 << 10].decode("utf-8", "replace")
                buf = b""
            continue
        *lines, buf = buf.split(b"\n")
        for raw in lines:
            n += 1
            yield n, raw.decode("utf-8", "replace").rstrip("\r")
        on_idle()


class Watcher:
    def __init__(self, opts: WatchOptions, out: TextIO = sys.stdout) -> None:
        self.opts = opts
        self.out = out
        self.sset = signature_set()
        self.clf = load_classifier(opts.use_classifier)
        self.builder = IncidentBuilder("-", record_hits(self.sset))
        self.parser: EventParser | None = None
        self.start = time.monotonic()
        self.last_line_at = self.start
        self.failure_at: float | None = None
        self.announced_warnings: set[str] = set()
        self.last_phase: tuple[int, str | None] | None = None
        self.inc_start_wall = self.start
        self.ready_at: float | None = None
        self.next_probe = 0.0
        self.probe_ok = False
        self.hits_seen = 0  # failure + wrapper hits of the current incident already diagnosed

    # -- output --------------------------------------------------------------
    def emit(self, kind: str, message: str, **fields: Any) -> None:
        if self.opts.fmt == "json":
            rec = {"event": kind, "elapsed_s": round(time.monotonic() - self.start, 3), **fields}
            self.out.write(json.dumps(rec, default=str) + "\n")
        else:
            self.out.write(f"[{time.monotonic() - self.start:7.1f}s] {message}\n")
        self.out.flush()

    # -- the clock -------------------------------------------------------------
    def on_idle(self) -> None:
        now = time.monotonic()
        if self.parser is not None and now - self.last_line_at >= QUIET_FLUSH and self.parser.tb.open:
            self.handle(self.parser.flush_idle())
        if self.failure_at is not None and now - self.failure_at >= SETTLE:
            self.finish_failure()
        inc = self.builder.cur
        phase = inc.phase if inc is not None else None
        if self.ready_at is not None and self.opts.probe:
            self.probe(now)
        if self.opts.until == "ready" and self.ready_at is None and now - self.last_line_at >= self.opts.stall_timeout:
            self.emit("stalled", f"STALLED: no log line for {now - self.last_line_at:.0f}s in phase {phase or 'unknown'}",
                      phase=phase, quiet_s=round(now - self.last_line_at, 1))
            raise WatchExit(exitcodes.STALLED)
        if self.opts.ready_timeout is not None and self.ready_at is None and now - self.start >= self.opts.ready_timeout:
            self.emit("ready_timeout", f"NOT READY after {self.opts.ready_timeout:.0f}s (phase {phase or 'unknown'})",
                      phase=phase)
            raise WatchExit(exitcodes.READY_TIMEOUT)

    def probe(self, now: float) -> None:
        if now < self.next_probe:
            return
        self.next_probe = now + self.opts.probe_interval
        url = self.opts.probe
        try:
            with urllib.request.urlopen(url, timeout=min(5.0, self.opts.probe_interval)) as resp:  # noqa: S310
                ok = 200 <= resp.status < 300
                status = resp.status
        except urllib.error.HTTPError as e:
            ok, status = False, e.code
        except (urllib.error.URLError, OSError, ValueError) as e:
            ok, status = False, str(getattr(e, "reason", e))
        if ok:
            self.emit("ready", f"READY: log and probe {url} agree (HTTP {status})", probe=url, status=status)
            raise WatchExit(exitcodes.OK)
        self.emit("probe_failed", f"probe {url} failed after log readiness: {status}", probe=url, status=status)

    # -- events ------------------------------------------------------------------
    def handle(self, events: list) -> None:
        for ev in events:
            for done in self.builder.feed(ev):
                self.closed_incident(done)
            self.after_event(ev)

    def closed_incident(self, inc: Incident) -> None:
        res = diagnose_incident(inc, self.clf)
        if res["verdict"] == "failed":
            self.report_failure(res)
        self.emit("restart", f"process lifetime ended ({res['verdict']}); a new one begins", verdict=res["verdict"])
        self.last_phase = None
        self.hits_seen = 0
        self.announced_warnings.clear()
        self.failure_at = None

    def after_event(self, ev: Any) -> None:
        inc = self.builder.cur
        if inc is None:
            return
        # Early warnings, the moment their line arrives (the decision: diagnosis.early_warnings).
        for w in live_early_warnings(inc, ev, self.announced_warnings):
            self.emit("early_warning", f"EARLY WARNING (line {w['line']}, predicts {', '.join(w['predicts'])}): "
                      f"{w['text'][:200]}", line=w["line"], text=w["text"], signature=w["signature"],
                      predicts=w["predicts"], why=w["why"])
        if ev.kind == K.CUDA_GRAPH_REGISTRATION:
            self.emit("cuda_graph_registration", f"{ev.data['count']} cuda graph addresses registered",
                      line=ev.line, count=ev.data["count"])
        if inc.phase is not None and (inc.index, inc.phase) != self.last_phase:
            self.last_phase = (inc.index, inc.phase)
            since = ""
            if inc.start_ts is not None and ev.ts is not None:
                since = f" ({(ev.ts - inc.start_ts).total_seconds():.0f}s into the log)"
            self.emit("phase", f"phase {inc.phase}: {ev.text[:160]}{since}", phase=inc.phase, line=ev.line)
        if inc.ready_line is not None and self.ready_at is None and self.failure_at is None:
            self.ready_at = time.monotonic()
            if self.opts.probe:
                self.emit("ready_log", "log says ready; waiting for the probe to agree", line=inc.ready_line)
                self.probe(self.ready_at)
            elif self.opts.until == "ready":
                self.emit("ready", f"READY (line {inc.ready_line})", line=inc.ready_line)
                raise WatchExit(exitcodes.OK)
        hits = len(inc.failure_hits) + len(inc.wrapper_hits)
        if self.failure_at is None and (hits != self.hits_seen or ev.kind in (K.TRACEBACK, K.UNIT_LIFECYCLE)):
            # Only an event that added evidence can change the verdict: diagnose then, not on every line.
            self.hits_seen = hits
            if diagnose_incident(inc, None)["verdict"] == "failed":
                self.failure_at = time.monotonic()

    def finish_failure(self) -> None:
        inc = self.builder.cur
        if inc is None:
            return
        if self.parser is not None and self.parser.tb.open:
            self.handle(self.parser.flush_idle())
        res = diagnose_incident(inc, self.clf)
        if res["verdict"] != "failed":
            self.failure_at = None
            return
        self.report_failure(res)
        raise WatchExit(exitcodes.FAILURE)

    def report_failure(self, res: dict[str, Any]) -> None:
        if self.opts.fmt == "json":
            self.emit("failure", "", diagnosis=res)
            return
        from forensics.report.text import render_text

        self.emit("failure", "FAILED")
        self.out.write(render_text({"source": "-", **res, "stats": {}}) + "\n")
        self.out.flush()

    # -- driving ------------------------------------------------------------------
    def run(self, fd: int) -> int:
        try:
            return self._run(fd)
        except WatchExit as e:
            return e.code

    def _run(self, fd: int) -> int:
        lines = _live_lines(fd, self.on_idle)
        first: list[tuple[int, str]] = []
        for item in lines:
            first.append(item)
            if item[1].strip():
                break
        fmt = detect_format([t for _, t in first]) if self.opts.input_format == "auto" else self.opts.input_format
        clock = Clock()
        self.parser = parser = EventParser("-", clock, [])

        def counted() -> Iterator[tuple[int, str]]:
            for item in first:
                self.last_line_at = time.monotonic()
                yield item
            for item in lines:
                self.last_line_at = time.monotonic()
                yield item

        for rec in iter_records(counted(), fmt, clock, merge=False):  # no lookahead on a live stream
            self.handle(parser.feed(rec))
        self.handle(parser.finish())
        # End of stream.
        if self.failure_at is not None:
            self.finish_failure()
        for inc in self.builder.finish():
            res = diagnose_incident(inc, self.clf)
            if res["verdict"] == "failed":
                self.report_failure(res)
                return exitcodes.FAILURE
            if res["verdict"] == "ready":
                self.emit("ready", "READY (stream ended)")
                return exitcodes.OK
            self.emit("ended", f"stream ended while {res['verdict']} (phase {res.get('phase') or 'unknown'})",
                      verdict=res["verdict"], phase=res.get("phase"))
            return exitcodes.STALLED
        self.emit("ended", "stream ended with no log lines")
        return exitcodes.STALLED
