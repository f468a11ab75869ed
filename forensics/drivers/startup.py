"""Where a supervised server is in its start-up: the one record that
``forensics run``'s analysis writes and its speakers (the HTTP status
endpoints, systemd's notify socket, the termination message) read.

Written by two threads (the output pump: bytes arrived; the analysis:
phases, warnings, readiness, the diagnosis) and read by others; every read
goes through ``snapshot`` under the lock, so a reader never sees half an
update.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from forensics.report.text import human_duration

# What ``systemctl status`` and /startupz say a phase is doing.
PHASE_WORDS = {
    None: "starting", "launch": "launching", "load-weights": "loading weights",
    "memory-plan": "allocating the KV cache", "kernel-jit": "compiling kernels",
    "cuda-graph-capture": "capturing CUDA graphs", "warmup": "warming up", "ready": "ready",
    "serving": "serving", "shutdown": "shutting down",
}
DETAIL_CHARS = 200  # of the line that opened a phase
WARNING_KEYS = ("line", "text", "signature", "predicts", "why", "lead_seconds")
DIAGNOSIS_KEYS = ("verdict", "root_cause", "confidence", "decided_by", "signature", "summary", "remediation",
                  "phase", "evidence", "early_warnings", "time_to_failure_s")
MAX_WARNINGS = 50  # kept for /startupz (the first ones: a warning matters by being early)


class StartupState:
    """The supervised server's start-up as the log tells it. ``state`` is
    derived when read: ``starting``, ``stalled`` (no output for
    ``stall_timeout`` seconds before readiness), ``ready``, ``failed``,
    ``exited``."""

    def __init__(self, stall_timeout: float, probe: str | None = None) -> None:
        self.lock = threading.Lock()
        self.stall_timeout = stall_timeout
        self.probe = probe
        self.started_at = time.monotonic()
        self.started_wall = time.time()
        self.last_output_at = self.started_at  # the pump sets it at every read (no lock: one float)
        self.pid: int | None = None
        self.phase: str | None = None
        self.detail: str | None = None
        self.phase_line: int | None = None
        self.phase_at = self.started_at
        self.phases: list[tuple[str, float]] = []  # every phase entered, with when (none missed by a slow reader)
        self.log_ready = False
        self.ready = False  # the log said ready (and the probe agreed, with --probe)
        self.probe_status: Any = None
        self.warnings: list[dict[str, Any]] = []
        self.diagnosis: dict[str, Any] | None = None  # the last failure answer
        self.final = False  # the diagnosis stands (grace period over or the process died)
        self.exit_status: int | None = None  # run's exit status once the child is gone
        self.exit_how: str | None = None  # "exited with status 1", "killed by SIGKILL"
        self.lines_read = 0
        self.lines_skipped = 0  # dropped from the analysis under a flood (passed through all the same)
        self.analysis_error: str | None = None

    # -- writers ----------------------------------------------------------------
    def on_spawn(self, pid: int) -> None:
        """The clocks start with the child, not with us."""
        with self.lock:
            self.pid = pid
            self.started_at = self.last_output_at = self.phase_at = time.monotonic()
            self.started_wall = time.time()

    def on_phase(self, phase: str, line: int | None, detail: str) -> None:
        with self.lock:
            if phase == self.phase:
                return
            self.phase, self.phase_line, self.detail = phase, line, detail[:DETAIL_CHARS]
            self.phase_at = time.monotonic()
            self.phases.append((phase, self.phase_at))

    def on_warning(self, warning: dict[str, Any]) -> None:
        with self.lock:
            if len(self.warnings) < MAX_WARNINGS:
                self.warnings.append({k: warning.get(k) for k in WARNING_KEYS})

    def on_log_ready(self) -> None:
        with self.lock:
            self.log_ready = True

    def on_ready(self, probe_status: Any = None) -> None:
        with self.lock:
            self.log_ready = self.ready = True
            self.probe_status = probe_status

    def on_probe(self, status: Any) -> None:
        with self.lock:
            self.probe_status = status

    def on_diagnosis(self, top: dict[str, Any], final: bool) -> None:
        """A failure answer (or, ``top['verdict'] != 'failed'``, the news that
        what looked fatal was handled)."""
        with self.lock:
            if top.get("verdict") == "failed":
                self.diagnosis = {k: top.get(k) for k in DIAGNOSIS_KEYS}
                self.final = self.final or final
            else:
                self.diagnosis, self.final = None, False

    def on_exit(self, status: int, how: str) -> None:
        with self.lock:
            self.exit_status, self.exit_how = status, how

    # -- readers ----------------------------------------------------------------
    def state(self, now: float | None = None) -> str:
        with self.lock:
            return self._state(time.monotonic() if now is None else now)

    def _state(self, now: float) -> str:
        if self.diagnosis is not None:
            return "failed"
        if self.exit_status is not None:
            return "exited"
        if self.ready:
            return "ready"
        if now - self.last_output_at >= self.stall_timeout:
            return "stalled"
        return "starting"

    def is_ready(self) -> bool:
        """/readyz: the log said ready (and the probe agreed after that), the
        child lives, nothing failed since."""
        with self.lock:
            return self.ready and self.diagnosis is None and self.exit_status is None

    def usec_until_stall(self, now: float) -> int:
        """Microseconds until no output for ``stall_timeout`` makes this a stall."""
        left = self.stall_timeout - (now - self.last_output_at)
        return max(1, int(min(left, 86400 * 365) * 1e6))

    def phases_since(self, n: int) -> list[tuple[str, float]]:
        with self.lock:
            return self.phases[n:]

    def phase_status(self, phase: str, at: float) -> str:
        """STATUS= for entering a phase: ``capturing CUDA graphs, 2 min 10 s``."""
        return f"{PHASE_WORDS.get(phase, phase)}, {human_duration(at - self.started_at)}"

    def status_line(self, now: float | None = None) -> str:
        """systemd's STATUS=: what it is doing and for how long."""
        now = time.monotonic() if now is None else now
        with self.lock:
            state = self._state(now)
            since = human_duration(now - self.started_at)
            words = PHASE_WORDS.get(self.phase, self.phase or "starting")
            if state == "failed":
                return failure_line(self.diagnosis or {}, self.exit_how)
            if state == "exited":
                return f"server {self.exit_how} in phase {self.phase or 'unknown'}"
            if state == "stalled":
                return f"stalled {words}: no output for {human_duration(now - self.last_output_at)} " \
                       f"({since} since start)"
            if state == "ready":
                return f"ready after {human_duration(self.phase_at - self.started_at)}" \
                    if self.phase == "ready" else f"{words} ({since} since start)"
            if self.log_ready:
                return f"log says ready, waiting for {self.probe} to agree, {since}"
            return f"{words}, {since}"

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        """/startupz's body."""
        now = time.monotonic() if now is None else now
        with self.lock:
            return {
                "state": self._state(now),
                "phase": self.phase,
                "phase_words": PHASE_WORDS.get(self.phase, self.phase),
                "detail": self.detail,
                "detail_line": self.phase_line,
                "seconds_in_phase": round(now - self.phase_at, 3),
                "seconds_since_start": round(now - self.started_at, 3),
                "seconds_since_output": round(now - self.last_output_at, 3),
                "stall_timeout_s": self.stall_timeout,
                "log_ready": self.log_ready,
                "ready": self.ready and self.diagnosis is None and self.exit_status is None,
                "probe": self.probe,
                "probe_status": self.probe_status,
                "early_warnings": list(self.warnings),
                "diagnosis": self.diagnosis,
                "final": self.final,
                "pid": self.pid,
                "alive": self.exit_status is None,
                "exit_status": self.exit_status,
                "exit": self.exit_how,
                "lines_read": self.lines_read,
                "lines_skipped": self.lines_skipped,
                "analysis_error": self.analysis_error,
            }


def failure_line(diagnosis: dict[str, Any], exit_how: str | None = None) -> str:
    """One line for systemd's last STATUS=: the label and what proves it."""
    ev = (diagnosis.get("evidence") or [{}])[0]
    where = f" in phase {diagnosis['phase']}" if diagnosis.get("phase") else ""
    died = f", {exit_how}" if exit_how else ""
    text = f": {ev['text'][:300]}" if ev.get("text") else ""
    return f"failed{where}{died}: {diagnosis.get('root_cause') or 'unknown'}{text}"
