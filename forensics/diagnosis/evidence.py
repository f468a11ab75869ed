"""The evidence of a failure: the lines that prove it, the proving line first.

The best signature hit (or the failing traceback's last exception) is the cause;
a compiler's or device runtime's own error line near it, and the line inside a
build tool's summary that names what failed, prove it sharper and go first;
wrappers come last."""
from __future__ import annotations

import re
from typing import Any

from forensics.diagnosis.evidence_said import logged_reason
from forensics.diagnosis.phase_priors import STARTUP_FAILED
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Hit, Incident

MAX_EVIDENCE = 5
# A build step that could not run its tool: the shell says so inside the build output
# (ninja prints the failing command's output; status 127 is "command not found").
_MISSING_TOOL = re.compile(r"^(?:/bin/|/usr/bin/)?(?:ba|da|z)?sh: (?:line \d+: )?\S+: (?:not found|No such file or directory)$|"
                           r"^(?:/bin/|/usr/bin/)?(?:ba|da|z)?sh: \d+: \S+: not found$|: command not found$")
_BARE_EXCEPTION = re.compile(r"^[\w.]+:?$")  # an exception's name alone
WARNING_WORD = re.compile(r"\[WARN(?:ING)?\]|(?:^|\s)WARN(?:ING)?(?:\s|:)|\blevel=warn(?:ing)?\b")
# A Rust panic's location line whose message follows on the next line.
_PANIC_AT = re.compile(r"\bthread '[^']{1,80}' panicked at \S+:\d+:\d+:\s*$")
# Rust's anyhow prints an error returned from main as "Error: <context>", a blank line,
# "Caused by:" alone on its line, then each underlying error indented (numbered when several).
_CAUSED_BY = re.compile(r"^\s*Caused by:\s*$")
_CAUSE_ITEM = re.compile(r"^\s+(?:\d+:\s+)?(\S.*)$")
_SEPARATORS = frozenset({"--", "...", "…", "[...]"})  # what a paste leaves where it cut lines
_NOT_PROOF = ("last-frame", "fragment")  # evidence roles that locate a failure without naming it
_SOURCE_LINE = re.compile(r"^\s*raise \w")  # a frame's quoted source line that raises the exception
_WRAPPER_BAND = 5  # wrappers' priority (signatures/deaths.yaml, wrappers.yaml); below it, the weakest signs
_INNER_SCAN = 400  # lines of a build summary's message searched for the line that names the failure


def assemble(best: Hit | None, fails: list[Hit], fail_ev: Event | None, fail_line: int,
             wrappers: list[Hit], inc: Incident | None) -> list[dict[str, Any]]:
    """The evidence list of one failure, the proving line first."""
    evidence = _evidence(best, fails, fail_ev, fail_line, wrappers, inc)
    _assert_statement_first(evidence, best.event if best is not None else fail_ev)
    _exception_fragment_first(evidence)
    if inc is not None:
        pointed_to_first(inc, evidence)
        _carried_runtime_error_first(evidence, _cause_lines(best, fail_ev))
        _panic_message_first(inc, evidence)
        _deepest_cause_first(inc, evidence)
        _add_proofs(inc, evidence, fail_line)
    _inner_proof_first(evidence, _cause_lines(best, fail_ev))
    return evidence


def _cause_lines(best: Hit | None, fail_ev: Event | None) -> list[tuple[int, str]]:
    """The cause's whole message, line by line with its log line (the evidence keeps it
    clipped); for a traceback, the exceptions from the cause's on (the parser may
    split a build's output into more of them)."""
    ev = best.event if best is not None else fail_ev
    if ev is None:
        return []
    chain = ev.data.get("chain") or () if ev.kind == kinds.TRACEBACK else ()
    start = best.view if best is not None else len(chain) - 1
    if not chain or not 0 <= start < len(chain):
        text, line = (best.text, best.line) if best is not None else (ev.text, ev.line)
        return [(line + i, t) for i, t in enumerate(text.split("\n"))]
    out: list[tuple[int, str]] = []
    for exc in chain[start:]:
        base = exc.line or ev.line
        out.extend((base + i, t) for i, t in enumerate(exc.rendered.split("\n")))
    return out


