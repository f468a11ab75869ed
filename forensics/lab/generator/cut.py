"""Cutting a rendered log (``tail``, ``head -c``, ``grep``) and splicing real
exception blocks (train split only) into generated ones."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path
from random import Random

from .catalog import Failure
from .records import LogState, Rec
from .render import ANSI_RE

MAX_BYTES = 16000
GREP_RE = re.compile(r"error|assert|traceback|fatal", re.I)


def apply_cut(lines: list[str], owners: list[Rec], rng: Random, fatal: str, failed: bool, renderer: str = "") -> tuple[bytes, str, list[Rec]]:
    n = len(lines)
    choice = rng.choices(["none", "tail", "head-c", "grep"], weights=[62, 20, 10, 8] if failed else [75, 18, 7, 0])[0]
    fatal_idx = [i for i, o in enumerate(owners) if o.tag == "fatal"]
    if renderer == "json":
        choice = "tail"     # `journalctl -o json -n N`: JSON exports are usually windows
    if choice == "tail":
        k = rng.randint(30, 200) if renderer != "json" else rng.randint(20, 35)
        if failed and fatal_idx:
            k = max(k, n - fatal_idx[0] + rng.randint(0, 20))
        if k < n:
            sel = lines[-k:]
            return ("\n".join(sel) + "\n").encode("utf-8", "surrogateescape"), f"tail-n{k}", owners[-k:]
    if choice == "grep" and failed:
        idx = [i for i, ln in enumerate(lines) if GREP_RE.search(ln)]
        if idx and any(fatal in lines[i] for i in idx):
            return ("\n".join(lines[i] for i in idx) + "\n").encode("utf-8", "surrogateescape"), "grep-iE", [owners[i] for i in idx]
    full = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    if choice == "head-c":
        if failed:
            last_f = max(fatal_idx) if fatal_idx else n - 1
            start = len(("\n".join(lines[:last_f + 1]) + "\n").encode("utf-8", "surrogateescape"))
            if start < len(full) - 10:
                cut = rng.randint(start + 5, len(full) - 2)
                return full[:cut], f"head-c{cut}", owners
        else:
            cut = rng.randint(len(full) // 3, len(full) - 2)
            # keep track of owners whose line starts before the cut
            pos, keep = 0, []
            for ln, o in zip(lines, owners):
                if pos >= cut:
                    break
                keep.append(o)
                pos += len(ln.encode("utf-8", "surrogateescape")) + 1
            return full[:cut], f"head-c{cut}", keep
    return full, "none", owners



def load_real_blocks(roots: list[Path], seed: int) -> dict[str, list[dict]]:
    """Exception blocks from reproduced real failures (TRAIN split only)."""
    out: dict[str, list[dict]] = {}
    for root in roots:
        lab = root / "labels.csv"
        if not lab.exists():
            continue
        with lab.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            split = row.get("split") or ("train" if split_of(seed, f"{root.name}/{row.get('id')}", 0.75) else "test")
            if split != "train" or not row.get("root_cause") or not row.get("fatal_substring"):
                continue
            p = root / f"{row['id']}.log"
            if not p.exists():
                continue
            text = ANSI_RE.sub("", p.read_bytes().decode("utf-8", "replace"))
            lns = [ln.rstrip("\r") for ln in text.split("\n")]
            hit = next((i for i, ln in enumerate(lns) if row["fatal_substring"] in ln), None)
            if hit is None:
                continue
            start = hit
            for j in range(hit, max(-1, hit - 80), -1):
                if "Traceback (most recent call last)" in lns[j]:
                    start = j
                    break
            end = hit + 1
            while end < len(lns) and end < hit + 6 and lns[end].strip() and not lns[end].startswith("["):
                end += 1
            block = lns[start:end][-70:]
            out.setdefault(row["root_cause"], []).append({"src": f"{root.parent.name}/{root.name}/{row['id']}", "lines": block, "fatal": row["fatal_substring"]})
    return out


def split_of(seed: int, key: str, frac: float) -> bool:
    h = int(hashlib.sha256(f"{seed}|{key}".encode()).hexdigest()[:12], 16)
    return (h % 10000) / 10000 < frac


def splice_block(st: LogState, f: Failure, blk: dict) -> None:
    """Insert a real exception block after the last fatal record; its proving line becomes the label's."""
    fatal_recs = [i for i, rc in enumerate(st.recs) if rc.tag == "fatal"]
    if fatal_recs:
        pos = fatal_recs[-1] + 1
        t = st.recs[fatal_recs[-1]].t
        new = [Rec(t + 0.001 * k, ln, "app", st.main_pid, f.phase, "fatal" if blk["fatal"] in ln else "", st.recs[fatal_recs[-1]].boot) for k, ln in enumerate(blk["lines"])]
        st.recs[pos:pos] = new
        f.fatal = blk["fatal"]
