"""Streaming memory check (issue 9): ``genlog | forensics classify -`` with no file.

    python bench/stream_memory.py                   # 0.5 GB
    python bench/stream_memory.py --gigabytes 5     # 5 GB (~29M lines; long)

The generator (bench/genlog.py, same log as bench/run.py, sized in bytes) writes
into a pipe that is ``forensics classify``'s stdin. Reported for the forensics
process: peak RSS (``ru_maxrss`` via ``os.wait4``), an RSS timeline sampled with
psutil (when installed) to show that memory is flat, wall time, throughput
(MB/s, lines/s) and the verdict. The generator's CPU time is reported too: if it
is close to the wall time, the generator (not forensics) was the bottleneck.
Results are appended to ``bench/out/stream-memory.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import BENCH, OUT, ROOT, child_env, forensics_argv  # noqa: E402


def _sampler(pid: int, samples: list[tuple[float, float]], stop: threading.Event, every: float) -> None:
    try:
        import psutil
    except ImportError:
        return
    try:
        proc = psutil.Process(pid)
        t0 = time.perf_counter()
        while not stop.is_set():
            samples.append((time.perf_counter() - t0, proc.memory_info().rss / 2**20))
            stop.wait(every)
    except Exception:  # process gone
        return


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gigabytes", type=float, default=0.5, help="size of the generated stream (default 0.5)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--rss-limit-mib", type=float, default=100.0, help="pass/fail threshold for peak RSS")
    a = ap.parse_args()
    nbytes = int(a.gigabytes * 1e9)
    OUT.mkdir(parents=True, exist_ok=True)
    env = child_env()
    gen_argv = [sys.executable, str(BENCH / "genlog.py"), "--bytes", str(nbytes), "--seed", str(a.seed),
                "--tp", str(a.tp)]
    fx_argv = forensics_argv() + ["classify", "--format", "json", "-"]
    print(f"streaming {a.gigabytes:g} GB: {' '.join(gen_argv[1:])} | {' '.join(fx_argv[1:])}", file=sys.stderr)

    r, w = os.pipe()
    t0 = time.perf_counter()
    gen = subprocess.Popen(gen_argv, stdout=w, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    os.close(w)
    fx = subprocess.Popen(fx_argv, stdin=r, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    os.close(r)
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    th = threading.Thread(target=_sampler, args=(fx.pid, samples, stop, 0.5), daemon=True)
    th.start()
    # drain forensics' pipes in threads, then reap both children with wait4 for their own rusage
    outs: dict[str, bytes] = {}

    def drain(name: str, f) -> None:  # type: ignore[no-untyped-def]
        outs[name] = f.read()

    drains = [threading.Thread(target=drain, args=(n, f)) for n, f in
              (("fx_out", fx.stdout), ("fx_err", fx.stderr), ("gen_err", gen.stderr))]
    for d in drains:
        d.start()
    _, fx_status, fx_ru = os.wait4(fx.pid, 0)
    fx_wall = time.perf_counter() - t0
    fx.returncode = os.waitstatus_to_exitcode(fx_status)
    stop.set()
    _, gen_status, gen_ru = os.wait4(gen.pid, 0)
    gen.returncode = os.waitstatus_to_exitcode(gen_status)
    for d in drains:
        d.join()
    th.join(timeout=2)

    gen_msg = outs.get("gen_err", b"").decode(errors="replace").strip()
    lines = bytes_ = None
    if gen_msg.startswith("genlog:"):
        parts = gen_msg.split()
        lines, bytes_ = int(parts[1]), int(parts[3])
    try:
        res = json.loads(outs.get("fx_out", b"{}"))
    except ValueError:
        res = {}
    peak = fx_ru.ru_maxrss / 1024
    timeline = []
    if samples:
        n = len(samples)
        for frac in (0.1, 0.25, 0.5, 0.75, 1.0):
            t, rss = samples[min(n - 1, int(frac * n) - 1 if frac < 1 else n - 1)]
            timeline.append({"t_s": round(t, 1), "rss_mib": round(rss, 1)})
    out = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "gigabytes": a.gigabytes, "lines": lines, "bytes": bytes_,
        "forensics": {"argv": " ".join(fx_argv[1:]), "rc": fx.returncode, "wall_s": round(fx_wall, 2),
                      "cpu_s": round(fx_ru.ru_utime + fx_ru.ru_stime, 2), "peak_rss_mib": round(peak, 1),
                      "mb_per_s": round((bytes_ or 0) / fx_wall / 1e6, 2) if bytes_ else None,
                      "lines_per_s": round((lines or 0) / fx_wall) if lines else None,
                      "verdict": res.get("verdict"), "root_cause": res.get("root_cause"),
                      "stats": res.get("stats"), "rss_timeline": timeline},
        "generator": {"rc": gen.returncode, "cpu_s": round(gen_ru.ru_utime + gen_ru.ru_stime, 2)},
        "rss_limit_mib": a.rss_limit_mib, "pass": peak <= a.rss_limit_mib and fx.returncode in (0, 1),
    }
    hist = OUT / "stream-memory.json"
    prev = json.loads(hist.read_text()) if hist.exists() else []
    prev.append(out)
    hist.write_text(json.dumps(prev, indent=2))

    f = out["forensics"]
    print(f"\nforensics classify - : {lines:,} lines, {bytes_ / 1e9:.2f} GB in {f['wall_s']} s "
          f"({f['lines_per_s']:,} lines/s, {f['mb_per_s']} MB/s), cpu {f['cpu_s']} s, rc {f['rc']}")
    print(f"  verdict: {f['verdict']} {f['root_cause']}  stats: {f['stats']}")
    print(f"  peak RSS {f['peak_rss_mib']} MiB (limit {a.rss_limit_mib} MiB): {'PASS' if out['pass'] else 'FAIL'}")
    if timeline:
        print("  RSS over time: " + ", ".join(f"{p['t_s']}s {p['rss_mib']} MiB" for p in timeline))
    print(f"  generator cpu {out['generator']['cpu_s']} s"
          + ("  (close to the wall time: the generator may have been the bottleneck)"
             if out["generator"]["cpu_s"] > 0.9 * fx_wall else ""))
    if fx.returncode not in (0, 1):
        print(outs.get("fx_err", b"").decode(errors="replace")[-2000:], file=sys.stderr)
    print(f"results appended to {hist.relative_to(ROOT)}")
    return 0 if out["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
