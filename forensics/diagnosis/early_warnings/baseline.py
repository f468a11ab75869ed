"""The healthy baseline (data, built from the project's healthy corpora by
``python -m forensics.lab.ew_baseline``)."""
from __future__ import annotations

import json
import math
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from forensics.diagnosis.early_warnings.candidates import coarse_template
from forensics.diagnosis.early_warnings.subjects import subject_value

BASELINE_PATH = Path(__file__).resolve().parent.parent / "data" / "healthy_baseline.json"


@dataclass(frozen=True)
class Baseline:
    templates: frozenset[str]
    by_server: dict[str, frozenset[str]]
    df: dict[str, int]
    n_logs: int
    shapes: frozenset[str] = frozenset()

    def familiar(self, text: str) -> bool:
        """A healthy start-up printed a line of this shape (any server)."""
        return coarse_template(text) in self.shapes

    def usual(self, template: str, server: str | None = None) -> bool:
        if server and template in self.by_server.get(server, frozenset()):
            return True
        return template in self.templates

    def rarity(self, subject: str) -> float:
        """1.0 for a subject no healthy start-up mentions, towards 0 for one they all do."""
        if self.n_logs <= 0:
            return 1.0
        df = self.df.get(subject_value(subject), 0)
        return round(math.log1p(self.n_logs / (1.0 + df)) / math.log1p(self.n_logs), 4)


# The lab sets this to a baseline built without one server family's healthy logs, to score
# that family held out (``forensics.lab.ew_train``); None: the shipped file.
HELD_OUT: ContextVar[Baseline | None] = ContextVar("forensics_ew_baseline", default=None)


def baseline(path: str | None = None) -> Baseline:
    """The healthy baseline: the shipped file (or ``path``), unless the lab holds one out."""
    held = HELD_OUT.get()
    return held if held is not None and path is None else _load(path)


@lru_cache(maxsize=1)
def _load(path: str | None = None) -> Baseline:
    p = Path(path) if path else BASELINE_PATH
    if not p.exists():
        return Baseline(frozenset(), {}, {}, 0)
    return from_data(json.loads(p.read_text(encoding="utf-8")))


def from_data(data: dict) -> Baseline:
    """A baseline from the data ``python -m forensics.lab.ew_baseline`` writes."""
    by_server = {k: frozenset(v) for k, v in data.get("templates_by_server", {}).items()}
    allt = frozenset(t for v in by_server.values() for t in v)
    return Baseline(allt, by_server, dict(data.get("subject_df", {})), int(data.get("n_logs", 0)),
                    frozenset(data.get("shapes", ())))
