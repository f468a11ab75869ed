"""``forensics run -- CMD``: start the server as a child, pass its output
through untouched, and say where it is in its start-up and why it died.

Four threads, so that no part can hold up another:

- the **pump** reads the child's stdout and stderr as bytes arrive and writes
  them to ours at once, unchanged (a blocked reader of ours blocks the child,
  as a pipe would without us); it cuts complete lines off each stream and
  hands them, as blocks of bytes, to a bounded backlog;
- the **analysis** is ``forensics watch`` (``RunWatcher``) reading that
  backlog; runs of serving lines (access and batch statistics) are thinned
  at C speed as ``classify`` thins them, and under a flood the oldest blocks
  of the backlog are dropped (counted) rather than ever slowing the pump;
- the **status server** (``--serve``) and the **systemd speaker**
  (``NOTIFY_SOCKET``) read ``StartupState``;
- the **main thread** forwards signals and waits for the child (reaping
  every orphan when it is PID 1).

When the child is gone the pump drains what it wrote (until end of file, or
until the pipes are empty: a grandchild holding them open does not keep us
alive), the analysis gives its final answer on those lines, the diagnosis is
written to the termination log and stderr, and run exits with the child's
status (128 + N when signal N killed it).
"""
from __future__ import annotations

import json
import os
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

from forensics.drivers.sd_notify import NOTIFY_ENV, SystemdNotifier
from forensics.drivers.startup import StartupState, failure_line
from forensics.drivers.status_http import StatusServer
from forensics.errors import CommandError, ForensicsError
from forensics.ingest.live import LineCutter
from forensics.report.text import human_duration

READ_SIZE = 1 << 17  # a pipe holds 64 KiB; one read takes all of it
BACKLOG_BYTES = 8 << 20  # analysis backlog; beyond it the oldest blocks are dropped (a flood)
DRAIN_IDLE = 0.05  # after the child died: pipes empty this long means its output is all read
DRAIN_MAX = 2.0  # ... and a grandchild that keeps writing does not keep us alive longer
FINAL_WAIT = 15.0  # the final answer may take this long after the child died (then we exit without it)
TERMINATION_BYTES = 4096  # what Kubernetes reads of a termination message
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
DEFAULT_TERMINATION_LOG = "/dev/termination-log"
STATUS_EVERY = 10.0  # systemd STATUS= refreshed this often (elapsed time), besides every change
EOF = object()


@dataclass
class RunOptions:
    command: list[str]
    serve: tuple[str, int] | None = None
    probe: str | None = None
    probe_interval: float = 5.0
    stall_timeout: float = 300.0
    grace: float = 2.0
    input_format: str = "auto"
    use_classifier: bool = True
    annotate: str | None = None  # a path, or "-" for our stderr
    annotate_format: str = "text"
    termination_log: str | None = None
    group: bool = False
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))


