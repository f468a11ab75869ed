"""Issue 30: CPU that ``forensics run`` itself spends on a busy server's output.

    python bench/run_overhead.py                       # 10 MB/s for 20 s, serving lines
    python bench/run_overhead.py --rate 10 --seconds 20 --mix startup

A child writes ``--rate`` MB/s of a serving SGLang log (after a start-up that
reaches readiness: batch statistics from four ranks and uvicorn access lines,
as ``bench/watch_memory.py``), in 10 ms slices, to stdout, through
``forensics run`` (stdout to /dev/null). ``--mix noise`` writes lines that are
neither serving nor start-up (the worst case for the analysis: every line
parsed). The run process's own CPU time (utime + stime from
/proc/PID/stat, the child excluded) is read while the child pauses after its
last write, and divided by the streaming time. ``--passthrough-only`` gives
the same child to a plain byte copy (``cat``-like, in Python) for scale.
``--signals N`` measures instead how long a SIGTERM sent to run takes to
reach the child's handler (N runs; median and max).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

CHILD = r'''
import os, sys, time
sys.path.insert(0, {bench!r})
from watch_memory import startup, serving
rate, seconds, mix = {rate!r}, {seconds!r}, {mix!r}
head = "".join(l.split(": ", 1)[1] + "\n" for l in startup(0)).encode()
os.write(1, head)
if mix == "noise":
    body = "".join(f"[2026-05-30 06:01:02 TP{{i % 4}}] step {{i}}: scheduler tick with {{i * 7 % 1000}} tokens in flight and nothing to say\n" for i in range(20000)).encode()
else:
    body = "".join(l.split(": ", 1)[1] + "\n" for l in serving(20000)).encode()
per_slice = int(rate * 1e6 / 100)
t0 = time.monotonic(); sent = 0; pos = 0; k = 0
while time.monotonic() - t0 < seconds:
    end = body.find(b"\n", pos + per_slice) + 1 or len(body)
    os.write(1, body[pos:end]); sent += end - pos; pos = end if end < len(body) else 0
    k += 1
    delay = t0 + k * 0.01 - time.monotonic()
    if delay > 0: time.sleep(delay)
sys.stderr.write(f"SENT {{sent}} {{time.monotonic() - t0:.3f}}\n"); sys.stderr.flush()
time.sleep(2.0)
'''

PASS = r'''
import os, subprocess, sys, selectors
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
fd = p.stdout.fileno()
while True:
    data = os.read(fd, 1 << 17)
    if not data: break
    os.write(1, data)
sys.exit(p.wait())
'''


def cpu_seconds(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def measure(rate: float, seconds: float, mix: str, passthrough_only: bool) -> dict:
    child = [sys.executable, "-c", CHILD.format(bench=str(ROOT / "bench"), rate=rate, seconds=seconds, mix=mix)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", PASS, *child] if passthrough_only else \
        [sys.executable, "-m", "forensics", "run", "--termination-log", "", "--", *child]
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE, env=env)
        assert proc.stderr is not None
        start_cpu = None
        line = b""
        while not line.startswith(b"SENT"):
            if start_cpu is None:
                time.sleep(1.0)  # imports and start-up of run are not the overhead asked about
                start_cpu = cpu_seconds(proc.pid)
            line = proc.stderr.readline()
            if not line:
                raise SystemExit("the child ended without SENT")
        _, sent, wall = line.split()
        time.sleep(0.5)  # the analysis finishes the backlog
        cpu = cpu_seconds(proc.pid) - start_cpu
        proc.wait()
    wall_s = float(wall) - 1.0 + 0.5
    return {"mode": "passthrough only" if passthrough_only else "forensics run", "mix": mix,
            "MB/s": round(int(sent) / float(wall) / 1e6, 2), "cpu_s": round(cpu, 2),
            "cpu_pct_of_core": round(100 * cpu / wall_s, 1)}


def signal_latency(trials: int, settle: float) -> dict:
    """SIGTERM to run -> the child's handler, wall clock (the child records time.time())."""
    import signal
    import tempfile

    children = ROOT / "tests" / "drivers" / "run_children.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    lat = []
    for _ in range(trials):
        with tempfile.TemporaryDirectory() as d:
            rec = Path(d) / "signals"
            proc = subprocess.Popen([sys.executable, "-m", "forensics", "run", "--termination-log", "", "--",
                                     sys.executable, str(children), "signals", str(rec)],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            assert proc.stdout is not None
            while b"waiting" not in proc.stdout.readline():
                pass
            time.sleep(settle)  # the analysis thread has loaded (or, with 0, is loading)
            sent = time.time()
            proc.send_signal(signal.SIGTERM)
            proc.wait()
            lat.append(float(rec.read_text().split()[1]) - sent)
    lat.sort()
    return {"mode": "SIGTERM latency", "after_s": settle, "trials": trials, "median_ms": round(1000 * lat[len(lat) // 2], 1),
            "max_ms": round(1000 * lat[-1], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=10.0, help="MB/s")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--mix", choices=["serving", "noise"], default="serving")
    ap.add_argument("--passthrough-only", action="store_true")
    ap.add_argument("--signals", type=int, default=0, metavar="N", help="measure SIGTERM latency over N runs instead")
    a = ap.parse_args()
    if a.signals:
        for settle in (0.0, 3.0):
            print(signal_latency(a.signals, settle))
        return 0
    print(measure(a.rate, a.seconds, a.mix, a.passthrough_only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
