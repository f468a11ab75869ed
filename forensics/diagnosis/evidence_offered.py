"""The lines near the evidence that the rules did not list (issue 27 item 1).

The evidence (``evidence.assemble``) lists the cause the rules found and what proves it sharper by
a known shape. The line a reader would quote is often a neighbour they did not list: the error the
cause restates ("error loading model: unrecognized tensor type 4" before "failed to load model
'...'"), the rest of a message printed over several lines ("[[ Initialization error (error 3) ]]"
under "CUDA failed to initialize"), an error a program logs at INFO level (Ollama's msg="Load
failed" error="..."), the error a death line followed, or the exception of the next traceback of
a chain ("During handling of the above exception ..."), and any line the lifetime kept whose message
the catalogue has at error level, however far from the listed lines and whatever level it was
printed at (``known_errors``). ``offered`` gathers them from what the lifetime already kept (no
line is read again); a death line listed first gives way to the error printed just before it
(``death_gives_way``), a traceback's frame listed first to the first line that states an error
(``frame_gives_way``); the others are offered to the learned ranker, and an offered line it does
not put first is not listed (``settle``)."""
from __future__ import annotations

import re
from typing import Any

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Incident
from forensics.incidents.stops import BENIGN_EXC
from forensics.diagnosis.phase_priors import STARTUP_FAILED
from forensics.diagnosis.evidence import (EXCEPTION_LINE, MAX_EVIDENCE, OFFER_WORD, POINTS_ABOVE, TB_HEADER, WARNING_WORD,
                                          carried_message, clip_message)

OFFER_BEFORE = 6  # lines before a listed line searched (the error a restatement follows)
OFFER_AFTER = 4  # lines after it (a message's continuation lines)
MAX_OFFERED = 8
# Python's words between the tracebacks of a chain: they join two errors and name none
_CHAIN_WORDS = re.compile(r"^(?:During handling of the above exception|The above exception was the direct cause)")
_CHAIN_GAP = 8  # lines between one traceback's end and the next's start that still chain them


def offered(inc: Incident | None, evidence: list[dict[str, Any]], fatal_tbs: list[Event]) -> list[dict[str, Any]]:
    """Lines near the listed ones that read as errors, and the last exception of each traceback
    that chains on from the cause's, as ``offered`` entries (``offer`` says which kind)."""
    if inc is None or not evidence:
        return []
    anchors = sorted({e["line"] for e in evidence if isinstance(e.get("line"), int)
                      and e.get("role") not in ("consequence", "last-frame", "fragment")})
    # a traceback listed by its last frame (or by an exception inside it) is read from its start:
    # the error line a program logs before it prints the traceback is just above
    listed_at = {e["line"] for e in evidence if isinstance(e.get("line"), int)}
    anchors = sorted(set(anchors) | {t.line for t, _p, _a in inc.tracebacks
                                     if any(t.line <= a <= (t.end_line or t.line) for a in listed_at)})
    if not anchors:
        return []
    listed = {str(e["text"]).strip() for e in evidence} | {e["line"] for e in evidence if isinstance(e.get("line"), int)}
    out: list[dict[str, Any]] = []

    def offer(line: int, text: str, kind: str) -> None:
        key = text.strip()
        if not key or key in listed or line in listed or len(out) >= MAX_OFFERED or _CHAIN_WORDS.search(key):
            return
        listed.add(key)
        listed.add(line)
        out.append({"line": line, "text": clip_message(text), "role": "offered", "offer": kind})

    for tb, _p, _a in inc.tracebacks:  # the message its logger printed on the traceback's first line
        if any(tb.line <= a <= (tb.end_line or tb.line) for a in listed_at):
            said = carried_message(tb)
            if said:
                offer(tb.line, said, "error" if tb.level in ("ERROR", "CRITICAL") else "worded")
    for ev in _near(inc, anchors):
        if outcome.is_error(ev):
            offer(ev.line, ev.text, "error")
        elif ev.level in ("INFO", "DEBUG", "WARNING") and OFFER_WORD.search(ev.text[:400]):
            offer(ev.line, ev.text, "quiet")
        elif ev.level is None and OFFER_WORD.search(ev.text[:400]):
            offer(ev.line, ev.text, "worded")
    del out[MAX_OFFERED - 3:]  # the nearest lines, and room for a chain's next exceptions
    run, others = _chained(inc, anchors, fatal_tbs)
    for tb in run[::-1] + others:  # the chain's last exception first: it is what the chain came to
        chain = tb.data.get("chain") or ()
        if chain:
            offer(chain[-1].line or tb.line, chain[-1].rendered, "chain" if run and tb is run[-1] else "exception")
    room = MAX_OFFERED + MAX_KNOWN - len(out) if _ranked() else 0
    for line, text in (known_errors(inc, anchors, listed)[:min(MAX_KNOWN, room)] if room > 0 else ()):
        out.append({"line": line, "text": clip_message(text), "role": "offered", "offer": "known"})
    return out


