"""``python -m forensics.lab.miss_anatomy``: why each held-out miss happened, decided by code.

Reads a ``rules_holdout --json`` file (each family's held-out cases and its own signatures),
diagnoses every miss again exactly as rules_holdout did (the family's own signatures taken
out, the fold classifier that never read the family), and puts it in one bucket, first that
applies:

  e  no failure called (the answer is ``none``);
  a  the labelled fatal line is no candidate at all: no line of the evidence list names it
     (the tool never offered it as proof, so neither the ranker nor the label decision saw it);
  b  it is a candidate, but nothing the tool knows gives it the labelled root cause: no
     catalogue entry matches it, or only entries without a label or with another one, no
     wording class (``label_wording``) names that label, and no signature of the held-out
     set with that label matches it (a gap of knowledge). A line labelled ``unknown`` is
     known as such when neither the catalogue nor a wording class names a label for it;
  c  it is known with the right label, but the ranker put another line first;
  d  the evidence is right (first) and known, but the label decision chose another label;
  f  anything else.

A miss is a wrong top-1 or an evidence list whose first line does not name the labelled
fatal line. Each case also keeps the facts the bucket was decided from (catalogue status
of the fatal line, its place in the evidence, whether a held-out signature knows it), so a
bucket can be split further without reading a log. ``--aside`` names families never to
read (their cases are counted apart, per bucket only).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

from forensics.atomic import atomic_write_text

BUCKETS = {
    "a": "fatal line not a candidate",
    "b": "candidate, not known with its label",
    "c": "known, ranker put another line first",
    "d": "evidence right, label decision wrong",
    "e": "no failure called",
    "f": "other",
}
MAX_TEXT = 400  # as catalogue_features: a lookup reads the first 400 characters of a line


def is_miss(case: dict[str, Any]) -> bool:
    return case["answer"] != case["truth"] or not case.get("evidence_first")


def fatal_lines(fatal: str, lines: list[str]) -> list[int]:
    """1-based numbers of the raw lines holding the labelled fatal substring."""
    if not fatal:
        return []
    return [i + 1 for i, text in enumerate(lines) if fatal in text]


def catalogue_status(texts: list[str], truth: str) -> tuple[str, list[str]]:
    """What the catalogue says the fatal line is: ``right`` (an entry with the labelled
    root cause), ``other-label``, ``no-label`` (entries, none labelled) or ``no-entry``;
    and the labels it gives. Templates that say nothing of their own are left out, as
    the classifier's catalogue features leave them; a loose rule's label is no label."""
    from forensics.diagnosis.catalogue_features import LOOSE_RULES, _specific
    from forensics.events import catalogue

    found = []
    for t in texts:
        found += [e for e in catalogue.lookup_all(t.strip()[:MAX_TEXT], limit=5) if _specific(e.template)]
    # a loose rule ("any ValueError in start-up code") names no label to the diagnosis either
    labels = sorted({e.label for e in found if e.label and e.label_rule not in LOOSE_RULES})
    if truth in labels:
        return "right", labels
    if labels:
        return "other-label", labels
    return ("no-label" if found else "no-entry"), labels


def signature_labels(events: list[Any], at: list[int], sset: Any) -> list[str]:
    """Root causes of the held-out set's signatures that match an event spanning a fatal line."""
    out: set[str] = set()
    for ev in events:
        end = ev.end_line or ev.line
        if any(ev.line <= n <= end for n in at):
            out.update(sig.root_cause for sig, _ in sset.match_event(ev))
    return sorted(out)


def wording_labels(texts: list[str]) -> list[str]:
    """The labels the wording classes name for the fatal line (``label_wording.says``)."""
    from forensics.diagnosis.decision.label_wording import says

    return sorted({label for t in texts for label in says(t)})


def known(truth: str, cat_labels: list[str], said: list[str], sig: list[str], cat: str) -> bool:
    """Whether what the tool knows (catalogue, wording classes, held-out signatures) gives the
    fatal line its labelled root cause; for ``unknown``, whether nothing names a label for it."""
    if truth == "unknown":
        return not cat_labels and not said
    return cat == "right" or truth in said or truth in sig


def evidence_rank(fatal: str, evidence: list[dict[str, Any]], path: str) -> int | None:
    """0-based place of the first evidence entry that names the fatal line, None if none does."""
    from forensics.lab.evaluate import evidence_names

    for i, e in enumerate(evidence):
        if fatal and evidence_names(fatal, [e], path):
            return i
    return None


def bucket(facts: dict[str, Any]) -> str:
    """The one bucket of a miss from its facts (see the module's doc)."""
    if facts["answer"] == "none":
        return "e"
    if facts["evidence_rank"] is None:
        return "a"
    if not facts["known"]:
        return "b"
    if facts["evidence_rank"] > 0:
        return "c"
    if facts["answer"] != facts["truth"]:
        return "d"
    return "f"


def _events(path: str) -> list[Any]:
    from forensics.ingest.sources import Source
    from forensics.pipeline import SourceEvents

    return list(SourceEvents(Source(path, Path(path))))


