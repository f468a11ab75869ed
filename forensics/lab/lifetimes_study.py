"""``python -m forensics.lab.lifetimes_study``: how a log's process lifetimes are judged (issue 27 item 3).

For every labelled public log (or the batches named), the lifetimes the pipeline splits it into, the
one the answer judges (the last failed one, else the last one), and for the misses that matter to
issue 27 (a failure not called failed, a healthy log called failed) the cause, decided by code:

- ``no death candidate``: nothing in the judged lifetime that the death detector reads (or it does
  not read that lifetime at all: ready, stopped, shut down);
- ``candidate under the threshold``: the detector read lines, none scored over its threshold;
- ``death in another lifetime``: the labelled fatal line lies in a lifetime other than the judged one;
- ``survived in a later lifetime``: a lifetime after the failed one reached readiness or served;
- ``progress after the error``: the judged lifetime served or reached readiness after its failure line;
- ``other``.

It also counts, over every labelled log, the shape the survival rule reads: an earlier lifetime
called failed and a later one that reached readiness, by label (failure or healthy) — the figure
that says whether the labels follow a log's final state.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from forensics.atomic import atomic_write_text


def _lifetimes(path: str, sset: Any, clf: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    from forensics.errors import InputError
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    kept: list[Any] = []
    try:
        res = diagnose_source(Source(path, Path(path)), sset=sset, classifier=clf, keep_incidents=kept)
    except InputError:
        return None, []
    return res, kept


def _fatal_line(path: str, fatal: str) -> int | None:
    from forensics.lab.miss_anatomy import fatal_lines

    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    return next(iter(fatal_lines(fatal, lines)), None)


def _detector(inc: Any) -> tuple[int, float | None, float]:
    from forensics.diagnosis.decision import death

    model = death.death_model()
    if model is None:
        return 0, None, 1.0
    up = not death.consulted(inc) and model.threshold_up is not None and death.consulted_up(inc)
    if not (up or death.consulted(inc)):
        return 0, None, model.threshold
    cands = list(death.candidates(inc, up))
    best = max((model.score(ev.text) for ev in cands), default=None)
    return len(cands), best, model.threshold_up if up else model.threshold


def describe(row: dict[str, str], res: dict[str, Any] | None, incs: list[Any]) -> dict[str, Any]:
    """One log's lifetimes, the judged one, and (for a miss) its cause."""
    from forensics.diagnosis.decision import death

    answers = (res or {}).get("incidents") or []
    judged = (res or {}).get("incident")
    lts = []
    for inc, ans in zip(incs, answers):
        n, best, thr = _detector(inc)
        lts.append({"index": inc.index, "lines": [inc.start_line, inc.end_line], "verdict": ans.get("verdict"),
                    "consulted": bool(death.consulted(inc) or death.consulted_up(inc)),
                    "ready_line": inc.ready_line, "last_activity": inc.last_activity_line,
                    "candidates": n, "best": None if best is None else round(best, 3), "threshold": round(thr, 3)})
    out = {"path": row["_path"], "truth": row.get("root_cause") or row.get("verdict") or "ready",
           "verdict": (res or {}).get("verdict"), "judged": judged, "lifetimes": lts}
    fatal = _fatal_line(row["_path"], row.get("fatal_substring") or "")
    failure = bool(row.get("root_cause"))
    if failure and out["verdict"] != "failed":
        out["cause"] = _why_not_failed(lts, judged, fatal)
    elif not failure and out["verdict"] == "failed":
        out["cause"] = _why_failed(lts, judged)
    return out


def _why_not_failed(lts: list[dict[str, Any]], judged: int | None, fatal: int | None) -> str:
    by_line = [lt for lt in lts if fatal is not None and lt["lines"][0] <= fatal <= lt["lines"][1]]
    if by_line and by_line[0]["index"] != judged:
        return "death in another lifetime"
    lt = next((x for x in lts if x["index"] == judged), None)
    if lt is None:
        return "no death candidate"
    if not lt["candidates"]:
        # why the detector had nothing to read: it does not read a lifetime that became ready (or
        # answered requests, was asked to stop, shut down); else every line was below error level,
        # further back than its tail or before the last change of phase
        return "no death candidate: " + ("not read (stopped or shut down; ready, where the model has no bar after readiness)" if not lt["consulted"]
                                         else "read, nothing to score")
    return "candidate under the threshold"


