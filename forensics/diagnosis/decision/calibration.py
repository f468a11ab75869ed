"""How sure an answer of the label model is: the model's probability of it, read through the map
of its kind of evidence (issue 27: a confidence is how often such an answer is right).

The softmax of the label model ranks the labels; how often its best answer is right, read as a
family never met, depends on what the answer rests on more than one temperature per kind can say
(held out, a strong signature matched at warning level was right one time in two at 0.87; an
``unknown`` answer said 0.29 and was right 44% of the time). ``forensics.lab.decision_train``
fits, per kind of answer, knots (probability -> share right) on out-of-fold answers of families
held out of the weights; here they are read. Every input is read off the log (the decision's
inputs and the answer), never anything else. Twelfth session, top-1 unchanged: rules_holdout ECE
0.050 -> 0.018, answers at >= 0.9 right 94.3% -> 96.2%; honest_holdout ECE 0.076 -> 0.032, 91.7%
-> 94.9%."""
from __future__ import annotations

from bisect import bisect_left
from typing import Any, Mapping, Sequence

# Below this priority a signature is a broad one (a bare exception name, a generic "failed to load"):
# held out, right three times in four where the specific ones were right 94% of the time.
BROAD_PRIORITY = 50
# Below this priority (and at or above ``BROAD_PRIORITY``) a signature names a carrier whose cause may
# be printed elsewhere: signatures/README.md's bands put "specific inner causes" at 70 and above, and
# "NCCL error names, build failures whose cause is printed elsewhere" at 55-65 (a Triton
# ``CompilationError`` whose message says the GPU lacks fp8, CANN's ``ACL stream synchronize failed``
# whose EI9999 line says an HCCL collective timed out). Held out (twenty-third session, rules_holdout
# at 31c52cf7, 1,682 answers): a conclusive signature of this band was right 68 of 76 times (89%) and
# read 0.978 through the one map of every conclusive signature; 70 and above, 409 of 419 (97.6%).
SPECIFIC_PRIORITY = 70
# The map every kind falls back on when it has none of its own (too few answers to fit one).
POOLED = "*"


def answer_kind(inp: Any, label: str | None) -> str:
    """What the answer ``label`` rests on (``inp``: its ``DecisionInputs``): ``unknown``; a signature's
    label: a specific conclusive one (``strong``), one the model was consulted beside (``signature``),
    a carrier of the middle band (``strong-mid``: ``SPECIFIC_PRIORITY``), a broad or warning-level one
    (``strong-broad``), conclusive or not; a label the model chose against the signature
    (``overruled``); with no signature: a label the proving line's wording or the catalogue names
    (``named``), the learned death detector's line alone (``death``), a bare wrapper line
    (``wrapper``), or the model alone (``learned``)."""
    if label in (None, "unknown"):
        return "unknown"
    if inp.rule_label is not None:
        if inp.rule_label != label:
            return "overruled"
        priority = inp.rule_priority or 0
        # (twenty-third session: a broad signature beside the classifier was read through the map of
        # every consulted signature, 0.93, and was right 10 of 14 times held out)
        if priority < BROAD_PRIORITY or inp.rule_level in ("WARNING", "INFO"):
            return "strong-broad"
        if priority < SPECIFIC_PRIORITY:
            return "strong-mid"
        return "signature" if inp.rule_strength != "strong" or inp.clf else "strong"
    if label in (inp.says or ()) or label in (inp.cat_says or ()):
        return "named"
    if not inp.traceback and inp.ends_in_error:
        return "death"
    if not inp.traceback and inp.wrapper:
        return "wrapper"
    return "learned"


