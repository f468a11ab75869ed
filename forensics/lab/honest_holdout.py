"""``python -m forensics.lab.honest_holdout``: the held-out figures of ``rules_holdout``
with every learned part that reads public logs refit without the held-out families.

``rules_holdout`` holds out a family's own signatures (those only its logs match) and
reads it with the text classifier (which never trains on public logs). Everything else
it reads was trained on every family, the held-out one included: the label model, its
``unknown`` threshold and its label prior (``decision.json``), the death detector and its
threshold (``death.json``), and the healthy baseline early warnings are weighed against.
Here the public families are split into ``FOLDS`` grouped folds (by logs, the largest
first, each to the fold with fewest logs so far: vLLM and SGLang each alone), and each
fold is read with those parts refit on the other folds' rows only:

* the label model: ``decision_train.fit`` on the training rows (the project's rows always
  in), the prior table of the training rows, the ``unknown`` threshold chosen as
  ``forensics train`` chooses it (the most right answers on public rows read without their
  family's own signatures, scored out of fold), over ``INNER`` inner folds of the training
  families instead of one family at a time (time); the ship flags as shipped;
* the death detector: ``decision_train.fit_death``'s fit on the training logs, its threshold
  set as ``death_crossval`` sets it (the highest score of a training group's healthy log with
  that group held out too, plus the same margin);
* the healthy baseline: rebuilt without the fold's healthy logs (``ew_heldout``'s way).

The fold's models are written to a temporary folder and read through the switches the
diagnosis already has (``FORENSICS_DECISION_MODEL``, ``FORENSICS_DEATH_MODEL``, the
baseline's ``HELD_OUT``); the shipped files are never touched. The phase model, the
evidence ranker, the early-warning listing model and its live gate do not ship (their
``active`` / ``meta.ships`` are off): the diagnosis never reads them, so refitting them
would change no answer. Not refit either (what remains): the training rows' own inputs
were collected with the shipped death detector; hand-written precursors, wordings and
signatures vouched by two families (one of which may be the held-out one) stay in.

``--batches`` adds the calibration against the ledger: every batch's recorded first look
(``first-look.json``, hybrid mode) beside its top-1 now, held out by ``rules_holdout`` and
here, and the same for the families a batch brought first.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from forensics.atomic import atomic_write_text
from forensics.lab.figures_json import json_target_refused, write_json

FOLDS = 8
INNER = 4  # inner folds of a fold's training families, for its thresholds


def public(group: str) -> bool:
    return not group.startswith("project:")


def fold_table(groups: list[str], folds: int = FOLDS) -> dict[str, int]:
    """family -> its fold, balanced by logs (``train.family_folds``; project groups are in no fold)."""
    from forensics.lab.train import family_folds

    return family_folds([g for g in groups if public(g)], folds)


def training(items: list[Any], drop: set[str]) -> list[Any]:
    """The row filter: the items (anything with a ``group``) of no family in ``drop``."""
    return [x for x in items if x.group not in drop]


# -- the learned parts, refit without a fold ---------------------------------------------------

def fit_label(rows: list[Any], held: list[Any], drop: set[str], shipped: dict[str, Any], seed: int = 0,
              bar: float | None = None) -> dict[str, Any]:
    """The label model's file as ``forensics train`` writes it, fitted on ``rows`` less ``drop``'s
    families; its ``unknown`` threshold from ``held`` (public rows read without their own
    signatures) of the training families, scored out of ``INNER`` inner folds, or ``bar`` where
    given (every fold the same bar: a comparison between branches without each fold's pick on a
    flat curve moving it by a few logs)."""
    from forensics.lab import decision_train as dt

    train = training(rows, drop)
    held_train = training(held, drop)
    below, curve = (bar, []) if bar is not None else dt.fit_unknown_below(inner_oof(train, held_train, seed))
    fitted, _ = dt.with_priors(train)
    meta = {"version": f"honest-{len(train)}", "rows": len(train), "unknown_curve": curve,
            "ships": shipped.get("meta", {}).get("ships", {})}
    data = dt.export(dt.fit(fitted, seed, held=held_train, unknown_below=below), fitted, meta, unknown_below=below)
    data["prior"] = dt.prior_table(train)
    data["choose"], data["active"] = shipped.get("choose", True), shipped.get("active", True)
    return data


def inner_oof(train: list[Any], held_train: list[Any], seed: int) -> list[tuple[Any, dict[str, float]]]:
    """The training families' held rows scored by label models fitted without them (``INNER`` folds)."""
    from forensics.lab import decision_train as dt

    inner = fold_table([r.group for r in train], INNER)
    oof: list[tuple[Any, dict[str, float]]] = []
    for j in range(INNER):
        out = {f for f, k in inner.items() if k == j}
        part, (test,) = dt.with_priors(training(train, out), [r for r in held_train if r.group in out])
        model = dt.label_pair_model(dt.export(dt.fit(part, seed, held=training(held_train, out)), part, {}))
        oof += [(r, model.proba(r.inputs)) for r in test]
    return oof