def inner_proof(lines: list[tuple[int, str]]) -> tuple[int, str] | None:
    """In a build tool's multi-line summary ("Ninja build failed. Ninja output: ...",
    "ninja exited with status 127"), the line that names what failed: a compiler's
    own error, else a tool the shell could not find. Its log line and text."""
    if len(lines) < 2 or outcome.is_compiler_error(lines[0][1]):
        return None
    tool: tuple[int, str] | None = None
    for line_no, raw in lines[1:_INNER_SCAN]:
        line = raw.strip()
        if outcome.is_compiler_error(line):
            return line_no, line
        if tool is None and _MISSING_TOOL.search(line):
            tool = (line_no, line)
    return tool


def _inner_proof_first(evidence: list[dict[str, Any]], lines: list[tuple[int, str]]) -> None:
    """A build summary as the cause: the line inside it that names the failure goes first."""
    if not evidence or evidence[0]["role"] != "cause" or len(lines) < 2:
        return
    found = inner_proof(lines)
    if found is None:
        return
    line_no, line = found
    if evidence[0]["text"].strip() == line:
        return
    for i in range(len(evidence) - 1, 0, -1):
        if evidence[i]["text"].strip() == line:
            evidence.pop(i)
    evidence.insert(0, {"line": line_no, "text": line, "role": "build-error"})
    del evidence[MAX_EVIDENCE:]


def _worded(best: Hit, fails: list[Hit]) -> Hit:
    """The best hit, or the nearest hit of the same signature that proves it better: one
    that says what happened where the best is a bare exception name ("TimeoutError", a
    re-raise with no message), one at error level where the best is a warning (a shim's
    "[WARN]: cuCtxSynchronize returned ..." before the program's own "CUDA error: ...")."""
    same = [h for h in fails if h.signature.id == best.signature.id and h is not best]
    if not same:
        return best
    if _SOURCE_LINE.match(best.text):
        # The quoted ``raise X("...")`` of a frame: the exception line it raised says it.
        raised = [h for h in same if not _SOURCE_LINE.match(h.text) and not _BARE_EXCEPTION.match(h.text.strip())]
        if raised:
            return min(raised, key=lambda h: abs(h.line - best.line))
    if _BARE_EXCEPTION.match(best.text.strip()):
        worded = [h for h in same if not _BARE_EXCEPTION.match(h.text.strip())]
        if worded:
            return min(worded, key=lambda h: abs(h.line - best.line))
    if _is_warning(best):
        errors = [h for h in same if not _is_warning(h) and not _BARE_EXCEPTION.match(h.text.strip())]
        if errors:
            return min(errors, key=lambda h: abs(h.line - best.line))
    return best


TB_HEADER = "Traceback (most recent call last):"


def cut_header(tb: Event) -> str:
    """The first line of a traceback as its logger printed it: its message, then Python's header."""
    carrier = str(tb.data.get("carrier") or "").strip()
    return f"{carrier} {TB_HEADER}" if carrier else TB_HEADER


# Words that make a line worth offering beside the evidence: it says something went wrong.
OFFER_WORD = re.compile(r"(?i)\berror\b|\bfatal\b|\bfail(?:ed|ure)?\b|\bnot found\b|\bcannot\b|\bcan't\b|"
                        r"\bunable\b|\bcould ?n[o']t\b|\brefus\w*|\bdenied\b|\binvalid\b|\bout of (?:memory|range|bounds)\b|"
                        r"\bbeyond bounds\b|\bnot (?:supported|compatible|available)\b|\bexception\b|\bpanic\b")


