"""Failure detection learned (issue 27): did the process die, when no signature,
traceback, wrapper or exit status said so?

A line model scores how much a line reads like the line that proves a failure
(words and bigrams of the line, and its shape: glog's ``E0109`` prefix, a leading
``error:``, a C++ runtime's bracketed ``[ERROR]`` tag), trained on the labelled
proving lines of ``corpora/public`` and the project's corpora against every line of
their healthy logs. At the end of a lifetime nothing else called failed, its last
lines and the recent lines that use a failure's words are scored; the best one,
when it scores above a threshold no healthy log reached in cross-validation, is
where it died. The label is then decided as for any failure line.

A server that became ready may die after it answered (its runner's or worker's death that
the server reports and lives on after, a device runtime's fault handler killing it). There
it reads, after the server's last progress, only the lines that say a process ended (the
``dies`` shapes of ``death_shapes.yaml``: a supervisor's exit status, a worker's death, a
fatal signal, a kill) or a device runtime's own error, against its own bar
(``threshold_up``), learned from healthy logs after their readiness as the start-up bar is
from healthy start-ups: those it reads there, and those that served and were stopped, read up
to their stop (``candidates(..., end=stop)``: what a log cut there would show). The shapes
themselves are data with examples."""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Iterable

from forensics.diagnosis.decision.pair_model import built, load
from forensics.events import types as kinds
from forensics.events.tables import load_table
from forensics.incidents import outcome, stops, verdicts

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
_FLAGS = {"i": re.I, "s": re.S}


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """The shapes of ``death_shapes.yaml`` (id, compiled regex, whether it says a process ended), in
    file order (read once, when the detector first reads a line: a log no rule left undecided never
    pays for it)."""
    out = []
    for s in load_table(__file__, "death_shapes.yaml")["shapes"]:
        flags = 0
        for c in s.get("flags", ""):
            flags |= _FLAGS[c]
        out.append((s["id"], re.compile(s["regex"], flags), bool(s.get("dies"))))
    return tuple(out)


@lru_cache(maxsize=1)
def _any_level_shapes() -> tuple[re.Pattern[str], ...]:
    """The shapes that say a process ended whatever level the line was logged at: ``any_level: true``
    (the shape's own regex) or ``any_level: REGEX`` (the part of the shape that holds at any level)."""
    out = []
    for s in load_table(__file__, "death_shapes.yaml")["shapes"]:
        rx = s.get("any_level")
        if rx:
            out.append(re.compile(s["regex"] if rx is True else rx, sum(_FLAGS[c] for c in s.get("flags", ""))))
    return tuple(out)


@lru_cache(maxsize=1)
def _clearing_shapes() -> tuple[re.Pattern[str], ...]:
    """The shapes that clear a line (``clears: true``): a line that says a process tree is being torn
    down (a helper reporting that its parent is gone, a runtime's leak report at teardown) or that a
    side service beside the server failed, which is never where the server died."""
    return tuple(re.compile(s["regex"], sum(_FLAGS[c] for c in s.get("flags", "")))
                 for s in load_table(__file__, "death_shapes.yaml")["shapes"] if s.get("clears"))


def clears(ev: Any) -> bool:
    """A line that holds a shape that clears it (``_clearing_shapes``)."""
    head = ev.text[:600]
    return any(rx.search(head) for rx in _clearing_shapes())


# A run's own word, after everything it started ended, that it finished well (an orchestrator's
# "Sweep completed successfully", a job script's "Benchmark finished successfully"): the kills and
# exits before it were its own teardown of the steps it started (SLURM's srun killing a cancelled
# step's tasks: "srun: error: node1: task 0: Killed"), not a death it suffered.
_SUCCEEDED = re.compile(r"\b(?:completed|finished|ended|succeeded|done) successfully\b", re.I)


