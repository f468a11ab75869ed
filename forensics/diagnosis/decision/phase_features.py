"""What the phase model reads about one failure: each way the diagnosis can tell
where it happened, as a vote for a phase.

The rules' own answer (``failure_phase.failure_phase`` and the typical phase of the
label) is one vote among the signals it was built from: the last phase marker
before the failure, the phase after it, the failing traceback's frames (with and
without the message catalogue's functions), the signature's hint, the wording
near the failure, where failures of this label typically happen, and whether the
server had become ready. Shared weights over (failure, phase) pairs, as the label
model (``label_features``)."""
from __future__ import annotations

from dataclasses import dataclass

from forensics.diagnosis.taxonomy import PHASES

VOTES = ("rules", "marker", "marker_next", "frames", "frames_catalogue", "signature_hint", "text", "typical",
         "reached")
PAIR = tuple(f"vote:{v}" for v in VOTES) + ("after_ready_serving", "startup_failed_late", "no_marker_typical",
                                            "truncated_frames")
FEATURES: tuple[str, ...] = PAIR + tuple(f"bias:{p}" for p in PHASES)
INDEX = {name: i for i, name in enumerate(FEATURES)}
_LATE = ("ready", "serving", "shutdown")


@dataclass
class PhaseInputs:
    """Each signal's phase (None where it says nothing)."""
    rules: str | None = None
    marker: str | None = None
    marker_next: str | None = None
    frames: str | None = None
    frames_catalogue: str | None = None
    signature_hint: str | None = None
    text: str | None = None
    typical: str | None = None
    reached: str | None = None
    after_ready: bool = False
    startup_failed: bool = False
    truncated: bool = False


def pair_vector(inp: PhaseInputs, phase: str) -> list[float]:
    x = [0.0] * len(FEATURES)
    for i, v in enumerate(VOTES):
        if getattr(inp, v) == phase:
            x[i] = 1.0
    n = len(VOTES)
    x[n] = 1.0 if inp.after_ready and phase == "serving" else 0.0
    x[n + 1] = 1.0 if inp.startup_failed and phase in _LATE else 0.0
    x[n + 2] = 1.0 if inp.marker is None and inp.typical == phase else 0.0
    x[n + 3] = 1.0 if inp.truncated and inp.frames == phase else 0.0
    x[INDEX[f"bias:{phase}"]] = 1.0
    return x
