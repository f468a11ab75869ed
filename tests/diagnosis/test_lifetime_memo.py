"""The lifetime memo (``diagnosis.memo``) changes no answer: the JSON of a
crash loop with the memo on is the JSON with it off (``FORENSICS_NO_MEMO``),
on the bench's crash loops (independent draws, and one draw repeated) and on
hypothesis-made loops whose lifetimes differ only in times, pids, numbers or
a word. Every corpus, real set and seed: ``bench/answers.py --check``."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.diagnosis import memo
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source

ROOT = Path(__file__).resolve().parents[2]


def _json(path: Path, on: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[memo.LifetimeMemo]]:
    made: list[memo.LifetimeMemo] = []

    class Counting(memo.LifetimeMemo):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    with monkeypatch.context() as m:
        m.setattr(memo, "LifetimeMemo", Counting)
        m.setenv("FORENSICS_NO_MEMO", "" if on else "1")
        res = diagnose_source(Source(str(path), path))
    return json.dumps(res, sort_keys=True, default=str), made


def _loop(tmp: Path, *args: str) -> Path:
    out = tmp / ("crashloop" + "".join(args).replace("-", "_") + ".log")
    subprocess.run([sys.executable, str(ROOT / "bench" / "crashloop.py"), *args, "-o", str(out)], check=True,
                   cwd=ROOT, capture_output=True, timeout=300)
    return out


@pytest.mark.parametrize("args", [("--lifetimes", "60", "--seed", "3"),
                                  ("--same", "--seed", "13", "--lifetimes", "150")])
def test_bench_crash_loops(args: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _loop(tmp_path, *args)
    on, made = _json(log, True, monkeypatch)
    off, _ = _json(log, False, monkeypatch)
    assert on == off
    if "--same" in args:
        assert made and made[0].replayed > 50  # the repeated draw is replayed, not diagnosed


def test_small_memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shapes evicted over and over: still the same answers."""
    log = _loop(tmp_path, "--same", "--seed", "13", "--lifetimes", "60")
    monkeypatch.setattr(memo, "SHAPES", 2)
    monkeypatch.setattr(memo, "SEEN", 3)
    on, _ = _json(log, True, monkeypatch)
    assert on == _json(log, False, monkeypatch)[0]


