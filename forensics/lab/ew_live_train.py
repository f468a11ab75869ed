"""Train and cross-validate the live gate (``early_warnings/live_gate.py``; ``forensics train``
through ``ew_train``, or ``python -m forensics.lab.ew_live_train``).

Every labelled log of ``corpora/public`` and of the project's reproduced corpora (not the
generated one: it is drawn from the precursors' own examples) is replayed as ``watch`` reads it,
with a healthy baseline rebuilt without the log's own group (``ew_heldout``), and the recorder
of the gate on: each precursor line the rules kept quiet comes back with its features. A line is
a positive when it is a failure's labelled early warning and came before the fatal line; a
negative when a healthy log printed it (a quiet line of a failure log that nobody labelled is
left out: nobody said whether it mattered). One group is held out at a time: the gate is fitted
on the others, its bar chosen there (the most labelled warnings added while the lines it adds on
healthy logs stay within ``BUDGET`` a healthy log), and on the held-out group it is scored by the
labelled warnings it adds live (not already live by the rules) and the lines it adds on healthy
logs. It ships only where, held out, it adds more labelled warnings than false ones and the
false live warnings of rules and gate together stay within ``MAX_FALSE_LIVE`` a healthy log.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.atomic import atomic_write_text
from forensics.diagnosis.early_warnings.live_gate import FEATURES, MODEL_PATH, RECORDER

BUDGET = 0.02  # lines the gate may add per healthy log of the training groups
# (ew16, measured, not shipped: fitted on a studied two thirds of families, its held-out bar 0.5 -- the
# same for budgets 0.02-0.03 and for C from 0.01 to 1 -- adds 10 of 157 labelled warnings live and 4 lines
# on 402 healthy logs in those folds, but 13 of 92 and 43 lines on the 435 healthy logs of the third kept
# aside: with the rules' own that is 0.13 false live a healthy log, over issue 28's 0.1.)
MAX_FALSE_LIVE = 0.1  # issue 28: live warnings on healthy logs, rules and gate together, per log
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(4, 20))
PROJECT = ("corpora/cpu", "corpora/gpu", "corpora/gpu-early-warning", "corpora/seeds")


@dataclass
class Log:
    """One log's quiet precursor lines as ``watch`` saw them, with what the rules printed."""
    path: str
    group: str
    healthy: bool
    labelled: bool  # a failure with a labelled early warning
    rules_hit: bool  # the rules printed the labelled warning live
    rules_false: int  # lines the rules printed live on a healthy log
    rows: list[tuple[list[float], bool]] = field(default_factory=list)  # (features, positive) of usable lines
    names: list[str] = field(default_factory=list)  # each usable line's signature and text (what the gate read)
    # every line the recorder saw (the quiet precursor lines and, pool "unusual", the warning lines no
    # precursor names that the general rules kept quiet), with "y": True a labelled warning before the
    # fatal line, False a healthy log's line, None a failure's line nobody labelled
    records: list[dict[str, Any]] = field(default_factory=list)


def _one(row: dict[str, str], group: str, sset: Any) -> Log:
    from forensics.lab.evaluate import _live_hit, _live_warnings, _raw_lines, evidence_names

    rec: list[dict[str, Any]] = []
    token = RECORDER.set(rec)
    try:
        live = _live_warnings(Path(row["_path"]), sset)
    finally:
        RECORDER.reset(token)
    healthy = not row.get("root_cause")
    early, fatal = (row.get("early_warning_substring") or "").strip(), row.get("fatal_substring") or ""
    log = Log(row["_path"], group, healthy, bool(early) and not healthy, _live_hit(row, live),
              len(live) if healthy else 0)
    fatal_at = next((i + 1 for i, t in enumerate(_raw_lines(row["_path"])) if fatal and fatal in t), None)
    seen: set[tuple[str, int]] = set()
    for r in rec:
        key = (r.get("pool", "precursor"), r["line"])
        if key in seen:
            continue
        seen.add(key)
        y = False if healthy else True if log.labelled and evidence_names(early, [r], row["_path"]) and (
            fatal_at is None or r["line"] < fatal_at) else None
        log.records.append({**r, "y": y})
        if key[0] != "precursor":
            continue
        if healthy:
            log.rows.append((r["features"], False))
        elif log.labelled and evidence_names(early, [r], row["_path"]) and (fatal_at is None or r["line"] < fatal_at):
            log.rows.append((r["features"], True))
        else:
            continue
        log.names.append(f"{r['signature']}: {r['text'][:160]}")
    return log


