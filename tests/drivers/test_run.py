"""``forensics run -- CMD`` (issue 30) with real child processes
(``run_children.py``): seed 1 replayed at its real pace (compressed 150x), a
server that reaches ready and serves, one that hangs, one that floods 50 MB,
ones killed by a signal. Every child keeps a copy of exactly the bytes it
wrote; what came out of ``run`` must equal them, byte for byte, plus at most
the diagnosis paragraph after the last line of stderr.

The status endpoints are polled from a thread and the datagrams of a real
``NOTIFY_SOCKET`` (an AF_UNIX socket opened here) are collected with their
arrival times.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO

CHILDREN = Path(__file__).resolve().parent / "run_children.py"
SPEEDUP = 150.0  # seed 1's 9 min 51 s in about 4 s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NotifySocket:
    """systemd's side of sd_notify: an AF_UNIX datagram socket and what arrived on it."""

    def __init__(self, where: Path) -> None:
        self.path = str(where / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.messages: list[tuple[float, str]] = []
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.messages.append((time.monotonic(), data.decode()))

    def fields(self, key: str) -> list[tuple[float, str]]:
        """(arrival, value) of every ``KEY=value`` line, in order."""
        return [(t, line.split("=", 1)[1]) for t, msg in self.messages for line in msg.split("\n")
                if line.startswith(key + "=")]

    def close(self) -> None:
        self.stop = True
        self.thread.join(1)
        self.sock.close()


class Poller:
    """GET a URL every 50 ms from a thread: (time, status, JSON body)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[tuple[float, int, Any]] = []
        self.stop = False
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stop:
            self.seen.append((time.time(), *get(self.url)))
            time.sleep(0.05)

    def close(self) -> None:
        self.stop = True
        self.thread.join(2)


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")
    except OSError:
        return 0, None


class Run:
    """``python -m forensics run OPTS -- python run_children.py CHILD`` with
    stdout and stderr to files (or stdout to a pipe)."""

    def __init__(self, where: Path, opts: list[str], child: list[str], env: dict[str, str] | None = None,
                 stdout_pipe: bool = False) -> None:
        self.where = where
        self.record = where / "record"
        full_env = dict(os.environ, PYTHONPATH=str(REPO), RUN_CHILD_RECORD=str(self.record), **(env or {}))
        self.out_path, self.err_path = where / "run.stdout", where / "run.stderr"
        self._err = open(self.err_path, "wb")
        self._out = None if stdout_pipe else open(self.out_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "forensics", "run", *opts, "--", sys.executable, str(CHILDREN), *child],
            stdout=subprocess.PIPE if stdout_pipe else self._out, stderr=self._err, env=full_env, cwd=REPO)

    def wait(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._err.close()
            if self._out is not None:
                self._out.close()

    def written(self, fd: int) -> bytes:
        """What the child wrote on its stdout (1) or stderr (2)."""
        path = Path(f"{self.record}.{fd}")
        return path.read_bytes() if path.exists() else b""

    def stdout(self) -> bytes:
        return self.out_path.read_bytes()

    def stderr(self) -> bytes:
        return self.err_path.read_bytes()

    def wait_for(self, what: bytes, fd: int = 1, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while what not in self.written(fd):
            assert self.proc.poll() is None, f"run ended before the child wrote {what!r}: {self.stderr()[-2000:]!r}"
            assert time.monotonic() < end, f"the child never wrote {what!r}"
            time.sleep(0.02)


@pytest.fixture
def where():
    # AF_UNIX paths are limited to ~107 bytes: a short directory of our own.
    d = Path(tempfile.mkdtemp(prefix="frun-", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def assert_passed_through(run: Run, stderr_extra: bool) -> bytes:
    """stdout is the child's, byte for byte; so is stderr, up to our
    paragraph after its last line (returned)."""
    assert run.stdout() == run.written(1)
    err, child = run.stderr(), run.written(2)
    assert err.startswith(child), "stderr differs from what the child wrote"
    extra = err[len(child):]
    assert bool(extra) == stderr_extra, extra[:500]
    return extra


# --------------------------------------------------------------------- seed 1
def test_seed1_replayed_at_its_pace(where: Path) -> None:
    """Seed 1 at its real pace (150x): output passed through, the child's
    status (SIGKILL: 137) returned, /readyz never 200, systemd told each
    phase and never READY=1, and the diagnosis left where operators look."""
    notify, port, term = NotifySocket(where), free_port(), where / "termination-log"
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--termination-log", str(term)], ["replay", str(SPEEDUP)],
              env={"NOTIFY_SOCKET": notify.path})
    readyz = Poller(f"http://127.0.0.1:{port}/readyz")
    try:
        rc = run.wait()
    finally:
        readyz.close()
        notify.close()
    assert rc == 128 + signal.SIGKILL
    paragraph = assert_passed_through(run, stderr_extra=True).decode()
    # /readyz answered (the server was up) and never 200.
    answered = [status for _, status, _ in readyz.seen if status]
    assert answered and set(answered) == {503}, answered[-5:]
    # The termination message: label, the flash_attn.cute evidence, the package-walk warning, a remedy.
    message = term.read_text()
    assert paragraph.strip() == message.strip()
    assert len(message.encode()) <= 4096
    assert "env.module-missing" in message.splitlines()[0]
    assert "cannot import flash_attn.cute" in message
    assert "package walk: cutlass.cute.experimental" in message
    assert "nvidia-cutlass-dsl" in message
    # systemd: a STATUS= per phase, in order; never READY=1; the diagnosis last.
    statuses = [v for _, v in notify.fields("STATUS")]
    order = ["launching", "loading weights", "allocating the KV cache", "capturing CUDA graphs", "warming up"]
    assert all(any(s.startswith(w) for s in statuses) for w in order), "\n".join(statuses)
    firsts = [next(i for i, s in enumerate(statuses) if s.startswith(w)) for w in order]
    assert firsts == sorted(firsts), statuses
    assert not notify.fields("READY")
    assert "env.module-missing" in statuses[-1] and "killed by SIGKILL" in statuses[-1], statuses[-1]


def test_seed1_failure_on_startupz_while_the_server_hangs(where: Path) -> None:
    """A server whose rank died may hang instead of exiting: /startupz says
    failed with the diagnosis; /livez stays 200; SIGTERM ends it (143)."""
    port = free_port()
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--termination-log", ""], ["replay", str(SPEEDUP), "hang"])
    try:
        end = time.monotonic() + 60
        body: Any = None
        while time.monotonic() < end:
            status, body = get(f"http://127.0.0.1:{port}/startupz")
            if body and body["state"] == "failed" and body["final"]:
                break
            time.sleep(0.1)
        assert body and body["state"] == "failed", body
        assert status == 503
        d = body["diagnosis"]
        assert d["root_cause"] == "env.module-missing" and d["phase"] == "warmup"
        assert "flash_attn.cute" in d["evidence"][0]["text"]
        assert any("package walk" in w["text"] for w in d["early_warnings"])
        assert body["phase"] == "warmup" and body["seconds_since_start"] > 0 and body["alive"]
        assert get(f"http://127.0.0.1:{port}/livez")[0] == 200
        assert get(f"http://127.0.0.1:{port}/readyz")[0] == 503
    finally:
        run.proc.send_signal(signal.SIGTERM)
    assert run.wait() == 128 + signal.SIGTERM
    extra = assert_passed_through(run, stderr_extra=True).decode()
    assert "env.module-missing" in extra and "killed by SIGTERM" in extra


# --------------------------------------------------------------------- a server that becomes ready
def test_ready_server(where: Path) -> None:
    """/readyz is 503 until the log's ready line (the server's own /health
    says 200 from the start, as SGLang's does) and the probe agrees, then
    200; READY=1 once; WATCHDOG=1 keeps coming while it serves; SIGTERM is
    passed on and the child's clean exit (0) is run's."""
    notify, port, child_port = NotifySocket(where), free_port(), free_port()
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--probe", f"http://127.0.0.1:{child_port}/health",
                      "--probe-interval", "0.2", "--termination-log", str(where / "term")],
              ["ready", str(child_port), "0.05"], env={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"})
    readyz = Poller(f"http://127.0.0.1:{port}/readyz")
    try:
        end = time.monotonic() + 60
        while not any(s == 200 for _, s, _ in readyz.seen):
            assert time.monotonic() < end and run.proc.poll() is None, run.stderr()[-2000:]
            time.sleep(0.05)
        time.sleep(1.0)
        status, body = get(f"http://127.0.0.1:{port}/startupz")
        assert status == 200 and body["state"] == "ready" and body["ready"], body
        assert body["phase"] in ("ready", "serving")
        assert get(f"http://127.0.0.1:{port}/livez")[0] == 200
    finally:
        readyz.close()
        run.proc.send_signal(signal.SIGTERM)
    assert run.wait() == 0
    notify.close()
    assert_passed_through(run, stderr_extra=False)
    assert b"shutting down on SIGTERM" in run.stdout()
    assert not (where / "term").exists()  # a clean stop leaves no termination message
    ready_at = float(Path(f"{run.record}.ready_at").read_text())
    first_200 = min(t for t, s, _ in readyz.seen if s == 200)
    assert first_200 > ready_at
    assert all(s in (0, 503) for t, s, _ in readyz.seen if t < ready_at)
    assert len(notify.fields("READY")) == 1
    assert notify.fields("EXTEND_TIMEOUT_USEC")  # during start-up only
    assert max(t for t, _ in notify.fields("EXTEND_TIMEOUT_USEC")) < notify.fields("READY")[0][0] + 0.3
    statuses = [v for _, v in notify.fields("STATUS")]
    assert any(s.startswith("capturing CUDA graphs") for s in statuses), statuses
    pings = [t for t, _ in notify.fields("WATCHDOG")]
    ready_sent = notify.fields("READY")[0][0]
    assert len([t for t in pings if t > ready_sent + 0.5]) >= 2  # still pinging while it serves
    assert notify.fields("STOPPING")


# --------------------------------------------------------------------- a hang
def test_hang_is_reported_and_the_watchdog_stops(where: Path) -> None:
    notify, port = NotifySocket(where), free_port()
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--stall-timeout", "1", "--termination-log", ""],
              ["hang"], env={"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"})
    try:
        end = time.monotonic() + 60
        body: Any = None
        while time.monotonic() < end:
            status, body = get(f"http://127.0.0.1:{port}/startupz")
            if body and body["state"] == "stalled":
                break
            time.sleep(0.05)
        stalled_at = time.monotonic()
        assert body and body["state"] == "stalled", body
        assert status == 503
        assert body["phase"] == "cuda-graph-capture" and body["seconds_since_output"] >= 1
        assert "Capture cuda graph begin" in body["detail"]
        time.sleep(1.5)
    finally:
        run.proc.send_signal(signal.SIGTERM)
    assert run.wait() == 128 + signal.SIGTERM
    notify.close()
    assert_passed_through(run, stderr_extra=False)  # a stop we passed on needs no explaining
    pings = [t for t, _ in notify.fields("WATCHDOG")]
    assert pings and min(pings) < stalled_at  # it pinged while the log moved
    assert not [t for t in pings if t > stalled_at + 0.3]  # and stopped once it hung
    assert any(v.startswith("stalled capturing CUDA graphs") for _, v in notify.fields("STATUS"))
    # TimeoutStartSec= moved to the stall while the log moved, then no more.
    extends = notify.fields("EXTEND_TIMEOUT_USEC")
    assert extends and all(0 < int(v) <= 1_000_000 for _, v in extends)
    assert not [t for t, _ in extends if t > stalled_at + 0.3]


# --------------------------------------------------------------------- a flood
def test_flood_of_50_MB_through_a_slow_reader(where: Path) -> None:
    """50 MB on both streams, odd bytes included and no newline at the very
    end, with a reader that stalls for a second (the pipe fills): every byte
    arrives, in order, and the child's status (0) is run's."""
    run = Run(where, ["--termination-log", ""], ["flood", "50"], stdout_pipe=True)
    assert run.proc.stdout is not None
    time.sleep(1.0)
    got = run.proc.stdout.read()
    rc = run.wait(120)
    assert rc == 0
    assert got == run.written(1)
    assert len(got) + len(run.written(2)) >= 50_000_000
    assert got.endswith(b"last line without newline")
    assert run.stderr() == run.written(2)


def test_the_last_lines_survive_a_reader_asleep_when_the_child_dies(where: Path) -> None:
    """The child writes 150 kB and exits while our reader sleeps (run's output
    pipe is full, the child's pipe too): when the reader wakes up, after
    longer than run ever waits for a grandchild, every byte still arrives."""
    run = Run(where, ["--termination-log", ""], ["burst", "150"], stdout_pipe=True)
    assert run.proc.stdout is not None
    time.sleep(3.0)
    got = run.proc.stdout.read()
    assert run.wait() == 0
    assert got == run.written(1) and got.endswith(b"burst line\nend")


def test_over_its_cpu_budget_the_analysis_skips_chatter_not_the_death(where: Path) -> None:
    """With a tiny CPU budget the analysis passes 30 MB of chatter through
    mostly unread, and still diagnoses the traceback that follows it."""
    port = free_port()
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--analysis-cpu", "0.01", "--termination-log", ""],
              ["chatter", "30"])
    skipped = 0
    while run.proc.poll() is None:
        status, body = get(f"http://127.0.0.1:{port}/startupz")
        skipped = max(skipped, body["lines_skipped"] if body else 0)
        time.sleep(0.1)
    assert run.wait() == 1
    assert skipped > 100_000  # of ~330k lines
    extra = assert_passed_through(run, stderr_extra=True).decode()
    assert "gpu.out-of-memory" in extra.splitlines()[0] and "CUDA out of memory" in extra


# --------------------------------------------------------------------- killed
@pytest.mark.parametrize("signame", ["SIGKILL", "SIGSEGV"])
def test_killed_by_a_signal(where: Path, signame: str) -> None:
    run = Run(where, ["--termination-log", str(where / "term")], ["killed", signame])
    assert run.wait() == 128 + getattr(signal, signame)
    extra = assert_passed_through(run, stderr_extra=True).decode()
    assert run.written(2).endswith(b"half a line, then")  # its unfinished last line is passed through
    assert extra.startswith("\nforensics: the server was killed by " + signame)
    assert "Its last line: half a line, then" in extra
    assert (where / "term").read_text() == extra[1:]


# --------------------------------------------------------------------- signals
def test_signals_are_forwarded(where: Path) -> None:
    """SIGUSR1, SIGINT, SIGHUP, SIGQUIT, SIGUSR2 and SIGTERM each reach the child; run exits
    with its status. Latency is a bench figure (bench/run_overhead.py
    --signals); here it only has to arrive well within a second."""
    port = free_port()
    run = Run(where, ["--serve", f"127.0.0.1:{port}", "--termination-log", ""], ["signals", str(where / "signals")])
    run.wait_for(b"waiting")
    get(f"http://127.0.0.1:{port}/startupz")  # a request thread too
    # Every thread but the main one blocks them, so the kernel hands each to the
    # thread that forwards it (not to one whose wake-up waits for the child's death).
    masks = {}
    for task in Path(f"/proc/{run.proc.pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # a request thread that just ended
        status = dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)
        masks[int(task.name)] = int(status["SigBlk"], 16)
    wanted = sum(1 << (s - 1) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
                                         signal.SIGUSR1, signal.SIGUSR2))
    assert len(masks) >= 3 and masks.pop(run.proc.pid) & wanted == 0
    assert all(m & wanted == wanted for m in masks.values()), masks
    arrived = where / "signals"
    for n, sig in enumerate((signal.SIGUSR1, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR2,
                             signal.SIGTERM), 1):
        sent = time.time()
        run.proc.send_signal(sig)
        end = time.monotonic() + 10
        while not arrived.exists() or len(arrived.read_text().splitlines()) < n:
            assert time.monotonic() < end, f"{sig.name} never reached the child"
            time.sleep(0.005)
        name, at = arrived.read_text().splitlines()[-1].split()
        assert name == sig.name
        assert float(at) - sent < 1.0
    assert run.wait() == 143
    assert_passed_through(run, stderr_extra=False)


def test_group_signals_reach_the_grandchildren(where: Path) -> None:
    """Without --group the signal goes to the child alone (its own children
    live on, as under systemd's KillMode=process); with --group to all."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for group, survives in ((False, True), (True, False)):
        proc = subprocess.Popen([sys.executable, "-m", "forensics", "run", "--termination-log", "",
                                 *(["--group"] if group else []), "--", "sh", "-c", "sleep 30 & echo $!; wait"],
                                stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        grandchild = int(proc.stdout.readline())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143
        time.sleep(0.2)
        try:
            os.kill(grandchild, 0)
            alive = Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except ProcessLookupError:
            alive = False
        assert alive == survives, (group, alive)
        if alive:
            os.kill(grandchild, signal.SIGKILL)


def test_the_child_is_told_when_run_is_killed_outright(where: Path) -> None:
    """SIGKILL to run (the OOM killer, a careless kill -9): the child gets
    SIGTERM instead of living on unsupervised."""
    run = Run(where, ["--termination-log", ""], ["signals", str(where / "signals")])
    run.wait_for(b"waiting")
    run.proc.kill()
    run.wait()
    end = time.monotonic() + 10
    while not (where / "signals").exists():
        assert time.monotonic() < end, "the child never heard of its supervisor's death"
        time.sleep(0.02)
    assert (where / "signals").read_text().split()[0] == "SIGTERM"


def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare --pid (root or user namespaces)")
def test_as_pid_1_orphans_are_reaped() -> None:
    """In a container run is PID 1: an orphan that exits is reaped (no
    zombie left), and run still returns the child's status."""
    script = ('sh -c "sleep 0.2 & exit 0"; sleep 1.2; '
              'for s in /proc/[0-9]*/stat; do cut -d" " -f3 "$s"; done | grep -c Z; exit 7')
    p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "forensics", "run",
                        "--termination-log", "", "--", "sh", "-c", script], capture_output=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.returncode == 7, p.stderr
    assert p.stdout == b"0\n", p.stdout  # no zombie
    assert b"exited with status 7" in p.stderr


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a terminal")
def test_on_a_terminal_the_child_gets_the_foreground() -> None:
    """As a shell gives a job the terminal: the server may read the keyboard
    (no SIGTTIN stop) and gets ^C itself, once."""
    inner = (f"{sys.executable} -m forensics run --termination-log '' -- {sys.executable} -c "
             "'import os; print(\"foreground\", os.tcgetpgrp(0) == os.getpgrp())'")
    p = subprocess.run(["script", "-qec", inner, "/dev/null"], capture_output=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(REPO)), stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p
    assert b"foreground True" in p.stdout, p.stdout


# --------------------------------------------------------------------- small contracts
def test_the_child_does_not_inherit_the_notify_socket(where: Path) -> None:
    notify = NotifySocket(where)
    env = dict(os.environ, PYTHONPATH=str(REPO), NOTIFY_SOCKET=notify.path, WATCHDOG_USEC="1000000")
    p = subprocess.run([sys.executable, "-m", "forensics", "run", "--termination-log", "", "--", "sh", "-c",
                        'echo "${NOTIFY_SOCKET:-unset} ${WATCHDOG_USEC:-unset}"'], capture_output=True, env=env,
                       timeout=60)
    notify.close()
    assert p.returncode == 0 and p.stdout == b"unset unset\n" and p.stderr == b""
    assert notify.fields("STATUS")[-1][1] == "server exited with status 0 in phase unknown"


def test_bad_usage_is_one_line_and_starts_nothing(where: Path, cli: Any) -> None:
    marker = where / "started"
    child = ["--", "sh", "-c", f"touch {marker}"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        cases = [
            ([], 2, "Missing argument"),
            (["--serve", "nonsense", *child], 2, "--serve must be HOST:PORT"),
            (["--serve", f"127.0.0.1:{busy.getsockname()[1]}", *child], 2, "Address already in use"),
            (["--probe", "ftp://x", *child], 2, "--probe must be an http"),
            (["--annotate", str(where / "no" / "such" / "dir"), *child], 2, "--annotate"),
            (["--", "no-such-command-xyz"], 127, "no-such-command-xyz: command not found"),
            (["--", str(CHILDREN)], 126, "permission denied"),  # not executable
        ]
        for args, code, words in cases:
            p = cli("run", *args)
            err = p.stderr.decode()
            assert p.returncode == code, (args, p.returncode, err)
            assert words in err and "Traceback" not in err, (args, err)
    assert not marker.exists()


def test_termination_message_is_bounded() -> None:
    from forensics.drivers.supervise import TERMINATION_BYTES, termination_message

    huge = {"root_cause": "gpu.out-of-memory", "signature": "x", "phase": "warmup", "summary": "s" * 10_000,
            "evidence": [{"line": 7, "text": "é" * 10_000}], "early_warnings": [{"line": 3, "text": "w" * 10_000,
                                                                              "lead_seconds": 12.0}],
            "remediation": "r" * 10_000}
    text = termination_message(huge, "exited with status 1", "warmup", None)
    assert len(text.encode()) <= TERMINATION_BYTES
    assert text.startswith("forensics: the server failed in phase warmup (exited with status 1): gpu.out-of-memory")
    assert "Evidence, line 7: " in text and "Early warning, line 3, 12 s before: " in text


def test_notifier_speaks_to_an_abstract_socket() -> None:
    from forensics.drivers.sd_notify import SystemdNotifier

    name = f"forensics-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind("\0" + name)
        n = SystemdNotifier.from_env({"NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "3000000",
                                      "WATCHDOG_PID": str(os.getpid())})
        assert n is not None and n.watchdog_s == 1.5
        assert n.status("loading weights,\n12 s")
        assert s.recv(100) == b"STATUS=loading weights, 12 s"
        n.close()
    assert SystemdNotifier.from_env({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "5", "WATCHDOG_PID": "1"}
                                    ).watchdog_s is None  # another process's watchdog
    assert SystemdNotifier.from_env({}) is None