def fit_phase_fold(rows: list[Any], drop: set[str], path: Path, seed: int = 0) -> Path | None:
    """The phase model refit on ``rows`` less ``drop``'s families, written to ``path``, where the
    shipped one is in use (the diagnosis reads it); None where none ships (nothing to refit)."""
    from threadpoolctl import threadpool_limits

    from forensics.diagnosis.decision.phase_model import phase_model
    from forensics.lab import decision_train as dt
    from forensics.lab.phase_train import phase_prior_table, with_phase_priors, words_table

    if phase_model() is None:
        return None
    train = dt.phase_rows(training(rows, drop))
    fitted, _ = with_phase_priors(train)
    with threadpool_limits(1):
        data = dt.export(dt.fit_phase(fitted, seed), fitted, {"version": f"honest-phase-{len(train)}"},
                         dt.PHASE_FEATURES, 0.0)
    data["prior"], data["words"], data["active"] = phase_prior_table(train), words_table(train), True
    atomic_write_text(path, json.dumps(data) + "\n")
    return path


class DeathDocs:
    """The death detector's training lines tokenised once (``decision_train.death_docs``): a fit
    without some groups selects their rows and the tokens two of the remaining lines carry, which is
    what ``decision_train.fit_death`` on the remaining logs computes (its ``min_df=2`` vocabulary is
    a subset of the whole one's), at a fraction of the time."""

    def __init__(self, logs: list[Any]) -> None:
        import numpy as np
        from sklearn.feature_extraction.text import CountVectorizer

        from forensics.diagnosis.decision.death import tokens
        from forensics.lab import decision_train as dt

        docs, y, owner = dt.death_docs(logs)
        vec = CountVectorizer(analyzer=tokens, binary=True, min_df=2)
        self.X = vec.fit_transform(docs).tocsr()
        self.y = np.array(y)
        self.names = vec.get_feature_names_out()
        self.groups = np.array([logs[i].group for i in owner], dtype=object)

    def fit(self, drop: set[str], seed: int = 0) -> tuple[dict[str, float], float]:
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        from forensics.lab.decision_train import C_REGULARISATION

        rows = np.array([g not in drop for g in self.groups], dtype=bool)
        X = self.X[rows]
        cols = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() >= 2)
        lr = LogisticRegression(C=C_REGULARISATION, max_iter=5000, class_weight="balanced", random_state=seed)
        lr.fit(X[:, cols], self.y[rows])
        weights = {str(self.names[c]): round(float(w), 5) for c, w in zip(cols, lr.coef_[0]) if abs(w) > 1e-3}
        return weights, float(lr.intercept_[0])