def case_facts(case: dict[str, Any], res: dict[str, Any] | None, sset: Any) -> dict[str, Any]:
    """Every fact a bucket is decided from, for one held-out miss diagnosed again (``res``)."""
    from forensics.lab.evaluate import _raw_lines

    path, fatal, truth = case["path"], case.get("fatal") or "", case["truth"]
    res = res or {}
    evidence = res.get("evidence") or []
    at = fatal_lines(fatal, _raw_lines(path))
    texts = [fatal] + [_raw_lines(path)[n - 1] for n in at[:3]]
    cat, cat_labels = catalogue_status(texts, truth) if fatal else ("no-fatal", [])
    sig = signature_labels(_events(path), at, sset) if at else []
    said = wording_labels(texts) if fatal else []
    facts = {"path": path, "truth": truth, "answer": res.get("root_cause") or "none",
             "confidence": res.get("confidence"), "decided_by": res.get("decided_by"),
             "fatal": fatal[:300], "fatal_lines": at[:5], "first_line": str((evidence or [{}])[0].get("text") or "")[:300],
             "evidence_rank": evidence_rank(fatal, evidence, path), "evidence_n": len(evidence),
             "catalogue": cat, "catalogue_labels": cat_labels, "signature_labels": sig,
             "wording_labels": said, "known": known(truth, cat_labels, said, sig, cat),
             "candidates": [c.get("label") for c in res.get("candidates") or []]}
    facts["bucket"] = bucket(facts)
    facts["sure_wrong"] = facts["answer"] != truth and float(facts["confidence"] or 0) >= 0.9
    return facts


def _diagnoser(holdout: dict[str, Any]) -> Callable[[str, str], tuple[dict[str, Any] | None, Any]]:
    """(family, path) -> the diagnosis rules_holdout gave and the signature set it read with."""
    from forensics.diagnosis.signatures import signature_set
    from forensics.lab.rules_holdout import _diagnose, reduced_set
    from forensics.lab.train import held_out_classifiers
    from forensics.pipeline import load_classifier

    sset, clf = signature_set(), load_classifier(True)
    own = {f: set(v.get("own") or ()) for f, v in holdout["families"].items()}
    fold = held_out_classifiers(clf)
    sets: dict[str, Any] = {}

    def run(fam: str, path: str) -> tuple[dict[str, Any] | None, Any]:
        if fam not in sets:
            sets[fam] = (reduced_set(sset, own, fam), fold(fam))
        red, fclf = sets[fam]
        return _diagnose(path, red, fclf), red
    return run


def anatomy(holdout: dict[str, Any], aside: set[str], only: set[str] | None = None) -> dict[str, Any]:
    """Every held-out miss of the studied families with its facts and bucket; the aside
    families' misses bucketed too, but kept apart (their facts are not to be read)."""
    diagnose = _diagnoser(holdout)
    studied: list[dict[str, Any]] = []
    kept_aside: list[dict[str, Any]] = []
    n = {"studied": 0, "aside": 0}
    for fam, f in sorted(holdout["families"].items()):
        if only and fam not in only:
            continue
        side = "aside" if fam in aside else "studied"
        n[side] += len(f.get("cases") or [])
        for case in f.get("cases") or []:
            if not is_miss(case):
                continue
            res, red = diagnose(fam, case["path"])
            facts = {"family": fam, **case_facts(case, res, red)}
            (kept_aside if side == "aside" else studied).append(facts)
    return {"cases_n": n, "studied": studied,
            "aside": [{"family": c["family"], "bucket": c["bucket"], "sure_wrong": c["sure_wrong"],
                       "top1_wrong": c["answer"] != c["truth"]} for c in kept_aside]}


def table(misses: list[dict[str, Any]], per_family: bool = True) -> str:
    """Counts per bucket (top-1 wrong, evidence not first, wrong at >= 0.9), then per family."""
    def row(name: str, cs: list[dict[str, Any]]) -> str:
        by = Counter(c["bucket"] for c in cs)
        return f"{name:<26}{len(cs):>6}" + "".join(f"{by.get(b, 0):>6}" for b in BUCKETS)

    lines = [f"{'':<26}{'misses':>6}" + "".join(f"{b:>6}" for b in BUCKETS), row("all", misses),
             row("  top-1 wrong", [c for c in misses if c.get("top1_wrong", c.get("answer") != c.get("truth"))]),
             row("  wrong at >= 0.9", [c for c in misses if c["sure_wrong"]])]
    if "evidence_rank" in (misses[0] if misses else {}):
        lines.append(row("  evidence not first", [c for c in misses if c["evidence_rank"] != 0]))
    if per_family:
        fams: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c in misses:
            fams[c["family"]].append(c)
        lines += [row(f, cs) for f, cs in sorted(fams.items(), key=lambda kv: -len(kv[1]))]
    lines.append("buckets: " + "; ".join(f"{k} {v}" for k, v in BUCKETS.items()))
    return "\n".join(lines)


def render(out: dict[str, Any]) -> str:
    st, asd = out["studied"], out["aside"]
    cat = Counter((c["bucket"], c["catalogue"]) for c in st)
    return "\n".join([f"studied families: {len(st)} misses of {out['cases_n']['studied']} held-out failures",
                      table(st), "",
                      "catalogue status of the fatal line, per bucket: " +
                      "; ".join(f"{b}/{s} {v}" for (b, s), v in sorted(cat.items())), "",
                      f"aside families: {len(asd)} misses of {out['cases_n']['aside']} (bucket counts only)",
                      table(asd, per_family=False)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m forensics.lab.miss_anatomy", description=__doc__.splitlines()[0])
    ap.add_argument("holdout", type=Path, help="a rules_holdout --json file")
    ap.add_argument("--aside", type=Path, help="JSON with an 'aside' list of families kept apart")
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    ap.add_argument("--json", type=Path, help="write every miss's facts here")
    args = ap.parse_args(argv)
    aside = set(json.loads(args.aside.read_text())["aside"]) if args.aside else set()
    out = anatomy(json.loads(args.holdout.read_text()), aside, set(args.family or ()) or None)
    print(render(out))
    if args.json:
        atomic_write_text(args.json, json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
