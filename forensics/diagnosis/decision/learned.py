"""The learned label decision, in place of the hand-set arbitration when a
classifier is in use (``--no-classifier`` keeps the rules' own answer).

A strong, conclusive signature still decides the label (it names the failure
by its own message); the model gives its calibrated confidence. Everywhere
else the model's most probable label is the answer, ``unknown`` (with the
candidates) only when even that is improbable."""
from __future__ import annotations

import re
from typing import Any

from forensics.diagnosis.arbitrate import Decision
from forensics.diagnosis.decision.calibration import calibrated, confidence, unknown_reading, untold_confidence
from forensics.diagnosis.decision.label_features import DecisionInputs
from forensics.diagnosis.decision.label_model import RECORDER, label_model
from forensics.events import types as kinds


def _record(kind: str, inc: Any, inputs: Any, rules_answer: Any) -> None:
    """Hand one decision's inputs to the lab's training run, when one listens."""
    rec = RECORDER.get()
    if rec is not None:
        rec.append((kind, inc, inputs, rules_answer))


def phase_wanted() -> bool:
    """Whether the phase signals are worth gathering: a phase model is in use, or the lab records them."""
    from forensics.diagnosis.decision.phase_model import phase_model

    return RECORDER.get() is not None or phase_model() is not None


def inputs_of(best: Any, fails: list[Any], rule_conf: float | None, truncated: bool,
              clf_answer: dict[str, Any] | None, predicted: str | None, fail_ev: Any, wrappers: list[Any],
              tail: Any, exit_failed: bool, inc: Any = None, fail_line: int | None = None,
              near: list[str] | None = None, lead: str | None = None,
              others: tuple[str, ...] = ()) -> DecisionInputs:
    """The ``DecisionInputs`` of one failure, from what ``diagnose`` computed (``lead``: the evidence
    line the ranker puts first, ``lead_of``; ``others``: the evidence lines' texts, ``evidence_texts``)."""
    sig = best.signature if best is not None else None
    rivals = tuple(sorted({h.signature.root_cause for h in fails
                           if sig is None or h.signature.root_cause != sig.root_cause}))
    clf = {c["label"]: float(c["confidence"]) for c in clf_answer["candidates"]} if clf_answer else None
    return DecisionInputs(
        rule_label=sig.root_cause if sig is not None else None,
        rule_strength=sig.strength if sig is not None else None,
        rule_conf=rule_conf, rule_priority=sig.priority if sig is not None else None,
        rule_level=best.event.level if best is not None else None,
        rivals=rivals, n_rules=len({h.signature.id for h in fails}), clf=clf, precursor=predicted,
        truncated=truncated, traceback=fail_ev is not None and fail_ev.kind == kinds.TRACEBACK,
        no_failure_line=fail_ev is None, wrapper=bool(wrappers), ends_in_error=tail is not None,
        exit_failed=exit_failed, proof=_message_of(_lead_or_proof(lead, inc, fail_line), near), others=others)


# The evidence lines ``untold`` reads for one naming the label (the listed and offered lines are a
# dozen at most; a bound keeps a pathological log's reading linear).
_OTHERS = 16


def evidence_texts(listed: list[dict[str, Any]], offered: list[dict[str, Any]]) -> tuple[str, ...]:
    """The texts of the listed and offered evidence lines, bounded (``DecisionInputs.others``)."""
    return tuple(str(e.get("text") or "")[:400] for e in (listed + offered)[:_OTHERS])


def lead_of(listed: list[dict[str, Any]], offered: list[dict[str, Any]]) -> str | None:
    """The text of the line the evidence ranker puts first among the listed and offered lines, as
    ``rank_evidence`` will order them (on copies, unrecorded: the evidence is ranked for good later)."""
    from forensics.diagnosis.decision.evidence_rank import rank
    from forensics.diagnosis.evidence_offered import wrapped_first

    ranked = rank(wrapped_first([dict(e) for e in listed + offered]))
    return str(ranked[0].get("text") or "") if ranked else None


def _lead_or_proof(lead: str | None, inc: Any, fail_line: int | None) -> str | None:
    """What the label reads: the line the evidence puts first, since a person acts on that line and the
    ranker learned which line proves a failure (the rules' failure line is often the wrapper or the
    header a library prints before its message: "EngineCore failed to start.", a Rust panic's
    location, libc++abi's "terminating due to uncaught exception of type ...:"); the failure line's
    text where the lead is only a frame or nothing."""
    if lead and lead.strip() and not _FRAME.match(lead):
        return lead[:400]
    return _proof(inc, fail_line)


def _proof(inc: Any, fail_line: int | None) -> str | None:
    """The proving line's text (what the label prior reads), bounded."""
    if inc is None:
        return None
    from forensics.diagnosis.features import proof_text

    text = proof_text(inc, fail_line)
    return text[:400] if text else None


_FRAME = re.compile(r'^\s*(?:File "|at |#\d+ |Traceback \(most recent call last\))')