def fit_death(logs: list[Any], drop: set[str], seed: int = 0, docs: DeathDocs | None = None) -> dict[str, Any]:
    """The death detector's file fitted on ``logs`` less ``drop``'s families; its threshold as
    ``death_crossval`` sets it on the training groups (``death_threshold`` over the held-out scores
    of the healthy logs the detector runs on and of the failures' proving lines; only groups with
    such a log or a failure whose proving line it scores are held out one at a time, as in
    ``death_crossval``: held out only where a healthy log is, a fold counted a third fewer deaths
    than the shipped detector's choice does, and the cost weighed against one high-scoring healthy
    log set thresholds of 0.93 where all of them set 0.53)."""
    from forensics.lab import decision_train as dt

    docs = docs or DeathDocs(logs)
    train = training(logs, drop)
    got: dict[str, list[float]] = {"healthy": [], "fatal": [], "healthy_up": [], "fatal_up": []}
    weighed = (dt.consulted_healthy, dt.scored_failure, dt.consulted_healthy_up, dt.scored_failure_up)
    for group in sorted({g.group for g in train if any(f(g) for f in weighed)}):
        w, b = docs.fit(drop | {group}, seed)
        for k, v in dt.held_out_scores(w, b, [g for g in train if g.group == group]).items():
            got[k] += v
    threshold = dt.death_threshold(got["healthy"], got["fatal"])
    up = dt.death_threshold(got["healthy_up"], got["fatal_up"])
    w, b = docs.fit(drop, seed)
    return {"version": f"honest-death-{len(train)}", "weights": dict(sorted(w.items())), "bias": round(b, 5),
            "threshold": round(threshold, 4), "threshold_up": round(up, 4), "meta": {"logs": len(train)}}


def fold_baseline(scans: list[Any], groups_of: dict[Path, str], drop: set[str]) -> Any:
    """The healthy baseline without ``drop``'s healthy logs."""
    from forensics.diagnosis.early_warnings.baseline import from_data
    from forensics.lab.ew_baseline import assemble

    return from_data(assemble([s for s in scans if groups_of[s[0]] not in drop]))


@dataclass
class Fold:
    index: int
    families: list[str]
    decision: Path
    death: Path
    baseline: Any
    figures: dict[str, Any] = field(default_factory=dict)
    phase: Path | None = None  # the phase model refit without the fold (None: none ships)


def _clear_model_caches() -> None:
    """Forget every loaded model file between folds (``pair_model.built`` already keeps a freed
    file's model from answering for another: this only frees the last fold's)."""
    from forensics.diagnosis.decision import pair_model

    pair_model._read.cache_clear()
    pair_model._SHIPPED.clear()


@contextlib.contextmanager
def reading_with(fold: Fold | None) -> Iterator[None]:
    """Diagnose with ``fold``'s models (None: the shipped ones)."""
    from forensics.diagnosis.early_warnings.baseline import HELD_OUT

    names = ("FORENSICS_DECISION_MODEL", "FORENSICS_DEATH_MODEL", "FORENSICS_PHASE_MODEL")
    before = {k: os.environ.get(k) for k in names}
    _clear_model_caches()
    token = HELD_OUT.set(fold.baseline if fold else None)
    if fold is not None:
        os.environ["FORENSICS_DECISION_MODEL"], os.environ["FORENSICS_DEATH_MODEL"] = str(fold.decision), str(fold.death)
        if fold.phase is not None:
            os.environ["FORENSICS_PHASE_MODEL"] = str(fold.phase)
    try:
        yield
    finally:
        HELD_OUT.reset(token)
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _clear_model_caches()


# -- the run -----------------------------------------------------------------------------------

@dataclass
class Inputs:
    """Everything the folds are fitted from, collected once."""
    rows: list[tuple[dict[str, str], str]]  # every scored log (rules_holdout's) and its group
    own: dict[str, set[str]]
    matched_real: int
    seen: tuple[dict[str, Any], dict[str, Any]]  # seen scores of failures and healthy logs, by family
    decision_rows: list[Any]
    held_rows: list[Any]
    death_logs: list[Any]
    death_docs: Any
    scans: list[Any]
    groups_of: dict[Path, str]
    seconds: dict[str, float] = field(default_factory=dict)


