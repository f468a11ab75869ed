"""``forensics run -- CMD``: start the server as a child, pass its output
through untouched, and say where it is in its start-up and why it died.

Four threads, so that no part can hold up another:

- the **pump** (``passthrough.py``) reads the child's stdout and stderr as
  bytes arrive and writes them to ours at once, unchanged; it hands complete
  lines to a bounded backlog that never makes it wait;
- the **analysis** is ``forensics watch`` (``run_watch.RunWatcher``) reading
  that backlog; runs of serving lines (access and batch statistics) are
  thinned at C speed as ``classify`` thins them;
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

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from forensics.drivers.passthrough import EOF, Annotations, Backlog, FdWriter, OutputPump
from forensics.drivers.sd_notify import NOTIFY_ENV, SystemdNotifier
from forensics.drivers.startup import StartupState, failure_line
from forensics.drivers.status_http import StatusServer
from forensics.errors import CommandError, ForensicsError
from forensics.report.text import human_duration

FINAL_WAIT = 5.0  # the final answer may take this long after the child died (then we exit without it)
FINAL_BACKLOG = 256 << 10  # of a flood's backlog, the newest bytes still read once the child is dead
TERMINATION_BYTES = 4096  # what Kubernetes reads of a termination message
# Passed on to the child. USR1/USR2 too: servers use them (stack dumps,
# profilers), and their default action would otherwise kill us instead.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
DEFAULT_TERMINATION_LOG = "/dev/termination-log"
STATUS_EVERY = 10.0  # systemd STATUS= refreshed this often (elapsed time), besides every change
EXTEND_EVERY = 1.0  # EXTEND_TIMEOUT_USEC= this often while a start-up progresses


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
    analysis_cpu: float = 0.1  # of one core; over it, blocks with nothing a diagnosis needs are skipped
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))


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
        self.watcher: Any = None
        self.stops: list[int] = []  # stopping signals received (then an exit needs no explaining)
        self.done = threading.Event()

    # -- signals ----------------------------------------------------------------
    def _on_signal(self, signum: int, frame: Any) -> None:
        if signum in STOPPING:
            self.stops.append(signum)
            if self.notifier is not None:
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
        terminal = foreground_terminal()
        try:
            self.watcher = self._prepare_analysis()
            if self.stops:  # told to stop before anything started: start nothing
                return 128 + self.stops[0]
            self._spawn()
            if terminal is not None:
                hand_terminal(terminal, self.pgid)  # the server reads the keyboard, gets ^C and ^\ itself
            return self._supervise()
        finally:
            if terminal is not None:
                hand_terminal(terminal, os.getpgrp())
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _spawn(self) -> None:
        env = {k: v for k, v in self.opts.env.items() if k not in NOTIFY_ENV}
        try:
            # Its own process group: a terminal's Ctrl-C reaches it once (from the
            # terminal, whose foreground it gets, or through us; --group then
            # signals the whole group, else the child alone).
            self.child = subprocess.Popen(self.opts.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=env, process_group=0, close_fds=True,
                                          preexec_fn=die_with_parent())  # no thread runs yet: fork is safe
        except FileNotFoundError:
            raise CommandError(f"{self.opts.command[0]}: command not found", 127) from None
        except PermissionError:
            raise CommandError(f"{self.opts.command[0]}: permission denied", 126) from None
        except OSError as e:
            raise CommandError(f"{self.opts.command[0]}: cannot run: {e.strerror or e}", 126) from None
        self.pgid = self.child.pid
        self.state.on_spawn(self.child.pid)
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
        analysis = threading.Thread(target=self._analyse, name="forensics-analysis", daemon=True)
        speaker = threading.Thread(target=self._speak, name="forensics-sd-notify", daemon=True) \
            if self.notifier is not None else None
        # Our threads (and theirs: probes, HTTP requests) start with the signals
        # blocked, so the kernel delivers them to the main thread, the one that
        # forwards them: one delivered to another thread would wait for the
        # main thread's waitpid() to return, i.e. for the child to die.
        signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
        try:
            pump.start()
            analysis.start()
            if self.server is not None:
                self.server.start()
            if speaker is not None:
                speaker.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
        status = self._wait(child.pid)
        self.reaped = True  # its pid may be reused now: no more signals to it
        code, how = describe_exit(status)
        child.returncode = code  # reaped here: Popen must not wait for it again
        pump.child_gone_at = time.monotonic()
        pump.join()
        self.backlog.trim(FINAL_BACKLOG)
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
    def _prepare_analysis(self) -> Any:
        """The live analysis, loaded before the child starts: loading it
        (signatures, grammars, model: about a second) holds the interpreter
        lock in long stretches, which would delay a signal's forwarding by
        as much; once loaded, forwarding takes well under a millisecond.
        If it cannot load, the child runs all the same, unwatched."""
        try:
            from forensics.drivers.run_watch import RunWatcher

            o = self.opts
            return RunWatcher(o.command, self.state, self.backlog, self.annotations, self._on_final, probe=o.probe,
                              probe_interval=o.probe_interval, grace=o.grace, input_format=o.input_format,
                              use_classifier=o.use_classifier, annotate_format=o.annotate_format,
                              cpu_budget=o.analysis_cpu)
        except Exception as e:  # a bug or a broken install of ours must not keep the server from starting
            self._analysis_failed(e)
            return None

    def _analysis_failed(self, e: Exception) -> None:
        self.state.analysis_error = f"{type(e).__name__}: {e}"[:300]
        if os.environ.get("FORENSICS_DEBUG"):
            import traceback

            self.stderr.note(traceback.format_exc())

    def _analyse(self) -> None:
        try:
            if self.watcher is not None:
                self.watcher.run(-1)
        except Exception as e:  # a bug of ours must not touch the child: passthrough goes on
            self._analysis_failed(e)
        finally:
            while self.backlog.get(0.5) is not EOF:  # keep the backlog drained
                pass

    def _on_final(self, top: dict[str, Any]) -> None:
        """A failure answer stands: the termination log gets it at once (if
        we are killed with the pod, Kubernetes still finds it)."""
        self._write_termination_log(termination_message(top, "still running", top.get("phase"), None))

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
        if diagnosis is None and (code == 0 or self.stops):
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
        last_state, last_text, last_at, ready_sent, next_ping, next_extend = "", "", 0.0, False, 0.0, 0.0
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
            if current == "starting" and now >= next_extend:
                # systemd arms WatchdogSec= only after READY=1: during start-up the
                # deadline is TimeoutStartSec=, which each message moves to the
                # moment this start-up would count as stalled. A hang stops them.
                notifier.send(f"EXTEND_TIMEOUT_USEC={state.usec_until_stall(now)}")
                next_extend = now + EXTEND_EVERY
            if notifier.watchdog_s and now >= next_ping and current in ("starting", "ready"):
                # Only while the log moves (or the server is up, when an idle one is
                # quiet): a hang, a failure, stop the pings.
                notifier.send("WATCHDOG=1")
                next_ping = now + notifier.watchdog_s
            if self.done.wait(tick):
                return


def die_with_parent() -> Callable[[], None] | None:
    """For the child, before exec: SIGTERM when we die (Linux's
    PR_SET_PDEATHSIG), so that a supervisor killed outright (OOM, SIGKILL)
    does not leave the server running unsupervised."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # we died before it was armed
            os.kill(os.getpid(), signal.SIGTERM)
    return arm


def foreground_terminal() -> int | None:
    """Our stdin when it is a terminal whose foreground we hold (then the
    child gets it, as a shell gives it to a job; tini does the same)."""
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            return 0
    except OSError:
        pass
    return None


def hand_terminal(fd: int, pgid: int | None) -> None:
    if pgid is None:
        return
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background process may not otherwise
    try:
        os.tcsetpgrp(fd, pgid)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def default_termination_log() -> str | None:
    return DEFAULT_TERMINATION_LOG if Path(DEFAULT_TERMINATION_LOG).exists() else None
