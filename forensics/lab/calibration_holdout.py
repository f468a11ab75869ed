"""``python -m forensics.lab.calibration_holdout RULES_HOLDOUT.json``: what each held-out answer's
confidence rests on, and the confidence maps refit by families held out.

``rules_holdout`` records each held-out failure's answer, confidence and truth. This reads the same
failures again as it read them (each family without its own signatures, the ``own`` list the JSON
holds; the classifier ``rules_holdout`` gave it) and records, per answer, the label model's inputs:
the kind of answer whose map gave the confidence (``decision.calibration.answer_kind``), the number
the map read (the model's probability, or an ``unknown`` answer's lead), the deciding signature.

``--refit``: the maps fitted on these readings with each family held out in turn (``fit_calibration``
on the other families' answers, the family's own answers read through them): the held-out ECE and
answers at >= 0.9 right of the refit beside the shipped maps' on the same answers. A map fitted on
the answers it is scored on would be an in-sample figure; this never reports one.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

from forensics.atomic import atomic_write_text


def aside(family: str) -> bool:
    """The third of families a fix branch keeps aside (md5 of the family name mod 3 == 0)."""
    return int(hashlib.md5(family.encode()).hexdigest(), 16) % 3 == 0


def reading(path: str, sset: Any, clf: Any) -> dict[str, Any] | None:
    """One failure diagnosed as ``rules_holdout`` reads it, with the label model's reading of its
    answer: kind of answer, the number the kind's map read, the deciding signature (None: not
    called failed, or no label decision recorded)."""
    from forensics.diagnosis.decision.calibration import UNTOLD, answer_kind, unknown_lead, unknown_reading
    from forensics.diagnosis.decision.label_model import RECORDER, label_model
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    records: list = []
    kept: list = []
    token = RECORDER.set(records)
    try:
        res = diagnose_source(Source(path, Path(path)), sset=sset, classifier=clf, keep_incidents=kept)
    except Exception:  # noqa: BLE001 - an unreadable log is reported as such, not fatal
        return None
    finally:
        RECORDER.reset(token)
    idx = res.get("incident")
    if idx is None or idx >= len(kept):
        return None
    inp = next((r[2] for r in reversed(records) if r[0] == "label" and r[1] is kept[idx]), None)
    model = label_model()
    if inp is None or model is None:
        return None
    label = res.get("root_cause")
    probs = {k: min(v, 0.999) for k, v in model.proba(inp).items()}
    guess = set_aside_label(model, inp, probs) if label == "unknown" else None
    if guess is not None:  # an ``unknown`` the log's silence gave (``learned.untold``): its own map
        kind, x = UNTOLD, probs[guess]
    elif label == "unknown":
        kind, x = unknown_reading(model.calibration or {}, probs)
    else:
        kind, x = answer_kind(inp, label), probs.get(str(label), 0.0)
    return {"answer": label, "confidence": res.get("confidence"), "kind": kind, "x": round(x, 6),
            "lead": round(unknown_lead(probs), 6) if label == "unknown" else None,
            "p_unknown": round(probs.get("unknown", 0.0), 6), "truncated": inp.truncated,
            "decided_by": res.get("decided_by"), "signature": res.get("signature"), "rule_label": inp.rule_label,
            "rule_strength": inp.rule_strength, "rule_priority": inp.rule_priority,
            "rule_level": inp.rule_level, "says": list(inp.says or ()), "cat_says": list(inp.cat_says or ()),
            "clf_top": max(inp.clf, key=lambda k: inp.clf[k]) if inp.clf else None,  # type: ignore[index]
            "proof": (inp.proof or "")[:300]}


def set_aside_label(model: Any, inp: Any, probs: dict[str, float]) -> str | None:
    """The label ``learned.untold`` set aside for an ``unknown`` answer (the model's first label, over
    its ``unknown`` bar, on a line that names no cause, named by nothing else), else None. (A strong
    conclusive signature or a warned label never reaches it; neither answers ``unknown`` then.)"""
    from forensics.diagnosis.decision.learned import untold

    if inp.rule_label is not None and inp.rule_strength == "strong" and inp.clf is None:
        return None  # a conclusive signature's own ``unknown``
    top = max(sorted(probs), key=lambda k: probs[k])
    if top == "unknown" or round(probs[top], 3) < model.unknown_below:
        return None
    return top if untold(inp, top) else None


def readings(holdout: dict[str, Any], only: Callable[[dict[str, Any]], bool] = lambda c: True
             ) -> list[dict[str, Any]]:
    """Every held-out failure of ``holdout`` (a ``rules_holdout --json`` record) that ``only``
    keeps, read again with its family's own signatures out."""
    from forensics.diagnosis.signatures import signature_set
    from forensics.lab.rules_holdout import reduced_set
    from forensics.lab.train import held_out_classifiers
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    fold = held_out_classifiers(clf)
    own = {f: set(v["own"]) for f, v in holdout["families"].items()}
    out = []
    for fam, f in sorted(holdout["families"].items()):
        cases = [c for c in f["cases"] if only(c)]
        if not cases:
            continue
        reduced, fam_clf = reduced_set(sset, own, fam), fold(fam)
        for c in cases:
            got = reading(c["path"], reduced, fam_clf) or {}
            out.append({"family": fam, "path": c["path"], "truth": c["truth"],
                        "held_answer": c["answer"], "held_confidence": c["confidence"], **got})
    return out


def figures(pairs: Iterable[tuple[float, bool]]) -> dict[str, Any]:
    """ECE (ten bins) and answers at >= 0.9 right of (confidence, right) pairs."""
    from forensics.lab.evaluate import expected_calibration_error

    pairs = list(pairs)
    hi = [ok for c, ok in pairs if c >= 0.9]
    return {"n": len(pairs), "ece": expected_calibration_error(pairs), "conf90": len(hi), "conf90_right": sum(hi)}