def collect(sset: Any, clf: Any) -> Inputs:
    from forensics.lab import decision_train as dt
    from forensics.lab import rules_holdout as rh
    from forensics.lab.ew_baseline import scan_all
    from forensics.lab.ew_heldout import baseline_groups, scored_rows

    t = {"start": time.monotonic()}
    rows = scored_rows(project=rh.REAL_PROJECT)
    matched, seen_scores, seen_healthy = rh._matched_and_seen(sset, clf, rows)
    own = rh.own_signatures(matched)
    t["seen"] = time.monotonic()
    reduced: dict[str, Any] = {}

    def of(group: str) -> Any:
        if not public(group) or group not in own:
            return sset
        return reduced.setdefault(group, rh.reduced_set(sset, own, group))

    decision_rows = dt.collect_rows()
    held_rows = dt.collect_rows(project=False, signatures_of=of)
    t["decision rows"] = time.monotonic()
    death_logs = dt.collect_death_logs()
    death_docs = DeathDocs(death_logs)
    t["death logs"] = time.monotonic()
    from forensics.diagnosis.early_warnings.baseline import BASELINE_PATH

    sources = json.loads(BASELINE_PATH.read_text(encoding="utf-8"))["sources"]
    groups_of = baseline_groups([dt.REPO / s for s in sources if (dt.REPO / s).is_dir()])
    scans = scan_all(list(groups_of))
    t["baseline scans"] = time.monotonic()
    marks = list(t.items())
    seconds = {k: round(v - marks[i][1], 1) for i, (k, v) in enumerate(marks[1:])}
    return Inputs(rows, own, len(matched), (seen_scores, seen_healthy), decision_rows, held_rows, death_logs,
                  death_docs, scans, groups_of, seconds)


def make_fold(k: int, families: list[str], inp: Inputs, shipped: dict[str, Any], where: Path, seed: int,
              bar: float | None = None) -> Fold:
    from threadpoolctl import threadpool_limits

    drop = set(families)
    with threadpool_limits(1):  # many small fits: one BLAS thread (as forensics train)
        label = fit_label(inp.decision_rows, inp.held_rows, drop, shipped, seed, bar)
        death = fit_death(inp.death_logs, drop, seed, inp.death_docs)
    decision_path, death_path = where / f"decision-fold{k}.json", where / f"death-fold{k}.json"
    atomic_write_text(decision_path, json.dumps(label) + "\n")
    atomic_write_text(death_path, json.dumps(death) + "\n")
    fold = Fold(k, families, decision_path, death_path, fold_baseline(inp.scans, inp.groups_of, drop),
                phase=fit_phase_fold(inp.decision_rows, drop, where / f"phase-fold{k}.json", seed))
    fold.figures = {"unknown_below": label["unknown_below"], "death_threshold": death["threshold"],
                    "label_rows": label["meta"]["rows"], "death_logs": death["meta"]["logs"]}
    return fold


def read_family(fam: str, rows: list[tuple[dict[str, str], str]], sset_of: Callable[[dict[str, str]], Any],
                clf: Any) -> tuple[dict[str, int], dict[str, int], list[dict[str, Any]], list[dict[str, Any]]]:
    """One family's logs read with the models in force and ``sset_of(row)``'s signatures (None: the
    log is not read): failures' and healthy logs' scores and cases (``rules_holdout``'s)."""
    from forensics.lab import rules_holdout as rh

    tot: dict[str, int] = {}
    healthy: dict[str, int] = {}
    cases: list[dict[str, Any]] = []
    hcases: list[dict[str, Any]] = []
    for row, group in rows:
        sset = sset_of(row) if group == fam else None
        if sset is None:
            continue
        res = rh._diagnose(row["_path"], sset, clf)
        if row.get("root_cause"):
            got = rh._score(row, res, sset)
            rh._add(tot, got)
            cases.append(rh._case(row, res, got))
        else:
            rh._add(healthy, rh._score_healthy(row, res, sset))
            hcases.append(rh._healthy_case(row, res))
    return tot, healthy, cases, hcases


# -- the chronological reading: each batch with the signatures of its first look ------------------

def first_look_commits(public_dir: Path) -> dict[str, str]:
    """batch -> the commit its first look was measured at (``first-look.txt``'s first line)."""
    import re

    out = {}
    for f in sorted(public_dir.glob("batch-*/first-look.txt")):
        m = re.search(r"measured at main ([0-9a-f]{7,40})", f.read_text(encoding="utf-8").split("\n", 1)[0])
        if m:
            out[f.parent.name] = m.group(1)
    return out


