"""How a process lifetime ended, judged from the shape of the log rather than
from known messages.

Signatures know messages; this module knows shapes that need no message
catalogue: which lines are error-level (whatever logger printed them), which
of those are a device runtime's or a build tool's own error (the lines that
*prove* a failure), whether the log ends on an error, which process failed
first, and which later errors of other processes are only consequences of
that first failure (timeouts, closed connections, "remote process exited").

The death lines themselves (launchers, supervisors, shells, containers, Ray,
Rust and C++ programs) are wrapper signatures in ``signatures/deaths.yaml``:
rules as data, matched by the signature set like every other rule.

State lives on ``Incident.outcome`` and is bounded (deques, capped dicts), so
an endless log costs constant memory.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mypy_extensions import mypyc_attr

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.longtext import found
from forensics.events.textmemo import MemoSearch, memo_by_text

MAX_ERRORS = 200
MAX_PROOFS = 64
MAX_PROCS = 256
MAX_CONTEXTS = 64  # signature hits whose preceding events are kept (Outcome.before)

# What native code prints just before it aborts, with no level: a CUDA check macro of a
# custom kernel (vLLM's and SGLang's CUDACHECK: "Failed: Cuda error FILE:LINE 'MSG'") and
# glibc's heap checks ("malloc(): corrupted top size", "double free or corruption (out)").
_NATIVE_FATAL = (r"^Failed: Cuda error \S+:\d+ '|^(?:malloc|free|realloc|malloc_consolidate)\(\): \w|"
                 r"^(?:corrupted size vs\. prev_size|corrupted double-linked list|double free or corruption)\b")
# The other accelerators' runtimes in their own words (issue 27), each an error whatever logger
# printed it: CANN's error codes ("EL0004: ", "EZ9999: ", "EI9999: "), Unified Runtime's, Level
# Zero's and SYCL PI's result names, ROCm HSA's status names, Vulkan's results as ggml-vulkan and
# vulkan-hpp print them ("... error ErrorDeviceLost at FILE:LINE", "vk::Queue::submit: ErrorDeviceLost",
# "ggml_vulkan: Device memory allocation of size N failed."), and XLA/PJRT's absl status
# (libtpu's "RESOURCE_EXHAUSTED: ... Ran out of memory in memory space hbm"); ggml's CUDA backend
# built for HIP ("ROCm error: invalid device function"), ggml-vulkan's own check of a Vulkan result
# ("ggml_vulkan: Requested buffer size exceeds device buffer size limit: ErrorOutOfDeviceMemory"),
# Mesa RADV's amdgpu winsys, which prints only its failures ("radv/amdgpu: Not enough memory for
# command submission.", "radv/amdgpu: The CS has been cancelled because the context is lost."), and
# the HIP runtime finding no kernel for the GPU ("No compatible code objects found for: gfx1152"), and
# OpenCL's error codes by their names in cl.h (an OpenCL runtime returns them only as a call's
# failure: OpenVINO's Intel GPU plugin "[GPU] clFinish, error code: -5 CL_OUT_OF_RESOURCES", ggml's
# OpenCL backend), never its CL_DEVICE_* / CL_PLATFORM_* property names that device listings print.
_ACCEL_RUNTIME = (r"\bCL_(?:OUT_OF_RESOURCES|OUT_OF_HOST_MEMORY|MEM_OBJECT_ALLOCATION_FAILURE|BUILD_PROGRAM_FAILURE|"
                  r"DEVICE_NOT_FOUND|COMPILER_NOT_AVAILABLE|INVALID_[A-Z_]+)\b|\bE[A-Z]\d{4}: |\b(?:UR|ZE)_RESULT_ERROR_[A-Z_]+|\bPI_ERROR_[A-Z_]+|\bHSA_STATUS_ERROR_[A-Z_]+|"
                  r"\bggml_vulkan: .{1,300} error Error[A-Z]\w* at |\bggml_vulkan: Device memory allocation of size \d+ failed|"
                  r"\bvk::\w+::\w+: Error[A-Z]\w*|\bRESOURCE_EXHAUSTED: |\bROCm error: |"
                  r"\bggml_vulkan: .{1,300}: ErrorOutOf(?:Device|Host)Memory\b|"
                  r"\bradv/amdgpu: |\bNo compatible code objects found for: ")
# Error-level wording of loggers the prefix parser does not know (NCCL's WARN
# macro is its error channel; Rust tracing's " ERROR "; logfmt; compilers;
# device runtimes). Uppercase words only: "error" in prose is not a level.
_ERROR_LEVEL = re.compile(
    r"\bNCCL WARN\b|(?:^|\s)(?:ERROR|FATAL|CRITICAL)(?:\s|:|$)|\blevel=(?:error|fatal|critical)\b|^\[?Error\]?:|"
    r"(?:^|: )(?:fatal )?error: |^FAILED: |ninja: build stopped|\b(?:cuda|hip|nccl|acl|rt|cudnn|cublas)Error[A-Z]\w*|"
    r"\bCUDA error: |\bHIP error: |\bEE\d{4}\b|panicked at |\bterminate called\b|^\s*what\(\):  |" + _ACCEL_RUNTIME + "|"
    # ptxas's error in a PTX file ("ptxas FILE, line N; error   : ..."); binutils ld's input it cannot read
    r"\bptxas \S+, line \d+; error\s*: |: file (?:format )?not recognized: |" + _NATIVE_FATAL)
RECENT_EVENTS = 32  # >= decision.death.TAIL_LINES + 1
_ERROR_HINT = ("ERROR", "FATAL", "CRITICAL", "rror", "WARN", "FAILED", "ninja", "panicked", "EE", "terminate", "what()",
               "(): ", "corrupt", "not recognized", "EXHAUSTED", "EL", "EZ", "EI", "EH", "EK", "EJ", "ggml_vulkan",
               "radv/", "code objects", "CL_")

# A device runtime's own error (CUDA, HIP, NCCL/RCCL, Ascend CANN/ACL; UCX, the transport that NCCL's
# and NIXL's network plugins and KV-transfer engines run over, whose error channel is its ucs_error
# macro: "[ts] [host:pid:0] ib_mlx5_log.c:179  UCX  ERROR Local protection error on mlx5_0:1/RoCE"): the line
# that proves a device failure, whatever wrapper reported it afterwards.
_RUNTIME = re.compile(
    r"\b(?:cuda|hip|nccl|acl|cudnn|cublas|cufft|curand|cusolver|hccl)Error[A-Z]\w*|\bCUDA_ERROR_[A-Z_]+|"
    r"\bCUDA error: |\bHIP error: |\bNCCL WARN\b.{0,300}?(?:Fail|fail|error|Error)|\bNCCL error\b|"
    r"\bEE\d{4}\b|^\[Error\]: |\bACL error\b|\baclnn\w+ failed\b|\brt\w+ execution failed\b|\bhccl\w* failed\b|"
    r"\bXid\b.{0,40}\b\d+\b|\bNVRM: |\bUCX +ERROR\b|" + _ACCEL_RUNTIME + "|" + _NATIVE_FATAL)
# A compiler's or build tool's own error line inside build output.
_BUILD = re.compile(
    r"^\S+?:\d+(?::\d+)?: (?:fatal )?error: |(?:^|\s)fatal error: |^FAILED: |ninja: build stopped|"
    r"\bnvcc fatal\b|\bptxas (?:fatal|error)\b|^error: |\bcollect2: error\b|\bld: cannot find\b|"
    r"undefined reference to `|error: command '[^']+' failed|\bCompilationError\b|^\S+\(\d+\): error: |"
    r"\bptxas \S+, line \d+; error\s*: |: file (?:format )?not recognized: ")
# Of those, the compiler's own diagnostic (not the build tool's summary).
_COMPILER = re.compile(r"^\S+?:\d+(?::\d+)?: (?:fatal )?error: |(?:^|\s)fatal error: |^\S+\(\d+\): error: |"
                       r"\bptxas (?:fatal|error)\b|\bnvcc fatal\b|undefined reference to `|\bld: cannot find\b|"
                       r"\bptxas \S+, line \d+; error\s*: |: file (?:format )?not recognized: ")
# A raw kernel assertion (one line per faulting thread): proof that a kernel
# asserted, never a better answer than the error that names what failed.
_KERNEL_ASSERT = re.compile(r"Assertion `.{1,300}` failed\.|block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\]")
# What the other ranks print once one rank has failed: they lost their peer.
CONSEQUENCE = MemoSearch(re.compile(  # asked of the same lines many times per incident
    r"(?i)timed? ?out|timeout|connection (?:reset|closed|refused|aborted)|closed by (?:the )?(?:remote )?peer|"
    r"remote (?:process|peer|end) (?:exited|closed|hung up)|broken pipe|\bEOFError\b|socket ?recv|socketProgress|"
    r"peer (?:closed|disconnected|exited)|heartbeat|communicator (?:was )?abort|\baborting\b|watchdog|"
    r"connection was likely closed|did the remote server shutdown or crash|terminated by signal|\bSIGTERM\b|"
    r"proxy service|failed to execute operation|sigquit|died unexpectedly|is dead|shutting down"))
# NCCL's own prefix "host:pid:tid [dev]" names the process of unprefixed lines.
_NCCL_PROC = re.compile(r"^(?P<host>[\w.\-]+):(?P<pid>\d+):\d+ \[\d+\]")


# Python classes even where this module is compiled (forensics.native): they are
# copied, deep-copied or pickled (live readers fork them), which mypyc's native classes
# do not support.
@mypyc_attr(native_class=False)
@dataclass
class Outcome:
    """What the shape of one lifetime's log says (bounded)."""

    errors: deque = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))  # error-level events
    proofs: deque = field(default_factory=lambda: deque(maxlen=MAX_PROOFS))  # (event, "runtime"|"build")
    first_error: dict = field(default_factory=dict)  # process -> line of its first error
    tail_error: Event | None = None  # first error of the run of errors that ends the log so far
    last_line: int = 0  # last non-blank line
    markers: deque = field(default_factory=lambda: deque(maxlen=64))  # (line, text) of recent phase markers
    # What the learned death detector (diagnosis.decision.death) reads when no rule saw a failure:
    # the last events, enough to cover its window of the last TAIL_LINES lines (an event is >= 1 line).
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    # The events printed just before each signature hit ((hit event, events) pairs, the latest
    # MAX_CONTEXTS), kept when the hit is made: the error a restatement or a death line follows may
    # be long gone from ``recent`` when the log goes on (``diagnosis.evidence_offered``). Events,
    # not line numbers: a crash loop's lifetimes keep the same shape (``diagnosis.memo``).
    before: deque = field(default_factory=lambda: deque(maxlen=MAX_CONTEXTS))