MAX_KNOWN = 4  # lines the catalogue knows as errors, offered beyond the window


def _ranked() -> bool:
    """Whether offered lines are ranked at all: a ranker ships, or the training records the
    candidates. Else the catalogue is not read for lines no one would rank (its index costs a
    short log's classify more than the rest of the diagnosis)."""
    from forensics.diagnosis.decision.evidence_rank import ranker
    from forensics.diagnosis.decision.label_model import RECORDER

    return RECORDER.get() is not None or ranker() is not None


KNOWN_SCAN = 48  # the latest events read for them (the diagnosis's cost, not the per-line path's)


def known_errors(inc: Incident, anchors: list[int], listed: set) -> list[tuple[int, str]]:
    """Lines the lifetime kept, printed before the evidence ends, whose message the catalogue has
    at error level (a raised exception, a log call at ERROR or above), whatever level they were
    printed at or parsed as and however far from the listed lines: glog's I-prefixed "Failed to
    initialize Python stub: ...", a Rich console's message wrapped under its ERROR line, an
    exception of a traceback a supervisor logged at INFO. Latest first, one per message."""
    from forensics.diagnosis.decision.evidence_rank import catalogue_facts

    st = inc.outcome
    end = max(anchors) + OFFER_AFTER
    pool: dict[int, tuple[int, str]] = {}
    evs = [*(st.recent if st is not None else ()), *(st.errors if st is not None else ()), *inc.error_lines]
    evs += [ev for _hit, before in (st.before if st is not None else ()) for ev in before]
    for ev in evs:
        if ev.line > end or ev.line in pool or ev.kind == kinds.PHASE_MARKER:
            continue
        if ev.kind == kinds.TRACEBACK:
            chain = ev.data.get("chain") or ()
            if chain:
                pool[ev.line] = (chain[-1].line or ev.line, chain[-1].rendered)
        else:
            pool[ev.line] = (ev.line, ev.text)
    out: list[tuple[int, str]] = []
    for _start, (line, text) in sorted(pool.items(), reverse=True)[:KNOWN_SCAN]:
        key = text.strip()
        if key and key not in listed and line not in listed and catalogue_facts(key[:400])[0]:
            listed.add(key)
            listed.add(line)
            out.append((line, text))
    return out


def _kept_events(inc: Incident, hits: list[int] | None = None) -> tuple[Event, ...]:
    """The events the lifetime kept: its last lines, its error and alarm lines, and the lines before
    each signature hit (each hit at a line of ``hits``, or every hit)."""
    st = inc.outcome
    if st is None:
        return ()
    before = (ev for hit, evs in st.before if hits is None or hit.line in hits for ev in evs)
    return (*st.recent, *st.errors, *inc.error_lines, *before)


def _near(inc: Incident, anchors: list[int]) -> list[Event]:
    """Events the lifetime kept (its last lines, its error and alarm lines, the lines before each
    signature hit) within the window of a listed line, nearest first."""
    if inc.outcome is None:
        return []
    seen: dict[int, Event] = {}
    for ev in _kept_events(inc, anchors):
        if ev.kind in (kinds.TRACEBACK, kinds.PHASE_MARKER) or ev.line in seen:
            continue
        if any(a - OFFER_BEFORE <= ev.line <= a + OFFER_AFTER and ev.line != a for a in anchors):
            seen[ev.line] = ev
    return sorted(seen.values(), key=lambda e: (min(abs(e.line - a) for a in anchors), e.line))


