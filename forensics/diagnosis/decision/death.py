"""Failure detection learned (issue 27): did the process die, when no signature,
traceback, wrapper or exit status said so?

A line model scores how much a line reads like the line that proves a failure
(words and bigrams of the line, and its shape: glog's ``E0109`` prefix, a leading
``error:``, a C++ runtime's bracketed ``[ERROR]`` tag), trained on the labelled
proving lines of ``corpora/public`` and the project's corpora against every line of
their healthy logs. At the end of a lifetime nothing else called failed, its last
lines and the recent lines that use a failure's words are scored; the best one,
when it scores above a threshold no healthy log reached in cross-validation, is
where it died. The label is then decided as for any failure line."""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Iterable

from forensics.diagnosis.decision.pair_model import load
from forensics.events import types as kinds
from forensics.incidents import outcome, verdicts

TAIL_LINES = 30  # outcome.RECENT_EVENTS keeps at least this many lines' events
LAST_EVENTS = 12  # the last events are read whatever they say
# Words of a failure in a line no level marks as an error (glog's E0109 prefix, 'Catastrophic
# error', 'CMake Error', 'unrecognized arguments', docker's 'Error response from daemon').
_SUSPECT_HINT = ("rror", "RROR", "ail", "AIL", "atal", "annot", "nable to", "not found", "denied", "refused",
                 "bort", "xception", "nvalid", "nrecognized", "nsufficient", "out of memory", "already in use",
                 "Killed", "killed", "E0", "E1", "not supported", "No such", "unavailable", "UNAVAILABLE")
# A line its program logged below error level was handled (logger.warning(..., exc_info=True)).
_HANDLED_LEVELS = ("WARNING", "WARN", "INFO", "DEBUG")
_WORD = re.compile(r"[a-z][a-z0-9_]+")
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("__glog_error__", re.compile(r"^[EF]\d{4} \d\d:\d\d:\d\d")),
    ("__glog_info__", re.compile(r"^[IW]\d{4} \d\d:\d\d:\d\d")),
    ("__starts_error__", re.compile(r"^\W{0,3}(?:error|fatal)\b", re.I)),
    ("__colon_error__", re.compile(r"(?:^|\s)\w*(?:error|exception)\w*:", re.I)),
    ("__bracket_error__", re.compile(r"\[(?:ERROR|E|FATAL|CRITICAL)\]")),
    ("__bracket_info__", re.compile(r"\[(?:INFO|I|DEBUG|WARNING|WARN|W)\]")),
    ("__upper_error__", re.compile(r"\b(?:ERROR|FATAL|CRITICAL)\b")),
    ("__http_ok__", re.compile(r'"\s*(?:GET|POST) [^"]*"\s*2\d\d|\b200 OK\b')),
    ("__short__", re.compile(r"^.{0,24}$", re.S)),
    # A build tool's report that the build stopped (CMake's SEND_ERROR/FATAL_ERROR, a make recipe's
    # "*** [target] Error N" in any locale, ninja, a compiler's "FILE:LINE: error:"): true of any build.
    ("__build_error__", re.compile(r"^CMake Error\b|\bmake(?:\[\d+\])?: \*\*\* |^ninja: build stopped|^FAILED: |"
                                   r"^\S+?:\d+(?::\d+)?: (?:fatal )?error: |\berror: command '[^']+' failed")),
    # A command-line parser rejecting its arguments (argparse, cobra, clap, getopt): the program exits.
    ("__usage_error__", re.compile(r"\b(?:unknown (?:shorthand )?flag|unrecognized (?:arguments?|option)|"
                                   r"invalid (?:choice|option)|unexpected argument)\b", re.I)),
)


def tokens(text: str) -> list[str]:
    """The features of one line: its shapes, words and word bigrams (lowercased)."""
    head = text[:600]
    out = [name for name, rx in _SHAPES if rx.search(head)]
    words = _WORD.findall(head.lower())[:80]
    out.extend(words)
    out.extend(f"{a} {b}" for a, b in zip(words, words[1:]))
    return out