def process_of(ev: Event) -> tuple:
    """Which process printed ``ev``: the envelope's pid or the rank tag, else
    the "host:pid:tid [dev]" prefix NCCL puts on its own lines."""
    if ev.pid is not None or ev.rank is not None:
        return (ev.host, ev.pid, ev.rank)
    m = _NCCL_PROC.match(ev.text) if ":" in ev.text[:40] else None
    if m is not None:
        return (m.group("host"), int(m.group("pid")), None)
    return (ev.host, None, None)


def is_error(ev: Event) -> bool:
    """Error-level by the parsed level, or by the wording of loggers the
    parser does not know."""
    level = ev.level
    if level is not None:
        if level in ("ERROR", "CRITICAL"):
            return True
        if level != "WARNING" or "NCCL WARN" not in ev.text:
            return False
    text = ev.text
    if not any(h in text for h in _ERROR_HINT):
        return False
    # its one $ ends the branch (?:\s|:|$), which \s ends before a final newline: RE2's $ finds the same lines
    return found(_ERROR_LEVEL, text, dollar_ok=True)


@memo_by_text
def proof_class(text: str) -> str | None:
    """"runtime" (a device runtime's error), "build" (a compiler's or build
    tool's error), "assert" (a raw kernel assertion) or None."""
    if found(_KERNEL_ASSERT, text):
        return "assert"
    if found(_BUILD, text):
        return "build"
    if found(_RUNTIME, text):
        return "runtime"
    return None


