"""What the phase model reads about one failure: each way the diagnosis can tell
where it happened, as a vote for a phase.

The rules' own answer (``failure_phase.failure_phase`` and the typical phase of the
label) is one vote among the signals it was built from: the last phase marker
before the failure, the phase after it, the failing traceback's frames (with and
without the message catalogue's functions), the signature's hint, the wording
near the failure, where failures of this label typically happen, and whether the
server had become ready. Shared weights over (failure, phase) pairs, as the label
model (``label_features``).

Two kinds of knowledge that carry across server families are read as well: where
failures of the answer's label happen (P(phase | label), counted over the training
families, each key kept only where two families carry it: ``prior_keys``), and the
order of events (how many lines the failure came after the last marker: a marker
printed just before the failure names the step that failed; one printed long
before may name a step that finished, the next one running)."""
from __future__ import annotations

from dataclasses import dataclass, field

from forensics.diagnosis.taxonomy import PHASES

VOTES = ("rules", "marker", "marker_next", "frames", "frames_catalogue", "signature_hint", "text", "typical",
         "reached")
PAIR = tuple(f"vote:{v}" for v in VOTES) + ("after_ready_serving", "startup_failed_late", "no_marker_typical",
                                            "truncated_frames")
# The prior's keys: the label alone, the label where the log has a marker (and which), the label
# where start-up is known to have failed.
PRIOR_KINDS = ("label", "label_marker", "label_startup")
# Lines between the last marker and the failure above which the marker may name a finished step.
STALE_LINES = 30
FRESH_LINES = 3
ORDER = ("prior:label", "prior:label_marker", "prior:label_startup", "prior_top:label", "prior:unmarked",
         "marker_fresh", "marker_stale", "marker_stale_next", "rules_unmarked", "vote:frames_near", "vote:step",
         "words", "words_top", "words_unmarked")
FEATURES: tuple[str, ...] = PAIR + tuple(f"bias:{p}" for p in PHASES) + ORDER
INDEX = {name: i for i, name in enumerate(FEATURES)}
_LATE = ("ready", "serving", "shutdown")
_NEXT = {p: PHASES[i + 1] for i, p in enumerate(PHASES[:-1])}


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
    label: str | None = None  # the answer's label
    marker_gap: int | None = None  # lines from the last marker to the failure (None: no marker)
    marked: bool = True  # the rules found the phase in the log (False: the label's typical phase)
    frames_near: str | None = None  # the frames of the traceback printed with a failing line (not one itself)
    step: str | None = None  # the step the server names around the failure (``phase_infer.phase_of_step``)
    # The failing lines' words, the innermost frames' modules and functions, the catalogue's facts
    # (``features.incident_features``): what the words model reads (``phase_words``).
    words: str | None = field(default=None, compare=False, repr=False)
    word_probs: dict[str, float] | None = field(default=None, compare=False)  # P(phase | words), set with the prior
    # P(phase | key) per kind of key (``PRIOR_KINDS``), from the model's table (set at decision time).
    prior: dict[str, dict[str, float]] | None = field(default=None, compare=False)


def prior_keys(inp: PhaseInputs) -> dict[str, str]:
    """The prior's key of each kind for this failure (none without a label)."""
    if not inp.label:
        return {}
    return {"label": f"label:{inp.label}", "label_marker": f"label:{inp.label}|marker:{inp.marker or '-'}",
            "label_startup": f"label:{inp.label}|startup:{int(inp.startup_failed)}"}


def prior_of(table: dict[str, dict[str, float]], inp: PhaseInputs) -> dict[str, dict[str, float]]:
    return {kind: table[key] for kind, key in prior_keys(inp).items() if key in table}


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
    _order_features(x, inp, phase)
    return x


def _order_features(x: list[float], inp: PhaseInputs, phase: str) -> None:
    prior = inp.prior or {}
    for kind in PRIOR_KINDS:
        x[INDEX[f"prior:{kind}"]] = prior.get(kind, {}).get(phase, 0.0)
    by_label = prior.get("label")
    if by_label:
        x[INDEX["prior_top:label"]] = 1.0 if max(sorted(by_label), key=lambda k: by_label[k]) == phase else 0.0
    unmarked = inp.marker is None and inp.frames is None
    x[INDEX["prior:unmarked"]] = by_label.get(phase, 0.0) if by_label and unmarked else 0.0
    gap = inp.marker_gap
    if inp.marker is not None and gap is not None:
        x[INDEX["marker_fresh"]] = 1.0 if gap <= FRESH_LINES and phase == inp.marker else 0.0
        x[INDEX["marker_stale"]] = 1.0 if gap > STALE_LINES and phase == inp.marker else 0.0
        x[INDEX["marker_stale_next"]] = 1.0 if gap > STALE_LINES and phase == _NEXT.get(inp.marker) else 0.0
    x[INDEX["rules_unmarked"]] = 1.0 if not inp.marked and inp.rules == phase else 0.0
    x[INDEX["vote:frames_near"]] = 1.0 if inp.frames_near == phase else 0.0
    x[INDEX["vote:step"]] = 1.0 if inp.step == phase else 0.0
    wp = inp.word_probs
    if wp:
        x[INDEX["words"]] = wp.get(phase, 0.0)
        x[INDEX["words_top"]] = 1.0 if max(sorted(wp), key=lambda k: wp[k]) == phase else 0.0
        x[INDEX["words_unmarked"]] = wp.get(phase, 0.0) if not inp.marked else 0.0
