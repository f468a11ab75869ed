"""Train and cross-validate the early-warning listing (``forensics train``; or
``python -m forensics.lab.ew_train``).

Every labelled failure of ``corpora/public`` and of the project's corpora is
diagnosed once with the recorder of ``early_warnings/learned.py`` on: each
failure's scored candidates come back with their features. A candidate is a
positive when the labelled early warning is a substring of its line; failures
labelled with no warning give negatives only (listing nothing there is right).
One group (a public server family, or a project corpus) is held out at a time;
on it the learned listing and the hand-set bar are scored by the same measures:
labelled warnings listed (retrospective recall), warnings listed per failure,
and listed lines that are not the labelled one. The model ships only where it
lists at least as many labelled warnings as the bar, held out, and no more
than ``MAX_PER_FAILURE`` per failure on average.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forensics.atomic import atomic_write_text
from forensics.diagnosis.early_warnings.learned import FEATURES, MODEL_PATH, RECORDER, candidate_rows
from forensics.lab.evaluate import evidence_names, read_labels
from forensics.lab.public_corpus import PUBLIC_DIR, batch_dirs, server_family

REPO = Path(__file__).resolve().parents[2]
PROJECT = ("corpora/generated", "corpora/cpu", "corpora/gpu", "corpora/gpu-early-warning", "corpora/seeds")
MAX_PER_FAILURE = 3.0
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(2, 19))


@dataclass
class Failure:
    """One labelled failure's scored candidates, as the linker saw them."""
    source: str
    group: str
    warning: str  # the labelled early warning ('' when none was labelled)
    rows: list[tuple[list[float], bool, bool]]  # (features, is the labelled warning, listed by the hand-set bar)
    templates: list[str]


def _sources(public: list[Path] | None) -> list[tuple[dict[str, str], str]]:
    out: list[tuple[dict[str, str], str]] = []
    for d in public if public is not None else batch_dirs(PUBLIC_DIR):
        out += [(r, server_family(r.get("server") or "?")) for r in read_labels(d) if r.get("root_cause")]
    for folder in PROJECT:
        d = REPO / folder
        if (d / "labels.csv").exists():
            out += [(r, f"project:{d.name}") for r in read_labels(d) if r.get("root_cause")]
    return out


def _one(row: dict[str, str], group: str, sset: Any, clf: Any) -> Failure | None:
    from forensics.diagnosis.early_warnings.candidates import template
    from forensics.diagnosis.early_warnings.linking import _rank
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    records: list = []
    token = RECORDER.set(records)
    try:
        path = Path(row["_path"])
        diagnose_source(Source(str(path), path), sset=sset, classifier=clf)
    except Exception:  # noqa: BLE001 - an unreadable training log is left out
        return None
    finally:
        RECORDER.reset(token)
    if not records:
        return None
    label, scored = records[-1]  # the lifetime that failed last: the one a log's label describes
    warning = (row.get("early_warning_substring") or "").strip()
    by_line = {w["line"]: w for w in scored}
    listed_bar = {w["line"] for w in _rank({w["line"]: dict(w) for w in scored})}  # the hand-set listing
    rows, templates = [], []
    for w, f in candidate_rows(by_line, label):
        # the labelled warning names the candidate by its text or by its line (a label may quote the prefix)
        named = bool(warning) and evidence_names(warning, [w], row["_path"])
        rows.append((f, named, w["line"] in listed_bar))
        templates.append(template(w["text"]))
    return Failure(row["_path"], group, warning, rows, templates)


def collect(public: list[Path] | None = None) -> list[Failure]:
    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import load_classifier

    os.environ["FORENSICS_EW_MODEL"] = "off"  # the hand-set bar's candidates, not a model's
    try:
        sset, clf = signature_set(), load_classifier(True)
        got = [_one(row, group, sset, clf) for row, group in _sources(public)]
        return [g for g in got if g is not None]
    finally:
        os.environ.pop("FORENSICS_EW_MODEL", None)


