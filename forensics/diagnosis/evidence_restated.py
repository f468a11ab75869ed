"""Which of the lines a failure printed proves it, when the first line listed only restates or
wraps another (fix-cand24): a caller's message that carries its callee's reason gives way to the line
that said the reason first (``reason_first``); a logger's copy of an exception's message to the
exception line (``exception_over_restatement``); an NCCL error that points to NCCL's log to the WARN line
above it (``nccl_detail_first``); a lost device to the driver's error before it
(``device_lost_gives_way``); a fired kernel assertion to the assertion's own line
(``kernel_assert_first``); a C++ death to the message it printed on the next line
(``own_message_joined``). Each keeps the line it replaced behind the new first."""
from __future__ import annotations

import re
from typing import Any

from forensics.diagnosis.evidence import EXCEPTION_LINE, MAX_EVIDENCE, OFFER_WORD, WARNING_WORD, clip_message
from forensics.diagnosis.evidence_offered import (_FRAME_TEXT, _LOW_LEVEL, _NOT_A_MESSAGE, _kept_events,
                                                  _restates)
from forensics.events import types as kinds
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Incident
from forensics.incidents.stops import BENIGN_EXC


# (fix-cand24) A message that carries its reason from the line that first said it: a caller logs the
# callee's error after its own words ("Failed to initialize MLX handler: Error loading model: Model type
# internvl_chat not supported." after "Model type internvl_chat not supported."; Triton's "failed to load
# 'm' version 1: Internal: TypeError: ..." after the stub's "Failed to initialize Python stub: TypeError:
# ..."; cortex's "Failed to get JSON from URL: CURL request failed: ..." after "CURL request failed: ...").
# The reason is the text after the last ": " (a locator a logger appends, " - file.cc:324", left out).
_LOCATOR_TAIL = re.compile(r"\s+-\s+[\w.-]+:\d+\s*$")
_REASON_MIN = 16  # characters of a reason searched for (a shorter tail, "timed out", is any line's)
REASON_SCAN = 40  # lines above the first line searched for the first copy of its reason


_RETRY = re.compile(r"(?i)\bretry(?:ing)?\b|\btrying (?:again|with)\b|\bfall(?:ing)? ?back\b")
_PY_WARNING = re.compile(r"\b[A-Z]\w*Warning\b")  # Python's warnings (UserWarning: ...), at no level
_EXC_HEAD = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception)(?:\[\w+\])?: ")
_BRACKETS = re.compile(r"^(?:\[[^\]]*\]\s*)+")  # a logger's bracketed time or tags


def _reason_of(text: str) -> str | None:
    """The reason a message carries after its last ": ", without a logger's trailing locator."""
    head = _LOCATOR_TAIL.sub("", text.split("\n", 1)[0].strip())
    at = head.rfind(": ")
    if at < 0:
        return None
    reason = head[at + 2:].strip()
    return reason if len(reason) >= _REASON_MIN and len(reason.split()) >= 3 else None


