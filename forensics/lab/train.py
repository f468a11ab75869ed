"""``forensics train``: fit the classifier on labelled corpora (train split).

Rebuilding from a clean checkout reproduces the shipped model: the corpus is
in the repo, every step is seeded, and the metadata records the corpus hash.
"""
from __future__ import annotations

import hashlib
import platform
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from forensics.lab.evaluate import read_labels
from forensics.diagnosis.features import (TEXT_FIELDS, incident_features, incident_frame_tokens, mask,
                                          warning_candidates)
from forensics.pipeline import diagnose_source
from forensics.diagnosis.signatures import signature_set
from forensics.ingest.sources import Source

DEFAULT_CORPORA = ("corpora/generated", "corpora/cpu", "corpora/gpu")
FEATURE_VERSION = 4  # 4: absent fields empty, no NO_* placeholder words


def build_pipeline(seed: int = 0) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import Pipeline

    word = r"[A-Za-z_][A-Za-z0-9_]+"
    idx = {name: i for i, name in enumerate(TEXT_FIELDS)}
    pre = ColumnTransformer([
        ("words", TfidfVectorizer(token_pattern=word, ngram_range=(1, 2), sublinear_tf=True, max_features=8000),
         idx["text"]),
        # Character n-grams carry the wording across unseen module and library names.
        ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, max_features=12000),
         idx["text"]),
        ("exc_words", TfidfVectorizer(token_pattern=word, ngram_range=(1, 1), sublinear_tf=True, max_features=3000),
         idx["exc"]),
        ("modules", TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True, lowercase=False, max_features=3000),
         idx["modules"]),
        ("context", TfidfVectorizer(token_pattern=r"\S+", lowercase=False), idx["context"]),
        # The proving line on its own, as words and as character n-grams (wording across releases).
        ("proof_words", TfidfVectorizer(token_pattern=word, ngram_range=(1, 2), sublinear_tf=True, max_features=4000),
         idx["proof"]),
        ("proof_chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, max_features=8000),
         idx["proof"]),
        # The message catalogue's facts about the failing lines: their own block, so a
        # handful of tokens is not drowned by the many of the context field.
        ("catalogue", TfidfVectorizer(token_pattern=r"\S+", lowercase=False), idx["catalogue"]),
    ], sparse_threshold=1.0)
    base = LogisticRegression(C=8.0, max_iter=4000, class_weight="balanced")
    clf = CalibratedClassifierCV(base, method="sigmoid", ensemble=False,
                                 cv=StratifiedKFold(5, shuffle=True, random_state=seed))
    return Pipeline([("features", pre), ("model", clf)])