def fit(failures: list[Failure], seed: int = 0) -> tuple[list[float], float]:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    X = [f for fl in failures for f, _pos, _bar in fl.rows]
    y = [pos for fl in failures for _f, pos, _bar in fl.rows]
    if not any(y) or all(y):
        raise ValueError("the early-warning listing needs labelled warnings and other candidates")
    lr = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced", random_state=seed)
    lr.fit(np.array(X), np.array(y))
    return [round(float(w), 5) for w in lr.coef_[0]], round(float(lr.intercept_[0]), 5)


def _listed(fl: Failure, probs: list[float], threshold: float) -> list[int]:
    """Indices listed: at or above ``threshold``, one per template, the 3 most probable."""
    out, seen, ranked = [], set(), []
    for i in sorted(range(len(probs)), key=lambda i: -probs[i]):
        if fl.templates[i] not in seen:
            ranked.append(i)
            seen.add(fl.templates[i])
    out = [i for i in ranked if probs[i] >= threshold][:3]
    # as at diagnosis time: a strong precursor is listed beyond the three (hand-set score >= 5)
    return out + [i for i in ranked[3:6] if fl.rows[i][0][0] >= 5.0 and i not in out]


def score(failures: list[Failure], listed: list[list[int]]) -> dict[str, Any]:
    """Labelled warnings found, lines listed per failure, listed lines that are not the labelled one."""
    labelled = [i for i, fl in enumerate(failures) if fl.warning]
    found = sum(any(failures[i].rows[j][1] for j in listed[i]) for i in labelled)
    n_listed = sum(len(x) for x in listed)
    return {"failures": len(failures), "labelled": len(labelled), "found": found,
            "per_failure": round(n_listed / len(failures), 3) if failures else 0.0,
            "other_lines": sum(sum(not failures[i].rows[j][1] for j in x) for i, x in enumerate(listed))}


def _probs(weights: list[float], bias: float, fl: Failure) -> list[float]:
    from forensics.diagnosis.early_warnings.learned import ListingModel

    m = ListingModel({"weights": weights, "bias": bias, "threshold": 0.5})
    return [m.probability(f) for f, _pos, _bar in fl.rows]


def choose_threshold(failures: list[Failure], weights: list[float], bias: float) -> float:
    """The bar on the probability that lists the most labelled warnings of ``failures`` while
    listing no more lines in all than the hand-set bar does (ties: the higher bar)."""
    probs = [_probs(weights, bias, fl) for fl in failures]
    bar_lines = sum(sum(b for _f, _p, b in fl.rows) for fl in failures)
    best, best_key = THRESHOLDS[-1], (-1, 0)
    for t in THRESHOLDS:
        got = score(failures, [_listed(fl, p, t) for fl, p in zip(failures, probs)])
        if got["per_failure"] * len(failures) <= max(bar_lines, 1) and (got["found"], t) > best_key:
            best, best_key = t, (got["found"], t)
    return best


def crossval(failures: list[Failure], seed: int = 0) -> dict[str, Any]:
    """One group held out at a time: the learned listing and the hand-set bar on it."""
    groups = sorted({fl.group for fl in failures})
    learned_listed: dict[int, list[int]] = {}
    per: dict[str, Any] = {}
    for g in groups:
        train = [fl for fl in failures if fl.group != g]
        test_idx = [i for i, fl in enumerate(failures) if fl.group == g]
        w, b = fit(train, seed)
        t = choose_threshold(train, w, b)
        for i in test_idx:
            learned_listed[i] = _listed(failures[i], _probs(w, b, failures[i]), t)
        test = [failures[i] for i in test_idx]
        per[g] = {"learned": score(test, [learned_listed[i] for i in test_idx]),
                  "bar": score(test, [[j for j, r in enumerate(fl.rows) if r[2]] for fl in test])}
    everyone = list(range(len(failures)))
    out = {"groups": per,
           "overall": {"learned": score(failures, [learned_listed[i] for i in everyone]),
                       "bar": score(failures, [[j for j, r in enumerate(fl.rows) if r[2]] for fl in failures])}}
    pub = [i for i in everyone if not failures[i].group.startswith("project:")]
    out["overall_public"] = {"learned": score([failures[i] for i in pub], [learned_listed[i] for i in pub]),
                             "bar": score([failures[i] for i in pub],
                                          [[j for j, r in enumerate(failures[i].rows) if r[2]] for i in pub])}
    return out


