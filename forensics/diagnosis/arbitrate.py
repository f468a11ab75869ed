"""Rules against the classifier: who decides a failure's label, and how sure.

A conclusive signature decides alone. Where signatures are not conclusive
(no match, a weak match, rival labels, a cut traceback) the classifier is
consulted; a strong early warning that predicted a label is evidence too.
Every figure used here is named in ``confidence.CONFIDENCE``."""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass
from typing import Any

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.incidents.lifetimes import Hit, Incident
from forensics.diagnosis.confidence import CONFIDENCE as C


@dataclass
class Decision:
    """The label of a failure, its confidence, who decided, and the candidates shown."""
    label: str | None
    confidence: float | None
    decided_by: str | None
    candidates: list[dict[str, Any]]
    # Where nothing in the log says where the failure happened, the label whose typical phase places
    # it, when that is not the answer: an ``unknown`` given because the log names no cause
    # (``learned.untold``) keeps the place of the label the classifier guessed.
    phase_label: str | None = None


def rule_confidence(best: Hit, fails: list[Hit], truncated: bool) -> float:
    """How sure the best signature hit is on its own (strength, priority, rivals)."""
    sig = best.signature
    conf = C.strong_rule if sig.strength == "strong" else C.weak_rule
    if sig.priority < C.low_priority:
        conf -= C.low_priority_penalty
    rivals = {h.signature.root_cause for h in fails if h.signature.root_cause != sig.root_cause
              and h.signature.priority >= sig.priority - C.rival_priority_margin}
    if rivals:
        conf -= C.rival_penalty
    return round(conf, 3)


def needs_classifier(best: Hit | None, truncated: bool, rule_conf: float | None) -> bool:
    """Signatures are not conclusive: no match, a weak match, rival labels, a cut traceback."""
    return best is None or truncated or (rule_conf or 0) < C.conclusive_rule or best.signature.strength != "strong"


def consult(classifier: Any, inc: Incident, phase: str | None, fail_line: int, fail_ev: Event | None,
            truncated: bool) -> dict[str, Any]:
    """The classifier's answer for this failure (a cut traceback is judged by its frames too)."""
    answer: dict[str, Any] = classifier.predict_incident(inc, phase, fail_line)
    if truncated and fail_ev is not None:
        answer = with_frame_priors(answer, classifier, fail_ev)
    return answer


def with_frame_priors(answer: dict[str, Any], classifier: Any, tb: Event) -> dict[str, Any]:
    """A cut traceback is judged by its frames too: mix the classifier's
    answer with P(label | frame modules and functions) learned from the corpus."""
    prior_of = getattr(classifier, "frame_prior", None)
    frames = list(tb.data.get("frames") or ())
    if prior_of is None or not frames:
        return answer
    from forensics.diagnosis.features import frame_tokens

    prior = dict(prior_of(" ".join(frame_tokens(frames))))
    site = jit_site(frames)
    if site is not None:  # cut inside a JIT build: the build is the likely cause, whatever the corpus saw
        for lab, w in site[1].items():
            prior[lab] = max(prior.get(lab, 0.0), w)
    if not prior:
        return answer
    probs = {c["label"]: c["confidence"] for c in answer["candidates"]}
    labels = set(probs) | set(prior)
    mixed = {lab: C.frame_text_weight * probs.get(lab, 0.0) + C.frame_prior_weight * prior.get(lab, 0.0)
             for lab in labels}
    order = sorted(mixed, key=lambda k: (-mixed[k], k))[:3]  # ties by name: never by a set's hash order
    cands = [{"label": lab, "confidence": round(mixed[lab], 3)} for lab in order]
    out = {"label": cands[0]["label"], "confidence": cands[0]["confidence"], "candidates": cands, "frame_prior": True}
    if site is not None:
        out["jit_site"] = site[0]
    return out


def jit_site(frames: list[Any]) -> tuple[str, dict[str, float]] | None:
    """The JIT build site (``jit_sites.yaml``) among a cut traceback's two innermost frames, if any."""
    for f in frames[-2:][::-1]:
        text = f"{f.module} {f.function or ''}".strip()
        for name, rx, labels in _jit_sites():
            if rx.search(text):
                return name, labels
    return None


