"""What a proving line's own words say its failure is (``label_wording.yaml``), whatever
program printed it: the loader's ``cannot open shared object file``, a parser's ``unknown
flag``, a runtime's ``out of memory``. The label model reads it as one input (``label_features``:
``says``), weighed by what it was worth on the families trained on, so a family never met is read
by knowledge true of every program rather than by the text classifier alone. Pure, no scikit-learn."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.events.tables import load_table

MAX_TEXT = 400


@lru_cache(maxsize=1)
def _classes() -> tuple[tuple[str, str, tuple[str, ...], Any, Any], ...]:
    """(id, the label it says, hints, regex, unless-regex or None) per class, in file order (each
    regex compiled the first time a line holds one of its hints: most failures need none or one)."""
    raw = load_table(__file__, "label_wording.yaml")
    return tuple((c["id"], c["says"], tuple(c["hints"]), _lazy(c["regex"]),
                  _lazy(c["unless"]) if c.get("unless") else None) for c in raw["classes"])


def _matches(text: str | None) -> list[tuple[str, str]]:
    """(id, label) of the classes whose wording the line holds (a line may hold two: a loader's
    error quoted inside an import error)."""
    if not text:
        return []
    head = text.strip()[:MAX_TEXT]
    low = head.lower()
    return [(cid, label) for cid, label, hints, rx, unless in _classes()
            if any(map(low.__contains__, hints)) and rx.search(head) and not (unless and unless.search(head))]


def classes_of(text: str | None) -> tuple[str, ...]:
    """The ids of the classes whose wording the line holds."""
    return tuple(cid for cid, _label in _matches(text))


@lru_cache(maxsize=2048)
def says(text: str | None) -> tuple[str, ...]:
    """The labels the line's wording names (empty: it names none)."""
    return tuple(dict.fromkeys(label for _cid, label in _matches(text)))
