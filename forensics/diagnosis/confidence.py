"""The hand-set figures of the rules' own answer (``arbitrate``), in one frozen table.

With the label model in use (a classifier loaded: the default), no answer's
``confidence`` is one of these: ``decision.learned`` gives the model's
probability read through its kind of answer's map, fitted on families held
out (``decision.calibration``). These figures still decide the answer and
its confidence under ``--no-classifier`` (or with the label model off), and
elsewhere they are inputs only: the rule's confidence is a feature of the
label model, ``conclusive_rule`` decides whether the classifier is consulted,
the frame weights mix a cut traceback's classifier answer. Set by hand
against the labelled corpora and the real logs; each says why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _figure(value: float, why: str) -> Any:
    """A figure with the reason for it (``dataclasses.fields(...)[i].metadata["why"]``)."""
    return field(default=value, metadata={"why": why})


@dataclass(frozen=True)
class ConfidenceTable:
    """The figures; ``CONFIDENCE`` is the one instance the diagnosis reads."""

    # -- a signature alone ----------------------------------------------------
    strong_rule: float = _figure(0.95,
        "A strong signature names the failure by its own message: near certain.")
    weak_rule: float = _figure(0.7,
        "A weak signature's wording is shared with other failures: a lean only.")
    low_priority: int = _figure(30,
        "Signatures below this priority are broad catch-alls ...")
    low_priority_penalty: float = _figure(0.15,
        "... and cost this much.")
    rival_priority_margin: int = _figure(5,
        "Another label matched at about the same priority (within this margin) ...")
    rival_penalty: float = _figure(0.15,
        "... so the rule is less sure by this much.")
    conclusive_rule: float = _figure(0.9,
        "Below this a rule is not conclusive and the classifier is consulted.")

    # -- a strong precursor (an early warning that predicted a label) ----------
    precursor_boost: float = _figure(0.3,
        "What a predicting warning adds to its label's classifier probability.")
    precursor_cap: float = _figure(0.9,
        "A warning plus the classifier is never surer than this.")
    classifier_unsure: float = _figure(0.5,
        "The classifier below this is unsure: the warning is the sharper evidence.")
    precursor_alone: float = _figure(0.55,
        "As sure as the warning alone (the rules-only answer of a prediction).")
    precursor_override_cap: float = _figure(0.85,
        "A warning raised by the failing call, or one that named the outcome as its "
        "consequence, overrides the classifier up to this ...")
    failing_call_lift: float = _figure(0.3,
        "... after this lift (the warning was raised at a frame of the failure).")

    # -- nothing known -----------------------------------------------------------
    nothing_known: float = _figure(0.3,
        "It failed, but neither rules nor classifier nor a warning says why.")

    # -- a signature and the classifier together -------------------------------
    disagreement_weight: float = _figure(0.3,
        "A strong rule the classifier disagrees with stands, losing this share of the classifier's confidence ...")
    disagreement_floor: float = _figure(0.5,
        "... down to this floor.")
    rule_default: float = _figure(0.9,
        "A rule without a computed confidence counts as conclusive.")
    classifier_over_rule: float = _figure(0.9,
        "A classifier surer than a weak rule wins, discounted this much for disagreeing with a rule.")
    weak_disagreement_weight: float = _figure(0.2,
        "A weak rule that stands against the classifier loses this share ...")
    weak_disagreement_floor: float = _figure(0.4,
        "... down to this floor (it still matched).")
    weak_rule_default: float = _figure(0.5,
        "A weak rule without a computed confidence.")
    agreement_bonus: float = _figure(0.03,
        "Rule and classifier agree: a little surer than either ...")
    agreement_cap: float = _figure(0.99,
        "... but never certain.")

    # -- the whole answer ---------------------------------------------------------
    truncated_cap: float = _figure(0.8,
        "A cut traceback hides what followed: at most this sure.")
    truncated_default: float = _figure(0.5,
        "A cut traceback without any confidence yet.")
    unknown_threshold: float = _figure(0.45,
        "Below this the answer is 'unknown' with candidates: never a confident wrong label.")

    # -- a cut traceback's frames ---------------------------------------------------
    frame_text_weight: float = _figure(0.4,
        "The cut traceback's text says little ...")
    frame_prior_weight: float = _figure(0.6,
        "... its frames (P(label | frame modules and functions)) weigh a little more.")


CONFIDENCE = ConfidenceTable()