def _succeeded_after(events: list[Any]) -> int:
    """The line of the last run-level success announcement among ``events`` (not error-level), or -1."""
    for ev in reversed(events):
        if ev.kind != kinds.TRACEBACK and _SUCCEEDED.search(ev.text[:300]) and not outcome.is_error(ev):
            return int(ev.line)
    return -1


@lru_cache(maxsize=1)
def _teardown_shapes() -> tuple[re.Pattern[str], ...]:
    """The clearing shapes that report a process tree's teardown (``teardown: true``)."""
    return tuple(re.compile(s["regex"], sum(_FLAGS[c] for c in s.get("flags", "")))
                 for s in load_table(__file__, "death_shapes.yaml")["shapes"] if s.get("teardown"))


def teardown_bounds(inc: Any) -> tuple[int | None, int]:
    """Read once per lifetime (not per death line: a crash loop has thousands): the line of the first
    teardown report among the recent lines (a helper saying the main program is gone; a death line after
    it is that teardown's echo, not a death of its own), or None; and the line of the run's last word
    that it finished well (``_SUCCEEDED``; a kill or an exit before it was its own teardown), or -1."""
    st = getattr(inc, "outcome", None)
    if st is None:
        return None, -1
    shapes = _teardown_shapes()
    first = next((ev.line for ev in st.recent if ev.kind != kinds.TRACEBACK
                  and any(rx.search(ev.text[:600]) for rx in shapes)), None)
    return first, _succeeded_after(st.recent)


def torn_down(bounds: tuple[int | None, int], line: int) -> bool:
    """A death line at ``line`` is part of a teardown (``teardown_bounds``): after a teardown report,
    or before the run's own word that it finished well."""
    first, done = bounds
    return line < done or (first is not None and first < line)


@lru_cache(maxsize=1)
def _deciding_shapes() -> tuple[re.Pattern[str], ...]:
    """The shapes that decide alone (``decides: true``): the line says the process ended so plainly
    (a supervisor's deadline for its child's start-up expired) that it is where the lifetime died
    whatever the line model scores it (a shape added after the model was trained has no weight in it)."""
    return tuple(re.compile(s["regex"], sum(_FLAGS[c] for c in s.get("flags", "")))
                 for s in load_table(__file__, "death_shapes.yaml")["shapes"] if s.get("decides"))


def decides(ev: Any) -> bool:
    """A line (not a traceback, nor a Python warning) that holds a shape that decides alone."""
    if ev.kind == kinds.TRACEBACK or verdicts.python_warning(ev):
        return False
    head = ev.text[:600]
    return any(rx.search(head) for rx in _deciding_shapes())


def reports_an_end(ev: Any) -> bool:
    """A supervisor's line that its child process ended badly (an exit status, a fatal signal), at any
    level: a process manager logs its child's exit as its own routine (llama-swap's
    '[DEBUG] <model> cmd.Wait() returned error: signal: aborted (core dumped)', '[WARN] ... ExitError >>
    exit status 137'), yet the child, the server, died. Not a traceback, nor a Python warning."""
    if ev.kind == kinds.TRACEBACK or verdicts.python_warning(ev):
        return False
    head = ev.text[:600]
    return any(rx.search(head) for rx in _any_level_shapes())


@lru_cache(maxsize=1)
def _shapes() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Every shape (id, compiled regex): the detector's shape features."""
    return tuple((sid, rx) for sid, rx, _dies in _table())


@lru_cache(maxsize=1)
def _dying_shapes() -> tuple[re.Pattern[str], ...]:
    """The shapes that say a process ended (``dies: true``)."""
    return tuple(rx for _sid, rx, dies in _table() if dies)


# An exception whose class names a dead component (vLLM's EngineDeadError and MQEngineDeadError,
# Aphrodite's AsyncEngineDeadError, Ray's ActorDiedError): the request handler that raises it reports
# that the engine or actor behind the server is gone, which every later request meets as well; the
# server answers, its work does not go on (the rules clear a request handler's traceback as one
# request's error: this one is the engine's death).
_DEAD_EXC = re.compile(r"(?:Dead|Died)(?:Error|Exception)$")


