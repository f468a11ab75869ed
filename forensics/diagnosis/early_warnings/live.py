"""Prospective warnings (``watch``): a pure decision per line."""
from __future__ import annotations

from typing import Any

from forensics.diagnosis.early_warnings.baseline import Baseline, baseline
from forensics.diagnosis.early_warnings.candidates import ARITH_RE, ARITH_WORDS, NEED_WORDS, Notes, is_noise, template, text_level
from forensics.diagnosis.early_warnings.context import matching
from forensics.diagnosis.early_warnings.live_gate import RECORDER
from forensics.diagnosis.early_warnings.resources import STALLED, ZERO_COUNT, arithmetic
from forensics.diagnosis.early_warnings.scoring import _topic
from forensics.diagnosis.early_warnings.subjects import subject_value, subjects
from forensics.diagnosis.early_warnings.vocab import DEGRADED_RE, LABEL_TOPICS, _lazy, cuda_error_label
from forensics.diagnosis.early_warnings.wording import _wording, figures_decide, wording_class  # noqa: F401 (re-exported)
from forensics.events import types as kinds
from forensics.events.types import Event

PYTHON_WARNING = _lazy(r"\b(?:User|Future|Deprecation|Runtime|Resource|Import)Warning\b")
# Wording that says a failure will follow, not merely that something is off: a library that will not
# load or run here (or is not there: "X not installed", "the library file not found"), a shortfall, a peer connection that broke (torch c10d's store, NCCL's sockets), a
# CUDA driver or runtime error code returned to a program that went on.
LIVE_CUE = _lazy(
    r"(?i)not compatible with|incompatible|no kernel image|not supported (?:on|by|for) (?:this|the current|your)|"
    r"only supported on|undefined symbol|cannot open shared object|no module named|exceeds? the|"
    r"lower than the required|requires? .{0,40} but found|no platform detected|failed to (?:import|load|initiali[sz]e)|"
    r"\bnot installed\b|not found in path|could not import|mismatch|negative|out of memory|ran out of memory|"
    r"\b(?:library|shared object|module|package|binary|executable)(?: file)? (?:was |is )?not found\b|"
    r"failed to (?:recv|send)\b|connection (?:was )?(?:likely )?closed|connection reset|broken pipe|"
    r"(?-i:\bCUDA_ERROR_[A-Z_]{4,}|\bcudaError[A-Z]\w+)")
# A peer connection that broke (not one still being tried: rendezvous retries "failed to connect" and
# "connection refused" on healthy start-ups): about the collective it served, a subject of its own.
NET_BREAK = _lazy(r"(?i)failed to (?:recv|send)\b|connection (?:was )?(?:likely )?closed|connection reset|broken pipe")
# What a program copes with and still warns of: a native library built against another ABI (its other
# entry points fail later too; vllm-ascend's custom ops "undefined symbol ... Sleep mode will be disabled").
HARD_BREAK = _lazy(r"undefined symbol")
# The subject kinds a live warning must name one of (rare in healthy start-ups): what a failure is
# about -- a package, module, library, tool, GPU architecture, variable, model type (and, for a broken
# peer connection, the collective it served).
STRONG_KINDS = frozenset({"pkg", "mod", "lib", "tool", "arch", "env", "model"})