@lru_cache(maxsize=1)
def _jit_sites() -> list[tuple[str, Any, dict[str, float]]]:
    from forensics.events.tables import load_table

    return [(s["name"], re.compile(s["frame"]), {k: float(v) for k, v in s["labels"].items()})
            for s in load_table(__file__, "jit_sites.yaml")["sites"]]


def decide(inc: Incident, best: Hit | None, truncated: bool, rule_conf: float | None,
           clf_answer: dict[str, Any] | None, predicted: str | None, fail_line: int,
           fail_ev: Event | None) -> Decision:
    """The label, confidence and decider of a failure, from the best
    signature hit (if any), the classifier's answer (if consulted) and the
    label a strong precursor predicted (only when no signature matched)."""
    cands: list[dict[str, Any]] = []
    if best is None:
        label, conf, decided_by, cands = _without_rule(inc, clf_answer, predicted, fail_line, fail_ev)
    else:
        label, conf, decided_by = best.signature.root_cause, rule_conf, "signature"
        if clf_answer is not None:
            cands = clf_answer["candidates"]
            conf_needs = needs_classifier(best, truncated, rule_conf)
            label, conf, decided_by = _rule_and_classifier(best, rule_conf, truncated, conf_needs, clf_answer)
    return _final(label, conf, decided_by, cands, truncated)


def _without_rule(inc: Incident, clf_answer: dict[str, Any] | None, predicted: str | None, fail_line: int,
                  fail_ev: Event | None) -> tuple[str, float, str, list[dict[str, Any]]]:
    if clf_answer is not None and predicted is not None:
        label, conf = _lifted_by_warning(inc, clf_answer, predicted, fail_line, fail_ev)
        return label, conf, "both", clf_answer["candidates"]
    if clf_answer is not None:
        return clf_answer["label"], clf_answer["confidence"], "classifier", clf_answer["candidates"]
    if predicted is not None:
        return predicted, C.precursor_alone, "signature", []
    return "unknown", C.nothing_known, "signature", []


def _lifted_by_warning(inc: Incident, clf_answer: dict[str, Any], predicted: str, fail_line: int,
                       fail_ev: Event | None) -> tuple[str, float]:
    """A warning that predicted a label is evidence too: it lifts that label."""
    probs = {c["label"]: c["confidence"] for c in clf_answer["candidates"]}
    boosted = {lab: p + (C.precursor_boost if lab == predicted else 0.0) for lab, p in probs.items()}
    boosted.setdefault(predicted, C.precursor_boost)
    label = max(boosted, key=lambda k: boosted[k])
    conf = round(min(C.precursor_cap, boosted[label]), 3)
    if clf_answer["confidence"] < C.classifier_unsure:
        label = predicted  # the classifier is unsure; the warning is the sharper evidence
    if label == predicted:
        conf = round(max(conf, C.precursor_alone), 3)  # as sure as the warning alone (rules-only answer)
    if label != predicted and warned_at_failing_call(inc, fail_line, fail_ev, predicted):
        # The predicting warning was raised by the very call that then failed
        # (Python's "file:line: UserWarning" names a frame of the failure):
        # it says why that call failed, sharper than what the text resembles.
        label, conf = predicted, round(max(C.precursor_alone, min(
            C.precursor_override_cap, boosted.get(predicted, 0.0) + C.failing_call_lift)), 3)
    if label != predicted and label in precursor_predicts(inc, fail_line, predicted):
        # The warning named this outcome as a consequence of its own
        # cause (e.g. too few GPUs -> the start-up hangs): report the cause.
        label, conf = predicted, round(max(C.precursor_alone, min(C.precursor_override_cap, boosted[label])), 3)
    return label, conf


