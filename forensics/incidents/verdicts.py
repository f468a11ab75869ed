"""Judgements about one process lifetime that need no signature: did it die,
did it survive a traceback, does a failure line count, which tracebacks were
fatal, and what a lifetime without a failure is (ready, starting, stalled).

They read only what the incident builder recorded (exit status, readiness,
shutdown and stop requests, progress per process), so they belong to the
incidents stage; the diagnosis stage asks them before it decides a cause."""
from __future__ import annotations

import re

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.phases import PHASE_ORDER
from forensics.events.tracebacks import CAUSE_TEXT, CONTEXT_TEXT
from forensics.incidents import handled, outcome
from forensics.incidents.harness import harness_assertion, in_harness_frames
from forensics.incidents.lifetimes import Incident, proc_key
from forensics.incidents.request_errors import request_level, traceback_frames
from forensics.incidents.stops import a_stop, after_stop_request, echoes_a_stop, quiet_before


def died(inc: Incident, after_line: int) -> bool:
    """The process ended badly (a failed exit before any shutdown, or a death
    line after ``after_line``)."""
    if inc.exit is not None:
        code, status = inc.exit.get("code"), inc.exit.get("status")
        if code in ("killed", "dumped") or (code == "exited" and status not in (0, None)) or inc.exit.get("result") not in (None, "success"):
            if inc.shutdown_line is None or inc.exit.get("line", 0) < inc.shutdown_line:
                return True
    return any(h.line > after_line for h in inc.wrapper_hits)


def relevant(inc: Incident, line: int, after_ready: bool, ev: Event | None = None) -> bool:
    """A failure line counts unless it is shutdown noise, a bystander's (a metrics or telemetry
    collector's) or a request-level error the server survived (it went on serving afterwards)."""
    if inc.shutdown_line is not None and line >= inc.shutdown_line and inc.ready_line is not None:
        return False
    if not died(inc, line):
        if ev is not None and bystander(ev):
            return False
        # A request handler's traceback means a server was up and answering (an excerpt may
        # start after its ready line): one request failed, the process did not.
        if (after_ready and inc.last_activity_line > line) or (ev is not None and request_level(ev)) \
                or asgi_report_before(inc, line):
            return False
    return True


# Loggers of the collectors a server runs beside its work (TorchServe's frontend runs its
# system-metrics script every minute from org.pytorch.serve.metrics.MetricCollector; vLLM's
# usage_lib reports usage stats from a thread; Prometheus/OpenTelemetry exporters): when one
# fails, the server loses a figure, not its life.
_BYSTANDER_LOGGER = re.compile(r"(?i)(?:^|[.:/\s])(?:(?:\w+_)?metrics?(?:_?collector|_?exporter)?|telemetry|usage_lib|usage_stats|otel\w*|prometheus\w*)$")


def bystander(ev: Event) -> bool:
    """The error was logged by a metrics or telemetry collector, not by the server's own work."""
    return _BYSTANDER_LOGGER.search(ev.logger or "") is not None


# A program saying that the library error just above is optional and that it goes on without it:
# TensorFlow after its GPU libraries' probe (stream_executor/platform/default/dso_loader and
# tf2tensorrt/utils/py_utils.cc: "TF-TRT Warning: Cannot dlopen some TensorRT libraries. If you
# would like to use Nvidia GPU with TensorRT, please make sure ...", cuda_runtime: "Ignore above
# cudart dlerror if you do not have a GPU set up on your machine.", "Skipping registering GPU devices...").
_DISMISSED = re.compile(r"\bIgnore above \w+ dlerror\b|\bCannot dlopen some \w+ libraries\. If you would like to use\b|"
                        r"\bSkipping registering GPU devices\b")
_DISMISS_SPAN = 12  # lines: the program's own comment follows its probe's messages at once


def dismissed(inc: Incident, ev: Event) -> bool:
    """The program said right after ``ev`` that the failure is optional, and nothing died; or the
    failure is one its program handles by design (``handled.yaml``: a fallback, an ignored exception)."""
    if handled.handled_line(ev) or ignored(inc, ev):
        return True
    if died(inc, ev.line):
        return False
    end = ev.end_line or ev.line
    for seen in (inc.warning_lines, inc.error_lines):
        if any(end < e.line <= end + _DISMISS_SPAN and _DISMISSED.search(e.text[:400]) for e in seen):
            return True
    return False


