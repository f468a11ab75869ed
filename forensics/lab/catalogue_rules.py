"""Rules that guess a taxonomy label for a catalogue message (data in
catalogue_rules.yaml, first match wins).

A guess, not a signature: it reads the exception type and the wording of a
message the program prints. Each rule has a stable id, recorded with the entry
as ``label_rule`` so a wrong guess can be traced to its rule. A message that no
rule fits keeps ``label: null``: the classifier, not a guess, decides those.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from forensics.events.tables import joined, load_table


class LabelRule(NamedTuple):
    id: str
    label: str
    exc: str | None       # regex over the exception type (bare class name), or None
    text: str | None      # regex over the template text, or None
    phase: str | None = None  # only for messages of this phase


LABEL_RULES: tuple[LabelRule, ...] = tuple(
    LabelRule(r["id"], r["label"], joined(r.get("exc")), joined(r.get("text")), r.get("phase"))
    for r in load_table(__file__, "catalogue_rules.yaml"))

_COMPILED = [(r, re.compile(r.exc) if r.exc else None, re.compile(r.text, re.I) if r.text else None)
             for r in LABEL_RULES]


# Whole packages whose failures have one label whatever the wording: every
# warning or error NCCL prints is about collective communication.
PACKAGE_LABELS = {"nccl": ("package-nccl", "dist.nccl")}
# ... and packages whose error lines get a label when no wording rule fits:
# an error of ptxas or ninja is a failed build (ptxas's "Unsupported .target"
# is caught first by the architecture rule).
_TOOL_ERROR_WORDS = re.compile(r"error|fail|stopped|missing|unknown|bad|invalid|cannot|can't|duplicate|expected|"
                               r"not found|not defined|unsupported|illegal|conflict|too (many|large|big)|exceed", re.I)
PACKAGE_FALLBACK = {  # (rule id, label, words an error line of the tool has; its help text has none)
    "ptxas": ("package-ptxas", "toolchain.compile-failed", _TOOL_ERROR_WORDS),
    "ninja": ("package-ninja", "toolchain.compile-failed", _TOOL_ERROR_WORDS),
}


def guess_label(exc_type: str | None, template: str, phase: str | None, package: str | None = None,
                kind: str | None = None, level: str | None = None) -> tuple[str | None, str | None]:
    """(label, rule id) for a message, or (None, None) when no rule is sure enough."""
    if kind in ("log", "native-log") and level in ("INFO", "DEBUG"):
        return None, None  # progress and diagnostics, not a failure's wording
    exc = (exc_type or "").rsplit(".", 1)[-1]
    text = template.replace("{}", " ")
    if kind == "error-string" and exc_type:
        text += " " + exc_type  # a runtime's error name says as much as its string
    if package in PACKAGE_LABELS and (level in ("WARNING", "ERROR", "CRITICAL") or kind == "error-string"):
        rule_id, label = PACKAGE_LABELS[package]
        if not (package == "nccl" and template.lower().startswith("success")):
            return label, rule_id
    for rule, exc_rx, text_rx in _COMPILED:
        if rule.phase is not None and rule.phase != phase:
            continue
        if exc_rx is not None and not (exc and exc_rx.search(exc)):
            continue
        if text_rx is not None and not text_rx.search(text):
            continue
        # a rule with no label stops the later ones and, like no rule, records nothing
        return (rule.label, rule.id) if rule.label else (None, None)
    if package in PACKAGE_FALLBACK:
        rule_id, label, words = PACKAGE_FALLBACK[package]
        if words.search(text):
            return label, rule_id
    return None, None


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_ADVICE = re.compile(r"^(please|try|consider|you (can|may|might|should|need|must|could)|set|use|install|make sure|"
                     r"ensure|run|increase|decrease|reduce|lower|raise|add|remove|upgrade|downgrade|update|"
                     r"check|specify|pass|enable|disable|export|rebuild|reinstall|switch|refer|see)\b|pip install|"
                     r"\bto fix\b|\bto resolve\b|\bto avoid\b|\bto use\b", re.I)


def advice_of(template: str) -> str | None:
    """The sentences of a message that tell the user what to do ("Please try
    to increase --mem-fraction-static", "pip install ninja"): remediation in
    the program's own words, or None."""
    out = [s.strip() for s in _SENTENCE_SPLIT.split(template) if s.strip() and _ADVICE.search(s.strip())]
    text = " ".join(out)
    return text[:400] if text else None
