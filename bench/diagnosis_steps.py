"""Where a diagnosis spends its time, step by step (issue 29: JSON vs text).

    python bench/diagnosis_steps.py                # the crash loop, JSON and text reports
    python bench/diagnosis_steps.py --file X.log

In one process, after a first run (everything loaded), the second run of
``diagnose_source`` over the log as the JSON report runs it (every lifetime
in full) and as the text report does (``shown_only``), with each step of
``diagnose_incident`` and of the per-event hook wrapped: calls, CPU s and
us a call. For the steps a memo could serve, how many of their calls
brought inputs not seen before, after the step's own normalisation (the
classifier: the feature fields it scores; the early-warning score: every
input ``score_candidate`` keys on; the failure's context: its label and
evidence texts, a lower bound of what it reads): a memo hits at most
calls minus distinct.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ROOT

sys.path.insert(0, str(ROOT))
COST: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])
SEEN: dict[str, set] = collections.defaultdict(set)
STEPS = {
    "forensics.diagnosis.diagnose": ("diagnose_incident", "_findings", "_best_hit", "_explain", "_mark_consequences",
                                     "_add_learned_warnings", "match_into", "incident_skeleton"),
    "forensics.diagnosis.failure_phase": ("texts_near", "marked_phase"),
    "forensics.diagnosis.arbitrate": ("consult", "decide", "rule_confidence"),
    "forensics.diagnosis.evidence": ("assemble",),
    "forensics.diagnosis.phase_priors": ("startup_failed",),
    "forensics.diagnosis.decision.learned": ("decide", "inputs_of", "rank_evidence", "decide_phase"),
    "forensics.diagnosis.early_warnings": ("link",),
    "forensics.diagnosis.early_warnings.linking": ("failure_context", "score_candidate"),
    "forensics.incidents.outcome": ("observe",),
}
KEYS: dict[str, Callable[..., Any]] = {  # what each memo candidate reads, normalised as the step normalises it
    "linking.failure_context": lambda inc, label, line, ts, ev: (label, tuple(str(e.get("text")) for e in ev)),
    "linking.score_candidate": lambda c, f, b, facts, server=None, foretold=False: (
        c.event.text, c.level, f.label, f.rivals, f.text, f.subjects, tuple(sorted(facts.items())), server, foretold),
}


def _wrap(owner: Any, name: str, label: str) -> None:
    orig = getattr(owner, name)
    key = KEYS.get(label)

    def timed(*a: Any, **k: Any) -> Any:
        if key is not None:
            SEEN[label].add(key(*a, **k))
        t0 = time.process_time()
        try:
            return orig(*a, **k)
        finally:
            c = COST[label]
            c[0] += 1
            c[1] += time.process_time() - t0

    setattr(owner, name, timed)


def instrument() -> None:
    import importlib

    from forensics.diagnosis.classifier.trained import TrainedClassifier
    from forensics.diagnosis.early_warnings.carry import Collector

    for mod, names in STEPS.items():
        m = importlib.import_module(mod)
        for n in names:
            _wrap(m, n, f"{mod.rsplit('.', 1)[-1]}.{n}")
    _wrap(Collector, "__call__", "early_warnings.collect (per event)")
    orig = TrainedClassifier.predict_features

    def predict(self: Any, feats: list) -> Any:
        SEEN["classifier (features)"].add(tuple(sorted(feats[0].items())))
        COST["classifier (features)"][0] += 1
        return orig(self, feats)

    TrainedClassifier.predict_features = predict  # type: ignore[method-assign]


def report(path: Path) -> None:
    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source, load_classifier

    sset, clf = signature_set(), load_classifier(True)
    for mode in ("json", "text"):
        diagnose_source(Source(str(path), path), sset=sset, classifier=clf, shown_only=mode == "text")
        COST.clear()
        SEEN.clear()
        t0 = time.process_time()
        diagnose_source(Source(str(path), path), sset=sset, classifier=clf, shown_only=mode == "text")
        print(f"{path.name}, {mode} report: {time.process_time() - t0:.2f} CPU s in process (second run)")
        for label, (n, t) in sorted(COST.items(), key=lambda kv: -kv[1][1]):
            seen = f"  distinct inputs {len(SEEN[label]):,}" if label in SEEN else ""
            print(f"  {label:<38} {n:7,} calls {t:7.3f} s {t / max(n, 1) * 1e6:8.1f} us{seen}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default=None)
    a = ap.parse_args()
    if a.file:
        path = Path(a.file)
    else:
        import run

        path = run.ensure_crashloop(1000)[0]
    instrument()
    report(path)


if __name__ == "__main__":
    main()
