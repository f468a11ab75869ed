"""Where a failure happened: the phase of the failing line, from the log's
markers, the frames of its traceback (or of the traceback printed with it),
what the server says about the step, the signature's hint, the catalogue and
the message's own words (phase_infer), in that order of trust."""
from __future__ import annotations

import re

from forensics.diagnosis import phase_infer, phase_launch, phase_priors
from forensics.events import types as kinds
from forensics.events.phases import PHASE_ORDER
from forensics.events.types import Event
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Hit, Incident


def marked_phase(inc: Incident, line: int, ev: Event | None, best: Hit | None, startup: bool) -> str | None:
    """The failure's phase from what the log says (markers, frames, wording,
    the signature's hint), or None when it says nothing. A signature's
    serving hint assumes a running server: not when the log says start-up failed."""
    phase = failure_phase(inc, line, ev, best, fallback=None)
    if phase in ("ready", "serving") and best is not None and best.signature.phase == phase \
            and startup:
        return None
    return phase


def failure_phase(inc: Incident, line: int, ev: Event | None, best: Hit | None,
                   fallback: str | None = "launch") -> str | None:
    """The phase of the failure: the last marker, corrected by what the
    frames were doing; without a marker, the frames' names, the signature's
    hint, the functions the catalogue knows, the message's own words (or the
    function that prints it), else launch. The hint comes before the
    catalogue's functions: a cut traceback often ends in the constructors
    that run all of start-up (Scheduler.__init__, ModelRunner.initialize),
    which the catalogue files under launch."""
    marker = inc.phase_at(line)
    framed = phase_infer.phase_of_traceback(ev) if ev is not None and ev.kind == kinds.TRACEBACK else None
    if framed is None:
        framed = nearby_traceback_phase(inc, ev, line, marked=marker is not None)
    near_text = "\n".join(texts_near(inc, ev, line, best))
    if framed is not None and marker not in ("ready", "serving") and phase_infer.during_capture(near_text):
        framed = "cuda-graph-capture"
    if framed in _COMPILES_IN and _a_compile_failed(best, near_text):
        framed = "kernel-jit"  # the build that the profile run (or the loader) started failed
    if _nothing_started(near_text, marker):
        return "launch"
    # The step may be named on the lines the failing message continues on (an exception's message
    # of several lines: TensorRT-LLM's "The following component could not be created: KV cache").
    stepped = phase_infer.phase_of_step(near_text) or phase_infer.phase_of_step(
        "\n".join(lines_after(inc, line)) + "\n")
    if marker is not None:
        marker_text = outcome.marker_before(inc, line)
        if framed is None and phase_infer.app_startup_loads(marker_text, _steps_before(inc, line)):
            return stepped or "load-weights"  # (a step the server names inside that start-up says which)
        framed = None if _ran_not_built(framed, marker, best, near_text) else framed
        return _with_marker(marker, marker_text, framed, stepped, ev, near_text)
    if framed is not None:
        return framed
    forward = phase_priors.forward_ran([near_text, *lines_around(inc, line)])
    if stepped == "load-weights" and forward:
        # A ggml forward pass failed in what the server reports as a failed load ("llama runner process
        # has terminated"): llama.cpp's loaders (its tools, Ollama's runner) run one forward, the
        # warm-up's empty run, before they report ready.
        return "warmup"
    if stepped is not None:
        return stepped
    if (best is None or best.signature.phase in (None, "launch")) and \
            phase_priors.kernel_launched([near_text, *lines_around(inc, line)]):
        return fallback  # a kernel was launched: not launch; where kernels run (phase_priors.typical_phase)
    if best is not None and best.signature.phase:
        return best.signature.phase
    # The message's own words before the catalogue's functions: the catalogue files a constructor
    # under the step it usually runs in, the words say which step this one failed in ("Error when
    # initializing model" over a cut stack of model constructors).
    worded = phase_infer.phase_of_words(near_text)
    if worded is not None:
        return worded
    if ev is not None and ev.kind == kinds.TRACEBACK:
        framed = phase_infer.phase_of_traceback(ev, use_catalogue=True)
        if framed is not None:
            return framed
    texted = phase_infer.phase_of_catalogue(near_text)  # (the words were read above)
    if texted is not None:
        return texted
    # ... and a ggml forward that failed with nothing else said: that run, not launch.
    return "warmup" if forward else fallback