def _rule_and_classifier(best: Hit, rule_conf: float | None, truncated: bool, needs_clf: bool,
                         clf_answer: dict[str, Any]) -> tuple[str | None, float | None, str]:
    label: str | None = best.signature.root_cause
    conf = rule_conf
    if clf_answer["label"] != label:
        strong = best.signature.strength == "strong" and not truncated
        if strong:
            # The rule stands; the disagreement costs confidence.
            conf = round(max(C.disagreement_floor,
                             (rule_conf or C.rule_default) - C.disagreement_weight * clf_answer["confidence"]), 3)
        elif clf_answer["confidence"] > (rule_conf or 0.0):
            label, conf = clf_answer["label"], round(clf_answer["confidence"] * C.classifier_over_rule, 3)
        else:
            conf = round(max(C.weak_disagreement_floor, (rule_conf or C.weak_rule_default)
                             - C.weak_disagreement_weight * clf_answer["confidence"]), 3)
        return label, conf, "both"
    conf = round(min(C.agreement_cap, max(rule_conf or 0.0, clf_answer["confidence"]) + C.agreement_bonus), 3)
    return label, conf, "both" if needs_clf else "signature"


def _final(label: str | None, conf: float | None, decided_by: str | None, cands: list[dict[str, Any]],
           truncated: bool) -> Decision:
    shown: list[dict[str, Any]] = []
    if truncated and label != "unknown":
        conf = round(min(conf or C.truncated_default, C.truncated_cap), 3)
    if conf is not None and conf < C.unknown_threshold and label != "unknown":
        # Never a confident wrong label: below the threshold say so, with candidates.
        shown = cands[:3] or [{"label": label, "confidence": conf}]
        label = "unknown"
    if cands and not shown:
        shown = cands[:3]
    return Decision(label, conf, decided_by, shown)


def precursor_predicts(inc: Incident, fail_line: int, label: str) -> set[str]:
    """Everything the precursors of ``label`` said could follow."""
    out: set[str] = set()
    for h in inc.precursor_hits:
        if h.line < fail_line and h.signature.root_cause == label:
            out.update(h.signature.predicts)
    return out


_WARN_SITE = re.compile(r"(?:^|\s)(/?[\w./-]+\.py):(\d+): \w*Warning: ")


def warned_at_failing_call(inc: Incident, fail_line: int, fail_ev: Event | None, label: str) -> bool:
    """A strong precursor predicting ``label`` was a Python warning raised at
    a file:line that is one of the failing traceback's frames."""
    if fail_ev is None or fail_ev.kind != kinds.TRACEBACK:
        return False
    sites = {(f.file, f.lineno) for e in (fail_ev.data.get("chain") or ()) for f in e.frames if f.lineno}
    if not sites:
        return False
    for h in inc.precursor_hits:
        sig = h.signature
        if h.line >= fail_line or label not in sig.predicts or sig.strength != "strong" or sig.status == "experimental":
            continue
        m = _WARN_SITE.search(h.event.text)
        if m and (m.group(1), int(m.group(2))) in sites:
            return True
    return False


def predicted_by_precursors(inc: Incident, fail_line: int) -> str | None:
    """When no signature knows the failure itself, a strong precursor that
    predicted one label is the best evidence there is."""
    votes: dict[str, int] = {}
    for h in inc.precursor_hits:
        sig = h.signature
        if (h.line < fail_line and sig.strength == "strong" and sig.predicts and sig.status != "experimental"
                and sig.priority >= 40):
            lab = h.signature.root_cause if h.signature.root_cause in h.signature.predicts else h.signature.predicts[0]
            votes[lab] = max(votes.get(lab, 0), h.signature.priority)
    if not votes:
        return planned_out_of_memory(inc, fail_line)
    return max(votes, key=lambda k: votes[k])


PLAN_BEFORE = 12  # lines above the failure searched for the memory plan it came from


def planned_out_of_memory(inc: Incident, fail_line: int) -> str | None:
    """The memory plan printed just before the failure left nothing for the KV cache
    (``resources.no_memory_left``): when no signature knows the failure (a start-up summary such as
    "EngineCore failed to start." and a cut traceback are all that follow), the device memory ran out."""
    from forensics.diagnosis.early_warnings.resources import no_memory_left

    st = inc.outcome
    seen = (*(st.recent if st is not None else ()), *inc.warning_lines)
    return "gpu.out-of-memory" if any(fail_line - PLAN_BEFORE <= ev.line < fail_line and no_memory_left(ev.text[:400])
                                      for ev in seen) else None