def carried_message(tb: Event) -> str | None:
    """The message a logger printed before "Traceback (most recent call last):" on one line
    (Python's logging with the exception formatted inline: "ERROR Error starting worker: model m
    start failed, Traceback ..."), which the traceback's parser folded into its header. Not one
    that ends where the traceback begins ("Scheduler hit an exception:"): that one names nothing."""
    carrier = str(tb.data.get("carrier") or "").strip()
    if not carrier or carrier.endswith(":") or not OFFER_WORD.search(carrier[:400]):
        return None
    return carrier.rstrip(" ,;-")


def _is_warning(h: Hit) -> bool:
    return h.event.level == "WARNING" or bool(WARNING_WORD.search(h.text[:200]))


def clip_message(text: str, limit: int = 600) -> str:
    """Exception text for evidence: the whole message (CUDA and NCCL put the
    telling part on later lines), clipped."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _evidence(best: Hit | None, fails: list[Hit], fail_ev: Event | None, fail_line: int,
              wrappers: list[Hit], inc: Incident | None = None) -> list[dict[str, Any]]:
    ev_list: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(line: int, text: str, role: str) -> None:
        key = text.strip()
        if key in seen or len(ev_list) >= MAX_EVIDENCE:
            return
        seen.add(key)
        ev_list.append({"line": line, "text": text, "role": role})

    if best is not None:
        cause = _worded(best, fails)
        add(cause.line, cause.text, "cause")
        for h in sorted(fails, key=lambda h: h.line):
            if h.signature.root_cause == best.signature.root_cause and h is not cause:
                add(h.line, h.text, "supporting")
    elif fail_ev is not None:
        if fail_ev.kind == kinds.TRACEBACK:
            chain = fail_ev.data.get("chain") or ()
            cut = False  # cut before its exception line, and no exception followed
            if chain:
                # A wrapper re-raised as the last exception ("Capture cuda graph failed: ...")
                # is unwrapped: the last exception of the chain that is no wrapper is the cause.
                wrapped = {h.view for h in wrappers if h.event is fail_ev}
                last = next((i for i in range(len(chain) - 1, -1, -1) if i not in wrapped), len(chain) - 1)
                add(chain[last].line or fail_ev.line, clip_message(chain[last].rendered), "cause")
                if len(chain) > 1:
                    add(chain[0].line or fail_ev.line, clip_message(chain[0].rendered), "root")
            elif inc is not None:
                # A stack without its exception line: the exception often arrives
                # as the next block of the same process ("During handling ...").
                nxt = _continuation(inc, fail_ev)
                cut = nxt is None
                if nxt is not None:
                    add(nxt[0], nxt[1], "cause")
            frames = fail_ev.data.get("frames") or ()
            if frames:
                f = frames[-1]
                add(fail_ev.end_line or fail_ev.line, f'File "{f.file}"' + (f", line {f.lineno}, in {f.function}" if f.lineno else " (cut short)"), "last-frame")
            for src in fail_ev.data.get("orphan_source") or ():
                add(fail_ev.line, src, "fragment")
            if cut and fail_ev.data.get("headed") and carried_message(fail_ev) is None and not (frames and not frames[-1].lineno):
                # Cut before its exception line (and none followed), its logger's words before the header
                # naming nothing of their own (else ``evidence_offered`` offers them): the line it began on says that
                # a component caught an exception ("Scheduler hit an exception: Traceback ..."), the
                # frame only where. Listed behind the frame: ``evidence_offered.frame_gives_way``
                # puts it first where no other line states an error. Not where the log ends inside
                # a frame's line ("(cut short)"): the capture stopped while the traceback was being
                # printed, and the answer keeps to the frame it left.
                add(fail_ev.line, cut_header(fail_ev), "cause")
        else:
            add(fail_ev.line, fail_ev.text, "cause")
    # The first death line, but a bare sign that the process tree ended untidily (priority
    # below the wrappers' band: Python's resource tracker) only where no other wrapper is.
    for h in sorted(wrappers, key=lambda h: h.signature.priority < _WRAPPER_BAND)[:1]:  # (a stable sort)
        add(h.line, h.text, "wrapper")
    return ev_list




# A line that only points at the error printed before it: Ascend's "The Inner error is reported as
# above", vLLM's "Engine core initialization failed. See root cause above." and "... in a background
# process. See stack trace for root cause." It names no failure of its own (one that quotes the
# error, "Worker failed with error '...'", is left as it is).
POINTS_ABOVE = re.compile(r"(?i)\b(?:is|are|was|were) (?:reported|shown|printed|logged) (?:as )?above\b|"
                           r"\bsee (?:the )?(?:root cause|stack ?trace|traceback|errors?|logs?) above\b|"
                           r"\bsee (?:the )?stack ?trace (?:above )?for (?:the )?root cause\b")


# A loader or component that says loading, initialising, opening or mapping it failed with nothing but its
# path or name (llama.cpp's "failed to load model from /m.gguf", whisper.cpp's "failed to initialize whisper
# context"; fix-cand24: "Failed to initialize OmniConnector", "Mooncake memory registration failed.", ggml-sycl's
# "Exception caught at file:F, line:N"): the reason is the line just before it ("invalid magic number").
_NO_REASON = re.compile(r"(?i)\bfailed to (?:load|initiali[sz]e|init|open|mmap) (?:the )?(?:[\w.-]+ ){0,3}?"
                        r"(?:model|context|file|backend|library)(?: from \S+| '[^']*'| \"[^\"]*\")?[,.]?\s*$|"
                        r"^(?:[\w.-]+ ){0,3}?failed to (?:initiali[sz]e|init|create|register|start) (?:the )?[\w.-]+[.!]?\s*$|"
                        r"^(?:[\w.-]+ ){1,3}(?:registration|initiali[sz]ation|creation|init) failed[.!]?\s*$|"
                        r"^exception caught at file:\S+,? line:\s*\d+")


def _traceback_top(inc: Incident, at: int) -> int:
    """Where "above" begins for a pointer printed at ``at``: raised as a traceback's exception (torch_npu's
    "RuntimeError: The Inner error is reported as above" at the end of a worker's traceback), it points
    above the traceback, whose frames are no error; a line of its own points above itself."""
    tb = next((t for t, _p, _a in inc.tracebacks if t.line < at <= (t.end_line or t.line)), None)
    return tb.line if tb is not None else at


def pointed_to_first(inc: Incident, evidence: list[dict[str, Any]], depth: int = 3) -> None:
    """A cause that only says the error is above gives way to the error line it points at: the
    device runtime's or compiler's line of the first failing process, else the block of error
    lines just before it (``outcome.best_proof``); it stays behind as a wrapper. A restatement
    printed under another (llama.cpp's loader, then its caller, each "failed to load model")
    gives way again, to the reason above both (``depth`` times at most)."""
    if depth <= 0 or not evidence or evidence[0]["role"] != "cause" or not isinstance(evidence[0].get("line"), int):
        return
    text = str(evidence[0]["text"])
    at = evidence[0]["line"]
    if _NO_REASON.search(text[:600]):
        proof = _error_just_before(inc, at, words=OFFER_WORD)  # the reason, printed right before the restatement
    elif POINTS_ABOVE.search(text[:600]) and " with error '" not in text[:600]:
        top = _traceback_top(inc, at)
        proof = outcome.best_proof(inc, top, exclude={at, top})
        if proof is not None and top != at and STARTUP_FAILED.search(proof.text[:300]):
            proof = None  # above a traceback, a start-up summary ("EngineCore failed to start.") is its logger's
        proof = proof or _error_just_before(inc, at)
    else:
        return
    if proof is None or proof.line >= at or POINTS_ABOVE.search(proof.text[:600]):
        return
    key = clip_message(proof.text).strip()
    for i in range(len(evidence) - 1, 0, -1):
        if str(evidence[i]["text"]).strip() == key:
            evidence.pop(i)
    evidence[0]["role"] = "wrapper"
    evidence.insert(0, {"line": proof.line, "text": clip_message(proof.text), "role": "cause"})
    del evidence[MAX_EVIDENCE:]
    if _NO_REASON.search(proof.text[:600]):
        pointed_to_first(inc, evidence, depth - 1)


# CANN's (Huawei Ascend's runtime) own message for an error, with its code: "Unsupported_Operator(EZ3002):
# Optype [TransData] ... is unsupported", "EZ9999[PID: 1] 2026-01-14-06:41:59.991.811 (EZ9999):  Kernel task
# happen error, retCode=0x25", "EL0004: [PID: 1] ... Failed to allocate memory." Not its header for the
# lines that follow ("EZ9999: Inner Error!"), which names nothing.
_CANN_MESSAGE = re.compile(r"\(E[0-9A-Z]\d{4}\):\s+\S|\bE[0-9A-Z]\d{4}: (?!Inner Error\b)\S")
_CARRIED_SCAN = 40  # message lines of the pointing exception searched


def _carried_runtime_error_first(evidence: list[dict[str, Any]], lines: list[tuple[int, str]]) -> None:
    """An exception that says its error was reported elsewhere and carries the runtime's own message in
    its own text: torch_npu raises "RuntimeError: The Inner error is reported as above. ..." and
    appends what CANN reported ("[ERROR] ... ERR00100 PTA call acl api failed." then the error code's
    message) to the exception's message, so the proof is printed under the pointer, not above it (vLLM
    Ascend, SGLang, LMDeploy all raise it). Its other wrapper, "NPU function error: call aclnnX failed, error
    code is N", is left as it is: it names the failed call, which the corpus's readers quote as often as
    the message under it. Where ``_pointed_to_first`` found nothing above,
    the first such line of the message goes first; the pointer stays behind as a wrapper."""
    if not evidence or evidence[0]["role"] != "cause" or len(lines) < 2:
        return
    if not POINTS_ABOVE.search(str(evidence[0]["text"])[:600]):
        return
    for line_no, raw in lines[1:_CARRIED_SCAN]:
        line = raw.strip()
        if _CANN_MESSAGE.search(line[:400]) and not POINTS_ABOVE.search(line[:600]):
            key = clip_message(line).strip()
            for i in range(len(evidence) - 1, 0, -1):
                if str(evidence[i]["text"]).strip() == key:
                    evidence.pop(i)
            evidence[0]["role"] = "wrapper"
            evidence.insert(0, {"line": line_no, "text": clip_message(line), "role": "cause"})
            del evidence[MAX_EVIDENCE:]
            return


_ERROR_WORDED = re.compile(r"(?i)\berror\b|\bfailed\b|\bfailure\b")
_QUIET_LEVELS = frozenset({"INFO", "DEBUG", "TRACE", "NOTICE"})


def _error_just_before(inc: Incident, at: int, gap: int = 3, words: re.Pattern[str] = _ERROR_WORDED) -> Event | None:
    """The line printed just before ``at`` (blank lines aside) when it says it is an error (in
    ``words``), though at no level the parser knows (``CUDA error (file.h:188): invalid argument``
    from a C++ extension)."""
    st = inc.outcome
    # the lifetime's last lines, and those printed just before each signature hit (a restatement a
    # signature knows keeps them there when a long traceback after it pushed them out of the last lines)
    kept = (*st.recent, *(e for _hit, evs in st.before for e in evs)) if st is not None else ()
    before = [e for e in kept if e.line < at and e.text.strip()]
    if not before:
        return None
    last = max(before, key=lambda e: e.line)
    if last.level in _QUIET_LEVELS:
        return None  # logged as information: "If you see error log from logging.cc ..., please ignore"
    return last if at - (last.end_line or last.line) <= gap and words.search(last.text[:400]) else None


EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception)(?:\[\w+\])?: \S")


def _exception_fragment_first(evidence: list[dict[str, Any]]) -> None:
    """A traceback whose exception line the parser could not place (kept as a fragment) and whose
    last frame therefore leads: the fragment that reads as an exception line (``OSError: ...``)
    says what failed, the frame only where."""
    if not evidence or evidence[0]["role"] != "last-frame":
        return
    for i, e in enumerate(evidence):
        if e["role"] == "fragment" and EXCEPTION_LINE.match(str(e["text"]).strip()):
            evidence.insert(0, {**evidence.pop(i), "role": "cause"})
            return


_BARE_ASSERT = re.compile(r"^(?:[\w.]+\.)?AssertionError:?$")


def _assert_statement_first(evidence: list[dict[str, Any]], ev: Event | None) -> None:
    """Python prints a failed ``assert`` without a message as the bare name ``AssertionError``;
    what failed is the statement the traceback's last frame quotes (``assert x % tp_size == 0``):
    it goes first, the bare name behind it."""
    if not evidence or ev is None or ev.kind != kinds.TRACEBACK or \
            not _BARE_ASSERT.match(str(evidence[0]["text"]).strip()):
        return
    chain = ev.data.get("chain") or ()
    frames = (chain[-1].frames if chain and chain[-1].frames else None) or ev.data.get("frames") or ()
    source = (frames[-1].source or "").strip() if frames else ""
    if not source.startswith("assert "):
        return
    evidence[0]["role"] = "supporting"
    # (its line: the exception's, as the bare name's; a frame's quoted source keeps no log line)
    evidence.insert(0, {"line": evidence[0]["line"], "text": clip_message(source), "role": "cause"})
    del evidence[MAX_EVIDENCE:]


def _panic_message_first(inc: Incident, evidence: list[dict[str, Any]]) -> None:
    """Rust (1.73 on) prints a panic's location on one line and its message on the next:
    ``thread 'main' panicked at src/server.rs:180:45:`` then what went wrong, whichever
    program panicked (TGI's router and launcher, Dynamo, TEI, vllm-rs). The message proves
    the failure together with where: the two are one entry, as older Rust printed them
    on one line. The message is the next line (a paste's ``--`` or ``...`` between
    skipped), among the last events the lifetime kept."""
    if not evidence or not _PANIC_AT.search(evidence[0]["text"]):
        return
    st = inc.outcome
    at = evidence[0]["line"]
    for ev in sorted(st.recent if st is not None else (), key=lambda e: e.line):
        text = ev.text.strip()
        if at < ev.line <= at + 3 and text and text not in _SEPARATORS and not _PANIC_AT.search(text):
            evidence[0]["text"] = clip_message(evidence[0]["text"].rstrip() + " " + text)
            return


def _deepest_cause_first(inc: Incident, evidence: list[dict[str, Any]]) -> None:
    """An error with its chain of causes after it (anyhow's "Caused by:" block, outermost
    first): the last cause names what went wrong and goes first; the context line stays
    behind it (TEI's "Error: Could not create backend" over "Runtime compute cap 52 is not
    compatible with compile time compute cap 75"; Dynamo's lease over the refused connection). A last
    cause left with generic words gives way to the error the program logged before it returned the
    chain (``evidence_said.logged_reason``)."""
    if not evidence or evidence[0]["role"] != "cause" or not isinstance(evidence[0].get("line"), int):
        return
    st = inc.outcome
    at = evidence[0]["line"]
    found: tuple[int, str] | None = None
    chain = False
    for ev in sorted(st.recent if st is not None else (), key=lambda e: e.line):
        if ev.line <= at:
            continue
        if not chain:
            if ev.line > at + 3 or (ev.text.strip() and not _CAUSED_BY.match(ev.text)):
                return
            chain = bool(ev.text.strip())
            continue
        m = _CAUSE_ITEM.match(ev.text)
        if m is None:
            break
        found = (ev.line, m.group(1).strip())
    if found is None:
        return
    found = logged_reason(inc, at, found[1]) or found
    evidence[0]["role"] = "supporting"
    evidence.insert(0, {"line": found[0], "text": clip_message(found[1]), "role": "cause"})
    del evidence[MAX_EVIDENCE:]


def _continuation(inc: Incident, tb: Event) -> tuple[int, str] | None:
    end = tb.end_line or tb.line
    for other, _phase, _after in inc.tracebacks:
        if end < other.line <= end + 6 and outcome.process_of(other) == outcome.process_of(tb):
            chain = other.data.get("chain") or ()
            if chain:
                return (chain[-1].line or other.line, clip_message(chain[-1].rendered))
    return None


# A compiler's closing words after its errors (ptxas "Ptx assembly aborted due to errors", gcc's
# "compilation terminated.", nvcc's "N errors detected in the compilation of ..."): the error it
# counts, printed before it, says what failed.
_COMPILER_SUMMARY = re.compile(r"(?i)\baborted due to errors\b|\bcompilation terminated\b|"
                               r"\b\d+ errors? detected in the compilation\b|\bcompilation failed\b")


# A library's statement that an allocation of a size failed, and nothing of why (ggml's backends:
# "ggml_vulkan: Device memory allocation of size 1879048192 failed.", "ggml_gallocr_reserve_n: failed to
# allocate Vulkan0 buffer of size 4757131264"): the device runtime's error printed beside it says why
# ("vk::Device::allocateMemory: ErrorOutOfDeviceMemory", "Requested buffer size exceeds device memory
# allocation limit: ErrorOutOfDeviceMemory").
_SIZE_ONLY = re.compile(r"(?i)\ballocation of size \d+ failed\.?\s*$|\bfailed to allocate \S+ buffer of size \d+\s*$")
_BESIDE = 2  # lines between the size-only statement and the runtime's error beside it


def _add_proofs(inc: Incident, evidence: list[dict[str, Any]], fail_line: int) -> None:
    """The line that proves the failure comes first: a compiler's own error
    inside the build output (ahead of the build tool's "ninja: build
    stopped" or "Error building extension"), a device runtime's error line.
    They go right after the cause (before it, for a compiler's error under a
    build tool's summary); wrappers stay behind them."""
    proofs = outcome.proof_lines(inc, fail_line)
    if not proofs:
        return
    cause = evidence[0] if evidence else None
    if cause is not None and cause["role"] in _NOT_PROOF:
        # A cut traceback's last frame says where, not what: the runtime's or the
        # compiler's own error line goes ahead of it.
        cause = None
    cause_is_summary = cause is not None and (outcome.proof_class(cause["text"]) in ("build", None) and
                                              not outcome.is_compiler_error(cause["text"]) or
                                              _COMPILER_SUMMARY.search(cause["text"][:600]) is not None)
    pos = 1 if cause is not None else 0
    for ev, cls in proofs:
        text = clip_message(ev.text)
        key = text.strip()
        if cause is not None and cause["text"].strip() == key:
            continue
        for i in range(len(evidence) - 1, 0, -1):  # a supporting copy moves up
            if evidence[i]["text"].strip() == key:
                evidence.pop(i)
        entry = {"line": ev.line, "text": text, "role": "build-error" if cls == "build" else "runtime-error"}
        if cls == "build" and cause_is_summary and pos == 1 and (
                outcome.is_compiler_error(ev.text) or _COMPILER_SUMMARY.search(cause["text"][:600])):
            evidence.insert(0, entry)  # the compiler's own error proves a failed build
        elif cls == "runtime" and cause is not None and pos == 1 and _SIZE_ONLY.search(cause["text"][:600]) and \
                isinstance(cause.get("line"), int) and abs(ev.line - cause["line"]) <= _BESIDE:
            evidence.insert(0, entry)  # the runtime says why the allocation of that size failed
            cause["role"] = "supporting"
        else:
            evidence.insert(pos, entry)
        pos += 1
    # Keep the cap, dropping supporting lines before the cause's proofs.
    while len(evidence) > MAX_EVIDENCE:
        drop = next((i for i in range(len(evidence) - 1, 0, -1) if evidence[i]["role"] in ("supporting", "fragment")),
                    len(evidence) - 1)
        evidence.pop(drop)