def map_reading(r: dict[str, Any]) -> tuple[str, float]:
    """The map a refit reads an answer through and the number it reads: an ``unknown`` answer by how
    far ``unknown`` leads (``calibration.UNKNOWN_LEAD``), any other by its kind and probability."""
    from forensics.diagnosis.decision.calibration import UNKNOWN_LEAD, UNTOLD

    if r["kind"] == UNTOLD:  # (read by the model's probability of the label set aside, as at run time)
        return UNTOLD, float(r["x"])
    return (UNKNOWN_LEAD, float(r["lead"])) if r["answer"] == "unknown" else (r["kind"], float(r["x"]))


def fitted_maps(rows: list[dict[str, Any]]) -> dict[str, list[list[float]]]:
    """The maps (``decision_train.fit_calibration``) fitted on ``rows``' answers."""
    from forensics.lab.decision_train import fit_calibration

    return fit_calibration([(*map_reading(r), r["answer"] == r["truth"]) for r in rows])


def refit_by_family(rows: list[dict[str, Any]]) -> dict[str, tuple[float, bool]]:
    """path -> (confidence, right) of each answer read through maps fitted on the other families'
    answers alone (leave one family out). Every map is refit, the ``unknown`` answers' too (by how far
    ``unknown`` leads): until the twenty-fourth session they kept a one-point shipped map (0.48 whatever
    the model read) while held out they were right 210 times in 317, which alone took the held-out ECE
    over 0.05; refit, ECE 0.052 -> 0.025."""
    from forensics.diagnosis.decision.calibration import calibrated

    by_fam: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_fam[r["family"]].append(r)
    out = {}
    for fam, mine in by_fam.items():
        table = fitted_maps([r for r in rows if r["family"] != fam])
        for r in mine:
            out[r["path"]] = (round(min(0.999, calibrated(table, *map_reading(r))), 3), r["answer"] == r["truth"])
    return out


def by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per kind of answer: answers, share right, mean confidence given, answers at >= 0.9 and right."""
    out: dict[str, dict[str, Any]] = {}
    for kind in sorted({r["kind"] for r in rows}):
        got = [r for r in rows if r["kind"] == kind]
        hi = [r for r in got if (r["confidence"] or 0) >= 0.9]
        out[kind] = {"n": len(got), "right": sum(r["answer"] == r["truth"] for r in got),
                     "mean_conf": round(sum(r["confidence"] or 0 for r in got) / len(got), 3),
                     "conf90": len(hi), "conf90_right": sum(r["answer"] == r["truth"] for r in hi)}
    return out


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The shipped maps' figures and the refit's, held out by family, overall and per third."""
    usable = [r for r in rows if r.get("kind")]
    refit = refit_by_family(usable)
    out: dict[str, Any] = {"kinds": by_kind(usable)}
    for part, keep in (("all", lambda f: True), ("studied", lambda f: not aside(f)), ("aside", aside)):
        mine = [r for r in usable if keep(r["family"])]
        out[part] = {"shipped": figures((r["confidence"], r["answer"] == r["truth"]) for r in mine),
                     "refit_held_out": figures(refit[r["path"]] for r in mine)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.calibration_holdout",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("holdout", help="a rules_holdout --json record")
    ap.add_argument("--readings", help="write (or, with --refit only, read) the readings here (JSON)")
    ap.add_argument("--wrong-sure", action="store_true", help="read only the wrong answers at >= 0.9")
    ap.add_argument("--refit", action="store_true", help="the maps refit by families held out")
    ap.add_argument("--write", metavar="MODEL", help="with --refit: write the maps fitted on every answer "
                    "into this label model file (decision.json), its figures held out by family beside them")
    a = ap.parse_args(argv)
    holdout = json.loads(Path(a.holdout).read_text())
    if a.readings and Path(a.readings).exists() and a.refit:
        rows = json.loads(Path(a.readings).read_text())
    else:
        only = (lambda c: (c["confidence"] or 0) >= 0.9 and c["answer"] != c["truth"]) if a.wrong_sure else \
            (lambda c: c["confidence"] is not None)
        rows = readings(holdout, only)
        if a.readings:
            atomic_write_text(Path(a.readings), json.dumps(rows, indent=1) + "\n")
    moved = [r for r in rows if r.get("answer") != r["held_answer"] or r.get("confidence") != r["held_confidence"]]
    print(f"{len(rows)} read again; {len(moved)} answer or confidence differ from the record")
    print("kinds:", json.dumps(by_kind([r for r in rows if r.get("kind")])))
    if a.refit:
        got = report(rows)
        print(json.dumps(got, indent=1))
        if a.write:
            write_maps(Path(a.write), rows, got, a.holdout)
    return 0


def write_maps(model: Path, rows: list[dict[str, Any]], got: dict[str, Any], source: str) -> None:
    """Replace ``model``'s maps by those fitted on every answer of ``rows``; its weights are kept.
    The figures written beside them are the refit's held out by family (never in-sample ones)."""
    data = json.loads(model.read_text())
    data["calibration"] = fitted_maps([r for r in rows if r.get("kind")])
    data.setdefault("meta", {})["calibration_refit"] = {
        "source": f"rules_holdout answers ({Path(source).name}), {len(rows)} failures",
        "kinds": dict(sorted(Counter(map_reading(r)[0] for r in rows if r.get("kind")).items())),
        "held_out_by_family": {part: got[part]["refit_held_out"] for part in ("all", "studied", "aside")},
        "before": {part: got[part]["shipped"] for part in ("all", "studied", "aside")}}
    atomic_write_text(model, json.dumps(data, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
