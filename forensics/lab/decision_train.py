"""Train, cross-validate and export the learned label decision (issue 27).

Rows: every labelled failure of ``corpora/public`` (all of them: the text classifier
never trains on them, so its answers there are honest) and the project's corpora rows
the text classifier did not train on (the ``test`` split of generated / cpu / gpu,
and the collections it never reads). Never ``../shared/corpora-real``.

Each row is diagnosed once, as at run time, with the shipped text classifier and the
hand-set rules; ``decision.label_model.RECORDER`` collects the ``DecisionInputs`` of
its main incident. The model: multinomial logistic regression, calibrated by
``CalibratedClassifierCV(method='sigmoid')`` on folds disjoint from the fit.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forensics.atomic import atomic_write_text
from forensics.diagnosis.decision.calibration import POOLED as POOLED_KIND
from forensics.diagnosis.decision.calibration import UNKNOWN_LEAD, UNTOLD
from forensics.diagnosis.decision.label_features import FEATURES, DecisionInputs, evidence_kind, pair_vector
from forensics.diagnosis.decision.learned import untold, warned_label
from forensics.diagnosis.decision.phase_features import FEATURES as PHASE_FEATURES
from forensics.diagnosis.decision.phase_features import pair_vector as phase_pair_vector
from forensics.diagnosis.taxonomy import LABELS, PHASES
from forensics.lab.evaluate import evidence_names, expected_calibration_error, read_labels
from forensics.lab.public_corpus import PUBLIC_DIR, batch_dirs, server_family

REPO = Path(__file__).resolve().parents[2]
# (folder, split): the rows of the project's corpora the text classifier did not train on.
PROJECT_ROWS = (("corpora/generated", "test"), ("corpora/cpu", "test"), ("corpora/gpu", "test"),
                ("corpora/gpu-early-warning", None), ("corpora/seeds", None))
# Below this calibrated probability the answer is "unknown" with candidates: a label right
# less than one time in four is not worth naming (a reason, not a figure fitted to logs).
UNKNOWN_BELOW = 0.25
C_REGULARISATION = 1.0
# A learned decision replaces a rule's only when it is right on at least this share of the
# held-out rows more often than the rule: one log in 610 either way is noise (the phase model
# won 443 to 442 and cost a visible set a log).
CLEAR_GAIN = 0.01
EVIDENCE_L2 = 5.0  # the evidence ranker's regularisation (family-held-out folds: 1, 5, 20 within 2 logs)
# A kind of evidence gets its own softmax temperature only with this many out-of-fold answers
# (fewer: the shared one); a temperature read off a handful of answers would be noise.
KIND_TEMPERATURE_MIN = 30


def clearly_better(learned: int, rules: int, n: int) -> bool:
    return learned - rules >= max(1, round(CLEAR_GAIN * n))


@dataclass
class Row:
    """One labelled failure and what the diagnosis knew about it."""
    source: str
    group: str  # the server family (public) or "project:<corpus>"
    truth: str
    inputs: DecisionInputs
    rules_label: str | None
    rules_conf: float | None
    phase_truth: str | None = None
    phase_inputs: Any = None  # PhaseInputs of the main incident (None: not recorded)
    evidence: list | None = None  # (entry, proves the failure?) in the diagnosis's own order


def _main_record(records: list, kept: list, res: dict[str, Any], kind: str) -> tuple[Any, Any] | None:
    """The ``kind`` record ("label" or "phase") of the incident the answer is about."""
    idx = res.get("incident")
    if idx is None or idx >= len(kept):
        return None
    inc = kept[idx]
    for r_kind, r_inc, inp, rules in reversed(records):
        if r_kind == kind and r_inc is inc:
            return inp, rules
    return None


def collect_rows(public: list[Path] | None = None, project: bool = True,
                 signatures_of: Any = None) -> list[Row]:
    """Diagnose every training row once and keep its decision inputs (``signatures_of``: group ->
    the signature set its logs are read with; ``rules_holdout.held_out_signatures``)."""
    from forensics.diagnosis.decision.label_model import RECORDER
    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import Source
    from forensics.lab.train import held_out_classifiers
    from forensics.pipeline import diagnose_source, load_classifier

    # Record the rules' own answers, not a model's (the phase model reads the label).
    os.environ["FORENSICS_DECISION_MODEL"] = os.environ["FORENSICS_PHASE_MODEL"] = "off"
    os.environ["FORENSICS_EVIDENCE_MODEL"] = "off"
    try:
        sset = signature_set()
        clf = load_classifier(True)
        # A public row is read by a classifier that never saw its family (out of fold): the
        # stacking inputs are what the classifier says of a family it never met.
        held_out = held_out_classifiers(clf)
        sources: list[tuple[dict[str, str], str]] = []
        for d in public if public is not None else batch_dirs(PUBLIC_DIR):
            for row in read_labels(d):
                if row.get("root_cause"):
                    sources.append((row, server_family(row.get("server") or "?")))
        if project:
            for folder, split in PROJECT_ROWS:
                d = REPO / folder
                if (d / "labels.csv").exists():
                    for row in read_labels(d, split):
                        if row.get("root_cause"):
                            sources.append((row, f"project:{d.name}"))
        out: list[Row] = []
        for row, group in sources:
            records: list = []
            token = RECORDER.set(records)
            try:
                kept: list = []
                path = Path(row["_path"])
                row_clf = clf if group.startswith("project:") else held_out(group)
                row_sset = sset if signatures_of is None else signatures_of(group)
                res = diagnose_source(Source(str(path), path), sset=row_sset, classifier=row_clf, keep_incidents=kept)
            except Exception:  # noqa: BLE001 - an unreadable training log is left out, not fatal
                continue
            finally:
                RECORDER.reset(token)
            got = _main_record(records, kept, res, "label")
            if got is None:
                continue  # not called failed: nothing to decide (failure detection's business)
            inp, rules = got
            ph = _main_record(records, kept, res, "phase")
            ev = _main_record(records, kept, res, "evidence")
            fatal = row.get("fatal_substring") or ""
            labelled = [(e, bool(fatal) and evidence_names(fatal, [e], row["_path"])) for e in ev[0]] if ev else None
            out.append(Row(row["_path"], group, row["root_cause"], inp, rules.label, rules.confidence,
                           row.get("phase") or None, ph[0] if ph else None, labelled))
        return out
    finally:
        os.environ.pop("FORENSICS_DECISION_MODEL", None)
        os.environ.pop("FORENSICS_PHASE_MODEL", None)
        os.environ.pop("FORENSICS_EVIDENCE_MODEL", None)


@dataclass
class CalibratedChoice:
    """Shared weights over (failure, label) pairs and a softmax temperature fitted on
    out-of-fold answers (the calibration data is never the data the weights were fitted on)."""
    classes_: list[str]
    weights_: list[float]
    temperature_: float
    temperatures_: dict[str, float] | None = None  # per kind of evidence (``Choice.kind``)
    # Per kind of answer, knots (probability -> share right) of the out-of-fold answers (``fit``).
    calibration_: dict[str, list[list[float]]] | None = None
    # The out-of-fold probabilities (temperatures applied) and which cases have one: what ``fit``
    # fits the maps on (never exported).
    oof_: Any = None
    answered_: Any = None


@dataclass(frozen=True)
class Choice:
    """What one learned choice picks among: its candidates and their pair features."""
    classes: tuple[str, ...]
    features: tuple[str, ...]
    pair: Any  # (case, candidate) -> list[float]
    kind: Any = None  # case -> its kind of evidence, each calibrated apart (None: one temperature)


LABEL_CHOICE = Choice(tuple(LABELS), FEATURES, pair_vector, evidence_kind)
PHASE_CHOICE = Choice(tuple(PHASES), PHASE_FEATURES, phase_pair_vector)


def phase_rows(rows: list["Row"]) -> list["Row"]:
    """The rows the phase model can learn from (a legal phase label, its inputs recorded)."""
    return [r for r in rows if r.phase_inputs is not None and r.phase_truth in PHASES]


def fit_phase(rows: list["Row"], seed: int = 0) -> "CalibratedChoice":
    """The phase model on ``rows`` whose phase prior is set (``phase_train.with_phase_priors``)."""
    rows = phase_rows(rows)
    return fit_choice([r.phase_inputs for r in rows], [r.phase_truth for r in rows], PHASE_CHOICE, seed)


def phase_answer(model: Any, r: "Row") -> str:
    probs = model.proba(r.phase_inputs)
    return max(sorted(probs), key=lambda k: probs[k])


def _pairs(cases: list[Any], choice: Choice) -> Any:
    """Every case's pair features, (case, candidate, feature): built once per fit, not once per
    fold (Python's ``pair_vector`` over ~90,000 pairs was most of a fit's time)."""
    import numpy as np

    return np.array([[choice.pair(c, k) for k in choice.classes] for c in cases], dtype=float).reshape(
        len(cases), len(choice.classes), len(choice.features))


def _fit_weights(cases: list[Any], truths: list[str], choice: Choice, seed: int, pairs: Any = None) -> Any:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    X = (_pairs(cases, choice) if pairs is None else pairs).reshape(-1, len(choice.features))
    y = np.array([1 if k == t else 0 for t in truths for k in choice.classes])
    # No intercept: the per-candidate biases are features. Balanced: one right candidate per case.
    return LogisticRegression(C=C_REGULARISATION, fit_intercept=False, max_iter=5000, class_weight="balanced",
                              random_state=seed).fit(X, y).coef_[0]


def _logits(w: Any, cases: list[Any], choice: Choice, pairs: Any = None) -> Any:
    return (_pairs(cases, choice) if pairs is None else pairs) @ w


def _temperature(z: Any, truth_idx: Any) -> float:
    """The softmax temperature with the least negative log-likelihood on ``z`` (out-of-fold logits)."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    def nll(log_t: float) -> float:
        s = z / np.exp(log_t)
        s = s - s.max(axis=1, keepdims=True)
        logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(truth_idx)), truth_idx].mean())

    return float(np.exp(minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded").x))


def fit_choice(cases: list[Any], truths: list[str], choice: Choice, seed: int = 0,
               folds: int = 5, groups: list[str] | None = None,
               calib: tuple[list[Any], list[str], list[str]] | None = None) -> CalibratedChoice:
    """Shared weights over ``choice``'s pairs, and the temperature of their out-of-fold answers.
    ``groups``: the folds hold whole groups out (a family's rows answered by weights that never
    read it, as a family never met is); ``calib``: more (cases, truths, groups) the temperature is
    fitted on too, answered by the fold that held their group out (never fitted on)."""
    import numpy as np

    cal_cases, cal_truths, cal_groups = calib or ([], [], [])
    every = list(cases) + list(cal_cases)
    idx = np.array([choice.classes.index(t) for t in list(truths) + list(cal_truths)])
    oof = np.zeros((len(every), len(choice.classes)))
    answered = np.zeros(len(every), dtype=bool)
    X = _pairs(every, choice)
    for tr, te in _folds(len(cases), folds, seed, groups, cal_groups):
        w = _fit_weights([cases[i] for i in tr], [truths[i] for i in tr], choice, seed, X[tr])
        oof[te] = _logits(w, [every[i] for i in te], choice, X[te])
        answered[te] = True
    oof, idx = oof[answered], idx[answered]  # a calibration row of a group no fold holds: no answer
    t = _temperature(oof, idx)
    kept = [c for c, a in zip(every, answered) if a]
    temps = _kind_temperatures(oof, idx, kept, choice)
    return CalibratedChoice(list(choice.classes), [float(v) for v in _fit_weights(cases, truths, choice, seed, X[:len(cases)])], t,
                            temps, None, _softmax(oof, kept, choice, t, temps), answered)


def _softmax(z: Any, cases: list[Any], choice: Choice, t: float, temps: dict[str, float] | None) -> Any:
    """The probabilities of out-of-fold logits ``z`` as ``PairModel.proba`` gives them (each case's
    kind's temperature, the shared one where its kind has none)."""
    import numpy as np

    ts = np.array([(temps or {}).get(choice.kind(c), t) if choice.kind else t for c in cases], dtype=float)
    s = z / ts[:, None]
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def oof_answer(r: Row, probs: dict[str, float], unknown_below: float) -> tuple[str, float, bool]:
    """One out-of-fold answer as the run time gives it: its kind of answer, the model's probability
    of it (``learned.decide`` never reads more than 0.999) and whether it was right."""
    from forensics.diagnosis.decision.calibration import answer_kind, unknown_lead

    probs = {k: min(v, 0.999) for k, v in probs.items()}
    label, _ = answer_of(probs, r, unknown_below)
    guess = set_aside(probs, r, unknown_below)
    if guess is not None:  # an ``unknown`` the log's silence gave: read by the label set aside
        return UNTOLD, probs[guess], label == r.truth
    if label == "unknown":  # read by how far ``unknown`` leads (``calibration.UNKNOWN_LEAD``)
        return UNKNOWN_LEAD, unknown_lead(probs), label == r.truth
    return answer_kind(r.inputs, label), probs.get(label, 0.0), label == r.truth


# The calibration maps: a bin holds at least this many answers (fewer: its share right is noise)...
CALIBRATION_BIN = 30
# ... and each bin's share right is shrunk toward its kind's by this many answers' weight, a kind's
# toward every answer's (a kind of a dozen answers is mostly the pooled share, and no bin is certain).
# Families differ more than a bin's count says: held out (8 grouped folds, the studied two thirds of
# the families) 30 left ECE 0.041 where 10 left 0.044.
CALIBRATION_PRIOR = 30


def fit_calibration(answers: list[tuple[str, float, bool]]) -> dict[str, list[list[float]]]:
    """Per kind of answer, knots (mean probability of a bin -> its share right, shrunk, made
    non-decreasing): ``decision.calibration`` reads them. ``answers``: (kind, probability, right)."""
    if not answers:
        return {}
    pooled = sum(ok for _, _, ok in answers) / len(answers)
    # (the pooled map reads a probability: the ``unknown`` answers' lead is no probability)
    table = {POOLED_KIND: _knots([(p, ok) for k, p, ok in answers if k != UNKNOWN_LEAD], pooled)}
    for kind in sorted({k for k, _, _ in answers}):
        got = [(p, ok) for k, p, ok in answers if k == kind]
        share = (sum(ok for _, ok in got) + CALIBRATION_PRIOR * pooled) / (len(got) + CALIBRATION_PRIOR)
        table[kind] = _knots(got, share)
    return table


# Issue 27's promise of the answers at >= 0.9: right at least 97% of the time. A bin right 93-96% of
# the time reads 0.93-0.96 when calibrated, and such bins (a wording's label, a signature beside the
# classifier) filled the >= 0.9 answers until they were right 95-96% of the time held out. A knot
# reads ``SURE`` or more only where its bin's own answers (unshrunk) were right ``SURE_RIGHT`` of the
# time; elsewhere just under ``SURE`` (the knots below it too, so a map never falls as the probability
# rises). Twenty-third session, the maps refit on rules_holdout's 1,682 answers (calibration_holdout),
# each family's answers read through maps fitted on the other families': without this rule >= 0.9
# right 771/800 (96.4%), ECE 0.0255; with it 627/643 (97.5%), ECE 0.0302 (the shipped maps at
# 31c52cf7: 682/710, 96.1%, ECE 0.0504).
SURE = 0.9
SURE_RIGHT = 0.97
UNDER_SURE = 0.899


def _knots(got: list[tuple[float, bool]], toward: float) -> list[list[float]]:
    """Bins of ``got`` by probability (about equal counts, each >= ``CALIBRATION_BIN``; answers of one
    probability never split), each bin's share right shrunk toward ``toward``, then pooled where a
    higher bin came out less often right (isotonic); a knot at ``SURE`` or over whose bin was right
    less often than ``SURE_RIGHT`` reads ``UNDER_SURE``."""
    size = len(got) / max(1, len(got) // CALIBRATION_BIN)
    bins: list[list[float]] = []  # [sum of p, right, count]
    by_p: dict[float, list[bool]] = defaultdict(list)
    for p, ok in got:
        by_p[p].append(ok)
    for p, oks in sorted(by_p.items()):
        if not bins or bins[-1][2] >= size:
            bins.append([0.0, 0, 0])
        bins[-1] = [bins[-1][0] + p * len(oks), bins[-1][1] + sum(oks), bins[-1][2] + len(oks)]
    if len(bins) > 1 and bins[-1][2] < CALIBRATION_BIN:  # the last bin's remainder joins the one before
        last = bins.pop()
        bins[-1] = [a + c for a, c in zip(bins[-1], last)]
    blocks: list[list[float]] = []  # [sum of p, right, count] per pooled block
    for b in bins:
        blocks.append(b)
        while len(blocks) > 1 and _share(blocks[-2], toward) > _share(blocks[-1], toward):
            last = blocks.pop()
            blocks[-1] = [a + c for a, c in zip(blocks[-1], last)]
    knots = [[round(s / n, 4), round(_share([s, ok, n], toward), 4), ok / n] for s, ok, n in blocks]
    ceiling = 1.0
    for k in reversed(knots):  # from the top: a knot never reads more than one above it
        if k[1] >= SURE and k[2] < SURE_RIGHT:
            k[1] = UNDER_SURE
        k[1] = ceiling = min(k[1], ceiling)
    return [k[:2] for k in knots]


def _share(block: list[float], toward: float) -> float:
    return (block[1] + CALIBRATION_PRIOR * toward) / (block[2] + CALIBRATION_PRIOR)


def _folds(n: int, folds: int, seed: int, groups: list[str] | None, cal_groups: list[str]) -> Any:
    """(fit rows, answered rows) per fold: rows shuffled (no ``groups``), or whole groups apart, the
    calibration rows (indices after the ``n`` fitted ones) answered in their group's fold."""
    import numpy as np
    from sklearn.model_selection import GroupKFold, KFold

    if groups is None:
        yield from KFold(min(folds, n), shuffle=True, random_state=seed).split(np.zeros(n))
        return
    fold_of: dict[str, int] = {}
    for k, (_, te) in enumerate(GroupKFold(min(folds, len(set(groups)))).split(np.zeros(n), groups=groups)):
        fold_of.update({groups[i]: k for i in te})
    every = list(groups) + list(cal_groups)
    for k in sorted(set(fold_of.values())):
        yield ([i for i in range(n) if fold_of[groups[i]] != k],
               [i for i, g in enumerate(every) if fold_of.get(g) == k])


def _kind_temperatures(oof: Any, idx: Any, cases: list[Any], choice: Choice) -> dict[str, float] | None:
    """Each kind of evidence's own temperature on the same out-of-fold answers (a strong signature
    alone and the text classifier alone are not wrong equally often at the same logit)."""
    import numpy as np

    if choice.kind is None:
        return None
    kinds = np.array([choice.kind(c) for c in cases])
    return {str(k): _temperature(oof[kinds == k], idx[kinds == k]) for k in sorted(set(kinds))
            if (kinds == k).sum() >= KIND_TEMPERATURE_MIN}


def fit(rows: list[Row], seed: int = 0, folds: int = 5, held: list[Row] | None = None,
        unknown_below: float = UNKNOWN_BELOW) -> CalibratedChoice:
    """The calibrated label model over ``rows``. Its temperatures are fitted on answers of groups
    held out of the weights (a family never met), and on ``held`` too: the same families' logs read
    without their own signatures (``held_out_rows``), as a family never met is read at run time.
    Fitted on the rows' own families' answers alone, the classifier's best guesses came out too sure
    on families held out (ninth session: ECE 0.062 held out; 0.045 calibrated so). The same
    out-of-fold answers, as ``learned.decide`` gives them (``unknown_below``: its bar), fit each kind
    of answer's confidence map (``fit_calibration``)."""
    calib, extra = None, []
    if held is not None:
        extra = as_training(rows, held)
        calib = ([r.inputs for r in extra], [r.truth for r in extra], [r.group for r in extra])
    model = fit_choice([r.inputs for r in rows], [r.truth for r in rows], LABEL_CHOICE, seed, folds,
                       groups=[r.group for r in rows], calib=calib)
    answered = [r for r, a in zip(list(rows) + list(extra), model.answered_) if a]
    model.calibration_ = fit_calibration([oof_answer(r, dict(zip(LABEL_CHOICE.classes, p)), unknown_below)
                                          for r, p in zip(answered, model.oof_)])
    return model


def export(model: CalibratedChoice, rows: list[Row], meta: dict[str, Any],
           features: tuple[str, ...] = FEATURES, unknown_below: float = UNKNOWN_BELOW) -> dict[str, Any]:
    """The fitted model as plain numbers (``pair_model.PairModel`` reads them)."""
    return {
        "version": meta.get("version"),
        "features": list(features), "classes": model.classes_,
        "weights": [round(v, 6) for v in model.weights_],
        "temperature": round(model.temperature_, 6),
        "temperatures": {k: round(v, 6) for k, v in (model.temperatures_ or {}).items()},
        "unknown_below": unknown_below,
        "calibration": model.calibration_ or {},
        "meta": meta,
    }


def label_pair_model(data: dict[str, Any]) -> Any:
    from forensics.diagnosis.decision.pair_model import PairModel

    return PairModel(data, FEATURES, pair_vector, evidence_kind)


def answer(model: Any, r: Row) -> tuple[str, float]:
    """The learned decision for one row (a ``PairModel``), as ``decision.learned.decide`` makes it at run time."""
    return answer_of(model.proba(r.inputs), r, model.unknown_below)


def answer_of(probs: dict[str, float], r: Row, unknown_below: float) -> tuple[str, float]:
    """The learned decision for one row from the model's probabilities and the ``unknown`` threshold."""
    inp = r.inputs
    if inp.rule_label is not None and inp.rule_strength == "strong" and inp.clf is None:
        return inp.rule_label, probs.get(inp.rule_label, 0.0)
    if warned_label(inp, r.rules_label):
        return str(r.rules_label), probs.get(str(r.rules_label), 0.0)
    label = max(sorted(probs), key=lambda k: probs[k])
    if probs[label] < unknown_below or set_aside(probs, r, unknown_below) is not None:
        return "unknown", probs[label]
    return label, probs[label]


def set_aside(probs: dict[str, float], r: Row, unknown_below: float) -> str | None:
    """The label ``learned.untold`` sets aside for this row (the model's first label, over the
    ``unknown`` bar, on a proving line that names no cause, named by nothing else), else None."""
    inp = r.inputs
    if inp.rule_label is not None and inp.rule_strength == "strong" and inp.clf is None:
        return None
    if warned_label(inp, r.rules_label):
        return None
    label = max(sorted(probs), key=lambda k: probs[k])
    return label if probs[label] >= unknown_below and untold(inp, label) else None


def score(pairs: list[tuple[Row, str, float]]) -> dict[str, Any]:
    n = len(pairs)
    ok = sum(1 for r, lab, _ in pairs if lab == r.truth)
    hi = [(r, lab) for r, lab, c in pairs if c >= 0.9]
    return {"n": n, "top1": round(ok / n, 4) if n else None, "correct": ok,
            "ece": expected_calibration_error([(c, lab == r.truth) for r, lab, c in pairs]),
            "conf90": {"n": len(hi), "right": sum(1 for r, lab in hi if lab == r.truth)},
            "unknown": sum(1 for _, lab, _ in pairs if lab == "unknown")}


def held_out_units(rows: list[Row], folds: int | None = None) -> list[set[str]]:
    """The groups held out together, one unit at a time: each group alone, or with ``folds`` the
    public families in that many grouped folds balanced by logs (``train.family_folds``) and each
    project corpus alone (CI's time box: a handful of fits instead of one per family)."""
    groups = sorted({r.group for r in rows})
    if not folds:
        return [{g} for g in groups]
    from forensics.lab.train import family_folds

    public = [r.group for r in rows if not r.group.startswith("project:")]
    fold_of = family_folds(public, folds)
    units: dict[int, set[str]] = defaultdict(set)
    for fam, k in fold_of.items():
        units[k].add(fam)
    return [units[k] for k in sorted(units)] + [{g} for g in groups if g.startswith("project:")]


def crossval(rows: list[Row], seed: int = 0, held: list[Row] | None = None,
             folds: int | None = None) -> dict[str, Any]:
    """Hold out one public server family at a time (or ``folds`` grouped folds of them): fit on
    the rest (the project's rows always in), score on it. Also the hand-set rules' answer on the
    same rows. ``held``: the public rows read without each family's own signatures
    (``rules_holdout``), scored too (``held_out``), and the ``unknown`` threshold fitted on them
    (``unknown_curve``)."""
    per: dict[str, Any] = {}
    oof: list[tuple[Row, dict[str, float], Any]] = []
    held_oof: list[tuple[Row, dict[str, float], Any]] = []
    for unit in held_out_units(rows, folds):
        train = [r for r in rows if r.group not in unit]
        test = [r for r in rows if r.group in unit]
        if len({r.truth for r in train}) < 2 or not test:
            continue
        unit_held = [r for r in held or () if r.group in unit]
        train, (test, unit_held) = with_priors(train, test, unit_held)
        model = label_pair_model(export(fit(train, seed, held=[r for r in held or () if r.group not in unit]),
                                        train, {"version": f"cv-{'+'.join(sorted(unit))[:60]}"}))
        oof += [(r, model.proba(r.inputs), model.calibration) for r in test]
        held_oof += [(r, model.proba(r.inputs), model.calibration) for r in unit_held]
        for fam, got in phase_scores(train, {f: [r for r in test if r.group == f] for f in unit}, seed).items():
            per[fam] = {"phase": got}
    below, curve = fit_unknown_below(held_oof) if held_oof else (UNKNOWN_BELOW, [])
    out: dict[str, Any] = {"families": per, "unknown_below": below, "unknown_curve": curve}
    for fam, got in _by_group(oof).items():
        per[fam].update(_scores(got, below))
    for name, keep in (("overall", lambda f: True), ("overall_public", lambda f: not f.startswith("project:"))):
        out[name] = _scores([p for p in oof if keep(p[0].group)], below, with_pairs=False)
        out[name]["phase"] = _sum_phase([v["phase"] for f, v in per.items() if keep(f)])
    if held_oof:
        out["held_out"] = _scores(held_oof, below, with_pairs=False)
        for fam, got in _by_group(held_oof).items():
            per[fam]["held_out"] = {k: v["correct"] for k, v in _scores(got, below, with_pairs=False).items()}
    return out


def _by_group(pairs: list[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for item in pairs:
        out[item[0].group].append(item)
    return out


def learned_answer(item: tuple[Any, ...], below: float) -> tuple[str, float]:
    """The learned answer of one out-of-fold item, (row, probabilities) or (row, probabilities, the
    fold model's calibration maps), and its confidence as ``learned.decide`` gives it."""
    from forensics.diagnosis.decision.calibration import answer_kind, calibrated, unknown_reading, untold_confidence

    r, probs = item[0], {k: min(v, 0.999) for k, v in item[1].items()}
    label, p = answer_of(probs, r, below)
    table = item[2] if len(item) > 2 else {}
    if not table:
        return label, p
    guess = set_aside(probs, r, below)
    if guess is not None:
        return label, untold_confidence(table, probs[guess])
    kind, x = unknown_reading(table, probs) if label == "unknown" else (answer_kind(r.inputs, label), probs.get(label, 0.0))
    return label, round(min(0.999, calibrated(table, kind, x)), 3)


def _scores(got: list[tuple[Any, ...]], below: float, with_pairs: bool = True) -> dict[str, Any]:
    """Learned, rules, classifier and calibrated-rules figures of out-of-fold probabilities."""
    learned = [(x[0], *learned_answer(x, below)) for x in got]
    rules = [(x[0], x[0].rules_label or "none", float(x[0].rules_conf or 0.0)) for x in got]
    clf = [(x[0], *_classifier_answer(x[0])) for x in got]
    calibrated = [(r, lab, min(0.999, x[1][lab]) if lab in x[1] else 0.0) for (r, lab, _), x in zip(rules, got)]
    return {k: score(v) for k, v in (("learned", learned), ("rules", rules), ("classifier", clf),
                                     ("rules_calibrated", calibrated))}


# The thresholds the ``unknown`` answer is tried at (issue 27: an "unknown" costs top-1 as much as
# a wrong label; the answers at >= 0.9 are the same at every one of them). The other way, naming the
# second candidate where the model's own ``unknown`` class wins with less than a bar (0.3-0.6) or by a
# margin, loses held out (twenty-first session, 5 grouped folds, 1,648 readings as a family never met:
# 1,272 right at the model's argmax, 1,258 with a bar of 0.3, 1,236 at 0.6; 1,273 at the best margin):
# most wrong ``unknown`` answers with the truth second are outnumbered by right ones at the same odds.
UNKNOWN_GRID = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def fit_unknown_below(got: list[tuple[Any, ...]]) -> tuple[float, list[dict[str, Any]]]:
    """The threshold under which the learned answer is ``unknown``, and the curve over ``UNKNOWN_GRID``
    on the held-out rows. The lowest bar answers most; a higher one (more ``unknown``) is taken only
    where it is right more often by more than ``BAR_NOISE`` of the rows, the rule every learned part
    meets before it ships: the curve is flat (label15 measured 660-663 of 883 over the whole grid,
    and each fold's pick moved +-3 on it), so the best point alone is noise."""
    curve = []
    for t in UNKNOWN_GRID:
        s = score([(x[0], *learned_answer(x, t)) for x in got])
        curve.append({"unknown_below": t, "correct": s["correct"], "n": s["n"], "unknown": s["unknown"],
                      "conf90": s["conf90"]})
    return bar_of(curve), curve


BAR_NOISE = 0.01  # share of the held-out rows a higher unknown bar must win by


def bar_of(curve: list[dict[str, Any]]) -> float:
    """``fit_unknown_below``'s choice on a curve: the lowest bar, unless a higher one is right more
    often by more than ``BAR_NOISE`` of the rows (then the best of those; ties: the lower)."""
    low = min(curve, key=lambda c: c["unknown_below"])
    better = [c for c in curve if c["correct"] - low["correct"] > BAR_NOISE * max(low["n"], 1)]
    if not better:
        return low["unknown_below"]
    return max(better, key=lambda c: (c["correct"], -c["unknown_below"]))["unknown_below"]


def _keys_of(r: Row) -> tuple[str, ...]:
    """The proving line's prior keys (computed once per row)."""
    got = r.inputs.extra.get("prior_keys")
    if got is None:
        from forensics.diagnosis.decision.label_prior import keys

        got = r.inputs.extra["prior_keys"] = keys(r.inputs.proof)
    return got


def prior_table(rows: list[Row]) -> dict[str, dict[str, float]]:
    """P(label | key of the proving line) over ``rows`` (``decision.label_prior``)."""
    from forensics.diagnosis.decision.label_prior import count_table

    return count_table((_keys_of(r), r.truth, r.group) for r in rows)


def with_priors(train: list[Row], *tests: list[Row], also: list[Row] = ()) -> tuple[list[Row], tuple[list[Row], ...]]:
    """Copies of the rows with their label prior set: a training row's from the *other* groups'
    rows (what a family never met gets at run time: the model learns how far to trust that),
    a test row's from every training row. ``also``: more rows of the training groups, their prior
    set as a training row's, returned after the training rows (``as_training``)."""
    import dataclasses

    from forensics.diagnosis.decision.label_prior import prior_of_keys, wanted
    from forensics.diagnosis.decision.learned import catalogue_said, said_by

    def set_prior(r: Row, table: dict[str, dict[str, float]]) -> Row:
        prior = prior_of_keys(table, _keys_of(r)) if wanted(r.inputs) else {}  # as at run time
        return dataclasses.replace(r, inputs=dataclasses.replace(r.inputs, prior=prior, says=said_by(r.inputs),
                                                               cat_says=catalogue_said(r.inputs)))

    tables = {g: prior_table([r for r in train if r.group != g]) for g in sorted({r.group for r in train})}
    full = prior_table(train)
    own = [set_prior(r, tables[r.group]) for r in list(train) + [r for r in also if r.group in tables]]
    return own, tuple([set_prior(r, full) for r in t] for t in tests)


def as_training(train: list[Row], extra: list[Row]) -> list[Row]:
    """The ``extra`` rows of ``train``'s groups, their label prior set as a training row's is (from
    the other groups' rows of ``train``): the held-out readings the calibration is fitted on."""
    both, _ = with_priors(train, also=extra)
    return both[len(train):]


def _prob_of(model: Any, r: Row, label: str) -> float:
    return min(0.999, model.proba(r.inputs)[label]) if label in LABELS else 0.0


def _classifier_answer(r: Row) -> tuple[str, float]:
    """The text classifier's own answer (where it was consulted; "none" where a conclusive signature answered)."""
    clf = r.inputs.clf
    if not clf:
        return "none", 0.0
    lab = max(sorted(clf), key=lambda k: clf[k])
    return lab, clf[lab]


def phase_score(train: list[Row], test: list[Row], seed: int = 0) -> dict[str, int]:
    """Phase right, learned and by the rules, on ``test`` with the model fitted on ``train``."""
    return phase_scores(train, {"": test}, seed)[""]


def phase_scores(train: list[Row], tests: dict[str, list[Row]], seed: int = 0) -> dict[str, dict[str, int]]:
    """``phase_score`` of each named test set, with one model fitted on ``train``."""
    tests = {k: phase_rows(t) for k, t in tests.items()}

    def rules(t: list[Row]) -> int:
        return sum(r.phase_inputs.rules == r.phase_truth for r in t)

    if not any(tests.values()) or len(phase_rows(train)) < 10:
        return {k: {"n": len(t), "learned": 0, "rules": rules(t)} for k, t in tests.items()}
    from forensics.diagnosis.decision.pair_model import PairModel
    from forensics.lab.phase_train import with_phase_priors

    names = list(tests)
    train, primed = with_phase_priors(phase_rows(train), *(tests[k] for k in names))
    model = PairModel(export(fit_phase(train, seed), train, {}, PHASE_FEATURES, 0.0), PHASE_FEATURES,
                      phase_pair_vector)
    return {k: {"n": len(t), "learned": sum(phase_answer(model, r) == r.phase_truth for r in t), "rules": rules(t)}
            for k, t in zip(names, primed)}


def _sum_phase(parts: list[dict[str, int]]) -> dict[str, int]:
    return {k: sum(p[k] for p in parts) for k in ("n", "learned", "rules")}


def corpus_hash(rows: list[Row]) -> str:
    h = hashlib.sha256()
    for r in sorted(rows, key=lambda r: r.source):
        h.update(r.source.encode())
        h.update(r.truth.encode())
        h.update(json.dumps(pair_vector(r.inputs, r.truth)).encode())
    return h.hexdigest()[:16]


def held_out_rows() -> list[Row]:
    """The public rows read as a family never met would be: without its own signatures
    (``rules_holdout``) and with a classifier that never read it."""
    from forensics.lab.rules_holdout import held_out_signatures

    return collect_rows(project=False, signatures_of=held_out_signatures())


def train_decision_models(out: Path, phase_out: Path, seed: int = 0, rows: list[Row] | None = None,
                          held: list[Row] | None = None, folds: int | None = None) -> dict[str, Any]:
    """Fit the label and phase models on every row; write them (with their cross-validated figures).
    ``folds``: the public families held out in that many grouped folds, not one at a time (``crossval``)."""
    from threadpoolctl import threadpool_limits

    rows = rows if rows is not None else collect_rows()
    held = held if held is not None else held_out_rows()
    # One thread: hundreds of small fits, which many BLAS threads on a shared machine slow down ~5x.
    with threadpool_limits(1):
        return _train_decision_models(out, phase_out, seed, rows, held, folds)


def label_model_data(rows: list[Row], held: list[Row], cv: dict[str, Any], seed: int = 0,
                     folds: int | None = None) -> dict[str, Any]:
    """The label model fitted on every row, as ``decision.json`` holds it, with the figures of ``cv``
    (``crossval``) and whether it ships."""
    import sklearn

    digest = corpus_hash(rows)
    meta = {"version": f"label-{digest[:8]}", "rows": len(rows),
            "groups": dict(sorted(Counter(r.group for r in rows).items())),
            "labels": dict(sorted(Counter(r.truth for r in rows).items())),
            "corpus_hash": digest, "seed": seed, "scikit_learn": sklearn.__version__,
            "crossval": cv, "crossval_folds": folds, "unknown_below": cv["unknown_below"], "C": C_REGULARISATION}
    # A learned part replaces the rules only where it did better on held-out groups by more
    # than noise (CLEAR_GAIN of the rows); the calibration is taken where its ECE is lower.
    # The label: better read as a family never met (its own signatures out: ``held_out``), and
    # no worse where the family's signatures are in.
    o, h = cv["overall"], cv.get("held_out")
    label_wins = clearly_better(o["learned"]["correct"], o["rules"]["correct"], o["learned"]["n"]) or (
        h is not None and clearly_better(h["learned"]["correct"], h["rules"]["correct"], h["learned"]["n"])
        and o["learned"]["correct"] >= o["rules"]["correct"])
    meta["ships"] = {"label": label_wins,
                     "confidence": (o["rules_calibrated"]["ece"] or 1.0) <= (o["rules"]["ece"] or 1.0),
                     "phase": clearly_better(o["phase"]["learned"], o["phase"]["rules"], o["phase"]["n"])}
    fitted, _ = with_priors(rows)
    data = export(fit(fitted, seed, held=held, unknown_below=cv["unknown_below"]), fitted, meta,
                  unknown_below=cv["unknown_below"])
    data["prior"] = prior_table(rows)
    # The label: the model chooses only where it beat the rules on held-out groups; its
    # probability of the answer replaces the hand-set confidence where that was better calibrated.
    data["choose"] = meta["ships"]["label"]
    data["active"] = meta["ships"]["label"] or meta["ships"]["confidence"]
    return data


def _train_decision_models(out: Path, phase_out: Path, seed: int, rows: list[Row], held: list[Row],
                           folds: int | None = None) -> dict[str, Any]:
    cv = crossval(rows, seed, held, folds)
    data = label_model_data(rows, held, cv, seed, folds)
    meta, digest = data["meta"], data["meta"]["corpus_hash"]
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(data, indent=1, sort_keys=False) + "\n")
    pmeta = {"version": f"phase-{digest[:8]}", "rows": len(phase_rows(rows)), "corpus_hash": digest, "seed": seed,
             "crossval": {fam: f["phase"] for fam, f in cv["families"].items()} | {"overall": cv["overall"]["phase"]}}
    from forensics.lab.phase_train import phase_prior_table, with_phase_priors, words_table

    prows, _ = with_phase_priors(phase_rows(rows))
    pdata = export(fit_phase(prows, seed), prows, pmeta, PHASE_FEATURES, 0.0)
    pdata["prior"], pdata["words"] = phase_prior_table(phase_rows(rows)), words_table(phase_rows(rows))
    pdata["active"] = meta["ships"]["phase"]
    atomic_write_text(phase_out, json.dumps(pdata, indent=1) + "\n")
    meta["evidence_crossval"], meta["ships"]["evidence"] = train_evidence_model(
        phase_out.with_name("evidence.json"), held, digest, seed)
    return meta


def train_evidence_model(out: Path, held: list[Row], digest: str, seed: int = 0) -> tuple[dict[str, Any], bool]:
    """Fit the evidence ranker on ``held`` (``held_out_rows``), judge it on family-held-out folds and
    write it to ``out``, active only where it beat the rules' order by more than noise."""
    from forensics.diagnosis.decision.evidence_rank import FEATURES as EVIDENCE_FEATURES

    # The ranker is judged and fitted where it matters: logs read as a family never met (its own
    # signatures held out), where the rules' first line is weaker than on the logs they were written from.
    ecv = evidence_crossval(held, seed)
    ships = clearly_better(ecv["overall"]["learned"], ecv["overall"]["rules"], ecv["overall"]["n"])
    evidence = {"version": f"evidence-{digest[:8]}", "features": list(EVIDENCE_FEATURES),
                "active": ships,
                "weights": [round(v, 6) for v in fit_evidence(held, seed)],
                "meta": {"rows": len(evidence_rows(held)), "corpus_hash": digest, "crossval": ecv}}
    atomic_write_text(out, json.dumps(evidence, indent=1) + "\n")
    return ecv, ships


def render_crossval(cv: dict[str, Any]) -> str:
    def cell(s: dict[str, Any]) -> str:
        if not s["n"]:
            return "-"
        return f"{s['top1']:.1%} ({s['correct']}/{s['n']})"

    lines = [f"{'held-out family':<22}{'learned top-1':>18}{'rules top-1':>18}{'learned ECE':>13}"
             f"{'conf>=0.9 right':>17}"]
    for fam, s in cv["families"].items():
        c9 = s["learned"]["conf90"]
        lines.append(f"{fam:<22}{cell(s['learned']):>18}{cell(s['rules']):>18}"
                     f"{(s['learned']['ece'] if s['learned']['ece'] is not None else float('nan')):>13.3f}"
                     f"{c9['right']:>10}/{c9['n']:<6}")
    o = cv["overall"]
    c9 = o["learned"]["conf90"]
    lines.append(f"{'overall':<22}{cell(o['learned']):>18}{cell(o['rules']):>18}"
                 f"{(o['learned']['ece'] if o['learned']['ece'] is not None else float('nan')):>13.3f}"
                 f"{c9['right']:>10}/{c9['n']:<6}")
    return "\n".join(lines)


def by_label(pairs: list[tuple[Row, str, float]]) -> dict[str, Counter]:
    out: dict[str, Counter] = defaultdict(Counter)
    for r, lab, _ in pairs:
        out[r.truth]["n"] += 1
        out[r.truth]["ok"] += lab == r.truth
    return out


def evidence_rows(rows: list[Row]) -> list[Row]:
    """Rows whose evidence lists the labelled proving line somewhere (only they say which line is best)."""
    return [r for r in rows if r.evidence and len(r.evidence) > 1 and any(ok for _, ok in r.evidence)]


def evidence_arrays(rows: list[Row]) -> dict[int, tuple[Any, Any]]:
    """Each row's candidate features and which candidates prove the failure (id(row) -> (vectors,
    proves)), computed once: a line's features do not depend on the fold that reads it, and
    recomputing them for every fold made the family-held-out folds take ten minutes."""
    import numpy as np

    from forensics.diagnosis.decision.evidence_rank import entry_vector, last_exception_line

    out: dict[int, tuple[Any, Any]] = {}
    for r in evidence_rows(rows):
        entries = [e for e, _ in r.evidence]
        lines = [e["line"] for e in entries if isinstance(e.get("line"), int)]
        last = last_exception_line(entries)
        out[id(r)] = (np.array([entry_vector(e, i, lines, entries[0], last, entries) for i, e in enumerate(entries)]),
                      np.array([bool(ok) for _, ok in r.evidence]))
    return out


def fit_evidence(rows: list[Row], seed: int = 0, l2: float = EVIDENCE_L2,
                 arrays: dict[int, tuple[Any, Any]] | None = None) -> list[float]:
    """Weights of a conditional logit over each log's evidence entries (one softmax per log: which
    entry proves the failure), L2-regularised. A per-entry classifier asks "does this line prove a
    failure?", which every error line half does; the choice is among one log's lines.
    ``arrays``: ``evidence_arrays`` of these rows or more (computed here when not given)."""
    import numpy as np
    from scipy.optimize import minimize

    from forensics.diagnosis.decision.evidence_rank import FEATURES as EVIDENCE_FEATURES

    logs = evidence_rows(rows)
    d = len(EVIDENCE_FEATURES)
    if not logs:
        return [0.0] * d
    arrays = arrays if arrays is not None else evidence_arrays(logs)
    n = max(len(r.evidence) for r in logs)
    A = np.zeros((len(logs), n, d))
    M = np.zeros((len(logs), n), bool)
    P = np.zeros((len(logs), n), bool)
    for k, r in enumerate(logs):
        a, p = arrays[id(r)]
        A[k, :len(p)], M[k, :len(p)], P[k, :len(p)] = a, True, p

    def loss(w: Any) -> tuple[float, Any]:
        s = np.where(M, A @ w, -1e9)
        e = np.exp(s - s.max(1, keepdims=True)) * M
        z, zp = e.sum(1), (e * P).sum(1)
        q = e * P / zp[:, None] - e / z[:, None]
        return float(-(np.log(zp) - np.log(z)).sum() + 0.5 * l2 * w @ w), -np.einsum("kn,knd->d", q, A) + l2 * w

    w = minimize(loss, np.zeros(d), jac=True, method="L-BFGS-B", options={"maxiter": 500}).x
    return [float(v) for v in w]


def evidence_first(weights: list[float] | None, rows: list[Row]) -> dict[str, int]:
    """How often the labelled proving line comes first: ranked by ``weights``, and in the rules' order."""
    from forensics.diagnosis.decision.evidence_rank import rank

    n = ranked = rules = 0
    for r in rows:
        if not r.evidence:
            continue
        n += 1
        rules += bool(r.evidence[0][1])
        ok = {id(e): good for e, good in r.evidence}
        order = rank([e for e, _ in r.evidence], tuple(weights)) if weights else [e for e, _ in r.evidence]
        ranked += bool(ok[id(order[0])])
    return {"n": n, "learned": ranked, "rules": rules}


def evidence_crossval(rows: list[Row], seed: int = 0, folds: int | None = None) -> dict[str, Any]:
    per = {}
    arrays = evidence_arrays(rows)
    for unit in held_out_units(rows, folds):
        train = [r for r in rows if r.group not in unit]
        w = fit_evidence(train, seed, arrays=arrays) if len(evidence_rows(train)) >= 10 else None
        for fam in sorted(unit):
            per[fam] = evidence_first(w, [r for r in rows if r.group == fam])
    pub = [p for f, p in per.items() if not f.startswith("project:")]
    return {"families": per, "overall": {k: sum(p[k] for p in per.values()) for k in ("n", "learned", "rules")},
            "overall_public": {k: sum(p[k] for p in pub) for k in ("n", "learned", "rules")}}


# -- failure detection (decision.death) ------------------------------------------------------

@dataclass
class DeathLog:
    """One labelled log as the death detector sees it: its lines' texts, and which proves the failure."""
    source: str
    group: str
    failed: bool
    texts: list[str]
    fatal_index: int | None  # index in ``texts`` of the proving line (failures whose line was found)
    verdict: str | None = None  # the rules' verdict without the detector (it only runs where this is not
                                # failed and the server never became ready)
    tail: list[str] | None = None  # the lines the detector reads at run time (none where it is not consulted)
    tail_up: list[str] | None = None  # ... in lifetimes it reads after their readiness (death.consulted_up)
    # ... in lifetimes that served and were stopped, read after readiness up to the stop (what the
    # detector would read had the log been cut there): the healthy side of the bar after readiness.
    tail_stopped: list[str] | None = None


# A healthy label its labeller was unsure of, naming a failure as the other reading ("UNSURE verdict
# starting; alternative failed ...", "UNSURE: the run may have failed"): an excerpt whose thread says
# the run failed past the stored part, or a useless run the labeller did not call failed. Its lines
# are neither a healthy server's (a 0 the detector learns from, a healthy score its bar must stay over)
# nor a proven death: the detector neither trains nor sets its bar on it.
# The sixteenth session's collectors wrote "UNSURE: thread says it failed later" for an excerpt whose
# thread reports a failure past its last stored line (the same kind).
_UNSURE_FAILED = re.compile(r"\bUNSURE\b[^()]{0,200}?\b(?:alternative(?:ly)?[:\s]+(?:verdict\s+)?failed"
                            r"|may have failed|failed later)\b|\bUNSURE:\s*failed\b")


def unsure_healthy(row: dict[str, str]) -> bool:
    """A healthy row whose note says it may have failed (``_UNSURE_FAILED``)."""
    return not row.get("root_cause") and bool(_UNSURE_FAILED.search(row.get("note") or ""))


def _log_sources(public: list[Path] | None = None) -> list[tuple[dict[str, str], str]]:
    out: list[tuple[dict[str, str], str]] = []
    for d in public if public is not None else batch_dirs(PUBLIC_DIR):
        out += [(row, server_family(row.get("server") or "?")) for row in read_labels(d) if not unsure_healthy(row)]
    for d in sorted(p.parent for p in (REPO / "corpora").glob("*/labels.csv")):
        out += [(row, f"project:{d.name}") for row in read_labels(d)]
    return out


def collect_death_logs(public: list[Path] | None = None, per_log: int = 400) -> list[DeathLog]:
    """Every labelled log's event texts (healthy: up to ``per_log`` of them, evenly spread)."""
    from forensics.events.parser import iter_source_events
    from forensics.ingest.sources import Source

    from forensics.diagnosis.signatures import signature_set
    from forensics.pipeline import diagnose_source

    sset = signature_set()
    out: list[DeathLog] = []
    os.environ["FORENSICS_DEATH_MODEL"] = "off"
    try:
        sources = _log_sources(public)
        verdicts, tails = {}, {}
        for row, _group in sources:
            path = Path(row["_path"])
            kept: list = []
            try:
                verdicts[row["_path"]] = diagnose_source(Source(str(path), path), sset=sset, use_classifier=False,
                                                         keep_incidents=kept)["verdict"]
            except Exception:  # noqa: BLE001
                continue
            tails[row["_path"]] = (_read_at_run_time(kept), _read_at_run_time(kept, up=True), _read_before_stop(kept))
    finally:
        os.environ.pop("FORENSICS_DEATH_MODEL", None)
    for row, group in sources:
        path = Path(row["_path"])
        if row["_path"] not in verdicts:
            continue
        try:
            events = [ev for ev in iter_source_events(Source(str(path), path)) if ev.text.strip()]
        except Exception:  # noqa: BLE001 - an unreadable log is left out
            continue
        failed = bool(row.get("root_cause"))
        fatal = row.get("fatal_substring") or ""
        texts = [ev.text for ev in events]
        idx = None
        if failed and fatal:
            raw = _raw_line_texts(path)
            lines = [i for i, t in enumerate(raw, 1) if fatal in t]
            if lines:
                at = lines[0]
                idx = next((i for i, ev in enumerate(events) if ev.line <= at <= (ev.end_line or ev.line)), None)
        tail = tails[row["_path"]]
        if not failed and len(texts) > per_log:
            step = len(texts) / per_log
            texts = [texts[int(i * step)] for i in range(per_log)]
        out.append(DeathLog(str(path), group, failed, texts, idx, verdicts[row["_path"]], *tail))
    return out


def _read_at_run_time(incidents: list, up: bool = False) -> list[str]:
    """The lines the detector reads at run time in a log's lifetimes: only in those it is consulted
    on (never ready, never asked to stop, no shutdown; ``up``: those it reads after readiness), its
    own candidates, less any line that echoes an operator's stop (which the diagnosis drops). A
    healthy log scored on lines the detector never reads set the threshold once: a clean Ctrl-C's
    wrapper line at 0.999."""
    from forensics.diagnosis.decision.death import candidates, consulted, consulted_up
    from forensics.incidents.stops import echoes_a_stop

    read = (lambda inc: not consulted(inc) and consulted_up(inc)) if up else consulted  # noqa: E731
    return [ev.text for inc in incidents if read(inc)
            for ev in candidates(inc, up) if not echoes_a_stop(inc, ev.line)]


def _read_before_stop(incidents: list) -> list[str] | None:
    """In lifetimes that became ready and were then stopped or shut down (which the detector does not
    read), what it reads after readiness up to the stop: a healthy server's lines after its last answer
    that a log cut before the stop would show it."""
    from forensics.diagnosis.decision.death import candidates, stopped_at

    out: list[str] | None = None  # None: no lifetime of the log served and was stopped
    for inc in incidents:
        stop = stopped_at(inc)
        if stop is not None:
            out = (out or []) + [ev.text for ev in candidates(inc, up=True, end=stop)]
    return out


def _raw_line_texts(path: Path) -> list[str]:
    from forensics.ingest.sources import Source

    return "".join(Source(str(path), path).blocks()).split("\n")


def death_docs(logs: list[DeathLog]) -> tuple[list[str], list[int], list[int]]:
    """The detector's training lines: each failure's proving line (1) and every line of a healthy log
    (0), with the index in ``logs`` of the log each came from (a row filter by group reads it)."""
    docs, y, owner = [], [], []
    for i, log in enumerate(logs):
        if log.failed and log.fatal_index is not None:
            docs.append(log.texts[log.fatal_index])
            y.append(1)
            owner.append(i)
        elif not log.failed:
            docs.extend(log.texts)
            y.extend([0] * len(log.texts))
            owner.extend([i] * len(log.texts))
    return docs, y, owner


def fit_death(logs: list[DeathLog], seed: int = 0) -> tuple[dict[str, float], float]:
    """Weights over ``death.tokens``: the proving lines of failures against the lines of healthy logs."""
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    from forensics.diagnosis.decision.death import tokens

    docs, y, _ = death_docs(logs)
    vec = CountVectorizer(analyzer=tokens, binary=True, min_df=2)
    X = vec.fit_transform(docs)
    lr = LogisticRegression(C=C_REGULARISATION, max_iter=5000, class_weight="balanced", random_state=seed)
    lr.fit(X, np.array(y))
    weights = {tok: round(float(w), 5) for tok, w in zip(vec.get_feature_names_out(), lr.coef_[0]) if abs(w) > 1e-3}
    return weights, float(lr.intercept_[0])


def _max_score(weights: dict[str, float], bias: float, texts: list[str]) -> float:
    from forensics.diagnosis.decision.death import LineModel

    m = LineModel({"weights": weights, "bias": bias, "threshold": 0.0})
    return max((m.score(t) for t in texts), default=0.0)


# The threshold was once the highest held-out healthy score: one healthy log (a vLLM-on-TPU benchmark
# client whose excerpt ends 16 lines after vLLM's harmless 'Unable to poll TPU GCE Metadata' ERROR,
# batch-58/001) scored 0.964 held out where the next healthy family's best was 0.524, and took detection
# held out from 49 to 34 of 63: a few outliers may stay over the bar.
# The bar lets through at most this share of the held-out healthy logs and, under that, detects the most
# deaths. A cost per healthy log (ten, then five missed deaths) put the bar past a cliff as the corpus grew
# (fifteenth session: 0.9932, 83 of 181 held-out deaths no rule saw, at ten; 0.6035, 145 of 181 with 11 of 296
# healthy over, at five, which called the project's reproduced healthy twins failed); a fixed false-alarm
# share is steady as healthy logs are added: 0.92, 119 of 181 with 8 of 296.
HEALTHY_SHARE = 0.03
DEATH_MARGIN = 0.002


def death_threshold(healthy: list[float], fatal: list[float]) -> float:
    """The threshold over held-out scores (each healthy log's best line, each failure's proving line)
    that detects the most deaths with at most ``HEALTHY_SHARE`` of the healthy logs over it; on a
    tie the higher one. With no healthy log above a failure this is the highest healthy score plus
    a margin, as before."""
    cands = sorted({min(0.999, h + DEATH_MARGIN) for h in healthy}) or [0.5]
    allowed = int(HEALTHY_SHARE * len(healthy))
    ok = [t for t in cands if sum(h >= t for h in healthy) <= allowed] or [cands[-1]]
    return max(ok, key=lambda t: (sum(s >= t for s in fatal), t))


def consulted_healthy(log: DeathLog) -> bool:
    """A healthy log the detector runs on (no rule called it failed, it never became ready)."""
    return not log.failed and log.verdict not in ("ready", "failed")


def scored_failure(log: DeathLog) -> bool:
    """A failure whose proving line the threshold is weighed on (no rule called it failed; the
    proving line is known)."""
    return log.failed and log.fatal_index is not None and log.verdict != "failed"


def consulted_healthy_up(log: DeathLog) -> bool:
    """A healthy log whose lines after readiness weigh on the bar after readiness: one the detector
    reads there (no rule called it failed; it became ready and was neither stopped nor shut down), or
    one that served and was stopped, read up to its stop (``tail_stopped``). Each counts, also where
    nothing there reads as a death (its score is then 0): the bar is learned from what healthy servers
    print after they answered, most often nothing of the kind."""
    return not log.failed and (log.verdict == "ready" and log.tail_up is not None or log.tail_stopped is not None)


def healthy_up_lines(log: DeathLog) -> list[str]:
    """What the detector reads (or would, cut before the stop) in a healthy log after its readiness."""
    return (log.tail_up or [] if log.verdict == "ready" else []) + (log.tail_stopped or [])


def scored_failure_up(log: DeathLog) -> bool:
    """A failure no rule called failed whose server had become ready: scored on what the detector
    reads after readiness at run time (its proving line is often before that progress, or is the
    runner's line its server reports; what decides whether it is called failed is the tail)."""
    return log.failed and log.verdict == "ready" and bool(log.tail_up)


def held_out_scores(w: dict[str, float], b: float, test: list[DeathLog]) -> dict[str, list[float]]:
    """The scores the thresholds are chosen on, of logs the fit (``w``, ``b``) never read: each
    healthy start-up's best line and each failure's proving line (``healthy``, ``fatal``); after
    readiness, each healthy and each failed log's best line of what the detector reads there
    (``healthy_up``, ``fatal_up``)."""
    return {"healthy": [_max_score(w, b, g.tail if g.tail is not None else g.texts[-40:]) for g in test
                        if consulted_healthy(g)],
            "fatal": [_max_score(w, b, [g.texts[g.fatal_index]]) for g in test if scored_failure(g)],
            "healthy_up": [_max_score(w, b, healthy_up_lines(g)) for g in test if consulted_healthy_up(g)],
            "fatal_up": [_max_score(w, b, g.tail_up or []) for g in test if scored_failure_up(g)]}


def death_crossval(logs: list[DeathLog], seed: int = 0) -> dict[str, Any]:
    """Held out one group at a time: the best line score of each healthy log and of each
    failure's proving line. The threshold is chosen on them by ``death_threshold``; the bar after
    readiness (``threshold_up``) the same way on the scores after readiness."""
    per: dict[str, Any] = {}
    got: dict[str, list[Any]] = {"healthy": [], "fatal": [], "healthy_up": [], "fatal_up": []}
    for fam in sorted({g.group for g in logs}):
        train = [g for g in logs if g.group != fam]
        test = [g for g in logs if g.group == fam]
        w, b = fit_death(train, seed)
        sc = held_out_scores(w, b, test)
        for k in got:
            got[k] += [(fam, s) for s in sc[k]]
        hs = sc["healthy"]
        per[fam] = {"healthy": len(hs), "healthy_max": round(max(hs), 4) if hs else None,
                    "failures": len(sc["fatal"]), "healthy_up": len(sc["healthy_up"]), "failures_up": len(sc["fatal_up"])}
    vals = {k: [s for _, s in v] for k, v in got.items()}
    threshold = death_threshold(vals["healthy"], vals["fatal"])
    up = death_threshold(vals["healthy_up"], vals["fatal_up"])
    for fam, v in per.items():
        v["detected"] = sum(s >= threshold for f, s in got["fatal"] if f == fam)
        v["detected_up"] = sum(s >= up for f, s in got["fatal_up"] if f == fam)
    return {"threshold": round(threshold, 4), "threshold_up": round(up, 4), "families": per,
            "detected": sum(s >= threshold for s in vals["fatal"]), "failures": len(vals["fatal"]),
            "healthy": len(vals["healthy"]), "healthy_over": sum(h >= threshold for h in vals["healthy"]),
            "detected_up": sum(s >= up for s in vals["fatal_up"]), "failures_up": len(vals["fatal_up"]),
            "healthy_up": len(vals["healthy_up"]), "healthy_up_over": sum(h >= up for h in vals["healthy_up"])}


def train_death_model(out: Path, seed: int = 0, logs: list[DeathLog] | None = None) -> dict[str, Any]:
    logs = logs if logs is not None else collect_death_logs()
    cv = death_crossval(logs, seed)
    w, b = fit_death(logs, seed)
    data = {"version": f"death-{len(logs)}", "weights": dict(sorted(w.items())), "bias": round(b, 5),
            "threshold": cv["threshold"], "threshold_up": cv["threshold_up"], "meta": {"logs": len(logs), "crossval": cv}}
    atomic_write_text(out, json.dumps(data, indent=0) + "\n")
    return cv