def reason_first(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """A first line that carries its reason after its own words gives way to the earliest line printed
    above it (within ``REASON_SCAN`` lines) that said that reason first, in words of its own before
    it: the callee's error, which the callers restated. Not a warning (a retry's, which then failed
    again), not a frame's quoted source, not a line that is only the reason restated later."""
    if inc is None or not evidence or evidence[0].get("role") not in ("cause", "fatal", "wrapper") or \
            not isinstance(evidence[0].get("line"), int):
        return
    text = str(evidence[0]["text"])
    reason = _reason_of(text)
    if reason is None:
        return
    at = evidence[0]["line"]
    if _RETRY.search(text[:600]):
        return  # a retry's last report: the earlier lines are its earlier tries
    said = _EXC_HEAD.sub("", text.split("\n", 1)[0].strip()) if EXCEPTION_LINE.match(text.strip()) else None
    firsts = [ev for ev in _kept_events(inc) if at - REASON_SCAN <= ev.line < at and ev.kind != kinds.TRACEBACK
              and reason in ev.text and ev.text.strip() != text.strip()
              and not WARNING_WORD.search(ev.text[:200]) and not _PY_WARNING.search(ev.text[:400])
              and not _RETRY.search(ev.text[:600]) and not _NOT_A_MESSAGE.match(ev.text)
              and not _FRAME_TEXT.search(ev.text[:200])
              # an exception's whole message logged before it was raised (or as it propagated) is
              # the same error, not its callee's: the exception line stays, unless that earlier
              # line is an exception of its own (a chain's first)
              and (said is None or said not in ev.text or EXCEPTION_LINE.match(_BRACKETS.sub("", ev.text.strip())))]
    if not firsts:
        return
    _lead_with_event(min(firsts, key=lambda e: e.line), evidence)


def _lead_with_event(proof: Any, evidence: list[dict[str, Any]]) -> None:
    """The lifetime's event ``proof`` first, as the cause; a cause it displaces stays behind it as a
    wrapper, and its own entry (if listed) is not listed twice."""
    if evidence[0].get("role") == "cause":
        evidence[0]["role"] = "wrapper"
    evidence[:] = [{"line": proof.line, "text": clip_message(proof.text), "role": "cause"}] + \
        [e for e in evidence if e.get("line") != proof.line][:MAX_EVIDENCE - 1]


def own_message_joined(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """(fix-cand24) A death that prints its message on the next line (the C++ runtime's "terminate
    called after throwing an instance of 'X'", then "  what():  <message>") listed first gets that
    message, as one entry: the type and the message together say what failed."""
    if inc is None or not evidence or not isinstance(evidence[0].get("line"), int):
        return
    text = str(evidence[0]["text"])
    at = evidence[0]["line"]
    if "\n" in text.strip() or not text.lstrip().startswith("terminate called"):
        return
    kept = _kept_events(inc)
    death = next((ev for ev in kept if ev.line == at), None)
    if death is None:
        return
    proc = outcome.process_of(death)
    # (the lifetime keeps the message among its last lines, not always among its error lines)
    said = next((ev for ev in sorted(kept, key=lambda e: e.line) if at < ev.line <= at + 3
                 and ev.text.lstrip().startswith("what():") and outcome.process_of(ev) == proc), None)
    if said is None:
        return
    evidence[0]["text"] = clip_message(text.rstrip() + " " + said.text.strip())
    evidence[1:] = [e for e in evidence[1:] if e.get("line") != said.line]


_EXC_MESSAGE_MIN = 24  # characters of an exception's message compared (a shorter one is any line's)


def exception_over_restatement(evidence: list[dict[str, Any]]) -> None:
    """(fix-cand24) A first line that restates an exception listed after it gives way to that exception
    line: a logger's copy of the message ("[TRT-LLM] [E] Failed to initialize executor on rank 0: CUDA out
    of memory. Tried to allocate ..." before "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate
    ..."; safetensors' bare "Error while deserializing header: HeaderTooLarge" before
    "safetensors_rust.SafetensorError: Error while ..."; a cut repr of the exception), or a low-level
    library's exception that the caller raised again under its own type with the same message
    (huggingface_hub's HFValidationError, then transformers' OSError). The exception line names the
    error's type with its message; the restatement stays behind it."""
    if len(evidence) < 2 or not isinstance(evidence[0].get("line"), int):
        return
    lead = str(evidence[0]["text"])
    head = lead.split("\n", 1)[0].strip()
    low = _LOW_LEVEL.match(head) is not None
    if EXCEPTION_LINE.match(_BRACKETS.sub("", head)) and not low:
        return
    at = evidence[0]["line"]
    for j, e in enumerate(evidence[1:], 1):
        text = str(e.get("text") or "").split("\n", 1)[0].strip()
        line = e.get("line")
        if not isinstance(line, int) or line <= at or e.get("role") in ("offered", "wrapper") or \
                not EXCEPTION_LINE.match(text) or _LOW_LEVEL.match(text) or _restates(text):
            continue
        said = _EXC_HEAD.sub("", text)[:_EXC_MESSAGE_MIN * 2].rstrip(" .…")
        if len(said) < _EXC_MESSAGE_MIN or said not in lead:
            continue
        proof = evidence.pop(j)
        if evidence[0].get("role") == "cause":
            evidence[0]["role"] = "supporting"
        evidence.insert(0, {**proof, "role": "cause"})
        return


# NCCL's error for a failed call points to its own log for what failed ("unhandled cuda error (run with
# NCCL_DEBUG=INFO for details)", "'invalid usage (run with NCCL_DEBUG=WARN for details)'"): the detail is
# the WARN line it printed above (or the CUDA/HIP runtime's failure), its INFO lines (call-stack
# returns, "init.cc:1396 -> 5") and the raising frame's source between.
_NCCL_DETAILS = re.compile(r"\(run with NCCL_DEBUG=\w+ for details\)")
_NCCL_INFO = re.compile(r"\bNCCL INFO\b")
NCCL_DETAIL_SCAN = 8  # lines above the NCCL error searched for its detail


def nccl_detail_first(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """(fix-cand24) An NCCL error that says its details are in NCCL's log, listed first, gives way to the
    nearest error line printed above it (an NCCL WARN line, the device runtime's failure), within
    ``NCCL_DETAIL_SCAN`` lines; it stays behind it."""
    if inc is None or not evidence or not isinstance(evidence[0].get("line"), int) or \
            not _NCCL_DETAILS.search(str(evidence[0]["text"])[:600]):
        return
    at = evidence[0]["line"]
    near = [ev for ev in _kept_events(inc) if at - NCCL_DETAIL_SCAN <= ev.line < at and ev.kind != kinds.TRACEBACK
            and not _NCCL_INFO.search(ev.text[:300]) and not _NCCL_DETAILS.search(ev.text[:600])
            and not _NOT_A_MESSAGE.match(ev.text) and not _SOURCE_RAISE.search(ev.text[:200])
            and (OFFER_WORD.search(ev.text[:400]) or "NCCL WARN" in ev.text[:300])]
    if not near:
        return
    _lead_with_event(max(near, key=lambda e: e.line), evidence)


_SOURCE_RAISE = re.compile(r"(?:^|\s)raise [\w.]+\(")  # a frame's quoted source (behind a timestamp too)
# A GPU API's report that the device was lost (Vulkan's VK_ERROR_DEVICE_LOST as vulkan-hpp's
# ErrorDeviceLost): the consequence of what the driver printed before it (radv's "Not enough memory
# for command submission.", "The CS has been cancelled because the context is lost").
_DEVICE_LOST = re.compile(r"ErrorDeviceLost|VK_ERROR_DEVICE_LOST")


def device_lost_gives_way(evidence: list[dict[str, Any]]) -> None:
    """(fix-cand24) A first line that reports a lost device gives way to the earliest device runtime's
    error listed before it that does not report the loss itself; it stays behind it."""
    if len(evidence) < 2 or not isinstance(evidence[0].get("line"), int) or \
            not _DEVICE_LOST.search(str(evidence[0]["text"])[:600]):
        return
    at = evidence[0]["line"]
    before = [e for e in evidence[1:] if e.get("role") == "runtime-error" and isinstance(e.get("line"), int)
              and e["line"] < at and not _DEVICE_LOST.search(str(e["text"])[:600])]
    if not before:
        return
    proof = min(before, key=lambda e: e["line"])
    evidence.remove(proof)
    if evidence[0].get("role") == "cause":
        evidence[0]["role"] = "wrapper"
    evidence.insert(0, {**proof, "role": "cause"})



# A GPU error that says only that a kernel's assertion fired (CUDA's "device-side assert triggered",
# cudaErrorAssert; a launch that failed after one, CUDA_ERROR_LAUNCH_FAILED / "unspecified launch
# failure"), and the assertion's own line, which the kernel printed before it: "IndexKernel.cu:93:
# operator(): block: [217,0,0], thread: [107,0,0] Assertion `index out of bounds` failed.", DeepGEMM's
# "Assertion failed: smxx_layout.cuh:131, condition: ...".
_ASSERT_FIRED = re.compile(r"device-side assert(?:ion)? triggered|cudaErrorAssert|CUDA_ERROR_LAUNCH_FAILED|"
                           r"unspecified launch failure")
_KERNEL_ASSERT = re.compile(r"\bAssertion [`'].{1,300}?[`'] failed|\bAssertion failed: \S")


def kernel_assert_first(evidence: list[dict[str, Any]], offered_lines: list[dict[str, Any]]) -> None:
    """(fix-cand24) A first line that says only that a kernel's assertion fired gives way to the
    earliest assertion line listed or offered before it: what the kernel checked. It stays behind it."""
    if not evidence or not isinstance(evidence[0].get("line"), int) or \
            not _ASSERT_FIRED.search(str(evidence[0]["text"])[:600]) or _KERNEL_ASSERT.search(str(evidence[0]["text"])[:600]):
        return
    at = evidence[0]["line"]
    found = [e for e in evidence[1:] + offered_lines if isinstance(e.get("line"), int) and e["line"] < at
             and _KERNEL_ASSERT.search(str(e["text"])[:600])]
    if not found:
        return
    _lead_with(min(found, key=lambda e: e["line"]), evidence, offered_lines)


# Python's report that a child process failed ("subprocess.CalledProcessError: Command '[...]' returned
# non-zero exit status 1"), and the parent's restatement that carries the child's output ("RuntimeError:
# Error raised in subprocess: ..."): the child's own exception, printed in that output, says what failed.
_CHILD_FAILED = re.compile(r"\bCalledProcessError: Command .{1,600}? returned non-zero exit status\b")
_CHILD_OUTPUT = re.compile(r"\bError raised in subprocess\b")
_EXCEPTION_AT = re.compile(r"^\s*(?:[\w.]+\.)?(\w*(?:Error|Exception|Exit|Interrupt))(?:\[\w+\])?: \S")


def child_error_first(evidence: list[dict[str, Any]], offered_lines: list[dict[str, Any]]) -> None:
    """(fix-cand24) A child process's failure listed first gives way to the first exception line printed
    after the child's output began (the parent's "Error raised in subprocess" line, else anywhere),
    listed or offered: the child's own error. Not a wrapper's words, nor another child's failure."""
    if not evidence or not isinstance(evidence[0].get("line"), int) or \
            not _CHILD_FAILED.search(str(evidence[0]["text"])[:800]):
        return
    pool = [e for e in evidence[1:] + offered_lines if isinstance(e.get("line"), int)]
    began = min((e["line"] for e in pool if _CHILD_OUTPUT.search(str(e["text"])[:300])), default=0)
    found = []
    for e in pool:
        text = str(e["text"])
        m = _EXCEPTION_AT.match(text)
        if m is None or e["line"] <= began or m.group(1) in BENIGN_EXC or _CHILD_FAILED.search(text[:800]) or \
                _CHILD_OUTPUT.search(text[:300]) or _restates(text):
            continue
        found.append(e)
    if not found:
        return
    _lead_with(min(found, key=lambda e: e["line"]), evidence, offered_lines)


def _lead_with(proof: dict[str, Any], evidence: list[dict[str, Any]], offered_lines: list[dict[str, Any]]) -> None:
    """Move ``proof`` (listed or offered) to the front as the cause; the line it displaces, if it was
    the cause, stays behind it as a wrapper."""
    if proof in offered_lines:
        offered_lines.remove(proof)
    else:
        evidence.remove(proof)
    if evidence[0].get("role") == "cause":
        evidence[0]["role"] = "wrapper"
    evidence.insert(0, {"line": proof["line"], "text": proof["text"], "role": "cause"})