def collect(dirs: list[Path], split: str | None, groups: list[str] | None = None,
            dropout: bool = True) -> tuple[list[dict[str, str]], list[str], list[dict[str, Any]], str]:
    """Features and labels of the failed incident of every labelled failure log,
    plus warning observations for template learning and a corpus hash. ``groups``
    (when given) receives each feature row's server family; ``dropout``: some rows
    lose their catalogue facts (``CATALOGUE_DROPOUT``: for corpora whose every
    failing line is a catalogue message)."""
    from forensics.lab.public_corpus import server_family

    sset = signature_set()
    feats, labels, observations = [], [], []
    h = hashlib.sha256()
    for d in dirs:
        rows = read_labels(d, split)
        h.update((d / "labels.csv").read_bytes())
        for row in rows:
            path = Path(row["_path"])
            h.update(path.name.encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
            incs: list = []
            res = diagnose_source(Source(str(path), path), sset=sset, use_classifier=False, keep_incidents=incs)
            main_idx = res.get("incident", len(incs) - 1)
            if not incs:
                continue
            inc = incs[main_idx] if main_idx is not None and main_idx < len(incs) else incs[-1]
            label = row.get("root_cause") or None
            fail_line = res["evidence"][0]["line"] if res.get("evidence") else None
            fail_ts = None
            if inc.start_ts is not None and res.get("time_to_failure_s") is not None:
                from datetime import timedelta

                fail_ts = inc.start_ts + timedelta(seconds=res["time_to_failure_s"])
            part_of_failure = {h.line for h in inc.failure_hits + inc.wrapper_hits}
            templates: dict[str, float | None] = {}
            for ev in warning_candidates(inc):
                if (fail_line is not None and ev.line >= fail_line) or ev.line in part_of_failure:
                    continue
                lead = (fail_ts - ev.ts).total_seconds() if fail_ts is not None and ev.ts is not None else None
                templates.setdefault(mask(ev.text[:200]), lead)
            observations.append({"label": label, "templates": templates})
            if not label or label == "unknown":
                continue  # `unknown` says no label is known: not a class for the classifier to learn
            f = incident_features(inc, res.get("phase"), fail_line)
            f["_frames"] = incident_frame_tokens(inc, fail_line)
            if dropout and _without_catalogue(path.name):
                f["catalogue"] = "catp_none"
            feats.append(f)
            labels.append(label)
            if groups is not None:
                groups.append(server_family(row.get("server") or "?"))
    return feats, labels, observations, h.hexdigest()[:16]


# Nearly every failing line of the corpus is a catalogue message; many of a
# real log are not (programs the catalogue has not mined). Training sees a
# share of its incidents without the catalogue's facts, so the model keeps
# reading the words too and an unknown message does not lower its confidence.
CATALOGUE_DROPOUT = 0.4


def _without_catalogue(name: str) -> bool:
    h = int(hashlib.sha256(f"catalogue-dropout|{name}".encode()).hexdigest()[:8], 16)
    return (h % 1000) / 1000 < CATALOGUE_DROPOUT


def learn_frame_priors(feats: list[dict[str, str]], labels: list[str], min_support: int = 5,
                       max_tokens: int = 3000) -> dict[str, dict[str, float]]:
    """P(label | a frame's module or function) over the training failures:
    what a cut traceback's frames alone say about its cause (FlashInfer's
    decode plan inside CUDA graph capture on a JIT build -> toolchain labels)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for f, label in zip(feats, labels):
        for tok in set(f.get("_frames", "").split()):
            counts[tok][label] += 1
    out: dict[str, dict[str, float]] = {}
    for tok, c in sorted(counts.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(c.values())
        if n < min_support:
            continue
        out[tok] = {lab: round(k / n, 3) for lab, k in c.most_common(4)}
        if len(out) >= max_tokens:
            break
    return out


def _part_of_a_failure(sset: Any):  # type: ignore[no-untyped-def]
    from forensics.diagnosis.signatures import View

    fails = [s for s in sset.signatures if s.kind in ("failure", "wrapper")]

    def exclude(template: str) -> bool:
        if template.startswith(("The above exception", "During handling of the above", "Traceback")):
            return True
        return bool(sset.match_views([View(template)], fails))

    return exclude


def learn_templates(observations: list[dict[str, Any]], min_support: int = 4, min_lift: float = 3.0,
                    min_precision: float = 0.5, exclude: Any = None, min_lead_s: float = 2.0) -> list[dict[str, Any]]:
    """Warning templates that precede a label far more often than chance.
    ``exclude(template)`` drops lines that are part of a failure (a failure or
    wrapper signature knows them), not a warning of one."""
    n = len(observations)
    label_n = Counter(o["label"] for o in observations if o["label"])
    df: Counter = Counter()
    df_label: dict[str, Counter] = defaultdict(Counter)
    leads: dict[tuple[str, str], list[float]] = defaultdict(list)
    for o in observations:
        for t, lead in o["templates"].items():
            df[t] += 1
            if o["label"]:
                df_label[t][o["label"]] += 1
                if lead is not None:
                    leads[(t, o["label"])].append(lead)
    out = []
    for t, by_label in df_label.items():
        if exclude is not None and exclude(t):
            continue
        for label, support in by_label.items():
            if support < min_support:
                continue
            precision = support / df[t]
            lift = precision / (label_n[label] / n)
            lt = sorted(leads.get((t, label), []))
            median_lead = lt[len(lt) // 2] if lt else None
            # A warning comes well before the failure; lines printed in the
            # same breath as it (compiler errors, watchdog dumps) are the failure.
            if median_lead is not None and median_lead < min_lead_s:
                continue
            if lift >= min_lift and precision >= min_precision:
                out.append({"template": t, "label": label, "support": support, "seen": df[t],
                            "precision": round(precision, 3), "lift": round(lift, 2), "median_lead_s": median_lead})
    return sorted(out, key=lambda x: (-x["lift"], x["template"]))


def _fit(feats: list[dict[str, str]], labels: list[str], seed: int) -> Any:
    import numpy as np

    X = np.array([[f[k] for k in TEXT_FIELDS] for f in feats], dtype=object)
    pipe = build_pipeline(seed)
    pipe.fit(X, labels)
    for _, vec, _ in pipe.named_steps["features"].transformers_:
        if hasattr(vec, "stop_words_"):
            vec.stop_words_ = None  # the pruned vocabulary, only kept for introspection (tens of MB)
    return pipe


def train(dirs: list[Path], out: Path, seed: int = 0, public: list[Path] | None = None,
          folds_dir: Path | None = None) -> dict[str, Any]:
    """The classifier over ``dirs``' train split and every labelled failure of the ``public``
    batch folders (none unless given: measured held out in the fifth session, not taken; see the
    README's "Learned decisions"), and then its fold classifiers in ``folds_dir`` (``write_folds``;
    the shipped model's go to ``FOLD_DIR``)."""
    import numpy as np
    import sklearn

    from forensics.diagnosis.classifier.files import save_model

    feats, labels, observations, corpus_hash = collect(dirs, "train")
    groups = [""] * len(feats)
    pub_dirs = public or []
    if pub_dirs:
        # Real logs of every family the corpus holds: what the generated corpus's wordings lack
        # (placeholder-free tracebacks, foreign prefixes). Their warnings stay out of the learned
        # templates (early warnings are held out by family elsewhere).
        pub_groups: list[str] = []
        pf, pl, _, pub_hash = collect(pub_dirs, None, pub_groups, dropout=False)
        feats, labels, groups = feats + pf, labels + pl, groups + pub_groups
        corpus_hash = hashlib.sha256(f"{corpus_hash}|{pub_hash}".encode()).hexdigest()[:16]
    pipe = _fit(feats, labels, seed)
    templates = learn_templates(observations, exclude=_part_of_a_failure(signature_set()))
    frame_priors = learn_frame_priors(feats, labels)
    import skops

    meta = {
        "model_version": f"{datetime.now(timezone.utc).strftime('%Y%m%d')}-{corpus_hash[:8]}",
        "corpus_hash": corpus_hash,
        "corpora": [str(d) for d in dirs],
        "n_train": len(labels),
        "labels": sorted(set(labels)),
        "label_counts": dict(sorted(Counter(labels).items())),
        "feature_version": FEATURE_VERSION,
        "seed": seed,
        "versions": {"scikit-learn": sklearn.__version__, "numpy": np.__version__, "skops": skops.__version__,
                     "python": platform.python_version()},
        "warning_templates": templates,
        "frame_priors": frame_priors,
        "public_folds": {"folds": PUBLIC_FOLDS, "rows": len(groups) - groups.count(""),
                         "family_fold": family_folds(groups)} if pub_dirs else None,
    }
    save_model(pipe, meta, out)
    from forensics.diagnosis.classifier.scorer import export_pipeline, file_digest, save_scorer

    scorer_meta = dict(meta, skops_digest=file_digest(out))
    save_scorer(export_pipeline(pipe, TEXT_FIELDS, scorer_meta), out.with_name(out.name.replace(".skops", "") + ".scorer.json.gz"))
    if pub_dirs and folds_dir is not None:
        write_folds(feats, labels, groups, dict(meta, frame_priors=None), folds_dir, seed)
    return meta


# -- fold classifiers: the public corpus held out by family ---------------------------------
# Trained on public logs too, the classifier's answers on a public log are no longer honest
# figures of a family it never met. Each fold classifier leaves out the public families of its
# fold (the table of folds is in the shipped model's metadata, ``public_folds``); the lab
# diagnoses a public log with the one that never read its family (``fold_classifier``): the
# label decision's stacking inputs (out of fold) and the rules' held-out figures. The folds are
# balanced by rows (the largest families first, each to the fold with fewest rows so far): a fold
# that held vLLM and SGLang out together would read them with half the public corpus missing.
PUBLIC_FOLDS = 5
FOLD_DIR = Path(__file__).resolve().parents[2] / ".lab" / "classifier-folds"


def family_folds(groups: list[str], folds: int = PUBLIC_FOLDS) -> dict[str, int]:
    """family -> its fold, from each public row's family (``""``: a project row, in every fold)."""
    sizes = Counter(g for g in groups if g)
    load = [0] * folds
    out: dict[str, int] = {}
    for fam, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        k = min(range(folds), key=lambda i: (load[i], i))
        out[fam] = k
        load[k] += n
    return out


def write_folds(feats: list[dict[str, str]], labels: list[str], groups: list[str], meta: dict[str, Any],
                folds_dir: Path, seed: int = 0) -> None:
    from forensics.diagnosis.classifier.scorer import export_pipeline, save_scorer

    folds_dir.mkdir(parents=True, exist_ok=True)
    fold_of = family_folds(groups)
    for k in range(PUBLIC_FOLDS):
        keep = [i for i, g in enumerate(groups) if not g or fold_of[g] != k]
        fk, lk = [feats[i] for i in keep], [labels[i] for i in keep]
        pipe = _fit(fk, lk, seed)
        fmeta = dict(meta, fold=k, n_train=len(lk), frame_priors=learn_frame_priors(fk, lk),
                     model_version=f"{meta['model_version']}-fold{k}")
        save_scorer(export_pipeline(pipe, TEXT_FIELDS, fmeta), folds_dir / f"fold-{k}.scorer.json.gz")


def trained_on_public(clf: Any) -> bool:
    """Whether ``clf`` (a loaded or lazy classifier) read public logs in training."""
    model = getattr(clf, "model", clf)
    return bool((getattr(model, "meta", None) or {}).get("public_folds"))


def fold_classifier(family: str, shipped: Any) -> Any:
    """The fold classifier that never read ``family``'s public logs (made with ``shipped``: the
    same corpus hash); ``shipped`` itself for a family it never read."""
    from forensics.diagnosis.classifier.loader import model_at
    from forensics.errors import ModelError

    meta = getattr(shipped, "model", shipped).meta
    folds = meta.get("public_folds") or {}
    if "family_fold" not in folds:
        raise ModelError("the classifier read the public corpus but names no fold of each family; run forensics train")
    k = folds["family_fold"].get(family)
    if k is None:
        return shipped
    clf = model_at(str(FOLD_DIR / f"fold-{k}.scorer.json.gz"))
    if clf.model.meta.get("corpus_hash") != meta.get("corpus_hash"):
        raise ModelError(f"{FOLD_DIR}: fold classifiers of another training run; run forensics train")
    return clf


def held_out_classifiers(clf: Any) -> Callable[[str], Any]:
    """family -> the text classifier that never read that family's logs. The shipped one, unless
    it was trained on the public corpus too: then the fold classifier of ``train`` that held the
    family's fold out (``forensics.lab.train.fold_classifier``)."""
    if clf is None or not trained_on_public(clf):
        return lambda fam: clf
    return lambda fam: fold_classifier(fam, clf)


# -- every learned part, in the order that reaches its fixed point in one run -------------------
# Each part is fitted after the parts whose answers its training rows read, so one run of
# ``forensics train`` leaves every shipped model trained on the answers of the models shipped
# beside it (a second run changes nothing):
#   death      reads nothing learned (its rows are diagnosed with itself off, without a classifier);
#   classifier reads the death detector (which lifetimes failed, where; its rows without a classifier);
#   decision   (label, phase, evidence) reads the classifier and the death detector, each itself off;
#   listing    (early warnings, and its live gate) reads the label the decision model gives.
TRAIN_ORDER = ("death", "classifier", "decision", "listing")


def train_everything(steps: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run ``steps`` (name -> the step) in ``TRAIN_ORDER``; each step's result by name."""
    missing = set(TRAIN_ORDER) - set(steps)
    if missing:
        raise ValueError(f"training steps missing: {sorted(missing)}")
    return {name: steps[name]() for name in TRAIN_ORDER}