def _chained(inc: Incident, anchors: list[int], fatal_tbs: list[Event]) -> tuple[list[Event], list[Event]]:
    """The tracebacks printed right after the one that holds a listed line, one after another (a
    chained exception the parser split in two), and the other fatal tracebacks."""
    tbs = sorted((t for t, _p, _a in inc.tracebacks), key=lambda t: t.line)
    out: list[Event] = []
    end: int | None = None
    for tb in tbs:
        if end is None:
            if any(tb.line <= a <= (tb.end_line or tb.line) for a in anchors):
                end = tb.end_line or tb.line
            continue
        if tb.line - end > _CHAIN_GAP:
            break
        out.append(tb)
        end = tb.end_line or tb.line
    others = [t for t in fatal_tbs[:3] if t not in out and not any(t.line <= a <= (t.end_line or t.line) for a in anchors)]
    return out, others


# How any program's end is reported, by itself, its shell or its supervisor: a signal's name (Go's
# runtime), an exit status, systemd's "Main process exited, code=exited, status=1/FAILURE", an abort
# macro's "FILE:LINE: Fatal error" (ggml), "Aborted (core dumped)", a shell's report of its job. Such a
# line says the process died, never why.
_DEATH_WORDS = re.compile(r"^SIG[A-Z]+: |\bexited with (?:error|status|code)\b|\bexit status \d|\bMain process exited\b|"
                          r"\bstatus=\d+/[A-Z]|:\d+: Fatal error$|\bAborted \(core dumped\)|\bSegmentation fault\b|"
                          r"\bterminated (?:unexpectedly )?with exit code\b|"
                          # a shell's report of its job's death: zsh's "zsh: abort      ./run-server", bash's
                          # "bash: line 1:  4242 Aborted   ./run-server" or a script's "./start.sh: line 9: ..."
                          # (bash capitalises the signal's name and pads the pid); the job's own last error is
                          # above it. Not "Killed": SIGKILL's reason (the OOM killer, an operator) is not above
                          r"^(?:(?:ba|da|z)?sh|\S+\.sh): (?:line \d+: +)?(?:\d+ +)?"
                          r"(?i:abort(?:ed)?|segmentation fault|bus error|illegal (?:hardware )?instruction)\b(?!:)")
_NOT_A_MESSAGE = re.compile(r"^\s*(?:\^+|~+|self\.|\w+(?:\.\w+)*\()")  # a frame's quoted source, its carets
_LOCATORS = ("last-frame", "wrapper", "fatal")  # listed first, they say where or that, not what
DEATH_GAP = 6  # lines between the error and the death line it led to
# Words of failure (OFFER_WORD's) and of a hang: "Engine iteration timed out. This should never happen!"
_STATES_FAILURE = re.compile(OFFER_WORD.pattern + r"|\btimed out\b|\btime-?out\b|\bshould never happen\b")


def death_gives_way(evidence: list[dict[str, Any]], offered_lines: list[dict[str, Any]]) -> None:
    """A death line (or a traceback's last frame, a wrapper) listed first gives way to the error line
    printed just before it: the error-level or error-worded line nearest above it (within
    ``DEATH_GAP`` lines), the way a line that points at the error above does (``evidence.pointed_to_first``).
    A death line: one in the words any program's end is reported in (not every line a death
    signature matches: a supervisor's report after its own warning lost more than it won). The
    death line stays behind it; a warning is never the error it followed, nor a line in no words of
    failure, whatever its level."""
    if not evidence or not isinstance(evidence[0].get("line"), int):
        return
    lead = evidence[0]
    text = str(lead["text"])
    if lead["role"] not in _LOCATORS and (not _DEATH_WORDS.search(text[:400]) or EXCEPTION_LINE.match(text.strip())):
        return
    at = lead["line"]
    # an error-level line in no words of failure is no error either (vLLM's scheduler-state dump, see frame_gives_way)
    near = [e for e in offered_lines if e["offer"] in ("error", "worded") and 0 < at - e["line"] <= DEATH_GAP
            and (e["offer"] == "worded" or _STATES_FAILURE.search(e["text"][:400]))
            and not _NOT_A_MESSAGE.match(e["text"]) and not POINTS_ABOVE.search(e["text"][:600])
            and not _DEATH_WORDS.search(e["text"][:400]) and not WARNING_WORD.search(e["text"][:200])]
    if not near:
        return
    proof = max(near, key=lambda e: e["line"])
    offered_lines.remove(proof)
    if lead["role"] == "cause":
        lead["role"] = "wrapper"
    evidence.insert(0, {"line": proof["line"], "text": proof["text"], "role": "cause"})
    del evidence[MAX_EVIDENCE:]


