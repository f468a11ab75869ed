"""What ``forensics watch`` is asked to do (its options, its clock) and how
two of its answers compare."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

QUIET = 0.03  # a pause this long: evaluate what has arrived
SNAP_EVERY = 0.1  # while lines keep coming, evaluate at least this often
REFINE_EVERY = 0.25  # the same once a failure is printed (updates are not urgent; the classifier is not free)
TB_STALL = 1.5  # a traceback still in its frames after a pause this long is reported as far as it got
GRACE = 2.0  # default --grace: how long after the first report a better cause may still come
TB_GRACE = 30.0  # the grace period waits for an unfinished traceback at most this long
# What makes a printed answer different enough for a ``failure_update``.
ANSWER_FIELDS = ("verdict", "root_cause", "confidence", "decided_by", "signature", "phase", "evidence",
                 "early_warnings", "truncated", "incident")


class WatchExit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class WatchOptions:
    stall_timeout: float = 300.0
    ready_timeout: float | None = None
    probe: str | None = None
    probe_interval: float = 5.0
    fmt: str = "text"  # text | json
    input_format: str = "auto"
    until: str = "ready"  # ready | failure (keep watching a serving server)
    use_classifier: bool = True
    grace: float = GRACE


def answer(res: dict[str, Any]) -> tuple:
    """What is compared to decide whether an answer changed."""
    return tuple(json.dumps(res.get(k), sort_keys=True, default=str) for k in ANSWER_FIELDS)


def ready_line(res: dict[str, Any]) -> int | None:
    """The line where the lifetime became ready."""
    for span in res.get("phases") or ():
        if span.get("phase") == "ready":
            return span.get("first_line")
    return None