# --------------------------------------------------------------------- output
class FdWriter:
    """Writes to one of our descriptors, whole, whatever its mode. If the
    reader left (EPIPE) or the disk is full, the bytes are dropped and the
    child goes on: our output is not worth the server. Notes of our own
    (annotations, the diagnosis) wait for a line boundary of the child's
    output so they never split one of its lines."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.closed = False
        self.at_line_start = True
        self.pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        with self.lock:
            self._write_all(data)
            if data:
                self.at_line_start = data.endswith(b"\n")
            if self.pending and self.at_line_start:
                self._flush_pending()

    def note(self, text: str, force: bool = False) -> None:
        """Our own line(s); ``force``: now, ending the child's unfinished line first."""
        data = text.encode("utf-8", "replace")
        with self.lock:
            self.pending.append(data)
            if force and not self.at_line_start:
                self._write_all(b"\n")
                self.at_line_start = True
            if self.at_line_start:
                self._flush_pending()

    def _flush_pending(self) -> None:
        data, self.pending = b"".join(self.pending), []
        self._write_all(data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.closed:
            try:
                n = os.write(self.fd, view)
                view = view[n:]
            except BlockingIOError:  # our stdout was handed to us non-blocking
                try:
                    select.select([], [self.fd], [], 1.0)
                except (OSError, ValueError):
                    self.closed = True
            except InterruptedError:
                continue
            except OSError:
                self.closed = True


class Backlog:
    """Blocks of complete lines from the pump to the analysis, in order,
    each with the number of its first line. Bounded: a flood drops the
    oldest blocks (the newest lines are where a failure shows)."""

    def __init__(self, cap: int = BACKLOG_BYTES) -> None:
        self.cond = threading.Condition()
        self.blocks: deque[tuple[bytes, int, int]] = deque()
        self.size = 0
        self.cap = cap
        self.closed = False
        self.dropped_lines = 0
        self.incomplete_last = False

    def put(self, block: bytes, start: int, lines: int) -> None:
        with self.cond:
            self.blocks.append((block, start, lines))
            self.size += len(block)
            while self.size > self.cap and len(self.blocks) > 1:
                old, _, n = self.blocks.popleft()
                self.size -= len(old)
                self.dropped_lines += n
            self.cond.notify()

    def close(self, incomplete_last: bool = False) -> None:
        with self.cond:
            self.closed = True
            self.incomplete_last = incomplete_last
            self.cond.notify_all()

    def get(self, timeout: float) -> Any:
        """(block, first line number), None when nothing came in ``timeout``, or EOF."""
        with self.cond:
            if not self.blocks and not self.closed:
                self.cond.wait(timeout)
            if self.blocks:
                block, start, _ = self.blocks.popleft()
                self.size -= len(block)
                return block, start
            return EOF if self.closed else None


class OutputPump(threading.Thread):
    """The child's stdout and stderr to ours, byte for byte, as they arrive;
    complete lines of both, in arrival order, to the backlog."""

    def __init__(self, streams: list[tuple[int, FdWriter]], backlog: Backlog, state: StartupState) -> None:
        super().__init__(name="forensics-pump", daemon=True)
        self.streams = streams
        self.backlog = backlog
        self.state = state
        self.lines = 0
        self.last_line = b""  # the last complete line (for a termination message without a diagnosis)
        self.child_gone_at: float | None = None

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        cutters: dict[int, LineCutter] = {}
        for fd, writer in self.streams:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, writer)
            cutters[fd] = LineCutter()
        try:
            self._pump(sel, cutters)
        finally:
            incomplete = False
            for fd, cutter in cutters.items():
                raw, cut_short = cutter.finish_raw()
                if raw:
                    incomplete = incomplete or cut_short
                    self._hand_over(bytes(raw) + b"\n")
                try:
                    os.close(fd)
                except OSError:
                    pass
            sel.close()
            self.backlog.close(incomplete)

    def _pump(self, sel: selectors.BaseSelector, cutters: dict[int, LineCutter]) -> None:
        state = self.state
        while sel.get_map():
            gone = self.child_gone_at
            ready = sel.select(DRAIN_IDLE if gone is not None else 0.25)
            if not ready and gone is not None:
                return  # the child is dead and its pipes are empty: everything it wrote is read
            for key, _ in ready:
                fd = key.fd
                try:
                    data = os.read(fd, READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(fd)
                    continue
                key.data.write(data)
                state.last_output_at = time.monotonic()
                raw, _ = cutters[fd].take_raw(data)
                if raw:
                    self._hand_over(bytes(raw))
            if gone is not None and time.monotonic() - gone > DRAIN_MAX:
                return

    def _hand_over(self, raw: bytes) -> None:
        n = raw.count(b"\n")
        self.backlog.put(raw, self.lines + 1, n)
        self.lines += n
        cut = raw.rfind(b"\n", 0, len(raw) - 1) + 1
        self.last_line = raw[cut:-1]


# --------------------------------------------------------------------- analysis
def make_watcher(opts: RunOptions, state: StartupState, backlog: Backlog,
                 annotations: "Annotations | None", on_final: Callable[[dict[str, Any]], None]) -> Any:
    """``forensics watch`` adapted to run (built in the analysis thread: it
    loads the signatures, grammars and model, a second or so)."""
    import math

    from forensics.drivers.watch import IDLE_TICK, EARLY_LINES, LiveLines, Watcher
    from forensics.drivers.watch_options import WatchOptions, answer
    from forensics.events.bulk import BlockThinner, BulkGate

    class FedLines(LiveLines):
        """``LiveLines`` over the backlog instead of a descriptor; runs of
        serving lines thinned as they arrive (not the first lines: the plan
        may still change there, and a replay needs them all)."""

        def __init__(self, tick: Callable[[], None], tb_open: Callable[[], bool]) -> None:
            super().__init__(-1, tick)
            self.gate = BulkGate()
            self.thinner = BlockThinner(self.gate)
            self.tb_open = tb_open

        def _fill(self) -> None:
            got = backlog.get(IDLE_TICK)
            if got is EOF:
                for n, text in self.thinner.finish():
                    self._item(n, text)
                self.incomplete_last = backlog.incomplete_last
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
                state.lines_skipped = backlog.dropped_lines
            self.tick()

        def _item(self, n: int, text: str) -> None:
            self.n = n
            self.queue.append((n, text))
            if n == len(self.early) + 1 and n <= EARLY_LINES:  # contiguous: a replay may use them
                self.early.append((n, text))
            self.last_line_at = time.monotonic()
            state.lines_read = n

    class RunWatcher(Watcher):
        """The watcher's answer, kept going after a failure (the server may
        live on) and written to ``StartupState``; printed only with --annotate."""

        def __init__(self) -> None:
            wopts = WatchOptions(stall_timeout=math.inf, probe=opts.probe, probe_interval=opts.probe_interval,
                                 fmt=opts.annotate_format, input_format=opts.input_format, until="failure",
                                 use_classifier=opts.use_classifier, grace=opts.grace)
            super().__init__(wopts, out=sys.stderr)
            self._ev: Any = None
            self.concluded: tuple | None = None  # the final answer last given

        def emit(self, kind: str, message: str, **fields: Any) -> None:
            if kind == "phase":
                detail = self._ev.text if self._ev is not None else message
                state.on_phase(fields["phase"], fields.get("line"), detail)
            elif kind == "early_warning":
                state.on_warning(fields)
            elif kind == "ready_log":
                state.on_log_ready()
            elif kind == "ready":
                state.on_ready(fields.get("status"))
            elif kind == "probe_failed":
                state.on_probe(fields.get("status"))
            elif kind == "started":
                message = f"watching {' '.join(opts.command)[:200]}"
            if annotations is not None:
                elapsed = time.monotonic() - self.start
                if self.opts.fmt == "json":
                    annotations.write(json.dumps({"event": kind, "elapsed_s": round(elapsed, 3), **fields},
                                                 default=str, ensure_ascii=True) + "\n")
                else:
                    annotations.write(f"forensics: [{elapsed:7.1f}s] {message}\n")

        def _write_text(self, text: str) -> None:
            if annotations is not None:
                annotations.write("".join(f"forensics: {ln}\n" for ln in text.rstrip("\n").split("\n")))

        def announce(self, ev: Any, inc: Any, done: list) -> None:
            self._ev = ev
            super().announce(ev, inc, done)

        def report(self, kind: str, top: dict[str, Any], final: bool = False, changed: bool = True) -> None:
            state.on_diagnosis(top, final)
            if top.get("verdict") != "failed":
                self.concluded = None
            if annotations is not None:
                super().report(kind, top, final, changed)
            if final:
                on_final(top)

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
            if self.pipe is None:
                return 0
            top = self.evaluate(time.monotonic(), eof=True)
            if top["verdict"] == "failed":
                self.conclude(top)
            return 0

        def open_lines(self, fd: int) -> Any:
            return FedLines(self.tick, lambda: bool(self.pipe is not None and self.pipe.parser.tb.open))

    return RunWatcher()


class Annotations:
    """``--annotate FILE|-``: our notes, to a file or to our stderr between
    the child's lines."""

    def __init__(self, target: str, stderr: FdWriter) -> None:
        self.stderr = stderr if target == "-" else None
        self.file: IO[str] | None = None
        if self.stderr is None:
            try:
                self.file = open(target, "a", encoding="utf-8", errors="replace")  # noqa: SIM115 - held open
            except OSError as e:
                raise ForensicsError(f"--annotate {target}: {e.strerror or e}") from None

    def write(self, text: str) -> None:
        if self.stderr is not None:
            self.stderr.note(text)
            return
        try:
            assert self.file is not None
            self.file.write(text)
            self.file.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass


# --------------------------------------------------------------------- the termination message
def termination_message(diagnosis: dict[str, Any] | None, exit_how: str, phase: str | None,
                        last_line: str | None) -> str:
    """One short paragraph for operators (``kubectl describe pod``, the end
    of the log): label, evidence line, early warning, remedy; at most
    ``TERMINATION_BYTES`` bytes of UTF-8."""
    parts: list[str] = []
    if diagnosis is not None:
        how = diagnosis.get("signature") or diagnosis.get("decided_by") or "?"
        where = f" in phase {diagnosis['phase']}" if diagnosis.get("phase") else ""
        parts.append(f"forensics: the server failed{where} ({exit_how}): {diagnosis.get('root_cause')} [{how}].")
        if diagnosis.get("summary"):
            parts.append(str(diagnosis["summary"])[:400])
        for ev in (diagnosis.get("evidence") or [])[:1]:
            parts.append(f"Evidence, line {ev.get('line')}: {str(ev.get('text'))[:600]}")
        for w in (diagnosis.get("early_warnings") or [])[:1]:
            lead = w.get("lead_seconds")
            when = f", {human_duration(lead)} before" if lead is not None else ""
            parts.append(f"Early warning, line {w.get('line')}{when}: {str(w.get('text'))[:400]}")
        if diagnosis.get("remediation"):
            parts.append(f"Try: {diagnosis['remediation']}")
    else:
        parts.append(f"forensics: the server {exit_how} in phase {phase or 'unknown'}; "
                     "no known cause found in its output.")
        if last_line:
            parts.append(f"Its last line: {last_line[:600]}")
    text = "\n".join(parts) + "\n"
    data = text.encode("utf-8", "replace")
    if len(data) > TERMINATION_BYTES:
        data = data[:TERMINATION_BYTES - 4].decode("utf-8", "ignore").encode("utf-8") + b"...\n"
    return data.decode("utf-8")


def describe_exit(status: int) -> tuple[int, str]:
    """(run's exit status, words) from a wait status."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return 128 - code, f"was killed by {name}"
    return code, f"exited with status {code}"


# --------------------------------------------------------------------- the supervisor
class Supervisor:
    """One supervised child, from spawn to exit status."""

    def __init__(self, opts: RunOptions) -> None:
        if not opts.command:
            raise ForensicsError("forensics run needs a command: forensics run [OPTIONS] -- CMD [ARGS...]")
        self.opts = opts
        self.state = StartupState(opts.stall_timeout, opts.probe)
        self.stdout = FdWriter(1)
        self.stderr = FdWriter(2)
        # Everything that can fail on the user's input fails now, before the child starts.
        self.server = StatusServer(opts.serve, self.state) if opts.serve is not None else None
        self.annotations = Annotations(opts.annotate, self.stderr) if opts.annotate else None
        self.notifier = SystemdNotifier.from_env(opts.env)
        self.backlog = Backlog()
        self.child: subprocess.Popen | None = None
        self.pgid: int | None = None
        self.pending_signals: list[int] = []
        self.reaped = False
        self.phases_told = 0  # of state.phases, told to systemd
        self.forwarded: list[int] = []
        self.final_written: tuple | None = None
        self.done = threading.Event()
        self.analysis_done = threading.Event()

    # -- signals ----------------------------------------------------------------
    def _on_signal(self, signum: int, frame: Any) -> None:
        self.forwarded.append(signum)
        if signum in (signal.SIGTERM, signal.SIGINT) and self.notifier is not None:
            self.notifier.send("STOPPING=1")
        self._forward(signum)

    def _forward(self, signum: int) -> None:
        child = self.child
        if self.reaped:
            return
        if child is None:
            self.pending_signals.append(signum)
            return
        try:
            if self.opts.group and self.pgid is not None:
                os.killpg(self.pgid, signum)
            else:
                os.kill(child.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    # -- the run ----------------------------------------------------------------
    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in FORWARDED}
        try:
            self._spawn()
            return self._supervise()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _spawn(self) -> None:
        env = {k: v for k, v in self.opts.env.items() if k not in NOTIFY_ENV}
        try:
            # Its own process group: a terminal's Ctrl-C reaches it once, through
            # us (--group then signals the whole group, else the child alone).
            self.child = subprocess.Popen(self.opts.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=env, process_group=0, close_fds=True)
        except FileNotFoundError:
            raise CommandError(f"{self.opts.command[0]}: command not found", 127) from None
        except PermissionError:
            raise CommandError(f"{self.opts.command[0]}: permission denied", 126) from None
        except OSError as e:
            raise CommandError(f"{self.opts.command[0]}: cannot run: {e.strerror or e}", 126) from None
        self.pgid = self.child.pid
        self.state.pid = self.child.pid
        for sig in self.pending_signals:
            self._forward(sig)
        self.pending_signals.clear()

    def _supervise(self) -> int:
        child = self.child
        assert child is not None and child.stdout is not None and child.stderr is not None
        # The pump owns its own copies of the descriptors (and closes them).
        fds = [os.dup(child.stdout.fileno()), os.dup(child.stderr.fileno())]
        child.stdout.close()
        child.stderr.close()
        pump = OutputPump([(fds[0], self.stdout), (fds[1], self.stderr)], self.backlog, self.state)
        pump.start()
        analysis = threading.Thread(target=self._analyse, name="forensics-analysis", daemon=True)
        analysis.start()
        if self.server is not None:
            self.server.start()
        speaker = None
        if self.notifier is not None:
            speaker = threading.Thread(target=self._speak, name="forensics-sd-notify", daemon=True)
            speaker.start()
        status = self._wait(child.pid)
        self.reaped = True  # its pid may be reused now: no more signals to it
        code, how = describe_exit(status)
        child.returncode = code  # reaped here: Popen must not wait for it again
        pump.child_gone_at = time.monotonic()
        pump.join()
        analysis.join(FINAL_WAIT)
        self.state.on_exit(code, how)
        self.done.set()
        if speaker is not None:
            speaker.join(2.0)
        self._last_words(code, how, pump)
        if self.server is not None:
            self.server.close()
        if self.annotations is not None:
            self.annotations.close()
        if self.notifier is not None:
            self.notifier.close()
        return code

    def _wait(self, pid: int) -> int:
        """The child's wait status. As PID 1 every orphan that the kernel
        hands us is reaped too (else they stay zombies)."""
        reaper = os.getpid() == 1
        while True:
            try:
                got, status = os.waitpid(-1 if reaper else pid, 0)
            except ChildProcessError:  # pragma: no cover - someone else reaped it
                return 0
            if got == pid:
                return status

    # -- the analysis thread ------------------------------------------------------
    def _analyse(self) -> None:
        try:
            watcher = make_watcher(self.opts, self.state, self.backlog, self.annotations, self._on_final)
            watcher.run(-1)
        except Exception as e:  # a bug of ours must not touch the child: passthrough goes on
            self.state.analysis_error = f"{type(e).__name__}: {e}"[:300]
            if os.environ.get("FORENSICS_DEBUG"):
                import traceback

                self.stderr.note(traceback.format_exc())
            while self.backlog.get(0.5) is not EOF:  # keep the backlog drained
                pass
        finally:
            self.analysis_done.set()

    def _on_final(self, top: dict[str, Any]) -> None:
        """A failure answer stands: the termination log gets it at once (if
        we are killed with the pod, Kubernetes still finds it)."""
        self._write_termination_log(termination_message(top, "was still running", top.get("phase"), None))

    def _write_termination_log(self, text: str) -> None:
        path = self.opts.termination_log
        if not path:
            return
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError:
            pass  # not ours to fail over

    def _last_words(self, code: int, how: str, pump: OutputPump) -> None:
        """After the child's last line: why it died, where operators look."""
        snap = self.state.snapshot()
        diagnosis = snap["diagnosis"]
        if self.notifier is not None:  # the last STATUS= says how it ended
            self._tell_phases()  # (those the final answer found first)
            self.notifier.status(failure_line(diagnosis, how) if diagnosis else
                                 f"server {how} in phase {snap['phase'] or 'unknown'}")
        if diagnosis is None and (code == 0 or self.forwarded):
            return  # a clean exit, or the stop we passed on: nothing to explain
        last = pump.last_line.decode("utf-8", "replace") if pump.last_line else None
        text = termination_message(diagnosis, how, snap["phase"], last)
        self._write_termination_log(text)
        self.stderr.note(text, force=True)

    # -- systemd ------------------------------------------------------------------
    def _tell_phases(self) -> bool:
        """A STATUS= for each phase entered since the last call, however fast
        they came (the analysis may find several in one read)."""
        assert self.notifier is not None
        phases = self.state.phases_since(self.phases_told)
        for phase, at in phases:
            self.notifier.status(self.state.phase_status(phase, at))
        self.phases_told += len(phases)
        return bool(phases)

    def _speak(self) -> None:
        notifier, state = self.notifier, self.state
        assert notifier is not None
        tick = min(0.25, notifier.watchdog_s / 4) if notifier.watchdog_s else 0.25
        last_state, last_text, last_at, ready_sent, next_ping = "", "", 0.0, False, 0.0
        while True:
            now = time.monotonic()
            current = state.state(now)
            if current == "exited" or self.done.is_set():
                return  # the last STATUS= is the exit's (``_last_words``)
            told = self._tell_phases()
            text = state.status_line(now)
            if current != last_state or (not told and text != last_text and now - last_at >= STATUS_EVERY):
                if not told or current != "starting":
                    notifier.status(text)
                last_text, last_at = text, now
            last_state = current
            if not ready_sent and state.is_ready():
                notifier.send("READY=1")
                ready_sent = True
            if notifier.watchdog_s and now >= next_ping and current in ("starting", "ready"):
                # Only while the log moves (or the server is up): a start-up that
                # hangs stops the pings, and WatchdogSec= restarts it.
                notifier.send("WATCHDOG=1")
                next_ping = now + notifier.watchdog_s
            if self.done.wait(tick):
                return


def default_termination_log() -> str | None:
    return DEFAULT_TERMINATION_LOG if Path(DEFAULT_TERMINATION_LOG).exists() else None