def _message_of(proof: str | None, near: list[str] | None) -> str | None:
    """The proving line, unless it is only a traceback's frame (or nothing): then the first line
    printed with the failure that is a message (a cut stack's exception often arrives beside it)."""
    if proof and proof.strip() and not _FRAME.match(proof):
        return proof
    for text in near or ():
        for ln in text.splitlines():
            if ln.strip() and not _FRAME.match(ln) and not ln.startswith(("    ", "\t")):
                return ln.strip()[:400]
    return proof


def decide(inp: DecisionInputs, rules: Decision, rules_not_conclusive: bool, inc: Any = None) -> Decision:
    """The label model's decision (or the rules' when no model is shipped)."""
    _record("label", inc, inp, rules)
    model = label_model()
    if model is None:
        return rules
    if model.prior and inp.prior is None:
        from forensics.diagnosis.decision.label_prior import prior_of, wanted

        inp.prior = prior_of(model.prior, inp.proof) if wanted(inp) else {}
    if inp.says is None:
        inp.says = said_by(inp)
    if inp.cat_says is None:
        inp.cat_says = catalogue_said(inp)
    # A model is never certain: three decimals would round 0.9996 to 1.0.
    probs = {k: min(v, 0.999) for k, v in model.proba(inp).items()}
    ranked = sorted(probs, key=lambda k: (-probs[k], k))
    cands = [{"label": lab, "confidence": round(probs[lab], 3)} for lab in ranked[:3]]

    def sure(label: str | None, p: float) -> float:
        """How often such an answer was right on families held out (``decision.calibration``); an
        ``unknown`` answer is read by how far ``unknown`` leads the runner-up where the model carries
        that map, else by the model's probability of ``unknown`` (``calibration.unknown_reading``; a
        model without maps keeps the probability the bar read)."""
        if label == "unknown" and model.calibration:
            kind, x = unknown_reading(model.calibration, probs)
            return round(min(0.999, calibrated(model.calibration, kind, x)), 3)
        return confidence(model, inp, label, p)

    if not model.meta.get("ships", {}).get("label", True) and rules.label is not None:
        # Calibration only: the rules' answer, with the model's probability of it.
        p = probs.get(ranked[0], 0.0) if rules.label == "unknown" else probs.get(rules.label, 0.0)
        return Decision(rules.label, sure(rules.label, p), rules.decided_by, rules.candidates)
    if inp.rule_label is not None and inp.rule_strength == "strong" and not rules_not_conclusive:
        label = inp.rule_label  # a conclusive signature decides; the model says how sure
        return Decision(label, sure(label, probs.get(label, 0.0)), "signature", [])
    if warned_label(inp, rules.label):
        return Decision(rules.label, sure(rules.label, probs.get(str(rules.label), 0.0)), rules.decided_by, cands)
    label = ranked[0]
    decided_by = "both" if (inp.rule_label or inp.precursor) and inp.clf else (
        "classifier" if inp.clf else "signature")
    # The unknown bar reads the model's probability (the answer's calibrated confidence reads the bar's answer).
    if round(probs[label], 3) < model.unknown_below and label != "unknown":
        return Decision("unknown", sure("unknown", probs[label]), decided_by, cands)
    if untold(inp, label):
        # The log holds only the news of the failure, and the label is the classifier's guess alone:
        # ``unknown``, the guess first among the candidates and placing the failure where nothing else does.
        return Decision("unknown", untold_confidence(model.calibration or {}, probs[label]), decided_by, cands,
                        phase_label=label)
    return Decision(label, sure(label, probs[label]), decided_by, cands)


def untold(inp: DecisionInputs, label: str) -> bool:
    """The proving line names no cause (``label_silent``: it points elsewhere for the reason, or a
    process crashed with no subject; or the signature it matched is labelled ``unknown``) and nothing in the log names ``label``: no signature (the
    answer's or a rival's), no strong warning's prediction, no wording class or catalogue label of
    the proving line or of another evidence line, and the proving line's kind (its exception class,
    error code, catalogue facts) is not most often this label (``label_prior``). The label is then
    the text classifier's guess from the family's usual failures, which the log does not support
    (issue 27, item 2: a careful reader would say ``unknown``). Held out (rules_holdout at 31c52cf7,
    studied families): 11 of 15 such answers were labelled ``unknown``, none the guessed label."""
    if label == "unknown" or label == inp.rule_label or label in inp.rivals or label == inp.precursor:
        return False
    if label in (inp.says or ()) or label in (inp.cat_says or ()):
        return False
    if inp.prior and max(inp.prior, key=lambda k: (inp.prior[k], k)) == label:  # type: ignore[index]
        return False
    from forensics.diagnosis.decision.label_silent import names_no_cause

    # (a signature whose label is ``unknown`` says as much of the line: a wrapper, a bare report)
    if inp.rule_label != "unknown" and not names_no_cause(inp.proof):
        return False
    from forensics.diagnosis.decision.label_prior import catalogue_says
    from forensics.diagnosis.decision.label_wording import says

    return not any(label in says(t) or label in catalogue_says(t) for t in inp.others)