def names_a_death(tb: Any) -> bool:
    """A traceback whose exception (or one it chains) is a dead component's."""
    return any(_DEAD_EXC.search(exc.exc_type or "") for exc in tb.data.get("chain") or ())


def says_it_died(ev: Any) -> bool:
    """A line that says a process ended (a supervisor's exit status, a worker's death, a fatal signal,
    a kill) or a device runtime's own error, or a traceback that names a dead engine: what the detector
    reads after readiness."""
    if ev.kind == kinds.TRACEBACK:
        # a ready server's other fatal tracebacks are the rules' (verdicts.fatal_tracebacks)
        return names_a_death(ev)
    head = ev.text[:600]
    return any(rx.search(head) for rx in _dying_shapes()) or outcome.proof_class(head) == "runtime"


def tokens(text: str) -> list[str]:
    """The features of one line: its shapes, words and word bigrams (lowercased)."""
    head = text[:600]
    out = [name for name, rx in _shapes() if rx.search(head)]
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
        # The bar after readiness, learned from healthy logs after their readiness (None: a model
        # trained before it had one, which reads start-ups only).
        up = data.get("threshold_up")
        self.threshold_up: float | None = float(up) if up is not None else None
        self.version: str = str(data.get("version", "?"))

    def score(self, text: str) -> float:
        """P(this line proves a failure)."""
        w = self.weights
        z = self.bias + sum(w.get(t, 0.0) for t in set(tokens(text)))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def death_model() -> LineModel | None:
    """The shipped death detector (``FORENSICS_DEATH_MODEL`` names another; ``off`` turns it off)."""
    data = load("death.json", "FORENSICS_DEATH_MODEL")
    return built("death.json", data, LineModel) if data is not None else None


def candidates(inc: Any, up: bool = False, end: int | None = None) -> Iterable[Any]:
    """The lines of a lifetime the detector reads: the events of its last ``TAIL_LINES`` lines (each once,
    in order) that came after its last phase marker and were not logged below error level. ``up``: a
    server that became ready (``consulted_up``), read after its readiness and its last progress.
    ``end``: read as if the log ended before that line (the lab reads a healthy server that served and
    was stopped up to its stop: what the detector would read had the log been cut there)."""
    st = getattr(inc, "outcome", None)
    if st is None:
        return []
    if up:
        return [ev for ev in _tail(inc, st, _last_progress_up(inc, st, end), end)
                if says_it_died(ev) and not _survived_up(inc, ev)]
    return _tail(inc, st, _last_change(inc, st), end)


def stopped_at(inc: Any) -> int | None:
    """The line where a lifetime that became ready was asked to stop or began its shutdown, or None (also
    where the detector reads it after readiness itself: a shutdown that cleaned up after a failure)."""
    marks = [x for x in (inc.stop_requested_line, inc.shutdown_line) if x is not None]
    if not marks or (inc.ready_line is None and not verdicts.answered_requests(inc)) or consulted_up(inc):
        return None
    return min(marks)