def _nothing_started(near_text: str, marker: str | None) -> bool:
    """The failing lines refuse what comes before any step: the arguments (a usage error), the program
    itself (not found), its listening socket (the address in use): launch, whatever markers came before.
    Not a bind refused once the server answered requests (the serving marker): it had listened, so the
    socket is another one's (a metrics exporter's, a second listener's), refused while it served."""
    return phase_launch.is_usage_error(near_text) or phase_launch.program_missing(near_text) or \
        (marker != "serving" and phase_launch.never_listened(near_text))


def _with_marker(marker: str, marker_text: str | None, framed: str | None, stepped: str | None,
                 ev: Event | None, near_text: str) -> str:
    """The failure's phase where a marker came before it: the marker, corrected by the frames, by a
    later step the server names, by what follows readiness or a finished step."""
    if framed is not None and _marker_over_frames(marker, framed, ev):
        # (a capture that said it finished: the umbrella's next step, the warm-up, was running)
        done = marker == "cuda-graph-capture" and phase_infer.past_step(marker_text, marker, "launch")
        return "warmup" if done else marker
    if framed is not None and marker != "shutdown" and (
            framed != "serving" or marker in ("ready", "serving") or _finished_warmup(marker_text, marker)
            or _finished_capture(marker_text, marker)):
        return framed
    if framed is None and stepped is not None and PHASE_ORDER.get(stepped, 0) > PHASE_ORDER.get(marker, 99):
        return stepped  # the server names a later step than its last marker says
    if marker == "ready":
        return "serving"  # (a bind failure after the start-up line never listened: launch, above)
    if framed is None:
        # Weights loaded and nothing after: the next step is the memory plan.
        nxt = phase_infer.successor_phase(marker_text, marker)
        if nxt is not None:
            return nxt
    return marker


def _ran_not_built(framed: str | None, marker: str, best: Hit | None, near_text: str) -> bool:
    """A JIT kernel's frames (Triton's launcher, FlashInfer's JIT module) are on the stack each time the
    kernel runs, not only when it is built: after the marker of a later step and with no build failing,
    the kernel ran (and failed) in that step, which the marker names."""
    return framed == "kernel-jit" and PHASE_ORDER.get(marker, 0) > PHASE_ORDER["kernel-jit"] \
        and not _a_compile_failed(best, near_text)


def _steps_before(inc: Incident, line: int) -> set[str]:
    """The phases the lifetime's markers named up to ``line``."""
    return {phase for at, phase in inc.transitions if at <= line}


def _marker_over_frames(marker: str, framed: str, ev: Event | None) -> bool:
    """The order of events says more than the frames: the process printed the marker of a later
    start-up step than the frames name, and the frames pass through a function that runs several
    steps (vLLM's compile_or_warm_up_model, inside the KV-cache set-up: its kernel warm-up follows
    "Warming up FlashInfer attention."). (Not any later marker: vLLM's CPU backend warms up before
    it plans memory.)"""
    if marker in ("ready", "serving", "shutdown") or PHASE_ORDER.get(framed, 99) >= PHASE_ORDER.get(marker, 0):
        return False
    return ev is not None and ev.kind == kinds.TRACEBACK and phase_infer.runs_several_steps(ev)


def _finished_warmup(marker_text: str | None, marker: str) -> bool:
    """The last marker says the warm-up (the last start-up step) finished ("init engine (profile,
    create kv cache, warmup model) took 15.18 seconds"): a request's frames after it are serving."""
    return marker == "warmup" and phase_infer.past_step(marker_text, "warmup", "launch")


def _finished_capture(marker_text: str | None, marker: str) -> bool:
    """The last marker says the graph capture finished ("Capture cuda graph end. Time elapsed: ...", or
    its progress bar at its last batch size, "36/36"): frames of the batch loop after it ran a batch
    (the capture runs in its own frames, which FUNCTION_PHASES reads first), not the capture."""
    return marker == "cuda-graph-capture" and bool(marker_text) and (
        phase_infer.past_step(marker_text, marker, "launch") or _BAR_DONE.search(marker_text or "") is not None)


# A progress bar (tqdm's "36/36 [00:02<00:00, ...]") at its last step.
_BAR_DONE = re.compile(r"\b(\d+)/\1 \[")


# The step that runs a lazy JIT build as part of itself: vLLM compiles the model in its memory
# profile run. A build that failed there is the compile step (after it, in capture or warm-up,
# it is that step: phase_infer).
_COMPILES_IN = ("memory-plan",)


def _a_compile_failed(best: Hit | None, near_text: str) -> bool:
    """The failure is a build's own failure: its signature or its words say kernel-jit."""
    if best is not None and best.signature.phase is not None:
        return best.signature.phase == "kernel-jit"
    return phase_infer.phase_of_text(near_text) == "kernel-jit"