def live_decision(ev: Event, signature_hit: Any = None, facts: dict[str, Any] | None = None,
                  server: str | None = None, base: Baseline | None = None, ready: bool = False,
                  where: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Should ``watch`` print this line now as an early warning? Pure: a
    precursor signature names it, or resource arithmetic trips, or it is
    unusual against the healthy baseline *and* about a failure topic."""
    text = ev.text
    kind = ev.kind
    if signature_hit is None and kind not in (kinds.LOG, kinds.MESSAGE, kinds.PACKAGE_WALK_WARNING, kinds.PHASE_MARKER):
        return None  # the cheap test first: watch asks this for every line
    if is_noise(text):
        return None
    if signature_hit is not None:
        d = _precursor_decision(ev, signature_hit.signature, facts or {}, base)
        return d if d is not None else _gate_decision(ev, signature_hit.signature, facts or {}, base, ready, where)
    head = text[:400]
    low = head.lower()
    arith = arithmetic(text, facts or {}) if (any(map(low.__contains__, ARITH_WORDS))
                                              or any(map(low.__contains__, NEED_WORDS))) and ARITH_RE.search(head) else None
    if arith == ZERO_COUNT and ((base := base or baseline()).usual(template(text), server) or base.familiar(text)):
        arith = None  # healthy start-ups print this count of zero too
    if arith == STALLED:
        arith = None  # one long request (a huge prompt's prefill) reports the same: linked after the fact only
    if arith is not None:
        return {"line": ev.line, "text": text, "why": arith, "signature": None, "predicts": _arith_predicts(arith, text),
                "subjects": sorted(subjects(text))[:12]}
    if kind == kinds.PHASE_MARKER:
        return None
    d = _unusual_decision(ev, server, base or baseline())
    if d is None:
        _record_unusual(ev, server, base or baseline(), where)
    return d


def _record_unusual(ev: Event, server: str | None, base: Baseline, where: dict[str, Any] | None) -> None:
    """Hand the lab's recorder a warning line no precursor names that the general rules kept quiet
    (only while it records): what a learned gate over such lines would read."""
    rec = RECORDER.get()
    if rec is None:
        return
    text = ev.text
    said = wording_class(text)
    level = text_level(ev)
    if cuda_error_label(text) is None and said is None and level not in ("WARNING", "ERROR"):
        return
    head = text[:400]
    subs = subjects(text)
    rec.append({"pool": "unusual", "line": ev.line, "text": text, "signature": None, "level": level,
                "judged": {"familiar": base.familiar(text), "usual": base.usual(template(text), server),
                           "wording_class": said is not None, "live_cue": LIVE_CUE.search(head) is not None,
                           "degraded": DEGRADED_RE.search(head) is not None,
                           "python_warning": PYTHON_WARNING.search(head) is not None,
                           "strong": sorted(s for s in subs if s.split(":", 1)[0] in STRONG_KINDS and base.rarity(s) >= 0.5),
                           "topics": [lab for lab in LABEL_TOPICS if _topic(lab, subs, text) >= 1.0][:3]},
                "subjects": sorted(subs)[:12], "where": dict(where or {})})


def _unusual_decision(ev: Event, server: str | None, base: Baseline) -> dict[str, Any] | None:
    """A warning no precursor names: news when healthy start-ups do not print it, its wording says a
    failure will follow, and it is about a rare subject of a failure's topic (or names a CUDA error)."""
    text = ev.text
    code = cuda_error_label(text)  # a CUDA error code is an error whatever level its line was printed at
    said = wording_class(text)  # so is a shortfall a program states (wording.yaml's any_level classes)
    if said is not None and not said[4]:
        said = None  # a class read after the fact only (healthy runs word it so too often to announce it)
    if code is None and not (said and said[3]) and text_level(ev) not in ("WARNING", "ERROR"):
        return None
    if (base.usual(template(text), server) or base.familiar(text)) and not (said and figures_decide(said[0])):
        return None
    if said is not None:
        # wording any program uses to say what follows: it names the failure itself (or its subjects
        # say which: a consequence stated in general words), no rare subject needed
        subs = subjects(text)
        predicts = list(said[2]) or [lab for lab in LABEL_TOPICS if _topic(lab, subs, text) >= 1.0][:3]
        if predicts:
            return {"line": ev.line, "text": text, "why": f"unusual for a healthy start-up; {said[1]!r} says a "
                    f"failure follows ({said[0]})", "signature": None, "predicts": predicts,
                    "subjects": sorted(subs)[:12]}
    m = LIVE_CUE.search(text)
    if m is None or DEGRADED_RE.search(text) and not HARD_BREAK.search(text) or PYTHON_WARNING.search(text[:400]):
        # (a line that says how the program copes announces a degraded start, not a failure -- unless
        # what it copes with is a native library built against another ABI; a library's Python warning
        # at import time is about its optional parts: torchvision's image extension, a plugin of
        # modelopt. Either is news only where a precursor names it.)
        return None
    subs = subjects(text)
    kinds_ = STRONG_KINDS | {"coll"} if NET_BREAK.search(text) else STRONG_KINDS
    strong = [s for s in subs if s.split(":", 1)[0] in kinds_ and base.rarity(s) >= 0.5]
    if not strong:
        return None
    topics = [code] if code else [lab for lab in LABEL_TOPICS if _topic(lab, subs, text) >= 1.0]
    if not topics:
        return None
    return {"line": ev.line, "text": text, "why": f"unusual for a healthy start-up; {m.group(0)!r} about "
            f"{', '.join(subject_value(s) for s in strong[:3])}", "signature": None, "predicts": topics[:3],
            "subjects": sorted(subs)[:12]}


def _arith_predicts(arith: str, text: str) -> list[str]:
    """What a line whose numbers tripped the arithmetic predicts."""
    if "system memory" in arith or "host memory" in arith:
        return ["host.out-of-memory", "hang.timeout"]
    if "GiB" in arith or "KV" in arith:
        return ["gpu.out-of-memory"]
    if arith == STALLED:
        return ["hang.timeout", "dist.nccl"]
    if arith == ZERO_COUNT:
        return ["env.gpu-arch-unsupported"] if "compatible" in text.lower() else ["hang.timeout"]
    return ["config.invalid-argument"]


def _precursor_decision(ev: Event, sig: Any, facts: dict[str, Any], base: Baseline | None) -> dict[str, Any] | None:
    """A line a precursor signature names: news unless healthy runs print it where this one is."""
    text = ev.text
    why = f"precursor {sig.id}"
    have = facts.get("context", frozenset())
    ctx = matching(sig.live_when, have)
    if sig.strength == "weak" and not ctx:
        return None  # healthy runs print it as a rule: context for linking, not news (unless its context holds)
    if sig.quiet_when and not ctx and matching(sig.quiet_when, have):
        return None  # the context its signature names as where healthy runs print it
    if (base or baseline()).familiar(text):
        # Healthy start-ups print it too: it matters in the context its signature names (the GPU,
        # the backends selected), when its numbers trip the arithmetic (a negative KV-cache budget:
        # the template is familiar, this run's figure is not), or outside the only context healthy
        # runs print it in (vLLM's "No platform detected" on a host that loaded no platform plugin).
        if ctx:
            why += f"; in this context ({', '.join(ctx[:3])}) it precedes {', '.join(sig.predicts) or sig.root_cause}"
        elif (arith := arithmetic(text, facts)) is not None:
            why += f"; {arith}"
        elif sig.quiet_when:
            why += f"; healthy start-ups print it only with {', '.join(sig.quiet_when[:2])}, not seen here"
        else:
            return None
    return {"line": ev.line, "text": text, "why": why, "signature": sig.id, "predicts": list(sig.predicts),
            "subjects": sorted(subjects(text))[:12]}


def _gate_decision(ev: Event, sig: Any, facts: dict[str, Any], base: Baseline | None,
                   ready: bool, where: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A precursor line the rules keep quiet, weighed by the learned gate (``live_gate.py``) in the
    context the start-up stated; the lab's recorder sees every such line."""
    from forensics.diagnosis.early_warnings.live_gate import features, live_gate

    rec, gate = RECORDER.get(), live_gate()
    if rec is None and gate is None:
        return None
    text = ev.text
    have = facts.get("context", frozenset())
    b = base or baseline()
    head = text[:400]
    judged = {"familiar": b.familiar(text), "usual": b.usual(template(text), None), "after_ready": ready,
              "quiet_context": bool(sig.quiet_when and matching(sig.quiet_when, have)),
              "wording_class": wording_class(text) is not None, "live_cue": LIVE_CUE.search(head) is not None,
              "degraded": DEGRADED_RE.search(head) is not None, **_resources(facts)}
    f = features(sig, text_level(ev), have, judged)
    if rec is not None:
        rec.append({"line": ev.line, "text": text, "signature": sig.id, "features": f, "level": text_level(ev),
                    "judged": judged, "have": sorted(have), "where": dict(where or {}),
                    "predicts": list(sig.predicts) or [sig.root_cause], "strength": sig.strength})
    p = gate.probability(f) if gate is not None else 0.0
    if gate is None or p < gate.threshold:
        return None
    return {"line": ev.line, "text": text, "signature": sig.id, "predicts": list(sig.predicts),
            "why": f"precursor {sig.id}; healthy runs print it too, but in this context it precedes "
                   f"{', '.join(sig.predicts) or sig.root_cause} (learned, p={p:.2f})",
            "subjects": sorted(subjects(text))[:12]}


def _resources(facts: dict[str, Any]) -> dict[str, bool]:
    """What the start-up stated of its resources so far, as the learned gate reads it."""
    frac = facts.get("mem_fraction")
    gpus = max(int(facts.get("tp") or 1) * int(facts.get("dp") or 1), int(facts.get("visible") or 1))
    return {"budget_set": frac is not None, "budget_high": frac is not None and float(frac) >= 0.9,
            "multi_gpu": gpus > 1}


def where_now(inc: Any, ev: Event) -> dict[str, Any]:
    """Where in its lifetime a line arrives, as ``watch`` knows it then: the phase reached, the
    seconds and lines since the lifetime started, and the error lines, warning lines, tracebacks
    and precursor lines it has printed so far (this line included)."""
    start_ts, start_line = getattr(inc, "start_ts", None), getattr(inc, "start_line", None)
    try:
        since = (ev.ts - start_ts).total_seconds() if ev.ts is not None and start_ts is not None else None
    except TypeError:  # one stamp with a zone, the other without
        since = None
    return {"phase": getattr(inc, "phase", None), "since_s": since,
            "since_lines": ev.line - start_line if start_line is not None else None,
            "errors": len(getattr(inc, "error_lines", ())), "warnings": len(getattr(inc, "warning_lines", ())),
            "tracebacks": len(getattr(inc, "tracebacks", ())), "precursors": len(getattr(inc, "precursor_hits", ()))}


def _figures_speak(text: str) -> bool:
    """The line holds a wording class whose figures decide (``wording.yaml``'s figures_decide)."""
    said = wording_class(text)
    return said is not None and figures_decide(said[0])


def live_early_warnings(inc: Any, ev: Event, announced: set) -> list[dict[str, Any]]:
    """The early warnings ``watch`` prints for the event that just arrived
    (``announced`` remembers what was printed, so each is printed once)."""
    out = []
    hits = [h for h in getattr(inc, "precursor_hits", ())[-3:] if h.line >= ev.line]
    quiet = False  # a precursor named this line and kept it quiet
    for h in hits:
        if h.signature.id in announced or f"line:{h.line}" in announced:
            continue  # one announcement per signature and per line (two signatures may name one line)
        announced.add(h.signature.id)
        announced.add(f"line:{h.line}")
        notes_now: Notes | None = getattr(inc, "ew_notes", None)
        d = live_decision(ev if h.line == ev.line else Event(kinds.LOG, h.line, h.text, h.event.ts), h,
                          notes_now.facts if notes_now is not None else None,
                          ready=getattr(inc, "ready_line", None) is not None,
                          where=where_now(inc, ev) if RECORDER.get() is not None else None)
        if d is not None:
            out.append(d)
        else:
            quiet = quiet or h.line == ev.line
    if hits and not (quiet and not out and _figures_speak(ev.text)):
        return out
    # No precursor, or the precursors of this line kept it quiet because healthy start-ups print
    # its wording while its figures are of a wording class that reads them ("Error 2" where healthy
    # hosts print another error number): the general rules read it. (Any quiet precursor line
    # handed on measured 2 false live warnings more on the studied families' healthy logs: mlflow's
    # requirement mismatches, which its precursor keeps quiet for that reason.)
    notes: Notes | None = getattr(inc, "ew_notes", None)
    d = live_decision(ev, None, notes.facts if notes is not None else None, getattr(inc, "server", None),
                      where=where_now(inc, ev) if RECORDER.get() is not None else None)
    if d is not None:
        key = template(ev.text)
        if key not in announced:
            announced.add(key)
            out.append(d)
    return out
