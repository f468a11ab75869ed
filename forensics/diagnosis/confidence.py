"""Every confidence figure the diagnosis uses, in one frozen table.

A diagnosis's ``confidence`` comes from these numbers (rules), from the
classifier's calibrated probability, or from a mix of both (see
``arbitrate``). They were set by hand against the labelled corpora and the
real logs; changing one changes answers, so each says why it is what it is.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfidenceTable:
    # -- a signature alone ---------------------------------------------------
    # A strong signature names the failure by its own message: near certain.
    strong_rule: float = 0.95
    # A weak signature's wording is shared with other failures: a lean only.
    weak_rule: float = 0.7
    # Signatures below this priority are broad catch-alls ...
    low_priority: int = 30
    # ... and cost this much.
    low_priority_penalty: float = 0.15
    # Another label matched at about the same priority (within this margin) ...
    rival_priority_margin: int = 5
    # ... so the rule is less sure by this much.
    rival_penalty: float = 0.15
    # Below this a rule is not conclusive and the classifier is consulted.
    conclusive_rule: float = 0.9

    # -- a strong precursor (an early warning that predicted a label) ---------
    # What a predicting warning adds to its label's classifier probability.
    precursor_boost: float = 0.3
    # A warning plus the classifier is never surer than this.
    precursor_cap: float = 0.9
    # The classifier below this is unsure: the warning is the sharper evidence.
    classifier_unsure: float = 0.5
    # As sure as the warning alone (the rules-only answer of a prediction).
    precursor_alone: float = 0.55
    # A warning raised by the failing call, or one that named the outcome as
    # its consequence, overrides the classifier up to this ...
    precursor_override_cap: float = 0.85
    # ... after this lift (the warning was raised at a frame of the failure).
    failing_call_lift: float = 0.3

    # -- nothing known ----------------------------------------------------------
    # It failed, but neither rules nor classifier nor a warning says why.
    nothing_known: float = 0.3

    # -- a signature and the classifier together ------------------------------
    # A strong rule the classifier disagrees with: it stands, losing this
    # share of the classifier's confidence ...
    disagreement_weight: float = 0.3
    # ... down to this floor.
    disagreement_floor: float = 0.5
    # A rule without a computed confidence counts as conclusive.
    rule_default: float = 0.9
    # A classifier surer than a weak rule wins, discounted this much for
    # disagreeing with a rule.
    classifier_over_rule: float = 0.9
    # A weak rule that stands against the classifier loses this share ...
    weak_disagreement_weight: float = 0.2
    # ... down to this floor (it still matched).
    weak_disagreement_floor: float = 0.4
    # A weak rule without a computed confidence.
    weak_rule_default: float = 0.5
    # Rule and classifier agree: a little surer than either ...
    agreement_bonus: float = 0.03
    # ... but never certain.
    agreement_cap: float = 0.99

    # -- the whole answer --------------------------------------------------------
    # A cut traceback hides what followed: at most this sure.
    truncated_cap: float = 0.8
    # A cut traceback without any confidence yet.
    truncated_default: float = 0.5
    # Below this the answer is "unknown" with candidates: never a confident wrong label.
    unknown_threshold: float = 0.45

    # -- a cut traceback's frames --------------------------------------------------
    # The cut traceback's text says little; its frames weigh a little more.
    frame_text_weight: float = 0.4
    frame_prior_weight: float = 0.6


CONFIDENCE = ConfidenceTable()