def unmarked_phase(inc: Incident, line: int, label: str | None, startup: bool, near: list[str]) -> str:
    """Where a failure of ``label`` happens when nothing in the excerpt says where (phase_priors), read
    with the failing lines and those printed around them."""
    return phase_priors.typical_phase(label, startup, [*near, *lines_around(inc, line)]) or "launch"


def lines_around(inc: Incident, line: int, span: int = 4) -> list[str]:
    """Every line the lifetime kept within ``span`` lines of ``line``, whatever its level (a C++
    runtime's report continues on unlevelled lines: "  current device: 0, in function ...")."""
    st = inc.outcome
    return [e.text for e in (st.recent if st is not None else ()) if abs(e.line - line) <= span]


def lines_after(inc: Incident, line: int, span: int = 4) -> list[str]:
    """The ``span`` lines the lifetime kept right after the failing event at ``line``, whatever their
    level (a traceback is one event: the lines after its exception line follow it in the record)."""
    st = inc.outcome
    after = [e.text for e in (st.recent if st is not None else ()) if 0 < e.line - line <= 200]
    return after[:span]


def texts_near(inc: Incident, ev: Event | None, line: int, best: Hit | None) -> list[str]:
    """The failing message and the error lines printed with it (a runtime's
    multi-line report, the wrapper just after)."""
    out = [best.text] if best is not None else []
    if ev is not None:
        out.append(ev.text)
    out.extend(e.text for e in outcome.errors_before(inc, line + 15) if e.line >= line - 2)
    return out


def nearby_traceback_phase(inc: Incident, ev: Event | None, line: int, marked: bool = False) -> str | None:
    """A line that is not a traceback often comes with one of the same process
    just before or after it (the log line, then its stack): its frames say where. (``marked``: a
    marker came before the failure; then a bare header's continuation is not read, see below.)"""
    if ev is None:
        return None
    framed_tb = ev.kind == kinds.TRACEBACK and bool(ev.data.get("frames") or any(
        e.frames for e in ev.data.get("chain") or ()))
    proc = outcome.process_of(ev)
    head = ev.text.split("\n", 1)[0].strip()
    quoted = _relayed_message(head)
    for tb, _phase, _after in inc.tracebacks:
        if tb is ev or abs(tb.line - line) > 300:
            continue
        tb_head = tb.text.split("\n", 1)[0]
        if framed_tb:
            # Frames that say nothing (a queue read, a lock): the traceback the same process
            # prints next is the one the error was raised into ("The above exception was the
            # direct cause of the following exception"), and its frames say where it was.
            # Or the caller's traceback in the process that asked for the work: it quotes the
            # worker's message (vLLM's "Worker failed with error '...'", an RPC's relay) and its
            # frames name the step that asked (``_initialize_kv_caches``).
            near = tb.line > line and tb.line - line <= 60 and (
                outcome.process_of(tb) == proc or _relays(tb_head, quoted, head))
        else:
            # The same error from another rank (ranks print it interleaved, one with its stack);
            # or a bare "Traceback (most recent call last):" whose frames follow under another
            # prefix (a worker's log prefix starts on the next line): the next traceback, where no
            # marker says where start-up was (with one, that next traceback may be another
            # process's, and the marker is the better word).
            near = outcome.process_of(tb) == proc or bool(head) and tb_head.strip() == head or (
                not marked and head.startswith(_BARE_HEADER) and 0 < tb.line - (ev.end_line or line) <= 1)
        if near:
            framed = phase_infer.phase_of_traceback(tb)
            if framed is not None:
                return framed
    return None


# A traceback's header with nothing of its own after it (no frame, no exception line): what
# follows it is its body (an exception line without frames is a cut traceback of its own).
_BARE_HEADER = "Traceback (most recent call last)"
# An exception's line: its type, then its message ("IndexError: index 0 is out of bounds ...").
_EXC_HEAD = re.compile(r"^(?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt)\w*: (?P<msg>.{20,})$")


def _relays(tb_head: str, quoted: str | None, head: str) -> bool:
    """Another exception whose message quotes this one's: a relay (not the same error, which
    another rank prints with frames of its own)."""
    return quoted is not None and quoted in tb_head and tb_head.strip() != head


def _relayed_message(head: str) -> str | None:
    """The message of an exception line, long enough that another process quoting it is relaying
    this very error (a short one, "14", could be quoted by chance)."""
    m = _EXC_HEAD.match(head)
    return m.group("msg")[:200] if m else None