def signatures_at(commits: set[str], where: Path) -> dict[str, Any]:
    """commit -> the signature set as it was at that commit (its ``signatures/`` read by today's loader)."""
    import subprocess

    from forensics.diagnosis.signatures import load_signatures
    from forensics.lab.decision_train import REPO

    out = {}
    for sha in sorted(commits):
        dest = where / sha
        dest.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "-C", str(REPO), "archive", sha, "signatures"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
        out[sha] = load_signatures([dest / "signatures"])
    return out


def read_fold(fams: list[str], models: Fold | None, inp: Inputs, sset: Any, clf: Any, dest: dict[str, Any],
              signatures_of: Callable[[dict[str, str]], Any] | None = None) -> None:
    """The fold's families read with ``models`` (None: the shipped ones) into ``dest``; each log with
    its family's own signatures held out, or with ``signatures_of(row)`` where given."""
    from forensics.lab import rules_holdout as rh

    seen_scores, seen_healthy = inp.seen
    with reading_with(models):
        for fam in fams:
            reduced = rh.reduced_set(sset, inp.own, fam)

            def held_out(row: dict[str, str], reduced: Any = reduced) -> Any:
                return reduced
            tot, healthy, cases, hcases = read_family(fam, inp.rows, signatures_of or held_out, clf)
            if tot:
                dest["families"][fam] = {"seen": seen_scores[fam], "held_out": tot,
                                         "own": sorted(inp.own.get(fam, ())), "cases": cases}
            if healthy:
                dest["healthy"][fam] = {"seen": seen_healthy[fam], "held_out": healthy, "cases": hcases}


def run(seed: int = 0, folds: int = FOLDS, compare: bool = True, chronological: bool = True,
        bar: float | None = None) -> dict[str, Any]:
    """The honest figures (``families``/``healthy`` as ``rules_holdout.run`` gives them); with
    ``compare``, rules_holdout's own on the same run (``shipped``); with ``chronological``, each batch
    read with the signatures of its first look and the fold's models (``chronological``); ``bar``:
    every fold's unknown bar (None: each fold's own choice)."""
    from forensics.diagnosis.decision.pair_model import MODEL_DIR
    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import load_classifier

    t0 = time.monotonic()
    sset, clf = signature_set(), load_classifier(True)
    inp = collect(sset, clf)
    shipped = json.loads((MODEL_DIR / "decision.json").read_text(encoding="utf-8"))
    table = fold_table([g for _, g in inp.rows], folds)
    out: dict[str, Any] = {"folds": [], "families": {}, "healthy": {}, "signatures": len(sset.signatures),
                           "own": sum(len(v) for v in inp.own.values()), "matched_real": inp.matched_real,
                           "shipped": {"families": {}, "healthy": {}} if compare else None,
                           "chronological": {"families": {}, "healthy": {}} if chronological else None}
    fit_s = read_s = 0.0
    with tempfile.TemporaryDirectory(prefix="forensics-honest-") as tmp:
        from forensics.lab.public_corpus import PUBLIC_DIR

        commits = first_look_commits(PUBLIC_DIR) if chronological else {}
        old = signatures_at(set(commits.values()), Path(tmp) / "signatures") if chronological else {}
        for k in range(folds):
            fams = sorted(f for f, v in table.items() if v == k)
            t = time.monotonic()
            fold = make_fold(k, fams, inp, shipped, Path(tmp), seed, bar)
            fit_s += time.monotonic() - t
            t = time.monotonic()
            modes: dict[str, Fold | None] = {"honest": fold}
            if compare:
                modes["shipped"] = None
            if chronological:
                modes["chronological"] = fold
            for mode, models in modes.items():
                signatures_of = (lambda row: old.get(commits.get(Path(row["_path"]).parent.name, ""))) \
                    if mode == "chronological" else None
                read_fold(fams, models, inp, sset, clf, out if mode == "honest" else out[mode], signatures_of)
            read_s += time.monotonic() - t
            out["folds"].append({"fold": k, "families": fams, **fold.figures})
    out["seconds"] = dict(inp.seconds, **{"fit folds": round(fit_s, 1), "read folds": round(read_s, 1),
                                          "total": round(time.monotonic() - t0, 1)})
    for part in [out] + [out[m] for m in ("shipped", "chronological") if out[m] is not None]:
        part["families"] = dict(sorted(part["families"].items()))
        part["healthy"] = dict(sorted(part["healthy"].items()))
        part["ece"] = held_out_ece(part)
    for m in ("shipped", "chronological"):
        if out[m] is not None:
            out[m].update(signatures=out["signatures"], own=out["own"], matched_real=out["matched_real"])
    return out