def _tail(inc: Any, st: Any, progressed: int, end: int | None = None) -> list[Any]:
    """The recent events after line ``progressed`` (and before ``end``) that may be where the lifetime died."""
    seen: dict[int, Any] = {}
    # Death comes at the end: a line with 30 more lines after it was survived (a start-up
    # that prints an error-worded warning and goes on is not dead).
    last = st.last_line if end is None else end - 1
    # ... and a start-up that reached another phase after the line went on past it (``progressed``).
    # Only a change of phase is going on: a marker of the step the line was printed in (llama.cpp's
    # context lines that a runner goes on printing after Ollama's scheduler gave up on it) is not past it.
    # A line whose shape decides alone (a supervisor's start-up deadline expired) is read even so: what
    # the child still prints after its supervisor gave up on it (Ollama's runner setting up its context
    # after the scheduler's "Load failed ... timed out waiting for llama runner to start") is the lag of
    # a process being torn down, not progress.
    # A line an early-warning rule knows is a warning the program printed and went on after (an
    # optional extension that did not load), not where it died; so is one the program itself said
    # just after was optional (TensorFlow's probe of TensorRT's libraries: verdicts.dismissed).
    warned = {h.event.line for h in inc.precursor_hits}
    events = [ev for ev in st.recent if end is None or ev.line < end]
    # What came before the run's own announcement that it finished well was its teardown, not a death.
    done = _succeeded_after(events)
    for k, ev in enumerate(events):
        if k < len(events) - LAST_EVENTS and not _reads_as_failure(ev):
            continue  # further back than the last few lines, only what uses a failure's words
        if ev.text.strip() and ev.line not in seen and (ev.end_line or ev.line) >= last - TAIL_LINES \
                and (ev.line > progressed or decides(ev)) and ev.line > done and (unhandled(ev) or reports_an_end(ev)) and ev.line not in warned \
                and not verdicts.dismissed(inc, ev) and not verdicts.recovered(inc, ev) and not verdicts.replied_error(ev) \
                and not _stop_exception(ev.text) and not clears(ev):
            seen[ev.line] = ev
    return [seen[k] for k in sorted(seen)]


def _stop_exception(text: str) -> bool:
    """A Python exception line that names a stop, not a failure (``KeyboardInterrupt``: the operator's
    Ctrl-C; ``SystemExit``, a cancellation), whatever follows it on the line (a notebook's output
    runs stderr's next warning onto it with no line break)."""
    head = text.lstrip().split(":", 1)[0].strip()
    return head in stops.BENIGN_EXC


def _last_progress_up(inc: Any, st: Any, end: int | None = None) -> int:
    """After readiness, where the server last went on: its readiness, its last move to a step of work
    other than answering (loading another model on demand), or the last progress line it printed itself
    (an engine's statistics, a heart beat, a phase marker). An HTTP answer is no such line: a server
    answers 500 for the request its dead worker failed, and answers probes and listings with its
    worker gone (taxonomy: only probes or listings followed is ``ready``)."""
    at = int(inc.ready_line or 0)
    stop = end if end is not None else math.inf
    for line, phase in reversed(getattr(inc, "transitions", None) or ()):
        # a shutdown is no step of work either (read here only where it cleans up after a failure)
        if phase not in ("serving", "ready", "shutdown") and line < stop:
            at = max(at, int(line))
            break
    for ev in reversed(st.recent):
        if ev.line < stop and ev.kind == kinds.PHASE_MARKER and ev.data.get("phase") != "shutdown":  # an exit is no progress
            return max(at, ev.end_line or ev.line)
    return at


def _survived_up(inc: Any, ev: Any) -> bool:
    """What a ready server's rules already clear: a bystander's (a metrics collector's) error, a kill
    from outside while all was well, one request's error that uvicorn reported."""
    return verdicts.bystander(ev) or stops.killed_while_up(inc, ev) or verdicts.asgi_report_before(inc, ev.line)


def _last_change(inc: Any, st: Any) -> int:
    """The line of the last change of phase (the last marker where the lifetime keeps no timeline). Its
    shutdown is none: a start-up that cleans up after its error (``cleanup_of_a_failure``) died before it."""
    down = inc.shutdown_line if inc.shutdown_line is not None else math.inf
    changes = [c for c in getattr(inc, "transitions", None) or () if c[0] < down]
    if changes:
        return int(changes[-1][0])
    marks = [m for m in st.markers if m[0] < down]
    return int(marks[-1][0]) if marks else 0


