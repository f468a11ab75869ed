"""forensics benchmark: throughput and memory against Drain3 and a one-regex loop.

    python bench/run.py                  # 1M lines, 3 alternating repeats of every workload (minutes)
    python bench/run.py --quick          # 200k lines, 1 repeat (development)
    python bench/run.py --lines 5000000  # suite at 5M + classify at 1M: memory must not grow
    python bench/run.py --memory-scaling # only classify/parse at 1M and 5M lines (RSS growth)
    python bench/run.py --profile        # also a cProfile / per-stage profile of classify (200k lines)
    python bench/run.py --no-crashloop   # only the serving-heavy workload

Two workloads, measured in the same run: the serving-heavy journal of
genlog.py and the crash-loop journal of crashloop.py (--crashloop-lifetimes
process lifetimes, nearly all failed start-ups), each against Drain3 and the
one-regex loop; then classify's peak RSS on 10x the crash-loop lifetimes.

Every measurement is a separate process (wall time includes interpreter start);
peak RSS is that child's ``ru_maxrss`` from ``os.wait4``. Repeats alternate the
order of the workloads. Results: a table on stdout and ``bench/out/results.json``
(``results-quick.json`` with ``--quick``). See bench/README.md.
"""
from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proc import BENCH, OUT, ROOT, Measured, child_env, forensics_argv, measure, warm_cache  # noqa: E402

import crashloop  # noqa: E402
import genlog  # noqa: E402

PY = sys.executable
PURE_ENV = "FORENSICS_PURE_PYTHON"
PURE_TWINS = ("parse", "classify", "classify-json")
TARGETS = {
    "classify_vs_drain3": 5.0,     # classify lines/s >= 5x Drain3 (serving-heavy; issue 29, was 4x)
    "crashloop_classify_vs_drain3": 2.5,  # classify lines/s >= 2.5x Drain3 (crash-loop)
    "crashloop_rss_mib": 100.0,    # classify peak RSS on the crash-loop log, 1x and 10x lifetimes
    "crashloop_rss_growth_10x": 0.10,  # 1x -> 10x lifetimes peak RSS growth
    "classify_vs_regex": 0.4,      # classify lines/s >= 0.4x the one-regex loop
    "parse_vs_drain3": 2.0,        # parse lines/s >= 2x Drain3, in one process (parse's default; issue 29, was 1x)
    "classify_rss_mib_1m": 100.0,  # peak RSS of classify on 1M lines
    "rss_growth_5m": 0.10,         # 1M -> 5M peak RSS growth
    "startup_50_s": 0.5,           # classify a 50-line log, wall incl. interpreter start
    "startup_50k_s": 1.0,          # classify a 50k-line failure log
}


# ------------------------------------------------------------------ inputs
def _gen_digest() -> str:
    return hashlib.sha256((BENCH / "genlog.py").read_bytes()).hexdigest()[:16]


def ensure_log(lines: int, seed: int = 7, tp: int = 4, tag: str | None = None) -> tuple[Path, dict]:
    """The generated log for these options, reused while the generator is unchanged."""
    OUT.mkdir(parents=True, exist_ok=True)
    name = tag or f"sglang-{lines}-seed{seed}-tp{tp}"
    path = OUT / f"{name}.log"
    meta_path = OUT / f"{name}.meta.json"
    want = {"lines_requested": lines, "seed": seed, "tp": tp, "generator": _gen_digest()}
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()) and path.stat().st_size == meta.get("bytes"):
            return path, meta
    t0 = time.perf_counter()
    print(f"generating {path.relative_to(ROOT)} ({lines:,} lines) ...", file=sys.stderr, flush=True)
    with open(path, "wb") as f:
        n, b = genlog.generate(f, lines=lines, seed=seed, tp=tp)
    meta = {**want, "lines": n, "bytes": b, "generate_s": round(time.perf_counter() - t0, 2)}
    meta_path.write_text(json.dumps(meta, indent=2))
    return path, meta


