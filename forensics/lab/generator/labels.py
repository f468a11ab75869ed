"""Labels: what survives the rendering and the cut, and the labels.csv table."""

from __future__ import annotations

import csv
import hashlib
import io
import json

from .catalog import Failure, Precursor
from .records import Rec
from .render import ANSI_RE


def decoded_lines(data: bytes, renderer: str) -> list[str]:
    text = data.decode("utf-8", "replace")
    out = []
    for ln in text.split("\n"):
        if renderer == "json" and ln.startswith("{"):
            try:
                o = json.loads(ln)
                m = o.get("MESSAGE")
                if isinstance(m, list):
                    m = bytes(m).decode("utf-8", "replace")
                ln = m or ""
            except ValueError:
                pass
        out.append(ANSI_RE.sub("", ln))
    return out


def survives(sub: str, data: bytes, renderer: str) -> bool:
    if not sub:
        return False
    return any(sub in ln for ln in decoded_lines(data, renderer))


def failure_labels(f: Failure, pre: Precursor | None, data: bytes, renderer: str) -> dict:
    """The label columns of a failed log whose proving line survived; the early
    warning only where it survived too."""
    ew = pre.substring if pre else ""
    if ew and not survives(ew, data, renderer):
        ew = ""
    return dict(root_cause=f.label, phase=f.phase, early_warning_substring=ew, fatal_substring=f.fatal, verdict="failed", variant=f.variant)


def healthy_labels(kept: list[Rec], healthy_end: str) -> dict:
    """The label columns of a healthy log: the last phase its kept lines reached, ready or still starting."""
    phases = [o.phase for o in kept if o.src == "app" and o.phase]
    tags = {o.tag for o in kept}
    last = phases[-1] if phases else "launch"
    if any(o.phase == "shutdown" for o in kept):
        last = "shutdown"
    ready = bool(tags & {"ready", "serving"}) or last in ("serving", "shutdown")
    return dict(root_cause="", phase=last, early_warning_substring="", fatal_substring="", verdict="ready" if ready else "starting", variant=healthy_end)


def assign_splits(rows: list[dict], seed: int) -> None:
    """Stratified train/test split (3:1 per root cause) by a seeded hash of the id."""
    by: dict[str, list[dict]] = {}
    for row in rows:
        by.setdefault(row["root_cause"] or "healthy", []).append(row)
    for grp in by.values():
        grp.sort(key=lambda rw: hashlib.sha256(f"{seed}|split|{rw['id']}".encode()).hexdigest())
        ntrain = round(len(grp) * 0.75)
        for k, rw in enumerate(grp):
            rw["split"] = "train" if k < ntrain else "test"


LABEL_COLUMNS = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note", "verdict", "split"]


def labels_csv(rows: list[dict], seed: int) -> str:
    """The ``labels.csv`` text; each row gains its provenance and note columns."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LABEL_COLUMNS)
    for row in rows:
        note = (f"seed={seed}; renderer={row['renderer']}; cut={row['cut']}; server={row['server']}; tp={row['tp']}; gpu={row['gpu']}; runs={row['runs']}"
                + (f"; variant={row['variant']}" if row.get("variant") else "") + (f"; spliced={row['spliced']}" if row.get("spliced") else ""))
        row["provenance"] = "generated"
        row["note"] = note
        w.writerow([row["id"], row["root_cause"], row["phase"], row["early_warning_substring"], row["fatal_substring"], "generated", note, row["verdict"], row["split"]])
    return buf.getvalue()