# A level its program wrote as a bracketed tag the prefix parser does not know (Docker Model Runner's
# "[inference.inference-llama.cpp][W] failed to read current llama.cpp version", a C++ logger's
# "[ WARNING]", "[I]"): the program's own word that the line is below error level.
_BRACKET_LOW_LEVEL = re.compile(r"\[\s*(?:W|WARN|WARNING|I|INFO|D|DEBUG|TRACE)\s*\]")


def unhandled(ev: Any) -> bool:
    """Not logged below error level, by the parsed level or a bracketed level tag (nor a Python warning,
    which the program goes on after whatever its level: ``verdicts.python_warning``): a line the
    detector may read as where the program died."""
    if (ev.level or "").upper() in _HANDLED_LEVELS or verdicts.python_warning(ev):
        return False
    return ev.level is not None or _BRACKET_LOW_LEVEL.search(ev.text[:160]) is None


def _reads_as_failure(ev: Any) -> bool:
    """A line (not a traceback or a phase marker) at error level or worded like a failure; read at
    diagnosis time, so the per-line path keeps no list of such lines."""
    if ev.kind in (kinds.TRACEBACK, kinds.PHASE_MARKER):
        return False
    return outcome.is_error(ev) or any(map(ev.text.__contains__, _SUSPECT_HINT))


def consulted(inc: Any) -> bool:
    """Whether the detector reads this lifetime at all. A server that became ready (requests it
    answered count: an excerpt that starts mid-serving, or one whose request handler reported a
    worker's error), or was asked to stop, or shut down, did not die unnoticed; but a shutdown that came
    right after a line worded like a failure is the start-up cleaning up before it exits on that error
    (Lemonade's 'Failed to load model' then 'Shutting down server...'; a Ray executor shut down after a
    placement group could not be had), as ``_ends_in_error`` and ``consulted_up`` read it."""
    return inc.ready_line is None and inc.stop_requested_line is None \
        and (inc.shutdown_line is None or cleanup_of_a_failure(inc)) and not verdicts.answered_requests(inc) \
        and not any(verdicts.reported_by_request(inc, tb) for tb, _p, _a in inc.tracebacks)


def consulted_up(inc: Any) -> bool:
    """Whether the detector reads this lifetime after its readiness: a server that became ready (or
    answered requests) and was neither asked to stop nor shut down may still have died after it
    answered (its worker's death, reported by the server that lives on; a runtime's error with no
    progress after it). It is read against its own bar, learned from healthy logs after readiness."""
    return (inc.ready_line is not None or verdicts.answered_requests(inc)) \
        and inc.stop_requested_line is None and (inc.shutdown_line is None or cleanup_of_a_failure(inc))


_CLEANUP_SPAN = 3  # lines: a program that exits on an error cleans up right after saying so


def cleanup_of_a_failure(inc: Any) -> bool:
    """The shutdown the lifetime logged came right after a line worded like a failure: a program cleaning up
    before it exits on that error (llama.cpp's server: 'failed to create_context', then 'cleaning up
    before exit'), not an operator's stop, which comes after quiet lines. So did one that came right after
    the server answered 5xx with no 2xx since (vLLM's API server shutting itself down once its engine is
    dead, after failing the requests in flight)."""
    at = inc.shutdown_line
    st = inc.outcome
    if st is None:
        return False
    if _failing_right_before(inc, at):
        return True
    recent = [ev for ev in st.recent if at - _CLEANUP_SPAN <= (ev.end_line or ev.line) < at]
    # A Ctrl-C'd worker's KeyboardInterrupt among them: the operator stopped it, and the errors
    # around it (its "Process EngineCore:" header, the front end's "Engine core initialization
    # failed") report that stop (batch-02/026).
    if any(ev.kind == kinds.TRACEBACK and stops.a_stop(inc, ev) for ev in recent):
        return False
    return any(ev.kind == kinds.TRACEBACK or _reads_as_failure(ev) for ev in recent)


