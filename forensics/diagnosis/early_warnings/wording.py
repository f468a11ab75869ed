"""Wording any program uses to say a failure will follow (``wording.yaml``): read by ``watch``
(a line that says so is news where healthy start-ups do not print it) and by retrospective
linking (such a line is a candidate at any level its class allows, and weighs more when what
it says follows is the failure that came)."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.diagnosis.guarded import AsciiSet
from forensics.events.tables import load_table


@lru_cache(maxsize=1)
def _wording() -> tuple[tuple[str, Any, tuple[str, ...], bool, tuple[str, ...], bool, bool, Any], ...]:
    """``wording.yaml``: (id, regex, what it predicts, read at any level, hints, announced live, its
    figures decide, what no line of the class holds anywhere -- ``unless``, or None) per class."""
    raw = load_table(__file__, "wording.yaml")
    return tuple((c["id"], _lazy(c["regex"]), tuple(c["predicts"]), bool(c.get("any_level")),
                  tuple(c["hints"]), bool(c.get("live", True)), bool(c.get("figures_decide")),
                  _lazy(c["unless"]) if c.get("unless") else None) for c in raw["classes"])


@lru_cache(maxsize=1)
def any_level_hints() -> tuple[str, ...]:
    """The hints of the classes read at any level: a line holding one may be a candidate though it
    carries no warning level and no trouble word (the collector asks this of unlevelled lines)."""
    return tuple(sorted({h for c in _wording() if c[3] for h in c[4]}))


@lru_cache(maxsize=1)
def _hint_set() -> AsciiSet:
    return AsciiSet([("|".join(map(re.escape, any_level_hints())), 0)])


def holds_any_level_hint(low: str) -> bool:
    """The lowercased line holds one of ``any_level_hints``: one pass of an RE2 set over the line
    (the collector asks this of every unlevelled line without trouble words; testing each hint in
    turn costs more with every class added)."""
    return bool(_hint_set().which(low))


@lru_cache(maxsize=1)
def _class_hints() -> AsciiSet:
    """One alternation of each class's hints, in class order: which classes may match a line, in
    one pass (testing each class's hints in turn cost ~2 us a line per class, on every line)."""
    return AsciiSet([("|".join(map(re.escape, c[4])), 0) for c in _wording()])


def wording_class(text: str) -> tuple[str, str, tuple[str, ...], bool, bool] | None:
    """The first class whose wording this line holds: (id, the words, predicts, any level, live).
    (watch asks this of every line: a class's regex runs only where one of its hints is in the line.)"""
    head = text[:400]
    classes = _wording()
    for i in _class_hints().which(head.lower()):
        cid, rx, predicts, any_level, _hints, live, _figures, unless = classes[i]
        m = rx.search(head)
        if m is not None and (unless is None or unless.search(head) is None):
            return cid, m.group(0), predicts, any_level, live
    return None


def figures_decide(class_id: str) -> bool:
    """The class reads the figures of its line (a capability of the newest generation, not any): the
    healthy baseline, which masks figures, cannot vouch for a line of it (a healthy start-up that
    printed the same words about an older GPU's capability is another message)."""
    return any(c[0] == class_id and c[6] for c in _wording())