def observe(inc: Any, ev: Event) -> None:
    """IncidentBuilder hook: keep what the shape of death needs."""
    kind = ev.kind
    if kind == kinds.ACCESS or kind == kinds.UNIT_LIFECYCLE or kind == kinds.JOURNAL_MARKER:
        return
    st = inc.outcome
    if st is None:
        st = inc.outcome = Outcome()
    if not ev.text.strip():
        return
    st.last_line = ev.end_line or ev.line
    st.recent.append(ev)
    if kind == kinds.TRACEBACK:
        st.tail_error = None  # tracebacks are judged by diagnosis itself
        return
    if kind == kinds.PHASE_MARKER:
        st.tail_error = None
        if ev.data.get("marker") != "batch_stats":
            st.markers.append((ev.line, ev.text[:200]))
        return
    if not is_error(ev):
        st.tail_error = None
        return
    st.errors.append(ev)
    if st.tail_error is None:
        st.tail_error = ev
    proc = process_of(ev)
    if proc not in st.first_error and len(st.first_error) < MAX_PROCS:
        st.first_error[proc] = ev.line
    cls = proof_class(ev.text)
    if cls is not None:
        st.proofs.append((ev, cls))


CONTEXT_EVENTS = 6


def keep_context(inc: Any, ev: Event) -> None:
    """A signature matched ``ev``: keep the events printed just before it (bounded: the latest
    ``MAX_CONTEXTS`` hits, ``CONTEXT_EVENTS`` events each). Called once per hit, not per line."""
    st = inc.outcome
    if st is None or (st.before and st.before[-1][0] is ev):
        return
    recent = list(st.recent)
    st.before.append((ev, tuple(e for e in recent[-CONTEXT_EVENTS - 1:] if e is not ev)))