_FRAMES = ("last-frame", "fragment")  # a traceback's frame (or a piece of one): where, never what
_FRAME_TEXT = re.compile(r'^\s*File "|^\s*at |^\s*#\d+ ')
_HEADER_GAP = 2  # a logger's message is printed right above the traceback's header (a paste may add a blank line)


def _is_cut_header(e: dict[str, Any]) -> bool:
    """A cut traceback's own first line, as ``evidence.cut_header`` lists it."""
    return e.get("role") == "cause" and str(e["text"]).endswith(TB_HEADER)


def _printed_between(inc: Incident | None, lo: int, hi: int) -> bool:
    """Whether the lifetime kept a line printed strictly between ``lo`` and ``hi`` (a blank line is none)."""
    if inc is None:
        return False
    return any(lo < ev.line < hi and ev.text.strip() for ev in _kept_events(inc))


def frame_gives_way(evidence: list[dict[str, Any]], offered_lines: list[dict[str, Any]],
                    inc: Incident | None = None) -> None:
    """A traceback's frame listed first (a cut traceback, no exception line) gives way to the first
    other candidate that states an error: the message its logger printed on the line just above its
    header (Python's ``logger.exception("msg")`` prints the message, then the traceback), one the
    message catalogue has at error level or one that reads as an exception line, else the
    traceback's own first line (its logger's words when it caught the exception), else the first
    that is not a frame itself. A frame says where the program was, never what failed; it stays
    behind it. A cut traceback's first line listed first (a traceback cut right after it) gives way
    to that message, or to a line that states an error, too: it only says that one was caught."""
    if not evidence:
        return
    header_lead = _is_cut_header(evidence[0])
    if evidence[0].get("role") not in _FRAMES and not header_lead:
        return
    from forensics.diagnosis.decision.evidence_rank import catalogue_facts

    others = [e for e in evidence[1:] + offered_lines if e.get("role") not in _FRAMES
              and isinstance(e.get("line"), int) and not _FRAME_TEXT.search(str(e["text"])[:200])]
    if not others:
        return
    # a cut traceback's own first line (``evidence.cut_header``) says only that an exception was
    # caught: the message above it, or a line that states the error, goes before it; a wrapper
    # elsewhere (a death, a supervisor's restatement) only behind it
    headers = ([evidence[0]] if header_lead else []) + [e for e in others if _is_cut_header(e)]
    # the message its logger printed just above the header (a blank line between at most; a wrapper's
    # words too: "EngineCore failed to start." is all that is left of the error once the traceback was cut)
    near = [e for e in others for h in headers[:1] if 0 < h["line"] - e["line"] <= _HEADER_GAP and not _is_cut_header(e)
            and not WARNING_WORD.search(str(e["text"])[:200])
            and (e.get("offer", "error") == "error" or OFFER_WORD.search(str(e["text"])[:400]))]
    above = [max(near, key=lambda e: e["line"])] if near else []
    if above and (headers[0]["line"] - above[0]["line"] > 1) and (inc is None or _printed_between(
            inc, above[0]["line"], headers[0]["line"])):
        above = []  # another line was printed between: not the message this traceback came with
    said = [e for e in above if e.get("role") != "wrapper"]
    rest = [e for e in others if not _is_cut_header(e)]
    # a line the catalogue has at error level states an error only in words of failure: vLLM dumps its
    # scheduler's state at ERROR level when its engine dies ("Dumping scheduler stats: SchedulerStats(...)")
    stated = [e for e in rest if EXCEPTION_LINE.match(str(e["text"]).strip())
              or (catalogue_facts(str(e["text"]).strip()[:400])[0] and _STATES_FAILURE.search(str(e["text"])[:400]))]
    named = [e for e in stated if e.get("role") != "wrapper"]
    if header_lead:
        if not (said or named or above):
            return
        proof = (said or named or above)[0]
    elif headers:
        proof = (said or named or above or headers or stated or rest or others)[0]
    else:
        proof = (stated or others)[0]
    keep = max(MAX_EVIDENCE, len(evidence))
    if proof in offered_lines:
        offered_lines.remove(proof)
        proof = {"line": proof["line"], "text": proof["text"], "role": "cause"}
    else:
        evidence.remove(proof)
    for h in headers:
        if h is not proof:
            h["role"] = "wrapper"  # behind the error it caught, it only says that one was caught
    evidence.insert(0, proof)
    del evidence[keep:]


