"""The phase model's words part: P(phase | the failing lines' words, the innermost frames'
modules and functions, the catalogue's facts), a naive Bayes over tokens that at least
``MIN_FAMILIES`` server families carry (a word only one family prints says nothing of another).
Fitted by ``forensics.lab.phase_train``; answered here without scikit-learn or numpy."""
from __future__ import annotations

import math
import re
from typing import Any

# A token: a word, a dotted module path or a function name (fn_...), lower-cased.
_TOKEN = re.compile(r"[a-z_][a-z0-9_.]{2,40}")
MIN_FAMILIES = 3
MAX_TOKENS = 400  # the first distinct tokens of a failure's words (bounded work)


def tokens(words: str | None) -> list[str]:
    """The distinct tokens of ``words`` (order kept, bounded)."""
    seen: dict[str, None] = {}
    for t in _TOKEN.findall((words or "")[:20000].lower()):
        seen.setdefault(t.strip("."), None)
        if len(seen) >= MAX_TOKENS:
            break
    return [t for t in seen if t]


def proba(table: dict[str, Any], words: str | None) -> dict[str, float]:
    """P(phase | words) from an exported table ({"classes", "log_prior", "log_like": token -> per class}).
    Empty where the words carry no token of the table (nothing to say)."""
    classes = table.get("classes") or []
    like = table.get("log_like") or {}
    hits = [like[t] for t in tokens(words) if t in like]
    if not classes or not hits:
        return {}
    z = list(table["log_prior"])
    for h in hits:
        z = [a + b for a, b in zip(z, h)]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    s = sum(e)
    return {c: v / s for c, v in zip(classes, e)}