def said_by(inp: DecisionInputs) -> tuple[str, ...]:
    """The labels the proving line's wording names (``label_wording``), read where the prior is
    (no signature matched, or the classifier was consulted)."""
    from forensics.diagnosis.decision.label_prior import wanted
    from forensics.diagnosis.decision.label_wording import says

    return says(inp.proof) if wanted(inp) else ()


def catalogue_said(inp: DecisionInputs) -> tuple[str, ...]:
    """The labels the catalogue gives the proving line, read where the prior is."""
    from forensics.diagnosis.decision.label_prior import catalogue_says, wanted

    return catalogue_says(inp.proof) if wanted(inp) else ()


def warned_label(inp: DecisionInputs, rules_label: str | None) -> bool:
    """The rules named the label a strong early warning predicted, and no signature matched the
    failure: the label stands (the model gives its probability). The public logs it learns from
    rarely carry such a warning, so it weighs one little; the reproduced ones that do (a JAX plugin
    missing, SDPA in fp32) lost their right label to ``unknown`` without this."""
    return inp.rule_label is None and inp.precursor is not None and rules_label == inp.precursor


def phase_inputs(rules_phase: str | None, inc: Any, fail_line: int, fail_ev: Any, best: Any, label: str | None,
                 startup: bool, truncated: bool, texts: list[str], marked: str | None = None) -> Any:
    """Each signal's phase for one failure (``phase_features.PhaseInputs``); ``marked``: the phase the
    failure's own marker gave (``failure_phase.marked_phase``, which the diagnosis already read)."""
    from forensics.diagnosis import failure_phase, phase_infer, phase_priors
    from forensics.diagnosis.decision.phase_features import PhaseInputs
    from forensics.incidents import outcome

    marker = inc.phase_at(fail_line)
    is_tb = fail_ev is not None and fail_ev.kind == kinds.TRACEBACK
    frames = phase_infer.phase_of_traceback(fail_ev) if is_tb else None
    return PhaseInputs(
        rules=rules_phase, marker=marker,
        marker_next=phase_infer.successor_phase(outcome.marker_before(inc, fail_line), marker) if marker else None,
        frames=frames,
        frames_catalogue=phase_infer.phase_of_traceback(fail_ev, use_catalogue=True) if is_tb else None,
        signature_hint=best.signature.phase if best is not None else None,
        text=phase_infer.phase_of_text("\n".join(texts)),
        typical=phase_priors.typical_phase(label, startup),
        reached=inc.phase,
        after_ready=inc.ready_line is not None and inc.ready_line < fail_line,
        startup_failed=startup, truncated=truncated, label=label,
        marker_gap=_marker_gap(inc, fail_line) if marker else None,
        # (the rules' phase was the label's typical one where nothing in the log said where)
        marked=marked is not None,
        frames_near=failure_phase.nearby_traceback_phase(inc, fail_ev, fail_line, marker is not None)
        if frames is None else None,
        step=phase_infer.phase_of_step("\n".join(texts)), words=_words(inc, fail_line))


def _words(inc: Any, fail_line: int) -> str:
    """What the phase model's words part reads (``phase_features.PhaseInputs.words``)."""
    from forensics.diagnosis.features import incident_features

    f = incident_features(inc, None, fail_line)
    return " \n ".join((f["text"], f["modules"], f["catalogue"]))


def _marker_gap(inc: Any, line: int) -> int | None:
    """Lines from the last phase marker (a repeated progress line counts) to the failure at ``line``."""
    st = inc.outcome
    last = None
    for at, _text in (st.markers if st is not None else ()):
        if at > line:
            break
        last = at
    return line - last if last is not None else None


def decide_phase(inp: Any, rules_phase: str, inc: Any = None) -> str:
    """The phase model's answer (the rules' when no model is shipped)."""
    from forensics.diagnosis.decision.phase_model import phase_model

    _record("phase", inc, inp, rules_phase)
    model = phase_model()
    if model is None:
        return rules_phase
    if inp.prior is None:
        _set_phase_knowledge(inp, model)
    probs = model.proba(inp)
    return max(sorted(probs), key=lambda k: probs[k])


def _set_phase_knowledge(inp: Any, model: Any) -> None:
    """The phase prior of the answer's label and P(phase | words), from the model's own file's tables."""
    from forensics.diagnosis.decision.pair_model import load
    from forensics.diagnosis.decision.phase_features import prior_of
    from forensics.diagnosis.decision.phase_words import proba

    inp.prior = prior_of(model.prior, inp) if model.prior else {}
    words = (load("phase.json", "FORENSICS_PHASE_MODEL") or {}).get("words")
    inp.word_probs = proba(words, inp.words) if words else None


def rank_evidence(evidence: list[dict[str, Any]], inc: Any = None) -> list[dict[str, Any]]:
    """The evidence, the line the ranker finds most likely to prove the failure first."""
    from forensics.diagnosis.decision.evidence_rank import rank

    if RECORDER.get() is not None:
        _record("evidence", inc, [dict(e) for e in evidence], None)
    return rank(evidence)