def _crashloop_digest() -> str:
    h = hashlib.sha256((BENCH / "crashloop.py").read_bytes())
    for p in sorted((ROOT / "forensics" / "corpus").glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def ensure_crashloop(lifetimes: int, seed: int = 11) -> tuple[Path, dict]:
    """The crash-loop log for these options, reused while its generator is unchanged."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"crashloop-{lifetimes}-seed{seed}.log"
    meta_path = path.with_suffix(".meta.json")
    want = {"lifetimes": lifetimes, "seed": seed, "generator": _crashloop_digest()}
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()) and path.stat().st_size == meta.get("bytes"):
            return path, meta
    t0 = time.perf_counter()
    print(f"generating {path.relative_to(ROOT)} ({lifetimes:,} lifetimes) ...", file=sys.stderr, flush=True)
    with open(path, "wb") as f:
        n, b, drawn = crashloop.generate(f, lifetimes=lifetimes, seed=seed)
    meta = {**want, "lines": n, "bytes": b, "drawn": drawn, "generate_s": round(time.perf_counter() - t0, 2)}
    meta_path.write_text(json.dumps(meta, indent=2))
    return path, meta


REAL = ROOT.parent / "shared" / "corpora-real"
PUBLIC = ROOT / "corpora" / "public"
# The public batches whose first look is done (corpora/public/LEDGER.md); a
# later batch joins the archive only after its own first look, never before.
PUBLIC_BATCHES = tuple(f"batch-{i:02d}" for i in range(1, 13))


def real_archives() -> dict[str, tuple[str, Path, list[Path]]]:
    """The archives of real start-up logs: key -> (what, root, logs)."""
    out: dict[str, tuple[str, Path, list[Path]]] = {}
    logs = sorted(REAL.rglob("*.log")) if REAL.is_dir() else []
    if logs:
        out["real"] = ("../shared/corpora-real", REAL, logs)
    pub = [p for b in PUBLIC_BATCHES for p in sorted((PUBLIC / b).glob("*.log"))]
    if pub:
        out["public"] = (f"corpora/public {PUBLIC_BATCHES[0]}..{PUBLIC_BATCHES[-1]}", PUBLIC, pub)
    return out


def ensure_archive(name: str, root: Path, logs: list[Path]) -> tuple[Path, dict]:
    """``logs`` end to end, as one archive of start-ups and failures (built
    under bench/out, git-ignored: real logs are never copied into the
    project), reused while the logs are unchanged."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}-archive.log"
    h = hashlib.sha256()
    for p in logs:
        h.update(f"{p.relative_to(root)} {p.stat().st_size}\n".encode())
    want = {"digest": h.hexdigest()[:16], "logs": len(logs)}
    meta_path = path.with_suffix(".meta.json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if all(meta.get(k) == v for k, v in want.items()) and path.stat().st_size == meta.get("bytes"):
            return path, meta
    n = b = 0
    with open(path, "wb") as f:
        for p in logs:
            data = p.read_bytes()
            if data and not data.endswith(b"\n"):
                data += b"\n"
            f.write(data)
            n += data.count(b"\n")
            b += len(data)
    meta = {**want, "lines": n, "bytes": b}
    meta_path.write_text(json.dumps(meta, indent=2))
    return path, meta


def real_suite(key: str, repeats: int, only: set[str] | None) -> dict | None:
    got = real_archives().get(key)
    if got is None:
        return None
    what, root, logs = got
    path, meta = ensure_archive(key, root, logs)
    out: dict = {"input": {"path": str(path.relative_to(ROOT)), "lines": meta["lines"], "bytes": meta["bytes"],
                           "logs": meta["logs"], "what": what}}
    out["suite"] = run_suite(path, meta, repeats, only)
    return out


# ------------------------------------------------------------------ workloads
def supports_jobs() -> bool:
    try:
        out = subprocess.run(forensics_argv() + ["classify", "--help"], capture_output=True, text=True,
                             env=child_env(), cwd=ROOT, timeout=60).stdout
    except Exception:
        return False
    return "--jobs" in out


def workload_specs(path: Path, only: set[str] | None) -> tuple[list[dict], list[str]]:
    fx = forensics_argv()
    wl = str(BENCH / "workloads.py")
    specs = [
        {"key": "plain", "name": "for line in f", "argv": [PY, wl, "plain", str(path)], "capture": True},
        {"key": "regex", "name": "one regex (journald prefix)", "argv": [PY, wl, "regex", str(path)],
         "capture": True},
        {"key": "drain3", "name": "Drain3 TemplateMiner", "argv": [PY, wl, "drain3", str(path)], "capture": True},
        # parse's default is one process: issue 14's acceptance, parse >= 1x Drain3 *in one process*
        {"key": "parse", "name": "forensics parse > /dev/null", "argv": fx + ["parse", str(path)],
         "capture": False},
        # for reference: an explicit split (no target)
        {"key": "parse-jobs2", "name": "forensics parse --jobs 2", "argv": fx + ["parse", "--jobs", "2", str(path)],
         "capture": False},
        {"key": "classify", "name": "forensics classify", "argv": fx + ["classify", str(path)], "capture": True},
        {"key": "classify-json", "name": "forensics classify --format json",
         "argv": fx + ["classify", "--format", "json", str(path)], "capture": True},
    ]
    # The same with the pure-Python modules (issue 29): what runs where no compiler built the core.
    specs += [{**s, "key": s["key"] + "-pure", "name": s["name"].replace("forensics", "pure", 1),
               "env": {PURE_ENV: "1"}} for s in specs if s["key"] in PURE_TWINS]
    notes = []
    if only is None or "classify-jobs2" in only:
        if supports_jobs():
            specs.append({"key": "classify-jobs2", "name": "forensics classify --jobs 2",
                          "argv": fx + ["classify", "--jobs", "2", str(path)], "capture": True})
        else:
            notes.append("classify --jobs 2 skipped: `forensics classify --help` has no --jobs option")
    if only is not None:
        specs = [s for s in specs if s["key"] in only]
    return specs, notes


def run_one(spec: dict) -> tuple[Measured, str, str]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        env = {**child_env(), **spec["env"]} if spec.get("env") else None
        m = measure(spec["argv"], stdout=out if spec["capture"] else subprocess.DEVNULL, stderr=err, env=env)
        out.seek(0)
        err.seek(0)
        return m, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")


def _ok_rc(spec: dict, rc: int) -> bool:
    return rc in (0, 1) if spec["key"].startswith("classify") else rc == 0


def core_of(env: dict[str, str] | None = None) -> str:
    """What `python -m forensics.compile status` says: the per-line core a child runs."""
    p = subprocess.run([PY, "-m", "forensics.compile", "status"], capture_output=True, text=True,
                       env={**child_env(), **(env or {})}, cwd=ROOT)
    return (p.stdout or p.stderr).strip()


def summarize(spec: dict, runs: list[dict], lines: int, nbytes: int) -> dict:
    walls = [r["wall_s"] for r in runs]
    best = min(walls)
    return {
        "name": spec["name"], "argv": " ".join(spec["argv"]).replace(str(ROOT) + "/", ""),
        "runs": runs, "best_wall_s": round(best, 3), "median_wall_s": round(statistics.median(walls), 3),
        "best_cpu_s": round(min(r["cpu_s"] for r in runs), 3),
        "lines_per_s": round(lines / best), "mb_per_s": round(nbytes / best / 1e6, 2),
        "median_lines_per_s": round(lines / statistics.median(walls)),
        "cpu_lines_per_s": round(lines / min(r["cpu_s"] for r in runs)),
        "peak_rss_mib": round(max(r["max_rss_kib"] for r in runs) / 1024, 1),
    }


def run_suite(path: Path, meta: dict, repeats: int, only: set[str] | None) -> dict:
    specs, notes = workload_specs(path, only)
    warm_cache(path)
    runs: dict[str, list[dict]] = {s["key"]: [] for s in specs}
    outputs: dict[str, str] = {}
    for rep in range(repeats):
        order = specs if rep % 2 == 0 else list(reversed(specs))
        for spec in order:
            m, out, err = run_one(spec)
            rec = {"wall_s": round(m.wall_s, 3), "cpu_s": round(m.cpu_s, 3), "max_rss_kib": m.max_rss_kib,
                   "rc": m.returncode}
            runs[spec["key"]].append(rec)
            outputs[spec["key"]] = out
            flag = "" if _ok_rc(spec, m.returncode) else f"  (UNEXPECTED rc={m.returncode}: {err.strip()[-300:]})"
            print(f"  [{rep + 1}/{repeats}] {spec['name']:<32} {m.wall_s:8.2f} s  {m.max_rss_kib / 1024:7.1f} MiB"
                  f"{flag}", file=sys.stderr, flush=True)
    res: dict = {"workloads": {}, "notes": notes}
    for spec in specs:
        s = summarize(spec, runs[spec["key"]], meta["lines"], meta["bytes"])
        out = outputs.get(spec["key"], "")
        if spec["key"] in ("plain", "regex", "drain3"):
            try:
                s["result"] = json.loads(out.strip().splitlines()[-1])
            except Exception:
                s["result"] = out[-200:]
        elif spec["key"].startswith("classify-json"):
            try:
                s["result"] = " ".join(str(json.loads(out).get(k)) for k in ("verdict", "root_cause", "phase"))
            except ValueError:
                s["result"] = out[-200:]
        elif spec["key"].startswith("classify"):
            s["result"] = out.strip().splitlines()[0] if out.strip() else ""
        res["workloads"][spec["key"]] = s
    w = res["workloads"]
    for s in w.values():
        for ref in ("drain3", "regex"):
            if ref in w:
                s[f"x_{ref}"] = round(s["lines_per_s"] / w[ref]["lines_per_s"], 3)
                s[f"x_{ref}_cpu"] = round(s["cpu_lines_per_s"] / w[ref]["cpu_lines_per_s"], 3)
    return res


def crashloop_suite(lifetimes: int, repeats: int, only: set[str] | None, memory: bool = True,
                    seed: int = 11) -> dict:
    """The same workloads on the crash-loop log, then classify's peak RSS on
    1x and 10x its lifetimes (memory must not grow with lifetimes)."""
    path, meta = ensure_crashloop(lifetimes, seed)
    out: dict = {"input": {"path": str(path.relative_to(ROOT)), "lines": meta["lines"], "bytes": meta["bytes"],
                           "lifetimes": lifetimes, "seed": seed, "drawn": meta.get("drawn")}}
    out["suite"] = run_suite(path, meta, repeats, only)
    if memory and (only is None or "classify" in only):
        rows = {}
        for n in (lifetimes, lifetimes * 10):
            p, m = ensure_crashloop(n, seed)
            warm_cache(p)
            spec = workload_specs(p, {"classify"})[0][0]
            r, out_text, _ = run_one(spec)
            rows[str(n)] = {"lines": m["lines"], "bytes": m["bytes"], "wall_s": round(r.wall_s, 2),
                            "cpu_s": round(r.cpu_s, 2), "peak_rss_mib": round(r.max_rss_kib / 1024, 1),
                            "result": out_text.strip().splitlines()[0] if out_text.strip() else ""}
            print(f"  crash-loop memory: {n:>7,} lifetimes {m['lines']:>10,} lines {r.wall_s:8.2f} s "
                  f"{r.max_rss_kib / 1024:7.1f} MiB", file=sys.stderr, flush=True)
        lo, hi = rows[str(lifetimes)], rows[str(lifetimes * 10)]
        out["memory"] = {"by_lifetimes": rows, "rss_growth": round(hi["peak_rss_mib"] / lo["peak_rss_mib"] - 1, 3)}
    return out


# ------------------------------------------------------------------ startup
def startup(repeats: int = 5) -> dict:
    cases = [("classify 50-line log", *ensure_log(50, tp=1, tag="startup-50")),
             ("classify 50k-line failure log", *ensure_log(50_000, tag="startup-50k"))]
    out: dict = {}
    base = [measure([PY, "-c", "pass"]).wall_s for _ in range(repeats)]
    out["python -c pass"] = {"best_s": round(min(base), 3), "median_s": round(statistics.median(base), 3)}
    for name, path, meta in cases:
        warm_cache(path)
        walls, rss = [], []
        for _ in range(repeats):
            m = measure(forensics_argv() + ["classify", str(path)], stderr=subprocess.DEVNULL)
            walls.append(m.wall_s)
            rss.append(m.max_rss_kib)
        out[name] = {"lines": meta["lines"], "best_s": round(min(walls), 3),
                     "median_s": round(statistics.median(walls), 3), "peak_rss_mib": round(max(rss) / 1024, 1)}
        print(f"  startup: {name:<32} best {min(walls):.3f} s", file=sys.stderr, flush=True)
    return out


# ------------------------------------------------------------------ memory scaling
def memory_scaling(sizes: list[int], keys: tuple[str, ...] = ("classify", "parse")) -> dict:
    out: dict = {"sizes": sizes, "by_size": {}}
    for n in sizes:
        path, meta = ensure_log(n)
        warm_cache(path)
        row = {"lines": meta["lines"], "bytes": meta["bytes"]}
        specs, _ = workload_specs(path, set(keys))
        for spec in specs:
            m, _, _ = run_one(spec)
            row[spec["key"]] = {"wall_s": round(m.wall_s, 2), "lines_per_s": round(meta["lines"] / m.wall_s),
                                "peak_rss_mib": round(m.max_rss_kib / 1024, 1)}
            print(f"  scaling: {spec['name']:<32} {n:>10,} lines {m.wall_s:8.2f} s "
                  f"{m.max_rss_kib / 1024:7.1f} MiB", file=sys.stderr, flush=True)
        out["by_size"][str(n)] = row
    lo, hi = out["by_size"][str(sizes[0])], out["by_size"][str(sizes[-1])]
    out["rss_growth"] = {k: round(hi[k]["peak_rss_mib"] / lo[k]["peak_rss_mib"] - 1, 3)
                         for k in keys if k in lo and k in hi}
    return out


# ------------------------------------------------------------------ report
def parse_checks(w: dict, label: str, metric: str) -> list[dict]:
    """``parse`` (one process, its default) against Drain3 in the same suite."""
    sfx = "_cpu" if metric == "cpu" else ""
    p, d = w.get("parse"), w.get("drain3")
    if not (p and d):
        return []
    x = p["x_drain3" + sfx]
    return [{"check": f"{label}parse lines/s vs Drain3 ({metric})", "value": x,
             "target": f">= {TARGETS['parse_vs_drain3']}x", "unit": "x", "pass": x >= TARGETS["parse_vs_drain3"]}]


def checks(res: dict, metric: str = "wall") -> list[dict]:
    """Acceptance checks. ``metric`` picks wall-clock ratios (the definition) or
    CPU-time ratios (robust when other processes share the machine)."""
    out = []
    sfx = "_cpu" if metric == "cpu" else ""
    w = res.get("suite", {}).get("workloads", {})
    c, d, r = w.get("classify"), w.get("drain3"), w.get("regex")

    def add(name: str, value, target, ok: bool, unit: str = "") -> None:  # type: ignore[no-untyped-def]
        out.append({"check": name, "value": value, "target": target, "unit": unit, "pass": ok})

    for key, what in (("classify", "classify"), ("classify-json", "classify --format json")):
        cx = w.get(key)
        if cx and d:
            add(f"{what} lines/s vs Drain3 ({metric})", cx["x_drain3" + sfx], f">= {TARGETS['classify_vs_drain3']}x",
                cx["x_drain3" + sfx] >= TARGETS["classify_vs_drain3"], "x")
    if c and r:
        add(f"classify lines/s vs one-regex loop ({metric})", c["x_regex" + sfx], f">= {TARGETS['classify_vs_regex']}x",
            c["x_regex" + sfx] >= TARGETS["classify_vs_regex"], "x")
    out.extend(parse_checks(w, "", metric))
    if c:
        lines = res["input"]["lines"]
        add(f"classify peak RSS ({lines:,} lines)", c["peak_rss_mib"],
            f"<= {TARGETS['classify_rss_mib_1m']} MiB (at 1M lines)",
            c["peak_rss_mib"] <= TARGETS["classify_rss_mib_1m"], "MiB")
    for cl, label in ((res.get("crashloop"), "crash-loop"), (res.get("real"), "real archive"),
                      (res.get("public"), "public archive")):
        if not cl:
            continue
        cw = cl["suite"]["workloads"]
        cd = cw.get("drain3")
        for key, what in (("classify", "classify"), ("classify-json", "classify --format json")):
            cc = cw.get(key)
            if cc and cd:
                add(f"{label}: {what} lines/s vs Drain3 ({metric})", cc["x_drain3" + sfx],
                    f">= {TARGETS['crashloop_classify_vs_drain3']}x",
                    cc["x_drain3" + sfx] >= TARGETS["crashloop_classify_vs_drain3"], "x")
        out.extend(parse_checks(cw, f"{label}: ", metric))
        mem = cl.get("memory")
        if mem:
            for k, row in mem["by_lifetimes"].items():
                add(f"crash-loop: classify peak RSS, {int(k):,} lifetimes", row["peak_rss_mib"],
                    f"<= {TARGETS['crashloop_rss_mib']} MiB", row["peak_rss_mib"] <= TARGETS["crashloop_rss_mib"], "MiB")
            add("crash-loop: classify peak RSS growth 1x -> 10x lifetimes", mem["rss_growth"],
                f"<= {TARGETS['crashloop_rss_growth_10x']:.0%}", mem["rss_growth"] <= TARGETS["crashloop_rss_growth_10x"])
    ms = res.get("memory_scaling")
    if ms:
        for k, g in ms["rss_growth"].items():
            add(f"{k} peak RSS growth {ms['sizes'][0]:,} -> {ms['sizes'][-1]:,} lines", g,
                f"<= {TARGETS['rss_growth_5m']:.0%}", g <= TARGETS["rss_growth_5m"])
    st = res.get("startup")
    if st:
        a, b = st["classify 50-line log"], st["classify 50k-line failure log"]
        add(f"classify {a['lines']}-line log (best of 5)", a["best_s"], f"< {TARGETS['startup_50_s']} s",
            a["best_s"] < TARGETS["startup_50_s"], "s")
        add(f"classify {b['lines']:,}-line failure log (best of 5)", b["best_s"], f"< {TARGETS['startup_50k_s']} s",
            b["best_s"] < TARGETS["startup_50k_s"], "s")
    return out


def print_report(res: dict) -> None:
    if res.get("core"):
        print(f"{res['core']}; the '-pure' rows: {res.get('core_pure')}")
    inp = res.get("input")
    if inp:
        print(f"\ninput: {inp['path']}  {inp['lines']:,} lines, {inp['bytes'] / 1e6:.1f} MB "
              f"(seed {inp['seed']}, TP={inp['tp']}); {res['repeats']} repeat(s), order alternated; "
              f"{res['machine']['cpus']} CPUs, Python {res['machine']['python']}")
    suite = res.get("suite")
    if suite:
        print("\nserving-heavy workload (genlog.py):")
        _print_suite(suite)
    cl = res.get("crashloop")
    if cl:
        ci = cl["input"]
        print(f"\ncrash-loop workload (crashloop.py): {ci['path']}  {ci['lines']:,} lines, {ci['bytes'] / 1e6:.1f} MB, "
              f"{ci['lifetimes']:,} lifetimes (seed {ci['seed']})")
        _print_suite(cl["suite"])
        mem = cl.get("memory")
        if mem:
            print("classify peak RSS by lifetimes: " + ", ".join(
                f"{int(k):,}: {v['peak_rss_mib']} MiB ({v['lines']:,} lines, {v['wall_s']} s)"
                for k, v in mem["by_lifetimes"].items()) + f"; growth {mem['rss_growth']:+.1%}")
    for key in ("real", "public"):
        real = res.get(key)
        if real:
            ri = real["input"]
            print(f"\nreal start-up archive ({ri.get('what', key)}, {ri['logs']} logs end to end): {ri['path']}  "
                  f"{ri['lines']:,} lines, {ri['bytes'] / 1e6:.1f} MB")
            _print_suite(real["suite"])
    _print_rest(res)


def _print_suite(suite: dict) -> None:
    if suite:
        hdr = (f"{'workload':<32} {'best s':>8} {'median s':>9} {'cpu s':>7} {'lines/s':>10} {'MB/s':>7} "
               f"{'peak RSS':>9} {'x Drain3':>9} {'x regex':>8} {'cpu lines/s':>12} {'x Drain3':>9} {'x regex':>8}")
        print(hdr)
        print("-" * len(hdr))
        for s in suite["workloads"].values():
            print(f"{s['name']:<32} {s['best_wall_s']:>8.2f} {s['median_wall_s']:>9.2f} {s['best_cpu_s']:>7.2f} "
                  f"{s['lines_per_s']:>10,} {s['mb_per_s']:>7.1f} {s['peak_rss_mib']:>5.1f} MiB "
                  f"{s.get('x_drain3', float('nan')):>9.2f} {s.get('x_regex', float('nan')):>8.2f} "
                  f"{s['cpu_lines_per_s']:>12,} {s.get('x_drain3_cpu', float('nan')):>9.2f} "
                  f"{s.get('x_regex_cpu', float('nan')):>8.2f}")
        print("(lines/s, MB/s and the first ratios from the best wall time incl. interpreter start; "
              "the last three from the child's user+sys CPU time)")
        for n in suite["notes"]:
            print(f"note: {n}")
        c = suite["workloads"].get("classify")
        if c:
            print(f"classify said: {c.get('result')}")


def _print_rest(res: dict) -> None:
    st = res.get("startup")
    if st:
        print("\nstartup (wall incl. interpreter start):")
        for k, v in st.items():
            print(f"  {k:<34} best {v['best_s']:.3f} s  median {v['median_s']:.3f} s"
                  + (f"  ({v['lines']:,} lines, {v['peak_rss_mib']} MiB)" if "lines" in v else ""))
    ms = res.get("memory_scaling")
    if ms:
        print("\nmemory scaling:")
        for n, row in ms["by_size"].items():
            parts = [f"{k} {row[k]['peak_rss_mib']} MiB ({row[k]['lines_per_s']:,} lines/s)"
                     for k in ("classify", "parse") if k in row]
            print(f"  {int(n):>10,} lines: " + ", ".join(parts))
        print("  growth: " + ", ".join(f"{k} {g:+.1%}" for k, g in ms["rss_growth"].items()))
    la, lb = res.get("load_before"), res.get("load_after")
    if la and lb and max(la[0], lb[0]) > (res["machine"]["cpus"] or 1) * 0.75:
        print(f"\nnote: load average {la[0]:.1f} before / {lb[0]:.1f} after on {res['machine']['cpus']} CPUs: "
              "other processes competed for the CPU; wall times are inflated, CPU-time ratios are the fairer view")
    print("\nacceptance targets (wall clock; CPU-time ratios in brackets):")
    cpu = {c["check"].replace("(cpu)", "(wall)"): c for c in res.get("checks_cpu", [])}
    for c in res["checks"]:
        cc = cpu.get(c["check"])
        extra = f"  [cpu: {cc['value']:.3f} {'PASS' if cc['pass'] else 'FAIL'}]" if cc and "(wall)" in c["check"] else ""
        v = c["value"]
        vs = f"{v:,.3f}" if isinstance(v, float) else str(v)
        print(f"  [{'PASS' if c['pass'] else 'FAIL'}] {c['check']:<52} {vs:>9} {c['unit']:<3} target {c['target']}"
              f"{extra}")


def machine() -> dict:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=ROOT).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "forensics", "signatures"],
                                    capture_output=True, text=True, cwd=ROOT).stdout.strip())
    except Exception:
        commit, dirty = None, None
    try:
        from importlib.metadata import version
        drain3_v = version("drain3")
    except Exception:
        drain3_v = None
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(), "commit": commit, "dirty": dirty,
            "drain3": drain3_v}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--lines", type=int, default=None, help="lines in the generated log (default 1,000,000)")
    ap.add_argument("--quick", action="store_true", help="200k lines, 1 repeat, startup best of 3")
    ap.add_argument("--repeats", type=int, default=None, help="runs per workload (default 3; 1 with --quick)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tp", type=int, default=4, help="TP ranks in the generated log")
    ap.add_argument("--only", default=None,
                    help="comma list of plain,regex,drain3,parse,parse-jobs2,classify,classify-jobs2,classify-json "
                         "and the -pure twins of parse, classify, classify-json (default all)")
    ap.add_argument("--no-startup", action="store_true", help="skip the startup measurement")
    ap.add_argument("--memory-scaling", action="store_true",
                    help="only measure classify/parse peak RSS at --scaling-lines sizes")
    ap.add_argument("--scaling-lines", default="1000000,5000000")
    ap.add_argument("--profile", action="store_true", help="also run bench/profile_classify.py (200k lines)")
    ap.add_argument("--no-crashloop", action="store_true", help="skip the crash-loop workload")
    ap.add_argument("--crashloop-lifetimes", type=int, default=None,
                    help="process lifetimes in the crash-loop log (default 1000; 200 with --quick)")
    ap.add_argument("--no-crashloop-memory", action="store_true",
                    help="skip classify's peak RSS on 10x the crash-loop lifetimes")
    ap.add_argument("--no-real", action="store_true",
                    help="skip the archives of real start-up logs (../shared/corpora-real and corpora/public batch-01..12, each end to end)")
    ap.add_argument("--json", default=None, help="results file (default bench/out/results[-quick].json)")
    a = ap.parse_args(argv)

    lines = a.lines or (200_000 if a.quick else 1_000_000)
    repeats = a.repeats or (1 if a.quick else 3)
    only = set(a.only.split(",")) if a.only else None
    res: dict = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(), "targets": TARGETS,
                 "repeats": repeats, "core": core_of(), "core_pure": core_of({PURE_ENV: "1"})}
    t0 = time.perf_counter()
    # Bytecode as an installed package has it (pip compiles on install): a
    # checkout without it, under PYTHONDONTWRITEBYTECODE, would recompile every
    # module in every measured child (~65 ms each), which Drain3 never pays.
    compileall.compile_dir(str(ROOT / "forensics"), quiet=1)
    # Fill the start-up caches (parsed signatures, scorer, tables): every later
    # start reads them, as every start after a user's first does.
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "warm-up.log").write_text("warm-up\n")
    subprocess.run([*forensics_argv(), "classify", str(OUT / "warm-up.log")], env=child_env(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res["load_before"] = os.getloadavg()
    if a.memory_scaling:
        res["memory_scaling"] = memory_scaling([int(x) for x in a.scaling_lines.split(",")])
    else:
        path, meta = ensure_log(lines, a.seed, a.tp)
        res["input"] = {"path": str(path.relative_to(ROOT)), "lines": meta["lines"], "bytes": meta["bytes"],
                        "seed": a.seed, "tp": a.tp, "generate_s": meta.get("generate_s")}
        res["suite"] = run_suite(path, meta, repeats, only)
        if lines > 1_000_000 and (only is None or "classify" in only):
            # the 5M mode: the same classify at 1M, to see whether memory grows with input
            base = memory_scaling([1_000_000], keys=("classify",))
            c = res["suite"]["workloads"]["classify"]
            base["sizes"].append(lines)
            base["by_size"][str(lines)] = {"lines": meta["lines"], "bytes": meta["bytes"], "classify": {
                "wall_s": c["best_wall_s"], "lines_per_s": c["lines_per_s"], "peak_rss_mib": c["peak_rss_mib"]}}
            lo = base["by_size"]["1000000"]["classify"]["peak_rss_mib"]
            base["rss_growth"] = {"classify": round(c["peak_rss_mib"] / lo - 1, 3)}
            res["memory_scaling"] = base
        if not a.no_crashloop:
            res["crashloop"] = crashloop_suite(a.crashloop_lifetimes or (200 if a.quick else 1000), repeats, only,
                                               memory=not a.no_crashloop_memory)
        if not a.no_real:
            for key in ("real", "public"):
                res[key] = real_suite(key, repeats, only)
        if not a.no_startup:
            res["startup"] = startup(3 if a.quick else 5)
    res["load_after"] = os.getloadavg()
    res["checks"] = checks(res, "wall")
    res["checks_cpu"] = checks(res, "cpu")
    res["elapsed_s"] = round(time.perf_counter() - t0, 1)
    out = Path(a.json) if a.json else OUT / ("results-quick.json" if a.quick else "results.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    print_report(res)
    print(f"\nresults: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}  ({res['elapsed_s']} s)")
    if a.profile:
        subprocess.run([PY, str(BENCH / "profile_classify.py"), "--lines", "200000"], env=child_env(), cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