class LineModel:
    """A linear model over ``tokens`` (binary presence), as exported by the lab."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.weights: dict[str, float] = data["weights"]
        self.bias: float = float(data["bias"])
        self.threshold: float = float(data["threshold"])
        self.version: str = str(data.get("version", "?"))

    def score(self, text: str) -> float:
        """P(this line proves a failure)."""
        w = self.weights
        z = self.bias + sum(w.get(t, 0.0) for t in set(tokens(text)))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


@lru_cache(maxsize=4)
def _model(key: int) -> LineModel | None:
    data = load("death.json", "FORENSICS_DEATH_MODEL")
    return LineModel(data) if data is not None else None


def death_model() -> LineModel | None:
    """The shipped death detector (``FORENSICS_DEATH_MODEL`` names another; ``off`` turns it off)."""
    data = load("death.json", "FORENSICS_DEATH_MODEL")
    return _model(id(data)) if data is not None else None


def candidates(inc: Any) -> Iterable[Any]:
    """The lines of a lifetime the detector reads: the events of its last ``TAIL_LINES`` lines (each once,
    in order) that came after its last phase marker and were not logged below error level."""
    st = getattr(inc, "outcome", None)
    if st is None:
        return []
    seen: dict[int, Any] = {}
    # Death comes at the end: a line with 30 more lines after it was survived (a start-up
    # that prints an error-worded warning and goes on is not dead).
    last = st.last_line
    # ... and a start-up that reached another phase after the line went on past it. Only a change of
    # phase is going on: a marker of the step the line was printed in (llama.cpp's context lines
    # that a runner goes on printing after Ollama's scheduler gave up on it) is not past it.
    progressed = _last_change(inc, st)
    # A line an early-warning rule knows is a warning the program printed and went on after (an
    # optional extension that did not load), not where it died; so is one the program itself said
    # just after was optional (TensorFlow's probe of TensorRT's libraries: verdicts.dismissed).
    warned = {h.event.line for h in inc.precursor_hits}
    events = list(st.recent)
    for k, ev in enumerate(events):
        if k < len(events) - LAST_EVENTS and not _reads_as_failure(ev):
            continue  # further back than the last few lines, only what uses a failure's words
        if ev.text.strip() and ev.line not in seen and (ev.end_line or ev.line) >= last - TAIL_LINES \
                and ev.line > progressed and unhandled(ev) and ev.line not in warned \
                and not verdicts.dismissed(inc, ev) and not verdicts.replied_error(ev) and not _stop_exception(ev.text):
            seen[ev.line] = ev
    return [seen[k] for k in sorted(seen)]


def _stop_exception(text: str) -> bool:
    """A Python exception line that names a stop, not a failure (``KeyboardInterrupt``: the operator's
    Ctrl-C; ``SystemExit``, a cancellation), whatever follows it on the line (a notebook's output
    runs stderr's next warning onto it with no line break)."""
    head = text.lstrip().split(":", 1)[0].strip()
    return head in verdicts.BENIGN_EXC


def _last_change(inc: Any, st: Any) -> int:
    """The line of the last change of phase (the last marker where the lifetime keeps no timeline)."""
    changes = getattr(inc, "transitions", None)
    if changes:
        return int(changes[-1][0])
    return int(st.markers[-1][0]) if st.markers else 0


def unhandled(ev: Any) -> bool:
    """Not logged below error level: a line the detector may read as where the program died."""
    return (ev.level or "").upper() not in _HANDLED_LEVELS


def _reads_as_failure(ev: Any) -> bool:
    """A line (not a traceback or a phase marker) at error level or worded like a failure; read at
    diagnosis time, so the per-line path keeps no list of such lines."""
    if ev.kind in (kinds.TRACEBACK, kinds.PHASE_MARKER):
        return False
    return outcome.is_error(ev) or any(map(ev.text.__contains__, _SUSPECT_HINT))


def consulted(inc: Any) -> bool:
    """Whether the detector reads this lifetime at all. A server that became ready (requests it
    answered count: an excerpt that starts mid-serving, or one whose request handler reported a
    worker's error), or was asked to stop, or shut down, did not die unnoticed."""
    return inc.ready_line is None and inc.stop_requested_line is None and inc.shutdown_line is None \
        and not verdicts.answered_requests(inc) \
        and not any(verdicts.reported_by_request(inc, tb) for tb, _p, _a in inc.tracebacks)


def died_at(inc: Any) -> Any:
    """The line where the detector says the lifetime died, or None."""
    model = death_model()
    if model is None or not consulted(inc):
        return None
    best, best_p = None, model.threshold
    for ev in candidates(inc):
        p = model.score(ev.text)
        if p >= best_p:
            best, best_p = ev, p
    return _framed_message(inc, best) if best is not None and _NATIVE_FRAME.match(best.text) else best


# A C++ backtrace line (torch's c10::Error: "Exception raised from F at FILE:LINE (most recent
# call first):" then "frame #0: c10::Error::Error(...)", ...): it says where an error was raised;
# the message it belongs to is the line above the backtrace.
_NATIVE_FRAME = re.compile(r"^\s*frame #\d+: |^Exception raised from \S+ at \S+ \(most recent call first\):")


def _framed_message(inc: Any, frame: Any) -> Any:
    """The line a native backtrace belongs to (the last line before it that is no part of it), else the frame."""
    events = [ev for ev in inc.outcome.recent if ev.line < frame.line]
    for ev in reversed(events):
        if ev.text.strip() and not _NATIVE_FRAME.match(ev.text):
            return ev
    return frame
