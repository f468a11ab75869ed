"""``forensics watch`` gives classify's answer, the moment the proving line
arrives, whatever the pace (issue 15).

Every log is replayed through a real pipe into a real ``forensics watch``
process at 0, 1 ms, 50 ms, 200 ms and 1 s per line. At the slow paces only a
window of lines around the proving line is paced; the lines before and after
it are written at once (a long log stays quick). For every run:

- the failure (or ready) event is printed <= 0.5 s after the proving line was
  written (wall clock);
- the exit status is right;
- the final answer (verdict, label, signature, evidence) equals ``classify``
  on the same bytes (the lines watch had read when it stopped).

The proving line is found from classify alone: the first prefix of the log
that classify calls failed (or ready) with its evidence complete (not a
traceback cut short), or the end of the log where only the end completes it.

All replays of a pace table run concurrently (most of their time is spent
waiting for the next line), so the whole table stays within a minute.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import forensics
from conftest import CORPORA, REPO, needs_real, shared_logs

PACES = (0.0, 0.001, 0.05, 0.2, 1.0)
WINDOW = {0.0: None, 0.001: 60, 0.05: 8, 0.2: 3, 1.0: 1}  # paced lines each side of the proving line
LATENCY = 0.5
COMPARED = ("verdict", "root_cause", "signature", "evidence")


def _settle(pid: int, limit: float = 30.0) -> None:
    """Wait until a process is asleep and stays so (it has read what it was
    given and waits for more), so that the timed part of a replay starts on
    an idle process. A process starved of CPU is runnable, not asleep."""
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        time.sleep(1.0)
        return
    end = time.monotonic() + limit
    last, still = None, 0
    while time.monotonic() < end and still < 4:
        try:
            f = stat.read_text().rsplit(")", 1)[1].split()
            state, cpu = f[0], int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            return
        still = still + 1 if cpu == last and state in ("S", "I") else 0
        last = cpu
        time.sleep(0.05)


def _lines(path: Path) -> list[bytes]:
    """Physical lines as the reader counts them (split at ``\n`` only)."""
    parts = path.read_bytes().split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


_CLASSIFIED: dict[tuple[int, int, bool], dict] = {}


def _classify(lines: list[bytes], k: int, use_classifier: bool = True) -> dict:
    """classify on the first k lines (many replays ask the same question)."""
    key = (hash(tuple(lines)), k, use_classifier)
    if key not in _CLASSIFIED:
        _CLASSIFIED[key] = forensics.classify(b"".join(lines[:k]), use_classifier=use_classifier)
    return _CLASSIFIED[key]


def proving_line(lines: list[bytes], target: str) -> int:
    """The first k such that classify on lines[:k] says ``target`` with
    complete evidence (bisection: the first such transition)."""
    def ok(k: int) -> bool:
        r = _classify(lines, k, use_classifier=False)
        return r["verdict"] == target and not r["truncated"]

    n = len(lines)
    if not ok(n):
        return n
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass
class Replay:
    path: Path
    pace: float
    target: str  # failed | ready
    k: int = 0
    until: str = "ready"  # "failure" for a log that is ready before it fails
    offset: float = 0.0
    events: list[tuple[float, dict]] = field(default_factory=list)
    sent_k: float | None = None
    rc: int | None = None
    stderr: bytes = b""

    def run(self, lines: list[bytes], steps: "LockStep | None" = None) -> "Replay":
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "forensics", "watch", "--format", "json", "--grace", "1",
                                 "--until", self.until, "--stall-timeout", "120"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, cwd=REPO)
        started = threading.Event()

        def read() -> None:
            for raw in proc.stdout:  # type: ignore[union-attr]
                ev = json.loads(raw)
                self.events.append((time.monotonic(), ev))
                if ev["event"] == "started":
                    started.set()

        th = threading.Thread(target=read, daemon=True)
        th.start()
        ok = started.wait(120)
        _settle(proc.pid)
        w = WINDOW[self.pace]
        lo, hi = (0, len(lines)) if w is None else (max(0, self.k - 1 - w), min(len(lines), self.k + w))
        stdin = proc.stdin
        assert stdin is not None
        try:
            if steps is not None:
                steps.wait()  # every process has started
            stdin.write(b"".join(lines[:lo]))
            stdin.flush()
            _settle(proc.pid)  # it has worked through the lines before the window
            if steps is not None:
                steps.wait()
                time.sleep(self.offset)  # replays do not all send their lines at the same instants
            if self.pace == 0.0:
                self.sent_k = time.monotonic()
                stdin.write(b"".join(lines[lo:hi]))
                stdin.flush()
            else:
                for i in range(lo, hi):
                    stdin.write(lines[i])
                    stdin.flush()
                    if i + 1 == self.k:
                        self.sent_k = time.monotonic()
                    time.sleep(self.pace)
            if steps is not None:
                steps.wait()  # the tails only once every window is over
            stdin.write(b"".join(lines[hi:]))
            stdin.close()
        except (BrokenPipeError, OSError):
            pass  # it decided and left before the end: fine
        finally:
            if steps is not None:
                steps.leave()
        self.rc = proc.wait(timeout=120)
        th.join(timeout=10)
        self.stderr = proc.stderr.read()  # type: ignore[union-attr]
        assert ok, f"{self.path.name}: watch did not start; {self.stderr[-400:]!r}"
        return self

    def first(self, kind: str) -> tuple[float, dict]:
        for t, ev in self.events:
            if ev["event"] == kind:
                return t, ev
        raise AssertionError(f"{self.path.name} @ {self.pace}s: no {kind} event; got "
                             f"{[e['event'] for _, e in self.events]}; stderr {self.stderr[-400:]!r}")


def _cases() -> list[tuple[Path, str]]:
    seeds = [CORPORA / "seeds" / "seed1.short.log", CORPORA / "seeds" / "seed2.full.log",
             CORPORA / "seeds" / "seed1.json.log"]  # the last one: journalctl -o json
    seeds += shared_logs("seeds", "*.txt")
    real = sorted((CORPORA / "gpu").glob("*.log"))[:3] + sorted((CORPORA / "cpu").glob("*.log"))[:2]
    real += shared_logs("corpora-real/dev")[:6] + shared_logs("corpora-real/dev-b")[:3]
    real += shared_logs("corpora-real/early-warning")[:3] + shared_logs("corpora-real/healthy")[:3]
    out = []
    for p in seeds + real:
        verdict = forensics.classify(p, use_classifier=False)["verdict"]
        if verdict in ("failed", "ready"):
            out.append((p, verdict))
    return out


def _check(r: Replay, lines: list[bytes]) -> list[str]:
    """What is wrong with one replay (empty: nothing)."""
    name = f"{r.path.parent.name}/{r.path.name} @ {r.pace * 1000:g} ms (proving line {r.k})"
    bad = []
    want_rc = 1 if r.target == "failed" else 0
    if r.rc != want_rc:
        bad.append(f"{name}: exit {r.rc}, expected {want_rc}; events {[e['event'] for _, e in r.events]}")
        return bad
    kind = "failure" if r.target == "failed" else "ready"
    t, ev = r.first(kind)
    if r.sent_k is not None and t - r.sent_k > LATENCY:
        bad.append(f"{name}: {kind} printed {t - r.sent_k:.2f}s after the proving line")
    if r.target == "failed":
        finals = [e for _, e in r.events if e["event"] in ("failure", "failure_update")]
        last = finals[-1]
        if not last.get("final"):
            bad.append(f"{name}: the last failure event is not marked final")
        want = _classify(lines, last["lines_read"])
        got = last["diagnosis"]
        for key in COMPARED:
            if got[key] != want[key]:
                bad.append(f"{name}: {key} {got[key]!r} != classify {want[key]!r} (on {last['lines_read']} lines)")
    else:
        want = _classify(lines, ev["lines_read"])
        if want["verdict"] != "ready":
            bad.append(f"{name}: ready after {ev['lines_read']} lines but classify says {want['verdict']}")
    return bad


class LockStep:
    """The slow replays move in lock step (all started, all through the
    lines before their window, all windows over), so that no replay's busy
    moment falls into another's timed window. A replay that ends early
    leaves, and the others stop waiting for it."""

    def __init__(self, n: int) -> None:
        self.cond = threading.Condition()
        self.n = n
        self.arrived: dict[int, int] = {}
        self.step: dict[int, int] = {}

    def wait(self) -> None:
        me = threading.get_ident()
        with self.cond:
            s = self.step.get(me, 0)
            self.step[me] = s + 1
            self.arrived[s] = self.arrived.get(s, 0) + 1
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.arrived.get(s, 0) >= self.n, timeout=120)

    def leave(self) -> None:
        me = threading.get_ident()
        with self.cond:
            s = self.step.get(me, 0)
            for later in range(s, 3):
                self.arrived[later] = self.arrived.get(later, 0) + 1
            self.step[me] = 3
            self.cond.notify_all()


def _ready_before_failing(lines: list[bytes]) -> bool:
    """The server came up and failed later (watch it with ``--until failure``)."""
    r = _classify(lines, len(lines), use_classifier=False)
    inc = r["incidents"][r["incident"]]
    return any(span["phase"] == "ready" for span in inc["phases"])


def run_table(cases: list[tuple[Path, str]]) -> list[str]:
    """Replay every case at every pace; the problems found (empty: none)."""
    data = {p: _lines(p) for p, _ in cases}
    ks = {p: proving_line(data[p], target) for p, target in cases}
    until = {p: "failure" if target == "failed" and _ready_before_failing(data[p]) else "ready" for p, target in cases}
    runs = [Replay(p, pace, target, ks[p], until=until[p]) for p, target in cases for pace in PACES]
    slow = [r for r in runs if r.pace >= 0.05]
    for i, r in enumerate(slow):
        r.offset = (i % 10) / 10 * r.pace
    fast = [r for r in runs if r.pace < 0.05]
    steps = LockStep(len(slow))
    with ThreadPoolExecutor(max_workers=len(slow)) as pool:
        list(pool.map(lambda r: r.run(data[r.path], steps), slow))
    # The fast ones are busy from their first line: a few at a time, as
    # many as there are cores, so that their timing is their own.
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        list(pool.map(lambda r: r.run(data[r.path]), fast))
    problems = {id(r): _check(r, data[r.path]) for r in runs}
    # A replay that was only late may have been starved by the others (or
    # by whatever else shares the machine): it is replayed once more alone,
    # and must then be on time. Wrong answers and exit codes are not retried.
    for r in runs:
        if problems[id(r)] and all(" printed " in msg for msg in problems[id(r)]):
            again = Replay(r.path, r.pace, r.target, r.k, until=r.until)
            problems[id(r)] = [f"{msg} (and again alone)" for msg in _check(again.run(data[r.path]), data[r.path])]
    return [msg for r in runs for msg in problems[id(r)]]


@needs_real
def test_every_pace_gives_classifys_answer_at_once():
    cases = _cases()
    assert len(cases) >= 22, cases
    problems = run_table(cases)
    assert not problems, "\n".join(problems)


def test_a_writer_that_stalls_inside_a_traceback():
    """The writer stops for 10 s in the middle of a traceback: the traceback
    is reported during the stall as far as it got, and when the rest comes
    an update follows that equals classify on the same bytes. (Runs once:
    it is the slowest case, and pace does not matter to it.)"""
    path = CORPORA / "seeds" / "seed2.full.log"
    lines = _lines(path)
    header = next(i for i, ln in enumerate(lines) if b"Traceback (most recent call last)" in ln)
    cut = header + 12  # inside the frames, before the exception line
    assert _classify(lines, cut, use_classifier=False)["truncated"]
    r = Replay(path, 0.0, "failed")
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "forensics", "watch", "--format", "json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)

    def read() -> None:
        for raw in proc.stdout:  # type: ignore[union-attr]
            r.events.append((time.monotonic(), json.loads(raw)))

    th = threading.Thread(target=read, daemon=True)
    th.start()
    end = time.monotonic() + 120  # started (tables built) before the stall is timed
    while not any(e["event"] == "started" for _, e in r.events) and time.monotonic() < end:
        time.sleep(0.05)
    proc.stdin.write(b"".join(lines[:cut]))  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    stalled_at = time.monotonic()
    time.sleep(10)
    during = [(t, e) for t, e in r.events if e["event"] == "failure"]
    assert during, [e["event"] for _, e in r.events]
    t, first = during[0]
    assert t - stalled_at < 5
    assert first["lines_read"] == cut and first["diagnosis"]["truncated"]
    assert first["diagnosis"]["evidence"] == _classify(lines, cut)["evidence"]
    resumed = time.monotonic()
    proc.stdin.write(b"".join(lines[cut:]))  # type: ignore[union-attr]
    proc.stdin.close()  # type: ignore[union-attr]
    assert proc.wait(timeout=60) == 1
    th.join(timeout=10)
    updates = [(t, e) for t, e in r.events if e["event"] == "failure_update"]
    assert updates and all(t >= resumed for t, _ in updates)
    last = updates[-1][1]
    assert last["final"] and not last["diagnosis"]["truncated"]
    want = _classify(lines, last["lines_read"])
    for key in COMPARED:
        assert last["diagnosis"][key] == want[key], key
    assert last["diagnosis"]["signature"] == "torch.ninja-required"