def collect(own: dict[str, set[str]] | None = None, held_baseline: bool = True) -> list[Log]:
    """Every labelled log replayed with its group held out of the healthy baseline (``held_baseline``;
    else the shipped one, as ``rules_holdout`` reads them) and, given ``own`` (family -> its own
    signatures, a ``rules_holdout --json`` file's), each family's logs read without its own
    signatures, as ``rules_holdout`` reads them."""
    from forensics.diagnosis.early_warnings.baseline import BASELINE_PATH, HELD_OUT, from_data
    from forensics.diagnosis.signatures import signature_set
    from forensics.lab.ew_baseline import assemble, scan_all
    from forensics.lab.ew_heldout import REPO, baseline_groups, scored_rows
    from forensics.lab.rules_holdout import reduced_set

    shipped = json.loads(BASELINE_PATH.read_text(encoding="utf-8"))
    groups_of = baseline_groups([REPO / s for s in shipped["sources"] if (REPO / s).is_dir()])
    scans = scan_all(list(groups_of)) if held_baseline else []
    sset = signature_set()
    by_group: dict[str, list[dict[str, str]]] = {}
    for row, group in scored_rows(project=PROJECT):
        by_group.setdefault(group, []).append(row)
    out: list[Log] = []
    os.environ["FORENSICS_EW_LIVE_GATE"] = "off"  # the rules' decisions, not a gate's
    try:
        for group, rows in sorted(by_group.items()):
            read_with = reduced_set(sset, own, group) if own and group in own else sset
            token = HELD_OUT.set(from_data(assemble([s for s in scans if groups_of[s[0]] != group]))) \
                if held_baseline else None
            try:
                out += [_one(r, group, read_with) for r in rows]
            finally:
                if token is not None:
                    HELD_OUT.reset(token)
    finally:
        os.environ.pop("FORENSICS_EW_LIVE_GATE", None)
    return out


def fit(logs: list[Log], seed: int = 0) -> tuple[list[float], float]:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    X = [f for lg in logs for f, _y in lg.rows]
    y = [pos for lg in logs for _f, pos in lg.rows]
    if not any(y) or all(y):
        raise ValueError("the live gate needs labelled warnings and healthy lines among the quiet precursor lines")
    lr = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced", random_state=seed)
    lr.fit(np.array(X), np.array(y))
    return [round(float(w), 5) for w in lr.coef_[0]], round(float(lr.intercept_[0]), 5)


def score(logs: list[Log], weights: list[float], bias: float, threshold: float) -> dict[str, int]:
    """What the gate adds at ``threshold``: labelled warnings newly live, lines on healthy logs."""
    from forensics.diagnosis.early_warnings.live_gate import LiveGate

    gate = LiveGate({"weights": weights, "bias": bias, "threshold": threshold})
    got = {"labelled": 0, "rules_live": 0, "added_live": 0, "healthy": 0, "rules_false": 0, "added_false": 0}
    for lg in logs:
        over = [pos for f, pos in lg.rows if gate.probability(f) >= threshold]
        if lg.healthy:
            got["healthy"] += 1
            got["rules_false"] += lg.rules_false
            got["added_false"] += len(over)
        elif lg.labelled:
            got["labelled"] += 1
            got["rules_live"] += int(lg.rules_hit)
            got["added_live"] += int(not lg.rules_hit and any(over))
    return got