def _why_failed(lts: list[dict[str, Any]], judged: int | None) -> str:
    lt = next((x for x in lts if x["index"] == judged), None)
    later = [x for x in lts if judged is not None and x["index"] > judged]
    if any(x["ready_line"] is not None or x["last_activity"] for x in later):
        return "survived in a later lifetime"
    if lt is not None and lt["ready_line"] is not None and lt["last_activity"] > lt["lines"][0]:
        return "progress after the error"
    return "other"


def survival_shape(desc: dict[str, Any]) -> bool:
    """An earlier lifetime called failed and a later one that reached readiness or served."""
    lts = desc["lifetimes"]
    for k, lt in enumerate(lts):
        if lt["verdict"] == "failed" and any(x["ready_line"] is not None or x["last_activity"] for x in lts[k + 1:]):
            return True
    return False


def run(batches: list[str] | None, families: set[str] | None, exclude: set[str],
        held_out: bool = False) -> dict[str, Any]:
    """``held_out``: each family's logs read as ``rules_holdout`` reads them (its own signatures out,
    a classifier that never read it)."""
    from forensics.diagnosis.signatures import signature_set
    from forensics.lab.ew_heldout import scored_rows
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    sets: Any = lambda fam: sset  # noqa: E731
    clfs: Any = lambda fam: clf  # noqa: E731
    if held_out:
        from forensics.lab.rules_holdout import held_out_signatures
        from forensics.lab.train import held_out_classifiers
        sets, clfs = held_out_signatures(), held_out_classifiers(clf)
    public = [Path(b) for b in batches] if batches else None
    rows = [(r, g) for r, g in scored_rows(public=public, project=()) if g not in exclude
            and (families is None or g in families)]
    logs, misses = [], []
    for row, fam in rows:
        res, incs = _lifetimes(row["_path"], sets(fam), clfs(fam))
        desc = describe(row, res, incs)
        desc["family"] = fam
        desc["survival_shape"] = survival_shape(desc)
        logs.append({k: desc[k] for k in ("path", "family", "truth", "verdict", "survival_shape")}
                    | {"lifetimes": len(desc["lifetimes"])})
        if "cause" in desc:
            misses.append(desc)
    shape = {"failure": sum(1 for x in logs if x["survival_shape"] and x["truth"] not in ("ready", "starting")),
             "healthy": sum(1 for x in logs if x["survival_shape"] and x["truth"] in ("ready", "starting"))}
    return {"logs": logs, "misses": misses, "survival_shape": shape}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="*", help="batch folders (default: every public batch)")
    ap.add_argument("--exclude", default="", help="file of families to leave out (one a line)")
    ap.add_argument("--json", dest="json_out", help="write the findings here")
    ap.add_argument("--only", help="file of the only families to read (one a line)")
    ap.add_argument("--counts", action="store_true", help="print the causes' counts, no log (a third kept aside)")
    ap.add_argument("--held-out", action="store_true", help="each family without its own signatures")
    a = ap.parse_args(argv)
    exclude = set(Path(a.exclude).read_text().splitlines()) if a.exclude else set()
    only = set(Path(a.only).read_text().splitlines()) if a.only else None
    got = run(a.batches or None, only, exclude, a.held_out)
    if a.counts:
        causes = Counter(f"{m['cause']} ({'healthy' if m['truth'] in ('ready', 'starting') else 'failure'})"
                         for m in got["misses"])
        print(dict(causes), "lifetimes > 1:", sum(1 for x in got["logs"] if x["lifetimes"] > 1), "of", len(got["logs"]))
        got = {k: v for k, v in got.items() if k != "misses"} | {"causes": dict(causes)}
    for m in got.get("misses", ()):
        print(f"{m['cause']:60} {m['truth']:24} {m['verdict']:10} {m['path']}")
    print("survival shape (an earlier lifetime failed, a later one up):", got["survival_shape"])
    if a.json_out:
        atomic_write_text(Path(a.json_out), json.dumps(got, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
