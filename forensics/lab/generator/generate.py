"""Deterministic, seeded generator of synthetic SGLang / vLLM service logs.

``python -m forensics.lab.generator.generate --seed 7 --per-label 40 --healthy 110 --out corpora/generated``

Each log is one service run (sometimes a failed run, a restart and a second
run) rendered as a plain file, through journald (``journalctl -o ...``),
docker or Kubernetes wrappers, and sometimes cut (``tail``, ``head -c``,
``grep``).  ``labels.csv`` records the root cause, phase, the proving
substring and the early-warning substring (both verified to survive the
rendering and the cut).  Pure standard library; the same seed gives
byte-identical output.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
from pathlib import Path
from random import Random

from forensics.report.atomic import atomic_write_bytes, atomic_write_text

from .catalog import GPUS, HOSTNAMES, MODELS, SGLANG_VERSIONS, SITE_ROOTS, TORCH_BUILDS, USERS, VLLM_VERSIONS, Ctx, Failure, pick
from .cut import MAX_BYTES, apply_cut, load_real_blocks
from .failures import BUILDERS, LABELS
from .labels import survives
from .records import Emitter, LogState, Rec, sd
from .render import JOURNALD, RENDER_WEIGHTS, RENDERERS, render
from .run import Run
from .wording import reword


def make_ctx(rng: Random, label: str | None, renderer: str) -> Ctx:
    server = "sglang" if rng.random() < 0.6 else "vllm"
    if server == "sglang":
        version = pick(rng, SGLANG_VERSIONS)
        gen = "old" if version.startswith("0.4") else ("new" if version == "0.5.23" else "mid")
    else:
        version = pick(rng, VLLM_VERSIONS)
        gen = {"0.6": "v06", "0.9": "v09", "0.1": "v011", "0.3": "v033"}[version[:3]]
    gpu = pick(rng, GPUS)
    tp = rng.choices([1, 2, 4, 8], weights=[45, 30, 17, 8])[0]
    if label == "dist.nccl" and tp == 1:
        tp = rng.choice([2, 4, 8])
    model = pick(rng, MODELS)
    py = rng.choice(["3.10", "3.11", "3.12", "3.12", "3.12"])
    user = pick(rng, USERS)
    sp = pick(rng, SITE_ROOTS).format(py=py, user=user)
    torch = pick(rng, TORCH_BUILDS)
    cuda = {"cu124": "12.4", "cu126": "12.6", "cu128": "12.8", "cu129": "12.9", "cu130": "13.0"}[torch.split("+")[1]]
    return Ctx(rng=rng, server=server, version=version, gen=gen, gpu=gpu, tp=tp,
               dp_attn=server == "sglang" and tp > 1 and rng.random() < 0.15,
               ep=server == "sglang" and tp > 1 and rng.random() < 0.2 and "Moe" in model.arch,
               model=model, py=py, sp=sp, torch=torch, cuda=cuda, host=pick(rng, HOSTNAMES),
               port=30000 if server == "sglang" and rng.random() < 0.7 else (8000 if server == "vllm" and rng.random() < 0.7 else rng.randint(8001, 40000)),
               journald=renderer in JOURNALD, user=user)


def build_log(rng: Random, label: str | None, renderer: str, healthy_end: str = "") -> tuple[LogState, dict]:
    c = make_ctx(rng, label, renderer)
    st = LogState(c=c, t=rng.uniform(1740787200, 1777507200))
    st.boot_t0 = st.t - rng.uniform(60, 3e6)
    st.tqdm_nl = rng.random() < 0.35
    st.ms = c.server == "sglang" and c.gen == "new" and rng.random() < 0.2
    st.tty = renderer in ("plain", "docker-compose") and rng.random() < 0.12
    st.unit = rng.choice(["sglang.service", "sglang-server.service", "llm.service"]) if c.server == "sglang" else rng.choice(["vllm.service", "vllm-openai.service", "llm.service"])
    st.unit_desc = {"sglang": rng.choice(["SGLang server", "SGLang inference server", "LLM inference (SGLang)"]),
                    "vllm": rng.choice(["vLLM OpenAI server", "vLLM server", "LLM inference (vLLM)"])}[c.server]
    unit_fmt = rng.choice(["combined", "combined", "description", "name"])
    unit_name = {"combined": f"{st.unit} - {st.unit_desc}", "description": st.unit_desc, "name": st.unit}[unit_fmt]
    em0 = Emitter(st)
    info: dict = {"ctx": c, "runs": 1}
    # Half the failures speak the programs' own wording (catalogue, signature examples).
    failure = reword(c, BUILDERS[label](c), 0.5) if label else None
    precursor = None
    if failure and failure.precursor and rng.random() < 0.85:
        precursor = failure.precursor
        if precursor.style in ("kernel", "systemd") and not c.journald:
            precursor = None
    info["failure"] = failure
    info["precursor"] = precursor
    stop_at = None
    if healthy_end == "starting":
        stop_at = rng.choice(["load-weights", "memory-plan", "cuda-graph-capture", "warmup", "ready", "serving"][:6])
    if c.journald:
        sd(em0, st, f"Starting {unit_name}...", unit_prefix=False)
        st.t += rng.uniform(0.01, 0.3)
        if failure and precursor and precursor.style == "systemd":
            pass
        sd(em0, st, f"Started {unit_name}.", unit_prefix=False)
    run = Run(st, failure, stop_at, precursor)
    if failure and precursor and precursor.style == "systemd":
        run.maybe_precursor("launch")
    outcome = run.run()
    em = run.em
    info["outcome"] = outcome
    if outcome == "failed":
        # systemd's view of the death
        kind = getattr(run, "exit_kind", "exit-code")
        if c.journald:
            em.adv(0.05, 2)
            if kind == "oom-kill":
                for s in failure.systemd:
                    sd(em, st, s, tag="fatal" if failure.fatal in s else "")
                sd(em, st, "Main process exited, code=killed, status=9/KILL")
                sd(em, st, "Failed with result 'oom-kill'.", tag="fatal" if "oom-kill" in failure.fatal else "")
            elif kind == "signal":
                sd(em, st, "Main process exited, code=killed, status=9/KILL")
                sd(em, st, "Failed with result 'signal'.")
            elif kind == "timeout":
                sd(em, st, f"Killing process {st.main_pid} (python3) with signal SIGKILL.") if rng.random() < 0.4 else None
                sd(em, st, "Failed with result 'timeout'.")
                sd(em, st, f"Failed to start {unit_name}.", unit_prefix=False)
            else:
                sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
                sd(em, st, "Failed with result 'exit-code'.")
            if rng.random() < 0.4:
                sd(em, st, f"Consumed {rng.randint(0, 40)}min {rng.uniform(0, 59):.3f}s CPU time.")
        # restart and a second run
        if rng.random() < 0.22 and c.tp <= 2 and renderer != "json":
            info["runs"] = 2
            em.adv(5, 30)
            if c.journald:
                reboot = rng.random() < 0.25
                if reboot:
                    st.boot += 1
                    em.adv(60, 600)
                    st.boot_t0 = st.t - rng.uniform(20, 60)
                    sd(em, st, f"Starting {unit_name}...", unit_prefix=False)
                    info["reboot"] = True
                else:
                    sd(em, st, "Scheduled restart job, restart counter is at 1.")
                    sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
                sd(em, st, f"Started {unit_name}.", unit_prefix=False)
            second_fails = rng.random() < 0.6
            run2 = Run(st, failure if second_fails else None, None if second_fails else rng.choice(["load-weights", "memory-plan", "cuda-graph-capture"]), None)
            run2.pre_done = True
            o2 = run2.run()
            if o2 == "failed" and c.journald:
                k2 = getattr(run2, "exit_kind", "exit-code")
                em.adv(0.05, 2)
                if k2 == "signal":
                    sd(em, st, "Main process exited, code=killed, status=9/KILL")
                    sd(em, st, "Failed with result 'signal'.")
                elif k2 == "oom-kill":
                    sd(em, st, "Main process exited, code=killed, status=9/KILL")
                    sd(em, st, "Failed with result 'oom-kill'.")
                else:
                    sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
                    sd(em, st, "Failed with result 'exit-code'.")
    elif outcome == "ready" and healthy_end == "shutdown":
        em.adv(30, 3000)
        st.phase = "shutdown"
        if c.journald:
            sd(em, st, f"Stopping {unit_name}...", unit_prefix=False)
        em.adv(0.01, 0.5)
        if c.server == "sglang":
            em.uv("INFO", "Shutting down")
            em.uv("INFO", "Waiting for application shutdown.")
            em.uv("INFO", "Application shutdown complete.")
            em.uv("INFO", f"Finished server process [{st.main_pid}]")
        else:
            em.uv("INFO", "Shutting down")
            em.uv("INFO", "Waiting for application shutdown.")
            em.uv("INFO", "Application shutdown complete.")
            if c.tp > 1 and c.gen != "v06":
                run.vlog_ranks("INFO", "multiproc_executor.py", lambda i: "Parent process exited, terminating worker", [1] if c.tp > 1 else [0])
        if c.journald:
            em.adv(0.5, 5)
            sd(em, st, "Deactivated successfully.")
            sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
            if rng.random() < 0.6:
                sd(em, st, f"Consumed {rng.randint(1, 600)}min {rng.uniform(0, 59):.3f}s CPU time.")
        info["outcome"] = "ready"
    return st, info


def generate_one(seed: int, idx: int, label: str | None, healthy_end: str, real: dict[str, list[dict]] | None = None) -> tuple[bytes, dict]:
    for attempt in range(40):
        rng = Random(f"{seed}:{idx}:{attempt}")
        renderer = rng.choices(RENDERERS, weights=RENDER_WEIGHTS)[0]
        st, info = build_log(rng, label, renderer, healthy_end)
        spliced = ""
        f: Failure | None = info["failure"]
        if f and real and real.get(label) and info["precursor"] is None and rng.random() < 0.4:
            blk = pick(rng, real[label])
            spliced = blk["src"]
            fatal_recs = [i for i, rc in enumerate(st.recs) if rc.tag == "fatal"]
            if fatal_recs:
                pos = fatal_recs[-1] + 1
                t = st.recs[fatal_recs[-1]].t
                new = [Rec(t + 0.001 * k, ln, "app", st.main_pid, f.phase, "fatal" if blk["fatal"] in ln else "", st.recs[fatal_recs[-1]].boot) for k, ln in enumerate(blk["lines"])]
                st.recs[pos:pos] = new
                f.fatal = blk["fatal"]
        lines, owners = render(st, renderer, rng)
        if sum(1 for _ in lines) > 420 or len(lines) < 25:
            continue
        failed = info["outcome"] == "failed"
        data, cut, kept = apply_cut(lines, owners, rng, f.fatal if f else "", failed, renderer)
        if len(data) > (MAX_BYTES if renderer != "json" else 3 * MAX_BYTES) and attempt < 25:
            continue    # keep the corpus small: prefer another draw over a huge log
        c = st.c
        row = {"renderer": renderer, "cut": cut, "server": f"{c.server}-{c.version}", "tp": c.tp, "gpu": c.gpu.short, "runs": info["runs"]}
        if failed:
            if not survives(f.fatal, data, renderer):
                continue
            pre = info["precursor"]
            ew = pre.substring if pre else ""
            if ew and not survives(ew, data, renderer):
                ew = ""
            row.update(root_cause=f.label, phase=f.phase, early_warning_substring=ew, fatal_substring=f.fatal, verdict="failed", variant=f.variant)
        else:
            if label:
                continue
            phases = [o.phase for o in kept if o.src == "app" and o.phase]
            tags = {o.tag for o in kept}
            last = phases[-1] if phases else "launch"
            if any(o.phase == "shutdown" for o in kept):
                last = "shutdown"
            ready = bool(tags & {"ready", "serving"}) or last in ("serving", "shutdown")
            row.update(root_cause="", phase=last, early_warning_substring="", fatal_substring="", verdict="ready" if ready else "starting", variant=healthy_end)
        row["spliced"] = spliced
        row["attempt"] = attempt
        return data, row
    raise RuntimeError(f"could not generate log {idx} ({label})")


def generate_corpus(seed: int, count_per_label: int, healthy: int, out_dir: Path, splice_real: list[Path] | None = None) -> list[dict]:
    """Write ``<id>.log`` files and ``labels.csv`` into ``out_dir``; return the label rows."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.log"):
        old.unlink()
    real = load_real_blocks(splice_real, seed) if splice_real else None
    plan: list[tuple[str | None, str]] = []
    for lab in LABELS:
        plan += [(lab, "")] * count_per_label
    ends = ["ready"] * 0
    hr = Random(f"{seed}:healthy-plan")
    for i in range(healthy):
        x = i / max(1, healthy)
        ends.append("ready" if x < 0.55 else ("shutdown" if x < 0.78 else "starting"))
    hr.shuffle(ends)
    plan += [(None, e) for e in ends]
    Random(f"{seed}:order").shuffle(plan)
    rows = []
    for idx, (label, end) in enumerate(plan):
        data, row = generate_one(seed, idx, label, end, real)
        gid = f"g{seed}-{idx:04d}"
        atomic_write_bytes(out_dir / f"{gid}.log", data, fsync=False)
        row["id"] = gid
        rows.append(row)
    # stratified split by seeded hash
    by: dict[str, list[dict]] = {}
    for row in rows:
        by.setdefault(row["root_cause"] or "healthy", []).append(row)
    for grp in by.values():
        grp.sort(key=lambda rw: hashlib.sha256(f"{seed}|split|{rw['id']}".encode()).hexdigest())
        ntrain = round(len(grp) * 0.75)
        for k, rw in enumerate(grp):
            rw["split"] = "train" if k < ntrain else "test"
    cols = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note", "verdict", "split"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        note = (f"seed={seed}; renderer={row['renderer']}; cut={row['cut']}; server={row['server']}; tp={row['tp']}; gpu={row['gpu']}; runs={row['runs']}"
                + (f"; variant={row['variant']}" if row.get("variant") else "") + (f"; spliced={row['spliced']}" if row.get("spliced") else ""))
        row["provenance"] = "generated"
        row["note"] = note
        w.writerow([row["id"], row["root_cause"], row["phase"], row["early_warning_substring"], row["fatal_substring"], "generated", note, row["verdict"], row["split"]])
    atomic_write_text(out_dir / "labels.csv", buf.getvalue())
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.generator.generate", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-label", type=int, default=40)
    ap.add_argument("--healthy", type=int, default=110)
    ap.add_argument("--out", type=Path, default=Path("corpora/generated"))
    ap.add_argument("--splice-real", type=Path, nargs="*", default=None,
                    help="folders with <id>.log + labels.csv of reproduced real failures (e.g. corpora/cpu corpora/gpu); "
                         "exception blocks from their TRAIN split are spliced into some generated logs")
    a = ap.parse_args(argv)
    rows = generate_corpus(a.seed, a.per_label, a.healthy, a.out, a.splice_real)
    size = sum(p.stat().st_size for p in Path(a.out).glob("*.log"))
    print(f"wrote {len(rows)} logs ({size / 1e6:.2f} MB) and labels.csv to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