def choose_threshold(logs: list[Log], weights: list[float], bias: float) -> float:
    """The lowest bar whose added healthy lines stay within ``BUDGET`` a healthy log of ``logs``
    (the most labelled warnings added; ties: the higher bar)."""
    best, key = 1.01, (0, 0.0)
    for t in THRESHOLDS:
        s = score(logs, weights, bias, t)
        if s["added_false"] <= BUDGET * max(s["healthy"], 1) and (s["added_live"], t) > key:
            best, key = t, (s["added_live"], t)
    return best


def crossval(logs: list[Log], seed: int = 0) -> dict[str, Any]:
    """One group held out at a time: the gate fitted and its bar chosen on the others. Each fold's
    held-out group is also scored at every bar (``by_bar``): the shipped bar is chosen there."""
    per: dict[str, Any] = {}
    total: dict[str, int] = {}
    by_bar: dict[float, dict[str, int]] = {t: {} for t in THRESHOLDS}
    public: dict[float, dict[str, int]] = {t: {} for t in THRESHOLDS}  # the public families' folds only
    for g in sorted({lg.group for lg in logs}):
        train = [lg for lg in logs if lg.group != g]
        test = [lg for lg in logs if lg.group == g]
        w, b = fit(train, seed)
        t = choose_threshold(train, w, b)
        per[g] = {"threshold": t, **score(test, w, b, t)}
        for k, v in per[g].items():
            if k != "threshold":
                total[k] = total.get(k, 0) + v
        for bar in THRESHOLDS:
            for k, v in score(test, w, b, bar).items():
                by_bar[bar][k] = by_bar[bar].get(k, 0) + v
                if not g.startswith("project:"):
                    public[bar][k] = public[bar].get(k, 0) + v
    return {"groups": per, "overall": total, "by_bar": {str(t): v for t, v in by_bar.items()},
            "by_bar_public": {str(t): v for t, v in public.items()}}


def held_out_bar(cv: dict[str, Any]) -> float:
    """The bar the shipped gate uses, chosen on the folds' held-out groups (each scored by a gate
    that never read it), not on the logs the gate is fitted on: the lowest bar whose added lines on
    held-out healthy logs stay within ``BUDGET`` a log, the most labelled warnings added held out
    (ties: the higher bar). 1.01 (never) where no bar adds a labelled warning within the budget."""
    best, key = 1.01, (0, 0.0)
    for bar, s in cv["by_bar"].items():
        t = float(bar)
        if s["added_false"] <= BUDGET * max(s["healthy"], 1) and s["added_live"] > 0 and (s["added_live"], t) > key:
            best, key = t, (s["added_live"], t)
    return best


def train_live_gate(out: Path = MODEL_PATH, seed: int = 0, logs: list[Log] | None = None) -> dict[str, Any]:
    """Fit, cross-validate and write the gate (its card: data, per-group held-out figures)."""
    logs = logs if logs is not None else collect()
    cv = crossval(logs, seed)
    o = cv["overall"]
    w, b = fit(logs, seed)
    t = held_out_bar(cv)
    at = cv["by_bar"].get(str(t), o)  # the figures held out at the bar it ships with
    ships = t <= 1.0 and at["added_live"] > at["added_false"] and \
        at["rules_false"] + at["added_false"] <= MAX_FALSE_LIVE * max(at["healthy"], 1)
    rows = [pos for lg in logs for _f, pos in lg.rows]
    meta = {"ships": bool(ships), "logs": len(logs), "quiet_lines": len(rows), "positives": sum(rows),
            "seed": seed, "budget": BUDGET, "crossval": cv}
    atomic_write_text(out, json.dumps({"features": list(FEATURES), "weights": w, "bias": b, "threshold": t,
                                       "meta": meta}, indent=0) + "\n")
    return meta


