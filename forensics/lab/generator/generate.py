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
from pathlib import Path
from random import Random

from forensics.atomic import atomic_write_bytes, atomic_write_text

from .catalog import GPUS, HOSTNAMES, MODELS, SGLANG_VERSIONS, SITE_ROOTS, TORCH_BUILDS, USERS, VLLM_VERSIONS, Ctx, Failure, Precursor, pick
from .cut import MAX_BYTES, apply_cut, load_real_blocks, splice_block
from .failures import BUILDERS, LABELS
from .labels import assign_splits, failure_labels, healthy_labels, labels_csv, survives
from .records import Emitter, LogState
from .render import JOURNALD, RENDER_WEIGHTS, RENDERERS, render
from .run import Run
from .service import after_death, new_log_state, shutdown, systemd_start
from .pastes import write_pastes
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


def _draw_precursor(rng: Random, c: Ctx, failure: Failure | None) -> Precursor | None:
    """Most failures announce themselves; kernel and systemd precursors need a journal."""
    if not (failure and failure.precursor and rng.random() < 0.85):
        return None
    if failure.precursor.style in ("kernel", "systemd") and not c.journald:
        return None
    return failure.precursor


def build_log(rng: Random, label: str | None, renderer: str, healthy_end: str = "") -> tuple[LogState, dict]:
    c = make_ctx(rng, label, renderer)
    st, unit_name = new_log_state(rng, c, renderer)
    em0 = Emitter(st)
    info: dict = {"ctx": c, "runs": 1}
    # Half the failures speak the programs' own wording (catalogue, signature examples).
    failure = reword(c, BUILDERS[label](c), 0.5) if label else None
    precursor = _draw_precursor(rng, c, failure)
    info["failure"] = failure
    info["precursor"] = precursor
    stop_at = None
    if healthy_end == "starting":
        stop_at = rng.choice(["load-weights", "memory-plan", "cuda-graph-capture", "warmup", "ready", "serving"][:6])
    if c.journald:
        systemd_start(em0, st, rng, unit_name)
    run = Run(st, failure, stop_at, precursor)
    if failure and precursor and precursor.style == "systemd":
        run.maybe_precursor("launch")
    outcome = run.run()
    info["outcome"] = outcome
    if outcome == "failed":
        after_death(run, rng, renderer, unit_name, info)
    elif outcome == "ready" and healthy_end == "shutdown":
        shutdown(run, rng, unit_name)
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
            splice_block(st, f, blk)
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
            row.update(failure_labels(f, info["precursor"], data, renderer))
        else:
            if label:
                continue
            row.update(healthy_labels(kept, healthy_end))
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
    # Short logs of other servers in the catalogue's wording (pastes.py): training
    # material only, as their labels are the catalogue's rule-guesses.
    pastes = write_pastes(seed, out_dir, max(1, count_per_label * 3 // 4), list(LABELS))
    assign_splits(rows, seed)
    rows += [dict(row, split="train") for row in pastes]
    atomic_write_text(out_dir / "labels.csv", labels_csv(rows, seed))
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