# An ``unknown`` answer is read by how far the model's own ``unknown`` leads the label after it, not by
# its probability alone: held out (twenty-second session, 5 grouped folds, 404 ``unknown`` answers) it
# was right 61% of the time where the runner-up had under a fifth of its probability and 36-40% where
# the runner-up had over three fifths (a near tie: the log names something the model almost chose),
# whatever the probability of ``unknown`` itself. Refitted so (5 grouped folds at df0a72ea, 1,925 rows,
# 1,657 held-out readings; the answers themselves unchanged): the unknown answers' Brier score 0.2496 ->
# 0.2456 held out, 0.2442 -> 0.2399 seen; ECE 0.0206 -> 0.0199 held out, 0.0108 -> 0.0145 seen; seed 2's
# cut traceback (unknown 0.150, a toolchain label 0.148) 0.508 -> 0.447. A model trained before carries
# no such map and keeps reading the probability of ``unknown``.
UNKNOWN_LEAD = "unknown-lead"


def unknown_lead(probs: Mapping[str, float]) -> float:
    """1 - P(the runner-up) / P(unknown), in [0, 1]: 1 where nothing else is near, 0 at a tie or
    where a label leads (an ``unknown`` answered under the model's bar)."""
    pu = probs.get("unknown", 0.0)
    rest = max((v for k, v in probs.items() if k != "unknown"), default=0.0)
    return max(0.0, 1.0 - rest / pu) if pu > 0 else 0.0


def unknown_reading(table: Mapping[str, Any], probs: Mapping[str, float]) -> tuple[str, float]:
    """The map an ``unknown`` answer is read through and the number it reads: the lead's where the
    model carries that map, else the probability of ``unknown`` through the ``unknown`` map."""
    if UNKNOWN_LEAD in table:
        return UNKNOWN_LEAD, unknown_lead(probs)
    return "unknown", probs.get("unknown", 0.0)


# An ``unknown`` given because the proving line names no cause and nothing else names the label the
# model chose (``learned.untold``) is its own kind of answer, read by the model's probability of the
# label it set aside; a model fitted before such answers existed carries no map of them, and reads
# UNTOLD_SHARE: ``decision_train.fit_calibration``'s own share for a kind (its answers' share right,
# shrunk by 30 answers' weight toward every answer's) on the studied two thirds of the families held
# out (rules_holdout at 31c52cf7: 15 such answers, 11 right, every answer 77.5% right): 0.76. (The
# ``unknown`` answers' one value, 0.48, would understate them: the log says the cause is elsewhere.)
# Twenty-fourth session: ``calibration_holdout`` reads such answers as this kind (the probability of the
# label set aside), so its ``--refit --write`` fits them a map; held out at 3d220a63 plus the new silent
# wordings, 19 of 23 were right. The maps were not refit then (refit held out by family, ECE 0.046
# against the shipped maps' 0.039 on the same 1,715 answers).
UNTOLD = "untold"
UNTOLD_SHARE = 0.76


def untold_confidence(table: Mapping[str, Sequence[Sequence[float]]], p: float) -> float:
    """How sure an ``unknown`` given by ``learned.untold`` is (``p``: the model's probability of the
    label it set aside): its own map where the model carries one, else ``UNTOLD_SHARE``."""
    return round(min(0.999, calibrated(table, UNTOLD, p) if table.get(UNTOLD) else UNTOLD_SHARE), 3)


def calibrated(table: Mapping[str, Sequence[Sequence[float]]], kind: str, p: float) -> float:
    """``p`` read through ``kind``'s knots (linear between them, flat beyond); ``p`` itself where
    the model carries no map (one trained before maps were fitted)."""
    knots = table.get(kind) or table.get(POOLED)
    if not knots:
        return p
    xs = [k[0] for k in knots]
    i = bisect_left(xs, p)
    if i == 0:
        return float(knots[0][1])
    if i == len(knots):
        return float(knots[-1][1])
    (x0, y0), (x1, y1) = knots[i - 1], knots[i]
    return float(y0 + (y1 - y0) * (p - x0) / (x1 - x0)) if x1 > x0 else float(y1)


def confidence(model: Any, inp: Any, label: str | None, p: float) -> float:
    """The answer's confidence (three decimals, never certain): ``p`` through its kind's map."""
    table = getattr(model, "calibration", None) or {}
    return round(min(0.999, calibrated(table, answer_kind(inp, label), p)), 3)