def train_listing_model(out: Path = MODEL_PATH, seed: int = 0, failures: list[Failure] | None = None,
                        recall: bool = True) -> dict[str, Any]:
    """Fit, cross-validate and write the listing model; with ``recall``, its card also holds
    the early warnings found and printed live per held-out family (``ew_heldout``), and the live
    gate is trained beside it (``ew_live_train``: its own file, its figures in this card too)."""
    failures = failures if failures is not None else collect()
    cv = crossval(failures, seed)
    w, b = fit(failures, seed)
    t = choose_threshold(failures, w, b)
    learned, bar = cv["overall"]["learned"], cv["overall"]["bar"]
    ships = learned["found"] >= bar["found"] and learned["per_failure"] <= MAX_PER_FAILURE \
        and learned["other_lines"] <= bar["other_lines"]
    data = {"features": list(FEATURES), "weights": w, "bias": b, "threshold": t,
            "meta": {"ships": bool(ships), "failures": len(failures),
                     "labelled": sum(bool(fl.warning) for fl in failures), "seed": seed, "crossval": cv}}
    if recall:
        from forensics.lab.ew_heldout import held_out_recall

        data["meta"]["held_out_recall"] = held_out_recall()  # type: ignore[index]
        if out == MODEL_PATH:  # (a listing model written elsewhere is an experiment: the shipped gate stays)
            from forensics.lab.ew_live_train import train_live_gate

            gate = train_live_gate(seed=seed)
            data["meta"]["live_gate"] = {"ships": gate["ships"], **gate["crossval"]["overall"]}  # type: ignore[index]
    atomic_write_text(out, json.dumps(data, indent=0) + "\n")
    return data["meta"]


def recall_table(report: dict[str, Any]) -> str:
    """The held-out report as a table: one row a group with labelled warnings or healthy logs, then the totals."""
    head = f"{'group':<28}{'found':>9}{'live':>9}{'per failure':>13}{'false live':>12}   (shipped baseline)"
    rows = [head]

    def line(name: str, g: dict[str, Any]) -> str:
        h, s = g["held_out"], g["shipped"]
        return (f"{name:<28}{h['found']:>4}/{h['labelled']:<4}{h['live']:>4}/{h['labelled']:<4}"
                f"{h['per_failure'] if h['per_failure'] is not None else '-':>13}"
                f"{h['false_live']:>6}/{h['healthy']:<5}   ({s['found']}, {s['live']}, {s['false_live']})")
    for name, g in report["groups"].items():
        if g["held_out"]["labelled"] or g["held_out"]["false_live"] or g["shipped"]["false_live"]:
            rows.append(line(name, g))
    rows.append(line("public families", report["overall_public"]))
    rows.append(line("all groups", report["overall"]))
    return "\n".join(rows)


def main() -> None:
    meta = train_listing_model()
    print(json.dumps({"ships": meta["ships"], **{k: meta["crossval"][k] for k in ("overall", "overall_public")}}, indent=1))
    print(recall_table(meta["held_out_recall"]))
    if "live_gate" in meta:
        g = meta["live_gate"]
        print(f"live gate, held out: {g['added_live']} labelled warnings added live ({g['rules_live']} of "
              f"{g['labelled']} by the rules), {g['added_false']} lines added on {g['healthy']} healthy logs "
              f"({g['rules_false']} by the rules); {'ships' if g['ships'] else 'not shipped'}")


if __name__ == "__main__":
    main()