def held_out_ece(part: dict[str, Any]) -> float | None:
    """The ECE of the held-out answers (a failure not called failed has no confidence: left out)."""
    from forensics.lab.evaluate import expected_calibration_error

    return expected_calibration_error([(float(c["confidence"]), c["answer"] == c["truth"])
                                       for f in part["families"].values() for c in f["cases"]
                                       if c.get("confidence") is not None])


# -- the calibration against the ledger -----------------------------------------------------------

def _batch(path: str) -> str:
    return Path(path).parent.name


def _key(path: str) -> str:
    return f"{Path(path).parent.name}/{Path(path).name}"


def first_looks(public_dir: Path) -> dict[str, dict[str, Any]]:
    """batch -> its recorded first look (hybrid mode): failures, right, and the logs it missed."""
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(public_dir.glob("batch-*/first-look.json")):
        hy = (json.loads(f.read_text(encoding="utf-8")).get("modes") or {}).get("hybrid")
        if hy:
            out[f.parent.name] = {"failures": hy["failures"], "right": hy["correct"],
                                  "missed": {_key(m["source"]) for m in hy.get("misses") or ()}}
    return out


def ledger(out: dict[str, Any], public_dir: Path) -> list[dict[str, Any]]:
    """Per batch with a first look: its first-look top-1 beside its held-out top-1 now (same logs:
    the batch's failures as labelled now), and the families the batch brought first."""
    looks = first_looks(public_dir)
    modes = {"honest": out, **({"rules_holdout": out["shipped"]} if out.get("shipped") else {}),
             **({"chronological": out["chronological"]} if out.get("chronological") else {})}
    first_batch: dict[str, str] = {}
    for part in (out["families"], out["healthy"]):
        for fam, f in part.items():
            for c in f["cases"]:
                b = _batch(c["path"])
                first_batch[fam] = min(first_batch.get(fam, b), b)
    rows = []
    for b, look in looks.items():
        row: dict[str, Any] = {"batch": b, "first_look": [look["right"], look["failures"]]}
        new = sorted(f for f, fb in first_batch.items() if fb == b)
        for name, part in modes.items():
            cases = [c for f in part["families"].values() for c in f["cases"] if _batch(c["path"]) == b]
            row[name] = [sum(c["answer"] == c["truth"] for c in cases), len(cases)]
            mine = [c for f in new for c in part["families"].get(f, {}).get("cases", ()) if _batch(c["path"]) == b]
            row[f"new_{name}"] = [sum(c["answer"] == c["truth"] for c in mine), len(mine)]
        mine = [c for f in new for c in out["families"].get(f, {}).get("cases", ()) if _batch(c["path"]) == b]
        row["new_first_look"] = [sum(_key(c["path"]) not in look["missed"] for c in mine), len(mine)]
        row["new_families"] = new
        rows.append(row)
    return rows


def _frac(p: list[int]) -> str:
    return f"{p[0] / p[1]:.1%} ({p[0]}/{p[1]})" if p[1] else "-"


def _pool(rows: list[dict[str, Any]], key: str) -> list[int]:
    return [sum(r[key][0] for r in rows), sum(r[key][1] for r in rows)]