T0 = datetime(2026, 5, 30, 6, 0, 0, tzinfo=UTC)
# One lifetime: start-up, a warning with numbers, a CUDA OOM traceback, systemd's view of the death.
LIFETIME = [
    (0, "systemd[1]", "Started sglang.service - SGLang."),
    (1, "python[{pid}]", "[2025-05-09 01:57:24] server_args=ServerArgs(model_path='{model}', tp_size={tp})"),
    (2, "python[{pid}]", "[2025-05-09 01:57:25] Load weight begin. avail mem={mem}.58 GB"),
    (2, "python[{pid}]", "[2025-05-09 01:57:26] Load weight end. type=LlamaForCausalLM, avail mem={low}.71 GB"),
    (3, "python[{pid}]", "[2025-05-09 01:57:27] KV Cache is allocated. #tokens: {n}, K size: 15.39 GB"),
    (4, "python[{pid}]", "[2025-05-09 01:57:28] Capture cuda graph begin. avail mem=9.53 GB"),
    (5, "python[{pid}]", "[2025-05-09 01:57:29] Scheduler hit an exception: Traceback (most recent call last):"),
    (5, "python[{pid}]", '  File "/sglang/srt/model_executor/model_runner.py", line {n}, in {word}'),
    (5, "python[{pid}]", "    self.capture()"),
    (5, "python[{pid}]", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB."),
    (6, "python[{pid0}]", "[2025-05-09 01:57:30] Received sigquit from a child process. It usually means the child failed."),
    (7, "systemd[1]", "sglang.service: Main process exited, code=killed, status=9/KILL"),
    (7, "systemd[1]", "sglang.service: Failed with result 'signal'."),
    (8, "systemd[1]", "sglang.service: Scheduled restart job, restart counter is at {k}."),
]

_variant = st.fixed_dictionaries({
    "gap": st.integers(0, 400), "jitter": st.lists(st.integers(0, 2), min_size=len(LIFETIME), max_size=len(LIFETIME)),
    "pid": st.sampled_from([4100, 4100, 4177, 9]), "n": st.sampled_from([512, 512, 1024, 7]),
    "mem": st.sampled_from([135, 135, 79]), "low": st.sampled_from([37, 37, 1]),
    "model": st.sampled_from(["meta-llama/Llama-3.3-70B-Instruct"] * 3 + ["Qwen/Qwen3-8B"]),
    "word": st.sampled_from(["capture", "capture", "capture", "init_device_graphs"]),
    "tp": st.sampled_from([4, 4, 8]), "jittered": st.booleans(),
})


def _render(variants: list[dict[str, Any]]) -> str:
    lines, t = [], T0
    for k, v in enumerate(variants):
        t += timedelta(seconds=v["gap"])
        for (dt, who, text), j in zip(LIFETIME, v["jitter"]):
            ts = t + timedelta(seconds=dt + (j if v["jittered"] else 0))
            fields = {**v, "pid0": v["pid"] - 1, "k": k + 1}
            lines.append(f"{ts.isoformat()} gpu-node-3 {who.format(**fields)}: {text.format(**fields)}")
        t += timedelta(seconds=10)
    return "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(variants=st.lists(_variant, min_size=2, max_size=12))
def test_lifetimes_that_differ_a_little(variants: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "loop.log"
        log.write_text(_render(variants))
        assert _json(log, True, monkeypatch)[0] == _json(log, False, monkeypatch)[0]


def test_repeats_are_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same lifetime 20 times, shifted in time and lines: replayed, not diagnosed."""
    same = {"gap": 30, "jitter": [0] * len(LIFETIME), "pid": 4100, "n": 512, "mem": 135, "low": 37,
            "model": "Qwen/Qwen3-8B", "word": "capture", "tp": 4, "jittered": False}
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "loop.log"
        log.write_text(_render([same] * 20))
        on, made = _json(log, True, monkeypatch)
        assert on == _json(log, False, monkeypatch)[0]
        assert made[0].replayed >= 15, (made[0].replayed, made[0].diagnosed)


# Where the diagnosis reads a time other than by equality or order: each such read is
# known to the memo (module docstring of forensics.diagnosis.memo) -- the distances it
# writes (re-derived on replay), the ISO times (mapped), the stall test (in the shape).
# A new one fails here: teach the memo about it (or put its outcome in the shape) first.
_TIME_READ = re.compile(r"total_seconds|timedelta|\.timestamp\(|\.(?:hour|minute|second|microsecond|year|month|day)\b"
                        r"|weekday\(|strftime|isoformat")
KNOWN_TIME_READS = {
    ("diagnosis/early_warnings/linking.py", "lead = round((fail_ts - ts).total_seconds(), 3)"),
    ("diagnosis/diagnose.py", 'result["time_to_failure_s"] = max(0.0, (fail_ts - inc.start_ts).total_seconds())'),
    ("diagnosis/result.py", '"start_ts": inc.start_ts.isoformat() if inc.start_ts else None,'),
    ("diagnosis/result.py", '"end_ts": inc.end_ts.isoformat() if inc.end_ts else None,'),
    ("incidents/verdicts.py", "if inc.end_ts and inc.last_progress_ts and (inc.end_ts - inc.last_progress_ts).total_seconds() > STALL_SECONDS:"),
    ("incidents/lifetimes.py", '"first_ts": self.first_ts.isoformat() if self.first_ts else None,'),
    ("incidents/lifetimes.py", '"last_ts": self.last_ts.isoformat() if self.last_ts else None}'),
    ("incidents/lifetimes.py", "return max(0.0, (self.end_ts - self.start_ts).total_seconds())"),
    # Read only while the lab records the live gate's rows (RECORDER set): never part of an answer.
    ("diagnosis/early_warnings/live.py",
     "since = (ev.ts - start_ts).total_seconds() if ev.ts is not None and start_ts is not None else None"),
}


def test_every_time_read_is_known_to_the_memo() -> None:
    pkg = ROOT / "forensics"
    found = set()
    for folder in ("diagnosis", "incidents"):
        for path in sorted((pkg / folder).rglob("*.py")):
            rel = path.relative_to(pkg).as_posix()
            if rel == "diagnosis/memo.py":
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                code = line.split("#", 1)[0].strip()
                if _TIME_READ.search(code):
                    found.add((rel, code))
    assert found == KNOWN_TIME_READS, sorted(found ^ KNOWN_TIME_READS)
