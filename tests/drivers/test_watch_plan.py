"""``forensics watch`` plans the first lines as classify does, whenever it answers.

watch plans a burst of its first 64 lines at powers of two only (planning costs
~1.5 ms a line); whatever it answers in between must still be on the plan of
every line it has read, as classify's answer on those lines is. The clock is
a fake one here (each reading 2-12 ms later), so that evaluations fall
between the powers of two as they do on a busy machine."""
from __future__ import annotations

import io
import json
import os
import time
from typing import Any

import pytest

import forensics
from forensics.drivers import watch as watch_mod
from forensics.drivers.watch import Watcher
from forensics.drivers.watch_options import WatchOptions
from forensics.events.parser import SAMPLE_LINES, plan_source
from forensics.pipeline import LivePipeline

COMPARED = ("verdict", "root_cause", "signature", "evidence")


def plan_flips_at_40() -> bytes:
    """28 plain lines, then journald ones: the plan turns from plain to short at line 40, between
    the powers of two 32 and 64; a traceback (44-47) and the process's exit (48) follow."""
    out = [f"INFO 12-07 10:00:{i:02d} loader.py:10] loading weights shard {i}/28" for i in range(1, 29)]
    head = "Dec 07 10:00:40 gpu-host vllm[100]: "
    out += [head + f"INFO step {i}" for i in range(15)]
    out += [head + t for t in ("Traceback (most recent call last):", '  File "/app/w.py", line 1, in f', "    g()",
                               "RuntimeError: CUDA error: an illegal memory access was encountered")]
    out.append("Dec 07 10:00:41 gpu-host systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE")
    out += [f"Dec 07 10:00:42 gpu-host systemd[1]: vllm.service: cleanup step {i}" for i in range(20)]
    return ("\n".join(out) + "\n").encode()


def _watch(data: bytes, monkeypatch: pytest.MonkeyPatch, step: float) -> tuple[int, list[dict], list[tuple]]:
    """Watch ``data`` (all of it at once) on a clock that moves ``step`` s at every reading; the
    events, and the evaluations that ran on a plan older than the lines read or on a pipeline
    that has not been fed them yet (one replaying the first lines after a new plan)."""
    stale: list[tuple] = []
    evaluate, feed = Watcher.evaluate, LivePipeline.feed

    def fed(self: LivePipeline, rec: Any) -> list:
        self.fed_to = rec.line
        return feed(self, rec)

    def checked(self: Watcher, now: float, include_open: bool = False, eof: bool = False) -> dict:
        top = evaluate(self, now, include_open, eof)  # a stale plan raises before any answer
        live = self.live
        if plan_source(live.early[:min(live.consumed, SAMPLE_LINES)]) != self.pipe.plan:
            stale.append(("plan", live.consumed, self.pipe.plan.fmt))
        if live.consumed - getattr(self.pipe, "fed_to", 0) > 2:  # records hold one line of lookahead
            stale.append(("replaying", live.consumed, getattr(self.pipe, "fed_to", 0)))
        return top

    monkeypatch.setattr(Watcher, "evaluate", checked)
    monkeypatch.setattr(LivePipeline, "feed", fed)
    w = Watcher(WatchOptions(fmt="json", until="failure", grace=1.0), out=io.StringIO())
    r, wr = os.pipe()
    os.write(wr, data)
    os.close(wr)
    now = [time.monotonic()]

    def clock() -> float:
        now[0] += step
        return now[0]

    monkeypatch.setattr(time, "monotonic", clock)
    try:
        rc = w.run(r)
    finally:
        monkeypatch.undo()
        os.close(r)
    return rc, [json.loads(x) for x in w.out.getvalue().splitlines()], stale


@pytest.mark.parametrize("snap_every", [0.1, 10.0], ids=["snap-100ms", "quiet-only"])
@pytest.mark.parametrize("step", [0.002, 0.005, 0.012])
def test_every_answer_is_on_the_plan_of_the_lines_read(monkeypatch, step, snap_every):
    """At 670757b an evaluation due within QUIET (a traceback arrived, the plan last made at line 32)
    ran on the plain plan: a failure printed at line 58 quoted the journald envelope as evidence, and
    once was retracted and printed again. Since 634d289 (and still there) an evaluation could also run
    while a new pipeline replayed the first lines: an answer on fewer lines than ``lines_read``."""
    data = plan_flips_at_40()
    lines = data.split(b"\n")
    assert plan_source(list(enumerate(data.decode().split("\n")[:39], 1))).fmt == "plain"
    assert plan_source(list(enumerate(data.decode().split("\n")[:40], 1))).fmt == "short"
    monkeypatch.setattr(watch_mod, "SNAP_EVERY", snap_every)
    rc, events, stale = _watch(data, monkeypatch, step)
    assert rc == 1
    assert not stale, stale
    answers = [e for e in events if e["event"] in ("failure", "failure_update")]
    assert answers and answers[-1]["final"]
    for e in answers:
        want = forensics.classify(b"\n".join(lines[:e["lines_read"]]) + b"\n")
        got = e["diagnosis"]
        assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}, (e["event"], e["lines_read"])
