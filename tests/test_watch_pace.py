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

import pytest

import forensics
from conftest import CORPORA, REAL, REPO, SHARED

PACES = (0.0, 0.001, 0.05, 0.2, 1.0)
WINDOW = {0.0: None, 0.001: None, 0.05: 8, 0.2: 3, 1.0: 1}  # paced lines each side of the proving line
LATENCY = 0.5
COMPARED = ("verdict", "root_cause", "signature", "evidence")


def _lines(path: Path) -> list[bytes]:
    """Physical lines as the reader counts them (split at ``\n`` only)."""
    parts = path.read_bytes().split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _classify(lines: list[bytes], k: int, use_classifier: bool = True) -> dict:
    return forensics.classify(b"".join(lines[:k]), use_classifier=use_classifier)


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
    events: list[tuple[float, dict]] = field(default_factory=list)
    sent_k: float | None = None
    rc: int | None = None
    stderr: bytes = b""

    def run(self, lines: list[bytes]) -> "Replay":
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "forensics", "watch", "--format", "json",
                                 "--stall-timeout", "120"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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
        assert started.wait(90), "watch did not start"
        w = WINDOW[self.pace]
        lo, hi = (0, len(lines)) if w is None else (max(0, self.k - 1 - w), min(len(lines), self.k + w))
        try:
            proc.stdin.write(b"".join(lines[:lo]))  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            if self.pace == 0.0:
                self.sent_k = time.monotonic()
                proc.stdin.write(b"".join(lines[lo:hi]))  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
            else:
                for i in range(lo, hi):
                    if proc.poll() is not None:
                        break
                    proc.stdin.write(lines[i])  # type: ignore[union-attr]
                    proc.stdin.flush()  # type: ignore[union-attr]
                    if i + 1 == self.k:
                        self.sent_k = time.monotonic()
                    time.sleep(self.pace)
            proc.stdin.write(b"".join(lines[hi:]))  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass  # it decided and left before the end: fine
        self.rc = proc.wait(timeout=120)
        th.join(timeout=10)
        self.stderr = proc.stderr.read()  # type: ignore[union-attr]
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
    seeds += sorted((SHARED / "seeds").glob("*.txt"))
    real = sorted((CORPORA / "gpu").glob("*.log"))[:4] + sorted((CORPORA / "cpu").glob("*.log"))[:2]
    if REAL.is_dir():
        real += sorted((REAL / "dev").glob("*.log"))[:8] + sorted((REAL / "dev-b").glob("*.log"))[:3]
        real += sorted((REAL / "early-warning").glob("*.log"))[:3] + sorted((REAL / "healthy").glob("*.log"))[:4]
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


def test_every_pace_gives_classifys_answer_at_once():
    cases = _cases()
    assert len(cases) >= 22
    data = {p: _lines(p) for p, _ in cases}
    ks = {p: proving_line(data[p], target) for p, target in cases}
    runs = [Replay(p, pace, target, ks[p]) for p, target in cases for pace in PACES]
    # The slow paces first: they wait most, so they overlap the rest.
    runs.sort(key=lambda r: -r.pace)
    with ThreadPoolExecutor(max_workers=24) as pool:
        done = list(pool.map(lambda r: r.run(data[r.path]), runs))
    problems = [msg for r in done for msg in _check(r, data[r.path])]
    assert not problems, "\n".join(problems)