def table(meta: dict[str, Any]) -> str:
    head = f"{'group':<28}{'bar':>6}{'rules live':>12}{'added live':>12}{'rules false':>13}{'added false':>13}"
    lines = [head]

    def line(name: str, g: dict[str, Any], bar: str) -> str:
        return (f"{name:<28}{bar:>6}{g['rules_live']:>6}/{g['labelled']:<5}{g['added_live']:>12}"
                f"{g['rules_false']:>7}/{g['healthy']:<5}{g['added_false']:>13}")
    for name, g in meta["crossval"]["groups"].items():
        if g["labelled"] or g["added_false"] or g["rules_false"]:
            lines.append(line(name, g, f"{g['threshold']:.2f}"))
    lines.append(line("all groups", meta["crossval"]["overall"], ""))
    lines.append(f"quiet precursor lines {meta['quiet_lines']} ({meta['positives']} labelled); "
                 f"{'ships' if meta['ships'] else 'not shipped'}")
    return "\n".join(lines)


def aside_report(logs: list[Log], aside: frozenset[str], seed: int = 0) -> dict[str, Any]:
    """The gate as a session that keeps a third of families aside measures it: cross-validated (one
    group held out at a time) on the other groups only, its bar chosen on their held-out folds; the
    aside families then scored, as figures, by the gate fitted on all the others at that bar. A gain
    the studied folds show and the aside families do not is a gain of the families read."""
    studied = [lg for lg in logs if lg.group not in aside]
    cv = crossval(studied, seed)
    bar = held_out_bar(cv)
    folds: dict[str, int] = {}
    for g, v in cv["groups"].items():
        if not g.startswith("project:"):
            for k, n in v.items():
                if k != "threshold":
                    folds[k] = folds.get(k, 0) + n
    w, b = fit(studied, seed)
    return {"bar": bar, "held_out_at_bar": cv["by_bar"].get(str(bar)), "studied_public_folds": folds,
            "aside": score([lg for lg in logs if lg.group in aside], w, b, bar)}


def holdout_report(logs: list[Log], aside: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The cross-validated gate, rules and gate together, over the public families only (the
    project's corpora train it but are not scored), at every bar and at each fold's own bar:
    live labelled warnings and false live lines on healthy logs, overall and on ``aside``."""
    cv = crossval(logs)
    out: dict[str, Any] = {"fold_bars": {}, "fold_bars_aside": {}}
    for g, v in cv["groups"].items():
        if g.startswith("project:"):
            continue
        for key in ("fold_bars", *(("fold_bars_aside",) if g in aside else ())):
            for k, n in v.items():
                if k != "threshold":
                    out[key][k] = out[key].get(k, 0) + n
    out["by_bar"] = cv["by_bar_public"]
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aside", type=Path, help="families kept out of the fit and reported apart (one a line "
                                               "after a first line that says how they were drawn); writes no model")
    ap.add_argument("--holdout", type=Path, help="a rules_holdout --json file: read each family without its own "
                                                 "signatures and with the shipped baseline, as rules_holdout does, and "
                                                 "print the gate's cross-validated public figures; writes no model")
    args = ap.parse_args(argv)
    if args.holdout:
        data = json.loads(args.holdout.read_text(encoding="utf-8"))
        own = {f: set(v.get("own") or ()) for f, v in data["families"].items()}
        aside = frozenset(x.strip() for x in args.aside.read_text(encoding="utf-8").splitlines()[1:] if x.strip()) \
            if args.aside else frozenset()
        print(json.dumps(holdout_report(collect(own, held_baseline=False), aside), indent=1))
        return 0
    if args.aside:
        aside = frozenset(x.strip() for x in args.aside.read_text(encoding="utf-8").splitlines()[1:] if x.strip())
        print(json.dumps(aside_report(collect(), aside), indent=1))
        return 0
    meta = train_live_gate()
    print(table(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