# A message that says its detail follows: it ends with a colon ("... uncaught exception
# 'NSRangeException', reason:", "CMake Error at CMakeLists.txt:479 (file):", "load failed for libtorch
# model -> 'm':"). Not a traceback's header, nor a block of output announced ("... output:").
_DETAIL_FOLLOWS = re.compile(r":\s*$")
_NOT_DETAIL = re.compile(r"(?i)\btraceback\b|\boutput:\s*$|\bcall last\):\s*$")


def detail_joined(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """A first line that ends where its detail begins gets the detail, the next line printed (a
    paste's ``--`` skipped, within 3 lines), as one entry: together they say what failed, as
    ``evidence._panic_message_first`` does for Rust's two-line panics."""
    if inc is None or inc.outcome is None or not evidence or not isinstance(evidence[0].get("line"), int):
        return
    text = str(evidence[0]["text"])
    if "\n" in text or not _DETAIL_FOLLOWS.search(text) or _NOT_DETAIL.search(text):
        return
    at = evidence[0]["line"]
    if any(t.line <= at <= (t.end_line or t.line) for t, _p, _a in inc.tracebacks):
        return  # an exception's message: the traceback's parser already kept what belongs to it
    kept = {ev.line: ev for ev in (*inc.outcome.recent, *inc.error_lines) if at < ev.line <= at + 3}
    for line in sorted(kept):
        ev = kept[line]
        nxt = ev.text.strip()
        if nxt and nxt not in ("--", "...", "…", "[...]"):
            # the detail is printed as it is, with no level of its own (a line at a level, a
            # warning, a traceback is the program's next message, not this one's detail)
            if ev.kind == kinds.MESSAGE and ev.level is None and not _DETAIL_FOLLOWS.search(nxt) and \
                    not WARNING_WORD.search(nxt[:200]):
                evidence[0]["text"] = clip_message(text.rstrip() + " " + nxt)
            return


# A lookup or transport failure raised deep in a library: a bare missing key, an OS error that is
# only its errno's words, a timeout or cancellation, an HTTP client's exception, the Hugging Face Hub
# client's for a repo id it could not use (its shape, a 401/404 answer). Its words name no model,
# option or device: the library that called the failing code catches it and raises, chained after
# it, what it means ("KeyError: 'glm_moe_dsa'" ->
# "ValueError: The checkpoint you are trying to load has model type `glm_moe_dsa` but Transformers
# does not recognize this architecture"; "OSError: [Errno 101] Network is unreachable" -> "OSError:
# We couldn't connect to 'https://huggingface.co' to load this file"; "HFValidationError: Repo id
# must be in the form ..." -> "OSError: Incorrect path_or_model_id: './checkpoints/llava-1.5-7b-hf'").
_LOW_LEVEL = re.compile(r"^\s*(?:KeyError: (?:'[^']*'|\d+)\s*$"
                        r"|(?:[\w.]+\.)?\w*(?:Error|Exception): \[Errno -?\d+\] [^:]*$"
                        r"|(?:[\w.]+\.)?(?:TimeoutError|timeout|CancelledError)(?:: timed out)?\s*$"
                        r"|(?:requests|urllib3|httpx|httpcore|aiohttp)\.[\w.]*(?:Error|Exception|Timeout): "
                        r"|huggingface_hub\.[\w.]*\.(?:HFValidationError|RepositoryNotFoundError|GatedRepoError|HfHubHTTPError): )")


# lines between two tracebacks of a chain when the first exception's message ran over several
# lines the parser did not keep with it (the Hub's 401 explains itself in four)
_CHAIN_GAP_MESSAGE = 16


def _chain_after(inc: Incident, tb: Event) -> list[Event]:
    """The tracebacks of ``tb``'s process printed right after it, each after Python's words that chain
    it to the one before ("During handling ..." / "The above exception ...", where the parser split
    the chain), among the lines the lifetime kept; another traceback printed next (a request's, a
    cleanup's) is not part of the chain."""
    out: list[Event] = []
    end = tb.end_line or tb.line
    proc = outcome.process_of(tb)
    chained = {e.line for e in (*(inc.outcome.recent if inc.outcome is not None else ()), *inc.error_lines)
               if e.kind != kinds.TRACEBACK and _CHAIN_WORDS.search(e.text.strip())}
    for other in sorted((t for t, _p, _a in inc.tracebacks if t.line > end), key=lambda t: t.line):
        if other.line - end > _CHAIN_GAP_MESSAGE or outcome.process_of(other) != proc or \
                not any(end < n < other.line for n in chained):
            break
        out.append(other)
        end = other.end_line or other.line
    return out


# Exceptions that are a bug in the code handling the first one, not its meaning (an except block that
# names an undefined logger, or prints a message the stream cannot encode): Python raises them last,
# but what failed is still the first exception.
_HANDLER_BUG = frozenset({"NameError", "UnboundLocalError", "UnicodeEncodeError"})


def explained_first(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """A lookup or transport failure listed first (``_LOW_LEVEL``) gives way to the last exception of
    the chain it starts, where that one is no such failure itself and does not restate it: Python
    raises the last one, the library's word for what the low-level failure meant. A chain whose last
    exception repeats or wraps the first ("Capture cuda graph failed: <the first's message>"), says
    only that start-up failed and points back, or is a stop (a KeyboardInterrupt while it waited), keeps
    the first; so does one that ends in another
    transport error (requests over a socket's reset)."""
    if inc is None or not evidence or evidence[0].get("role") != "cause" or \
            not isinstance(evidence[0].get("line"), int):
        return
    at = evidence[0]["line"]
    tb = next((t for t, _p, _a in inc.tracebacks if t.line <= at <= (t.end_line or t.line)), None)
    if tb is None:
        return
    chain = tb.data.get("chain") or ()
    if not chain or (chain[-1].line or tb.line) != at or not _LOW_LEVEL.match(chain[-1].rendered.split("\n")[0]):
        return
    after = _chain_after(inc, tb)
    last = (after[-1].data.get("chain") or (None,))[-1] if after else None
    if last is None or not last.exc_type or last.exc_type in BENIGN_EXC or last.exc_type in _HANDLER_BUG or \
            _LOW_LEVEL.match(last.rendered.split("\n")[0]) or _restates(last.rendered):
        return  # a wrapper's words ("Engine process failed to start. See stack trace for the root cause")
    said = (chain[-1].exc_message or "").strip()[:80]
    if said and said in last.exc_message:
        return  # the last one restates the first: a wrapper, the first names the failure
    evidence[0]["role"] = "root"
    line = last.line or after[-1].line
    evidence[:] = [{"line": line, "text": clip_message(last.rendered), "role": "cause"}] + \
        [e for e in evidence if e.get("line") != line][:MAX_EVIDENCE - 1]


# An exception that wraps another and names the wrapped one's type in parentheses (Ray's
# "ray.exceptions.RayTaskError(ValueError): ray::Worker.method() (pid=..., ip=...)"): its own message
# says where the task ran; the wrapped exception's line, printed with the remote traceback, says what.
_WRAPS = re.compile(r"^\s*(?:[\w.]+\.)?\w+\((\w+(?:Error|Exception|Exit|Interrupt))\)(?::|$)")
_RAISED = re.compile(r"^\s*(?:[\w.]+\.)?(\w*(?:Error|Exception|Exit|Interrupt))(?:\[\w+\])?: \S")


# "See stack trace (above) for the root cause" (vLLM's EngineDeadError), "see the log above": a
# pointer to an error printed earlier, in the words POINTS_ABOVE leaves out.
_SEE_ABOVE = re.compile(r"(?i)\bsee\b[^.\n]{0,40}\babove\b")


def _restates(text: str) -> bool:
    """A line in the words of a wrapper: a start-up summary, a pointer to the error above, a lost
    peer or an ended process, an exception that names another it wraps."""
    head = text[:600]
    return bool(STARTUP_FAILED.search(head) or POINTS_ABOVE.search(head) or _SEE_ABOVE.search(head) or
                outcome.CONSEQUENCE.search(head) or _WRAPS.match(text))


def wrapped_first(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A wrapper listed first gives way to the exception it wrapped: one that names the wrapped
    exception's type (``RayTaskError(ValueError)``) to the line of that exception among the
    candidates; a start-up summary or a wrapper line ("EngineCore failed to start.") to the first
    exception line of a traceback offered beside it that is no wrapper itself. The wrapper stays
    behind it. (``evidence``: the listed lines, then the offered ones; changed in place.)"""
    if len(evidence) < 2:
        return evidence
    lead = evidence[0]
    text = str(lead.get("text") or "")
    named = _WRAPS.match(text)
    # (fix-cand24) or a first line in no words of failure at all: a cut traceback's first line that kept
    # only a banner or a frame's source ("NCCL version 2.29.7 ... sys.exit(run())", "> File ...")
    summary = named is None and (lead.get("role") == "wrapper" or STARTUP_FAILED.search(text[:300]) is not None
                                 or _says_nothing(text) or _RAISED_IN_TASK.search(text[:300]) is not None)
    pick: int | None = None
    for j, e in enumerate(evidence[1:], 1):
        said = str(e.get("text") or "")
        raised = _RAISED.match(said)
        if raised is None or _restates(said) or not isinstance(e.get("line"), int):
            continue
        if (named is not None and raised.group(1) == named.group(1)) or \
                (summary and e.get("offer") in ("exception", "chain") and raised.group(1) not in BENIGN_EXC):
            pick = j
            break
    if pick is None:
        return evidence
    proof = evidence.pop(pick)
    if lead.get("role") in ("cause", "fatal"):
        lead["role"] = "wrapper"
    evidence.insert(0, {"line": proof["line"], "text": proof["text"], "role": "cause"})
    return evidence


# words of failure OFFER_WORD leaves to the catalogue (a cut line may keep only these)
_FAILURE_MORE = re.compile(r"(?i)unsupported|incompatible|mismatch|\bno such\b|\bnot installed\b|\bmissing\b|"
                           r"\bunknown\b|\bunexpected\b|\bexceed|\bnot enough\b|\btoo (?:many|few|large|small)\b")


# Ray's wrapper for an actor whose constructor raised: the exception is printed with its traceback
_RAISED_IN_TASK = re.compile(r"\bdied because of an error raised in its creation task\b")


def _says_nothing(text: str) -> bool:
    """A line in no words of failure, neither an exception line nor a death's (a banner, a frame)."""
    head = text[:400]
    return text.strip()[:7] != "assert " and not _STATES_FAILURE.search(head) and not _FAILURE_MORE.search(head) and not _RAISED.match(head) and not _DEATH_WORDS.search(head) \
        and not outcome.CONSEQUENCE.search(head)


def settle(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ranked evidence as listed: an offered line the ranker put first is the cause; the other
    offered lines were only candidates and go."""
    out: list[dict[str, Any]] = []
    for i, e in enumerate(evidence):
        if e.get("role") != "offered":
            out.append(e)
        elif i == 0:
            out.append({"line": e["line"], "text": e["text"], "role": "cause"})
    listed = sum(e.get("role") != "offered" for e in evidence)
    return out[:max(MAX_EVIDENCE, listed)]  # (a list the rules made longer stays as long)