def ignored(inc: Incident, tb: Event) -> bool:
    """A traceback Python printed for an exception it ignored ("Exception ignored in: <obj>" on the
    line before: a __del__ or a finaliser's): the program went on, whatever the exception, unless a
    death line follows it (then the exception is the crash's first word: a faulted GPU's, say)."""
    st = inc.outcome
    return handled.ignored_traceback((inc.error_lines, st.recent if st is not None else ()), tb) and \
        not died(inc, tb.end_line or tb.line)


# A server's reply to one request it could not serve (llama.cpp's server: "send_error: task id = N,
# error: request (N tokens) exceeds the available context size ..."): the client got the error, the
# process went on serving. So is a failure its line scopes to one request ("... failed for request
# rid=...": SGLang's PD transfer of one request's KV cache to a decode peer that went away).
_REPLIED_ERROR = re.compile(r"\bsend_error: task id = \d+, error: |\b(?:[Ff]ailed|[Ee]rror|[Aa]borted) for (?:request|req)\b")


def replied_error(ev: Event) -> bool:
    """The line is an error the server sent back to one client, not one it died of."""
    return _REPLIED_ERROR.search(ev.text[:300]) is not None


def asgi_report_before(inc: Incident, line: int) -> bool:
    """uvicorn's "Exception in ASGI application" on the line before a traceback that did not
    take it as its carrier (a logger prefix on every line, or a paste, cost the frames their
    indentation): the traceback is still one request handler's."""
    for ev in reversed(inc.error_lines):
        if ev.line < line - 2:
            return False
        if ev.line < line and ev.text.rstrip().endswith("Exception in ASGI application"):
            return True
    return False


def fatal_tracebacks(inc: Incident, matched_lines: set[int]) -> list[Event]:
    """Tracebacks no signature matched (not at ``matched_lines``) that ended
    the process: not a benign stop, not survived, not handled as a warning,
    not a wrapper's report of an earlier error."""
    out = []
    wrapped = {h.event.line for h in inc.wrapper_hits if h.event.kind == kinds.TRACEBACK}
    for ev, phase, after_ready in inc.tracebacks:
        if ev.line in matched_lines:
            continue
        if a_stop(inc, ev) and (after_ready or inc.shutdown_line is not None and ev.line > inc.shutdown_line
                            or after_stop_request(inc, ev.line) or quiet_before(inc, ev.line)):
            continue
        if ignored(inc, ev):
            continue  # Python's report of an exception it ignored (a __del__'s at exit)
        if continues_a_request(inc, ev):
            continue  # the rest of a request handler's chain, cut before its own exception
        if ev.line in wrapped and echoes_a_stop(inc, ev.line):
            continue  # a parent's report that its child stopped (Ctrl-C in the engine): the stop, not a failure
        if shows_a_warnings_origin(inc, ev):
            continue
        if not relevant(inc, ev.line, after_ready, ev):
            continue
        if after_ready and another_programs(inc, ev):
            continue
        if after_ready and a_tests_assertion(inc, ev):
            continue  # a test harness's check of the served server (its speed, its answers) failed
        if (survived(inc, ev.line) or progressed_after(inc, ev)) and not ended_a_child(ev):
            continue
        if reported_by_request(inc, ev):
            continue
        if ev.level in ("WARNING", "INFO", "DEBUG"):
            continue  # logged as a warning (logger.warning(..., exc_info=True)): handled, not fatal
        if ev.line in wrapped and outcome.errors_before(inc, ev.line - 1):
            continue  # a death/wrapper exception (RayActorError, EngineDeadError) after an error: the error decides
        out.append(ev)
    return out


# Python's multiprocessing runs a child's work in BaseProcess._bootstrap (multiprocessing/process.py):
# when the target raises, _bootstrap prints the traceback from its own frame down and the child exits
# with code 1. So a traceback whose outermost frame is that one is a child process's last word (a
# scheduler, an engine core, a worker): the child is gone, whatever its parent goes on printing (a
# probe answered 200 by the parent's HTTP server is no sign the child came back). A stop (Ctrl-C) is
# told apart before this is asked (``a_stop``).
_CHILD_BOOTSTRAP = ("multiprocessing/process.py", "multiprocessing\\process.py")


def ended_a_child(ev: Event) -> bool:
    """The traceback unwound a multiprocessing child's whole work (its outermost frame is
    ``_bootstrap``) and ends on an exception: the child process died of it."""
    chain = ev.data.get("chain") or ()
    if not chain or not chain[-1].exc_type:
        return False
    frames = chain[-1].frames if chain[-1].frames else ev.data.get("frames") or ()
    return bool(frames) and frames[0].function == "_bootstrap" and (frames[0].file or "").endswith(_CHILD_BOOTSTRAP)