def _failing_right_before(inc: Any, at: int) -> bool:
    """The server's last answer before line ``at`` came just before it (within ``_CLEANUP_SPAN`` lines)
    and was a 5xx that says the server failed (not a gateway's timeout, nor a method it never had), with
    no 2xx after it (HTTP's status classes: ``answers_failing_since``)."""
    last = getattr(inc, "last_answer", None)
    return last is not None and at - _CLEANUP_SPAN <= last[0] < at and failing_status(last[1]) \
        and inc.last_ok_line < last[0]


def died_at(inc: Any) -> Any:
    """The line where the detector says the lifetime died, or None."""
    model = death_model()
    if model is None:
        return None
    if consulted(inc):
        up, bar = False, model.threshold
    elif model.threshold_up is not None and consulted_up(inc):
        up, bar = True, model.threshold_up
    else:
        return None
    best, best_p = None, bar
    for ev in candidates(inc, up):
        p = 1.0 if decides(ev) else model.score(ev.text)
        if p >= best_p:
            best, best_p = ev, p
    if best is None and up:
        best = answers_failing_since(inc)
    return _framed_message(inc, best) if best is not None and _NATIVE_FRAME.match(best.text) else best


_OWN_REQUEST_GAP = 2  # lines between a request's traceback and the access line of its answer
# 5xx answers that say nothing of this server's health (RFC 9110 15.6): 504, a gateway's timeout waiting
# on another server; 501 and 505, a request for a method, a route's feature or an HTTP version the
# server does not implement (the client asked for what it never had, as a 404 would say).
_NOT_FAILING_5XX = frozenset((501, 504, 505))


def failing_status(status: int) -> bool:
    """A 5xx answer that says the server failed (not a gateway's timeout, nor a method it never had)."""
    return 500 <= status < 600 and status not in _NOT_FAILING_5XX


def answers_failing_since(inc: Any) -> Any:
    """The error after which a server that still listens answered only 5xx, or None: its last error-level
    line that is no one request's (a request handler's traceback, an error sent back to one client, a
    bystander's), when no 2xx answer came after it and its last answer is a 5xx. HTTP's status classes
    are true of any server: the model that failed to load behind a server that still listens, an engine
    whose decode fails on every request, answer 500 to everything after it (taxonomy: a request's error
    the server survives is one it went on answering 2xx after)."""
    last = getattr(inc, "last_answer", None)
    if last is None or not failing_status(last[1]):
        return None
    if (inc.shutdown_line is not None and last[0] > inc.shutdown_line) or stops.after_stop_request(inc, last[0]):
        return None  # a server that drains as it stops answers 503 on purpose (its readiness withdrawn)
    for ev in reversed(inc.error_lines):
        if ev.line >= last[0] or not unhandled(ev) or verdicts.bystander(ev) or verdicts.replied_error(ev) \
                or not (ev.kind == kinds.TRACEBACK or outcome.is_error(ev) or ev.line < (inc.ready_line or 0)):
            # After readiness only an error-level line (its level, its logger's error wording): a line that
            # merely uses an alarm word there is a request's or a bystander's. Before it, the start-up's own.
            continue
        if ev.kind == kinds.TRACEBACK and names_a_death(ev):
            # A request handler raising a dead engine's exception (EngineDeadError) reports the engine gone,
            # not one bad request: every request after it fails the same way (the 5xx that follows).
            return ev if ev.line > inc.last_ok_line else None
        if verdicts.request_level(ev) or verdicts.asgi_report_before(inc, ev.line) or _stop_exception(ev.text):
            return None  # the last error is one request's: the server went on after it
        if ev.kind == kinds.TRACEBACK and (ev.end_line or ev.line) >= last[0] - _OWN_REQUEST_GAP:
            return None  # a handler's exception the framework logged just before its 500: that request's
        return ev if ev.line > inc.last_ok_line and ev.line not in {h.event.line for h in inc.precursor_hits} else None
    return None


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
