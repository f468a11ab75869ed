"""Whether a proving line names no cause (``label_silent.yaml``): a wrapper that points at
another line or log for the reason, a worker's bare "hit an exception", a crash on a signal or a
heap check with no subject. The label decision reads it (``learned.untold``): a label only the
text classifier names, on such a line, is answered ``unknown``. Pure, no scikit-learn."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.events.tables import load_table

MAX_TEXT = 400


@lru_cache(maxsize=1)
def _classes() -> tuple[tuple[str, tuple[str, ...], Any, Any], ...]:
    """(id, hints, regex, unless-regex or None) per class, in file order (each regex compiled the
    first time a line holds one of its hints)."""
    raw = load_table(__file__, "label_silent.yaml")
    return tuple((c["id"], tuple(c["hints"]), _lazy(c["regex"]), _lazy(c["unless"]) if c.get("unless") else None)
                 for c in raw["classes"])


@lru_cache(maxsize=1024)
def silent_classes(text: str | None) -> tuple[str, ...]:
    """The ids of the classes whose wording the line holds (empty: the line may name its cause)."""
    if not text:
        return ()
    head = text.strip()[:MAX_TEXT]
    low = head.lower()
    return tuple(cid for cid, hints, rx, unless in _classes()
                 if any(map(low.__contains__, hints)) and rx.search(head) and not (unless and unless.search(head)))


def names_no_cause(text: str | None) -> bool:
    """Whether the line is only the news of a failure, its reason elsewhere or nowhere."""
    return bool(silent_classes(text))