# A frame of code installed as a package (the server's, a library's) or of Python's own library
# (runpy's "<frozen runpy>" starts every ``python -m``, importlib's frames every import).
_PACKAGED_FRAME = re.compile(r"[/\\](?:site|dist)-packages[/\\]|^<frozen |[/\\]lib[/\\]python\d[\d.]*[/\\]")


def another_programs(inc: Incident, ev: Event) -> bool:
    """A traceback after readiness that another program printed into the server's log (a
    benchmark client run in the same job): its every frame is a script's own file, none is
    in an installed package (a server runs from its package: its own tracebacks, a request
    handler's or its engine's, have frames there), it was started as a script (a ``<module>``
    frame of one of those files), and the server lived on to a clean shutdown after it with
    nothing dying. The server's verdict is its own (taxonomy: ``ready`` / ``shutdown``)."""
    if inc.ready_line is None or inc.shutdown_line is None or inc.shutdown_line <= (ev.end_line or ev.line):
        return False
    if died(inc, ev.line) or exit_failed(inc):
        return False
    frames = traceback_frames(ev)
    own = [f for f in frames if not _PACKAGED_FRAME.search(f.file or "")]
    if not own or any(f.file.startswith("<") for f in own):
        return False
    return len(own) == len([f for f in frames if not (f.file or "").startswith("<frozen ")]) \
        and any(f.function == "<module>" for f in own)


def a_tests_assertion(inc: Incident, ev: Event) -> bool:
    """A traceback after readiness that a test harness printed when one of its checks of the
    served server failed (a nightly benchmark's throughput or latency threshold, an accuracy
    bar: SGLang's CI runs its server and then unittest's assertions against it), or the
    runner's chained report right after such a check ("During handling of the above
    exception": its retry giving up): the server served, the harness judged it. A harness
    that shows the server died (a death or failed exit after it) still fails it; the server's
    own tracebacks before the check are judged on their own."""
    if inc.ready_line is None or ev.line <= inc.ready_line or died(inc, ev.line):
        return False
    if harness_assertion(ev):
        return True
    if not in_harness_frames(ev):
        return False
    return any(other.line < ev.line and ev.line - (other.end_line or other.line) <= _CHAIN_GAP
               and harness_assertion(other) and _chain_line_between(inc, other, ev)
               for other, _p, _a in inc.tracebacks)


_REPORT_SPAN = 200  # lines: a request handler reports a worker's error right after it


def reported_by_request(inc: Incident, ev: Event) -> bool:
    """A request handler's traceback after ``ev`` reports the same error (quotes its
    message, or is cut before its own message and begins right after it): the error
    failed that request (a worker's error in Xinference's batch inference, an asyncio
    callback of LMDeploy's vision preprocessing), and nothing says the process died."""
    if died(inc, ev.line):
        return False
    end = ev.end_line or ev.line
    chain = ev.data.get("chain") or ()
    said = (chain[-1].exc_message or "").strip()[:200] if chain else ""
    for tb, _phase, _after in inc.tracebacks:
        if not end < tb.line <= end + _REPORT_SPAN or not request_level(tb):
            continue  # (closed tracebacks of several processes need not come in line order)
        inner = tb.data.get("chain") or ()
        if len(said) >= 12 and any(said in (e.exc_message or "") for e in inner):
            return True
        if not inner and tb.line <= end + 2:
            return True
    return False


_CHAIN_GAP = 4  # lines: a blank line, "During handling of the above exception ...", a blank line between the two


def continues_a_request(inc: Incident, tb: Event) -> bool:
    """A traceback with no exception of its own (a paste or an excerpt cut it before its exception line)
    that begins right after a request handler's traceback: Python prints a chained exception ("During
    handling of the above exception, another exception occurred:") as a second traceback straight after
    the first, so it is the rest of that request's error, not one of its own."""
    if tb.data.get("chain"):
        return False
    return any(other.line < tb.line and tb.line - (other.end_line or other.line) <= _CHAIN_GAP and request_level(other)
               and _chain_line_between(inc, other, tb) for other, _p, _a in inc.tracebacks)


_CHAIN_LINES = (CAUSE_TEXT[:30], CONTEXT_TEXT[:30])