def render_ledger(rows: list[dict[str, Any]], spans: tuple[tuple[str, str], ...] = (
        ("batch-01", "batch-50"), ("batch-35", "batch-50"), ("batch-44", "batch-49"))) -> str:
    cols = [c for c in ("first_look", "honest", "rules_holdout", "chronological") if rows and c in rows[0]]
    names = {"first_look": "first look", "rules_holdout": "rules_holdout"}
    head = f"{'batch':<8}" + "".join(f"{names.get(c, c):>17}" for c in cols) + "  | its new families:" + \
        "".join(f"{names.get(c, c):>17}" for c in cols)

    def line(name: str, rs: list[dict[str, Any]]) -> str:
        return f"{name:<8}" + "".join(f"{_frac(_pool(rs, c)):>17}" for c in cols) + f"{'':>19}" + \
            "".join(f"{_frac(_pool(rs, 'new_' + c)):>17}" for c in cols)
    lines = [head] + [line(r["batch"].replace("batch-", "b"), [r]) for r in rows]
    for lo, hi in spans:
        lines.append(line(f"{lo[-2:]}-{hi[-2:]}", [r for r in rows if lo <= r["batch"] <= hi]))
    return "\n".join(lines)


def render(out: dict[str, Any]) -> str:
    from forensics.lab import rules_holdout as rh

    lines = [f"{len(out['folds'])} folds of public families, each read with the label model, its unknown "
             f"threshold and prior, the death detector and the healthy baseline fitted without the fold:"]
    for f in out["folds"]:
        lines.append(f"  fold {f['fold']}: {len(f['families'])} families ({', '.join(f['families'][:4])}"
                     f"{', ...' if len(f['families']) > 4 else ''}), unknown below {f['unknown_below']}, "
                     f"death threshold {f['death_threshold']}")
    lines += ["", "honest (learned parts refit per fold; each family's own signatures held out):", rh.render(out),
              f"ECE held out: {out['ece']}"]
    if out.get("shipped"):
        table = rh.render(out["shipped"]).splitlines()
        lines += ["", "rules_holdout (the shipped learned parts, trained on every family), same run:",
                  table[1], *[ln for ln in table if ln.startswith(("overall", "answers", "held-out", "healthy"))],
                  f"ECE held out: {out['shipped']['ece']}"]
    if out.get("chronological"):
        table = rh.render(out["chronological"]).splitlines()
        lines += ["", "chronological (each batch with the signatures of its first look's commit, the fold's models):",
                  table[1], *[ln for ln in table if ln.startswith(("overall", "answers", "held-out", "healthy"))],
                  f"ECE held out: {out['chronological']['ece']}"]
    if out.get("ledger"):
        lines += ["", "the ledger's first looks (hybrid) beside the batch held out now (top-1, the batch's failures "
                      "as labelled now):", render_ledger(out["ledger"])]
    lines.append("seconds: " + ", ".join(f"{k} {v}" for k, v in out["seconds"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.honest_holdout", description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--folds", type=int, default=FOLDS, help=f"grouped folds of public families ({FOLDS})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-compare", action="store_true", help="skip rules_holdout's reading (the shipped models)")
    ap.add_argument("--no-chronological", action="store_true",
                    help="skip the reading of each batch with the signatures of its first look")
    ap.add_argument("--unknown-below", type=float, metavar="P",
                    help="one unknown bar for every fold (default: each fold chooses its own as forensics train "
                         "does); for comparing branches, where a fold's pick on a flat curve moves a few logs")
    args = ap.parse_args(argv)
    if args.unknown_below is not None and not 0 <= args.unknown_below < 1:
        print("error: --unknown-below must be in [0, 1)", file=sys.stderr)
        return 2
    if json_target_refused(args.json):
        return 2
    from forensics.lab.public_corpus import PUBLIC_DIR

    out = run(args.seed, args.folds, compare=not args.no_compare, chronological=not args.no_chronological,
              bar=args.unknown_below)
    out["unknown_below_fixed"] = args.unknown_below
    out["ledger"] = ledger(out, PUBLIC_DIR)
    print(render(out))
    return write_json(args.json, out) if args.json else 0


if __name__ == "__main__":
    sys.exit(main())