def ends_in_error(inc: Any) -> Event | None:
    """The first line of the run of error-level lines that ends the log
    (nothing but errors after it), or None."""
    st = inc.outcome
    return st.tail_error if st is not None else None


def marker_before(inc: Any, line: int) -> str | None:
    """Text of the last phase marker at or before ``line``."""
    st = inc.outcome
    if st is None:
        return None
    best = None
    for at, text in st.markers:
        if at > line:
            break
        best = text
    return best


def errors_before(inc: Any, line: int) -> list[Event]:
    st = inc.outcome
    return [e for e in st.errors if e.line <= line] if st is not None else []


def best_proof(inc: Any, before: int, exclude: set[int] | None = None, gap: int = 3) -> Event | None:
    """The error line that best proves the failure that surfaced at ``before``
    (a death line, or the end of the log): the first failing process's
    earliest device-runtime or build error; else the head of the block of
    error lines right before ``before`` (an unrelated ERROR printed long
    before, with ordinary lines in between, is not it); raw kernel
    assertions only when nothing names what failed."""
    errs = [e for e in errors_before(inc, before) if not exclude or e.line not in exclude]
    if not errs:
        return None
    first_proc = process_of(errs[0])
    own = [e for e in errs if process_of(e) == first_proc] or errs
    proven = [e for e in own if proof_class(e.text) in ("runtime", "build") and not CONSEQUENCE.search(e.text[:2000])]
    if proven:
        return min(proven, key=lambda e: e.line)
    head = None
    at = before
    for e in reversed(errs):
        if at - (e.end_line or e.line) > gap:
            break
        head = e
        at = e.line
    if head is not None and proof_class(head.text) == "assert":
        named = [e for e in errs if e.line >= head.line and proof_class(e.text) != "assert"]
        if named:
            return named[0]
    return head