def _chain_line_between(inc: Incident, first: Event, then: Event) -> bool:
    """Whether Python's chain line ("During handling of the above exception ...", "The above exception
    was the direct cause ...") was printed between two tracebacks: Python prints none without it, so a
    traceback right after another with none between is a report of its own (an engine loop's, cut by
    the log's end), not the rest of the first. Where the lines between are no longer kept (``recent``
    holds the last events only), the chain is assumed, as before."""
    st = inc.outcome
    recent = st.recent if st is not None else ()
    if not any(e is first for e in recent):
        return True
    lo = first.end_line or first.line
    return any(lo < e.line < then.line and any(c in e.text[:200] for c in _CHAIN_LINES) for e in recent)


def progressed_after(inc: Incident, ev: Event) -> bool:
    """The same process went on to a later start-up phase after printing this
    traceback, or, already up, said again that it is up (text-generation-webui's
    "Running on local URL" after an extension failed to load), and nothing says
    it died: it was handled, not fatal."""
    at = inc.phase_at(ev.line)
    if at in ("ready", "serving"):
        return _went_past(inc, ev, at, _READY)
    return _went_past(inc, ev, at)


# Python's warnings module prints "FILE:LINE: CategoryWarning: message" (warnings.formatwarning) and the
# program goes on: a warning is never raised unless the program asked for ``-W error``, where it becomes an
# exception and a traceback. So the line is a warning whatever logger level the line carries (none: it goes
# to stderr bare): torch's "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old"
# on a CPU-only start-up that goes on, multiprocessing's resource_tracker's notes.
_PY_WARNING = re.compile(r"(?:^|\s)\S*\.py:\d+: (?:[A-Z]\w*)?Warning: ")


def python_warning(ev: Event) -> bool:
    """The line is Python's warnings module's report of a warning (the program went on past it)."""
    return ev.kind != kinds.TRACEBACK and "Warning: " in ev.text[:400] and _PY_WARNING.search(ev.text[:400]) is not None


_ORIGIN_SPAN = 2  # lines: the warning follows the stack that shows where it came from at once


def shows_a_warnings_origin(inc: Incident, tb: Event) -> bool:
    """A traceback of frames with no exception of its own, right after which Python's warnings module
    reports a warning at the very FILE:LINE of its last frame: the stack a library printed to show where
    the warning comes from, not an exception that ended anything (NumPy 2's "A module that was compiled
    using NumPy 1.x cannot be run in NumPy 2.x" prints the importing stack down to torch's
    transformer.py line 20, then torch warns "transformer.py:20: UserWarning: Failed to initialize
    NumPy" and goes on). A warning that names another place (one that merely follows) links nothing."""
    frames = tb.data.get("frames")
    if tb.data.get("chain") or not frames or frames[-1].lineno is None:
        return False
    at = f"{frames[-1].file}:{frames[-1].lineno}: "
    end = tb.end_line or tb.line
    recent = inc.outcome.recent if inc.outcome is not None else ()
    return any(end < e.line <= end + _ORIGIN_SPAN and python_warning(e) and at in e.text[:400]
               for seen in (inc.error_lines, inc.warning_lines, recent) for e in seen)


def warned_and_went_on(inc: Incident, ev: Event) -> bool:
    """A failure message the program logged at warning level or below (vLLM's
    "Failed to import from vllm._C" on a Neuron or TPU host), after which the same
    process reached a later start-up phase and nothing says it died: the program
    handled it, it is not what ended the run. So is one it said at once it retries
    another way (``recovered``)."""
    if recovered(inc, ev):
        return True
    if ev.kind == kinds.TRACEBACK or (ev.level not in ("WARNING", "INFO", "DEBUG") and not python_warning(ev)):
        return False
    return _went_past(inc, ev, inc.phase_at(ev.line) or "launch") or _went_on_quietly(inc, ev)  # no marker yet: launching


def _went_on_quietly(inc: Incident, ev: Event) -> bool:
    """The program went on to ordinary work after ``ev`` (an info-level line among the
    last lines, after it) with no error-level line, no traceback and no death (vLLM's
    "Failed to import from vllm._C" on a Neuron host, then the engine goes on loading):
    nothing says the warning ended the run. The warning's own continuation lines are
    not going on."""
    end = ev.end_line or ev.line
    st = inc.outcome
    if st is None or died(inc, ev.line) or not any(e.line > end and e.level in ("INFO", "DEBUG") for e in st.recent):
        return False
    return not any(e.line > end for e in st.errors) and not any(tb.line > end for tb, _p, _a in inc.tracebacks)


