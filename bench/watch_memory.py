"""Issue 7: resident memory of ``forensics watch`` over an endless serving stream.

    python bench/watch_memory.py                 # 1M serving lines (about 30 minutes of a busy server)
    python bench/watch_memory.py --lines 200000

Feeds a start-up that reaches readiness, then a million access and
batch-statistics lines from four ranks, into ``forensics watch --until failure``
(keeps watching after ready) through a pipe, as fast as it reads, and samples
the watcher's RSS. Prints RSS after the first 10% of the stream and at the end;
the target is a difference within 20 MB.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def startup(t0: int) -> list[str]:
    def j(sec: int, pid: int, msg: str) -> str:
        return f"2026-05-30T06:{sec // 60:02d}:{sec % 60:02d}+0000 gpu-node-7 python3[{pid}]: {msg}"
    return [
        j(0, 22280, "[2026-05-30 06:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-72B-Instruct', tp_size=4)"),
        j(5, 22300, "[2026-05-30 06:00:05 TP0] Load weight begin. avail mem=78.50 GB"),
        j(50, 22300, "[2026-05-30 06:00:50 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=42.00 GB, mem usage=36.50 GB."),
        j(52, 22300, "[2026-05-30 06:00:52 TP0] KV Cache is allocated. #tokens: 400000, K size: 15.00 GB, V size: 15.00 GB"),
        j(53, 22300, "[2026-05-30 06:00:53 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=11.00 GB"),
        j(80, 22300, "[2026-05-30 06:01:20 TP0] Capture cuda graph end. Time elapsed: 27.00 s. mem usage=1.00 GB. avail mem=10.00 GB."),
        j(82, 22280, "[2026-05-30 06:01:22] INFO:     Application startup complete."),
        j(85, 22280, "[2026-05-30 06:01:25] The server is fired up and ready to roll!"),
    ]


def serving(n: int, seed: int = 7):
    r = random.Random(seed)
    for i in range(n):
        sec = 90 + i * 1800 // max(1, n)
        hh, mm, ss = 6 + sec // 3600, sec // 60 % 60, sec % 60
        ts = f"2026-05-30T{hh:02d}:{mm:02d}:{ss:02d}+0000"
        app = f"2026-05-30 {hh:02d}:{mm:02d}:{ss:02d}"
        if r.random() < 0.5:
            rank = r.randrange(4)
            yield (f"{ts} gpu-node-7 python3[{22300 + rank}]: [{app} TP{rank}] Decode batch. #running-req: {r.randrange(1, 90)}, "
                   f"#token: {r.randrange(1000, 90000)}, token usage: {r.random():.2f}, gen throughput (token/s): "
                   f"{r.uniform(100, 3000):.2f}, #queue-req: {r.randrange(5)}")
        else:
            yield (f'{ts} gpu-node-7 python3[22280]: [{app}] INFO:     10.0.{r.randrange(4)}.{r.randrange(255)}:{r.randrange(30000, 60000)} - '
                   f'"POST /v1/chat/completions HTTP/1.1" 200 OK')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    a = ap.parse_args()
    import psutil

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "forensics", "watch", "--until", "failure", "--format", "json",
                             "--stall-timeout", "3600"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    ps = psutil.Process(proc.pid)
    samples: list[tuple[int, float]] = []
    sent = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                samples.append((sent[0], ps.memory_info().rss / 2**20))
            except psutil.Error:
                return
            stop.wait(0.25)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    w = proc.stdin
    for line in startup(0):
        w.write(line.encode() + b"\n")
    batch = []
    for i, line in enumerate(serving(a.lines), 1):
        batch.append(line)
        if len(batch) == 2000:
            w.write(("\n".join(batch) + "\n").encode())
            sent[0] = i
            batch = []
    if batch:
        w.write(("\n".join(batch) + "\n").encode())
    sent[0] = a.lines
    w.close()
    rc = proc.wait()
    stop.set()
    th.join()
    wall = time.perf_counter() - t0
    early = [m for n, m in samples if n >= a.lines * 0.1]
    first = early[0] if early else float("nan")
    peak = max(m for _, m in samples) if samples else float("nan")
    last = samples[-1][1] if samples else float("nan")
    print(f"watch over {a.lines:,} serving lines: {wall:.1f}s ({a.lines / wall:,.0f} lines/s), exit {rc}")
    print(f"RSS after 10%: {first:.1f} MiB, at end: {last:.1f} MiB, peak: {peak:.1f} MiB, growth {last - first:+.1f} MiB "
          f"({'PASS' if abs(last - first) <= 20 else 'FAIL'}: target within 20 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