def proof_lines(inc: Any, cause_line: int, limit: int = 3, window: int = 400) -> list[tuple[Event, str]]:
    """Runtime and build error lines shortly before (or at) the cause, of the
    same process when one is known: the compiler's own error inside build
    output, the CUDA/NCCL/ACL line under a Python wrapper."""
    st = inc.outcome
    if st is None:
        return []
    out = []
    for ev, cls in st.proofs:
        if cause_line - window <= ev.line <= cause_line + 2 and cls in ("runtime", "build"):
            out.append((ev, cls))
    # The compiler's own error first, then the build tool's, then the earliest runtime error.
    out.sort(key=lambda p: (0 if found(_COMPILER, p[0].text) else 1 if p[1] == "build" else 2, p[0].line))
    return out[:limit]


def is_compiler_error(text: str) -> bool:
    return found(_COMPILER, text)


def first_failing(inc: Any) -> tuple | None:
    """The process whose first error came first."""
    st = inc.outcome
    if st is None or not st.first_error:
        return None
    return min(st.first_error.items(), key=lambda kv: kv[1])[0]


def consequences(inc: Any, cause: Event | None, cause_line: int, candidates: list[tuple[int, str, Event]],
                 limit: int = 6) -> list[dict[str, Any]]:
    """Later errors of *other* processes that read like losing a peer
    (timeouts, resets, "remote process exited"): consequences of the first
    failure, not causes. ``candidates`` are (line, text, event)."""
    if cause is None:
        return []
    origin = process_of(cause)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for line, text, ev in sorted(candidates, key=lambda c: c[0]):
        if line <= cause_line or process_of(ev) == origin and origin != (None, None, None):
            continue
        if not CONSEQUENCE.search(text[:2000]):
            continue
        key = text.strip()[:200]
        if key in seen:
            continue
        seen.add(key)
        out.append({"line": line, "text": text[:600], "process": describe_process(process_of(ev)),
                    "role": "consequence"})
        if len(out) >= limit:
            break
    return out


def describe_process(proc: tuple | None) -> str | None:
    if proc is None:
        return None
    host, pid, rank = proc
    bits = [b for b in (host, f"pid {pid}" if pid is not None else None, rank) if b]
    return " ".join(bits) or None


# CPython's faulthandler: "Fatal Python error: Segmentation fault", then each
# thread's stack ("Current thread 0x... (most recent call first):", frames, no
# exception line). Those stacks are the crash's report, not failures of their own.
_CRASH_REPORT = "Fatal Python error: "
_REPORT_SPAN = 400  # lines: faulthandler dumps every thread, up to 100 frames each


def crash_report_stack(tb: Event, deaths: list[Event]) -> bool:
    """``tb`` is frames only, printed just after a crash report of its process."""
    if tb.data.get("chain") or not tb.data.get("frames"):
        return False
    proc = process_of(tb)
    return any(0 < tb.line - d.line <= _REPORT_SPAN and d.text.startswith(_CRASH_REPORT) and process_of(d) == proc
               for d in deaths)


# Deaths that print their own message on the next line: the C++ runtime's
# "terminate called after throwing an instance of 'X'" then "  what():  <the
# exception's message>" (libstdc++ vterminate.cc).
_MESSAGE_AFTER = (("terminate called after throwing an instance of", "what():"),)


def own_message(inc: Any, death: Event) -> Event | None:
    """The line in which a death states its message, when it prints one."""
    for head, lead in _MESSAGE_AFTER:
        if death.text.startswith(head):
            proc = process_of(death)
            for e in inc.error_lines:
                if death.line < e.line <= death.line + 3 and e.text.lstrip().startswith(lead) \
                        and process_of(e) == proc:
                    return e
    return None