# A program's own word, below error level, that it retries what just failed another way or falls
# back (llama.cpp: "compute buffer allocation failed, retrying without pipeline parallelism"; a
# loader "falling back to the CPU kernel"; a client "will retry"): a wording class of any program.
_RETRIES = re.compile(r"(?i)\bretrying\b|\bretry(?:ing)? (?:with|without)\b|\bfall(?:ing)? ?back\b|\btrying again\b|"
                      r"\bwill (?:retry|try again)\b")
_RETRY_SPAN = 6  # lines: the program says it retries right after the failure's lines
_ERROR_LEVELS = ("ERROR", "CRITICAL", "FATAL")


def recovered(inc: Incident, ev: Event) -> bool:
    """Within a few lines after the failure ``ev`` the program said, below error level, that it
    retries another way, then went on to ordinary work (an info-level line) with no error-level
    line, no traceback and no death after that word: it recovered; the failure did not end it."""
    end = ev.end_line or ev.line
    st = inc.outcome
    if st is None or died(inc, ev.line):
        return False
    retry = next((e.line for e in st.recent if end < e.line <= end + _RETRY_SPAN and e.kind != kinds.TRACEBACK
                  and (e.level or "").upper() not in _ERROR_LEVELS and _RETRIES.search(e.text[:300])), None)
    if retry is None or not any(e.line > retry and e.level in ("INFO", "DEBUG") for e in st.recent):
        return False
    return not any(e.line > retry for e in st.errors) and not any(tb.line > retry for tb, _p, _a in inc.tracebacks)


_READY = PHASE_ORDER["ready"]


def _went_past(inc: Incident, ev: Event, at: str | None, reached: int | None = None) -> bool:
    """The process of ``ev`` reached a phase later than ``at`` after it (or, given ``reached``,
    a phase at least that late), and did not die."""
    if at is None or died(inc, ev.line):
        return False
    seen = inc.progress_by_proc.get(proc_key(ev))
    if seen is None or seen[0] <= (ev.end_line or ev.line):
        return False
    return seen[1] >= reached if reached is not None else seen[1] > PHASE_ORDER.get(at, 99)


def survived(inc: Incident, line: int) -> bool:
    """The process printed this and still came up (and did not die later):
    a traceback that was logged and handled, not the cause of a failure."""
    return inc.ready_line is not None and line < inc.ready_line and not died(inc, line)


def exit_failed(inc: Incident) -> bool:
    """The recorded exit is a failure (non-zero status, killed, dumped, a
    failed unit result) and not the end of a requested stop or shutdown."""
    if inc.exit is None:
        return False
    if inc.stop_requested_line is not None and inc.stop_requested_line < inc.exit.get("line", 0):
        return False  # it was asked to stop: the signal that ended it is the stop
    if inc.shutdown_line is not None and inc.ready_line is not None:
        return False
    code, status = inc.exit.get("code"), inc.exit.get("status")
    result = inc.exit.get("result")
    return (code == "exited" and status not in (0, None)) or code in ("killed", "dumped") or (
        result is not None and result != "success")


# No progress line for this long while starting: the start-up is stuck.
STALL_SECONDS = 900


def answered_requests(inc: Incident) -> bool:
    """No readiness line, but a request handler's traceback: the server was up and answering
    (an excerpt that starts after its ready line, where one request failed)."""
    return inc.ready_line is None and any(request_level(ev) for ev, _phase, _after in inc.tracebacks)


def printed_something(inc: Incident) -> bool:
    """The lifetime's program printed a line that is not blank (whitespace alone is no program)."""
    st = inc.outcome
    return inc.process_events > 0 and st is not None and any(e.text.strip() for e in st.recent)


def healthy_verdict(inc: Incident) -> str:
    """The verdict of a lifetime without a failure: ready, no-failure, stalled or starting."""
    if inc.ready_line is not None or answered_requests(inc):
        return "ready"
    if inc.stop_requested_line is not None and inc.exit is not None:
        return "no-failure"  # stopped on request before it was ready
    if inc.phase is None and not printed_something(inc):
        return "no-failure"
    if inc.end_ts and inc.last_progress_ts and (inc.end_ts - inc.last_progress_ts).total_seconds() > STALL_SECONDS:
        return "stalled"
    return "starting"  # no marker at all: a program that printed lines and said no later step is launching
