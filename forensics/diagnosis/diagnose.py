"""Stage 5: an incident -> a diagnosis (label, confidence, evidence, phase,
early warnings, remediation). Signatures decide what they know; wrappers and
carriers never decide; what no signature knows goes to the classifier."""
from __future__ import annotations

import re
from typing import Any

from forensics.events import model as K
from forensics.events.model import Event
from forensics.events.phases import PHASE_ORDER
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Hit, Incident, proc_key
from forensics.diagnosis import phase_infer
from forensics.diagnosis.remedies import remediation_for
from forensics.diagnosis.signatures import SignatureSet
from forensics.diagnosis import early_warnings

BENIGN_EXC = frozenset({"KeyboardInterrupt", "SystemExit", "GeneratorExit", "asyncio.CancelledError",
                        "asyncio.exceptions.CancelledError", "CancelledError", "BrokenPipeError"})
_MAX_EVIDENCE = 5


def infer_phase_from_frames(ev: Event) -> str | None:
    """Phase from what the innermost frames were doing (kept for callers; see phase_infer)."""
    return phase_infer.phase_of_traceback(ev)


def record_hits(sset: SignatureSet):  # type: ignore[no-untyped-def]
    """An IncidentBuilder hook that matches signatures as events stream by."""

    def on_event(inc: Incident, ev: Event) -> None:
        outcome.observe(inc, ev)
        kind = ev.kind
        if kind == K.ACCESS or (kind == K.PHASE_MARKER and ev.data.get("marker") == "batch_stats"):
            return
        early_warnings.collect(inc, ev)
        for sig, view in sset.match_event(ev):
            text, line = _hit_text(ev, view)
            hit = Hit(sig, ev, view, inc.phase, inc.ready_line is not None, line, text)
            bucket = inc.failure_hits if sig.kind == "failure" else (
                inc.precursor_hits if sig.kind == "precursor" else inc.wrapper_hits)
            if len(bucket) < 400:
                bucket.append(hit)
            else:
                inc.dropped += 1

    return on_event


def _hit_text(ev: Event, view: int) -> tuple[str, int]:
    if ev.kind == K.TRACEBACK:
        chain = ev.data.get("chain") or ()
        if view < len(chain):
            exc = chain[view]
            return _clip_message(exc.rendered), exc.line or ev.line
        return ev.text, ev.end_line or ev.line
    return ev.text, ev.line


def _died(inc: Incident, after_line: int) -> bool:
    if inc.exit is not None:
        code, status = inc.exit.get("code"), inc.exit.get("status")
        if code in ("killed", "dumped") or (code == "exited" and status not in (0, None)) or inc.exit.get("result") not in (None, "success"):
            if inc.shutdown_line is None or inc.exit.get("line", 0) < inc.shutdown_line:
                return True
    return any(h.line > after_line for h in inc.wrapper_hits)


_REQUEST_FRAMES = re.compile(r"starlette/|fastapi/|uvicorn/protocols/|/entrypoints/openai/serving_|/entrypoints/http_server\.py|aiohttp/web")


def request_level(ev: Event) -> bool:
    """An exception raised while handling one HTTP request (a bad client
    request): the server answers 4xx/5xx and keeps serving."""
    if ev.kind != K.TRACEBACK:
        return False
    carrier = ev.data.get("carrier") or ""
    if "Exception in ASGI application" in carrier:
        return True
    frames = ev.data.get("frames") or ()
    return any(_REQUEST_FRAMES.search(f.file) for f in frames)


def _relevant(inc: Incident, line: int, after_ready: bool, ev: Event | None = None) -> bool:
    """A failure line counts unless it is shutdown noise or a request-level
    error the server survived (it went on serving afterwards)."""
    if inc.shutdown_line is not None and line >= inc.shutdown_line and inc.ready_line is not None:
        return False
    if after_ready and not _died(inc, line):
        if inc.last_activity_line > line or (ev is not None and request_level(ev)):
            return False
    return True


def _fatal_tracebacks(inc: Incident, matched_lines: set[int]) -> list[Event]:
    out = []
    wrapped = {h.event.line for h in inc.wrapper_hits if h.event.kind == K.TRACEBACK}
    for ev, phase, after_ready in inc.tracebacks:
        if ev.line in matched_lines:
            continue
        chain = ev.data.get("chain") or ()
        types = {e.exc_type for e in chain}
        if types and types <= BENIGN_EXC and (after_ready or inc.shutdown_line is not None and ev.line > inc.shutdown_line
                                              or _after_stop_request(inc, ev.line) or _quiet_before(inc, ev.line)):
            continue
        if not _relevant(inc, ev.line, after_ready, ev):
            continue
        if _survived(inc, ev.line) or _progressed_after(inc, ev):
            continue
        if ev.level in ("WARNING", "INFO", "DEBUG"):
            continue  # logged as a warning (logger.warning(..., exc_info=True)): handled, not fatal
        if ev.line in wrapped and outcome.errors_before(inc, ev.line - 1):
            continue  # a death/wrapper exception (RayActorError, EngineDeadError) after an error: the error decides
        out.append(ev)
    return out


def _quiet_before(inc: Incident, line: int) -> bool:
    """Nothing went wrong before ``line``: no error-level line and no strong
    early warning. A KeyboardInterrupt/SystemExit traceback after such a quiet
    start is an operator's stop (SIGTERM, Ctrl-C), not a failure."""
    if any(e.line < line for e in outcome.errors_before(inc, line)):
        return False
    return not any(h.line < line and h.signature.strength == "strong" and h.signature.status != "experimental"
                   for h in inc.precursor_hits)


def _primary_hits(fails: list[Hit], fatal_tbs: list[Event]) -> list[Hit]:
    """Hits that are not a consequence of another process's earlier failure
    (a peer's timeout or closed connection after the first rank died)."""
    firsts = [(h.line, outcome.process_of(h.event)) for h in fails if not outcome.CONSEQUENCE.search(h.text[:2000])]
    firsts += [(t.line, outcome.process_of(t)) for t in fatal_tbs
               if not outcome.CONSEQUENCE.search((t.text or "")[:2000])]
    if not firsts:
        return fails
    out = []
    for h in fails:
        if outcome.CONSEQUENCE.search(h.text[:2000]):
            proc = outcome.process_of(h.event)
            if any(line < h.line and p != proc for line, p in firsts):
                continue
        out.append(h)
    return out or fails


def _is_kernel_assert(h: Hit) -> bool:
    return outcome.proof_class(h.text[:2000]) == "assert"


def _progressed_after(inc: Incident, ev: Event) -> bool:
    """The same process went on to a later start-up phase after printing this
    traceback (and nothing says it died): it was handled, not fatal."""
    if _died(inc, ev.line):
        return False
    seen = inc.progress_by_proc.get(proc_key(ev))
    if seen is None or seen[0] <= (ev.end_line or ev.line):
        return False
    at = inc.phase_at(ev.line)
    return at is not None and seen[1] > PHASE_ORDER.get(at, 99)


def _after_stop_request(inc: Incident, line: int) -> bool:
    return inc.stop_requested_line is not None and line > inc.stop_requested_line


def _survived(inc: Incident, line: int) -> bool:
    """The process printed this and still came up (and did not die later):
    a traceback that was logged and handled, not the cause of a failure."""
    return inc.ready_line is not None and line < inc.ready_line and not _died(inc, line)


def exit_failed(inc: Incident) -> bool:
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


UNKNOWN_THRESHOLD = 0.45
PRECURSOR_BOOST = 0.3


def diagnose_incident(inc: Incident, classifier: Any = None, always_classify: bool = False) -> dict[str, Any]:
    """One process lifetime's diagnosis, in the JSON contract's shape (every key present)."""
    from forensics.report.contract import normalize_incident

    return normalize_incident(_diagnose_incident(inc, classifier, always_classify))


def _diagnose_incident(inc: Incident, classifier: Any = None, always_classify: bool = False) -> dict[str, Any]:
    fails = [h for h in inc.failure_hits if _relevant(inc, h.line, h.after_ready, h.event) and not _survived(inc, h.line)]
    wrappers = [h for h in inc.wrapper_hits if _relevant(inc, h.line, h.after_ready) and not _survived(inc, h.line)
                and not _after_stop_request(inc, h.line)]
    matched_lines = {h.event.line for h in fails}
    fatal_tbs = _fatal_tracebacks(inc, matched_lines)
    # The log ends on error-level lines before the server was ever ready (and
    # nobody asked it to stop): that error is the last thing the process said.
    tail = outcome.ends_in_error(inc)
    if tail is not None and (inc.ready_line is not None or inc.stop_requested_line is not None
                             or inc.shutdown_line is not None):
        tail = None
    failed = bool(fails or fatal_tbs or wrappers or exit_failed(inc) or tail is not None)
    result: dict[str, Any] = {
        "index": inc.index, "verdict": None, "root_cause": None, "confidence": None, "decided_by": None,
        "signature": None, "summary": None, "remediation": None, "phase": None, "evidence": [],
        "early_warnings": [], "candidates": [], "truncated": False,
        "start_line": inc.start_line, "end_line": inc.end_line,
        "start_ts": inc.start_ts.isoformat() if inc.start_ts else None,
        "end_ts": inc.end_ts.isoformat() if inc.end_ts else None,
        "duration_s": inc.duration_s, "time_to_failure_s": None,
        "server": inc.server, "unit": inc.unit, "exit": inc.exit,
        "phases": [s.to_dict() for s in sorted(inc.phases.values(), key=lambda s: PHASE_ORDER[s.phase])],
        "reached_phase": inc.phase,
    }
    if not failed:
        result["verdict"] = _healthy_verdict(inc)
        result["phase"] = inc.phase
        result["summary"] = _healthy_summary(inc, result["verdict"])
        return result

    best: Hit | None = None
    if fails:
        # A peer's timeout after another rank failed is a consequence; a raw
        # kernel assertion never beats the error that names what failed.
        best = max(_primary_hits(fails, fatal_tbs),
                   key=lambda h: (h.signature.priority - (10 if _is_kernel_assert(h) else 0), -h.line))
    # Which line is the failure? the best signature hit, else the first fatal
    # traceback, else the error that the death (or the end of the log) followed.
    if best is not None:
        fail_line, fail_ev = best.line, best.event
    elif fatal_tbs:
        fail_ev = fatal_tbs[0]
        fail_line = fail_ev.line
    elif wrappers or tail is not None:
        at = min(h.line for h in wrappers) if wrappers else inc.end_line
        proof = outcome.best_proof(inc, at, exclude={h.line for h in wrappers})
        if proof is not None:
            fail_ev, fail_line = proof, proof.line
        elif wrappers:
            fail_ev = min(wrappers, key=lambda h: h.line).event
            fail_line = fail_ev.line
        else:
            fail_ev, fail_line = tail, tail.line  # type: ignore[union-attr]
    else:
        fail_ev, fail_line = None, (inc.exit or {}).get("line", inc.end_line)

    truncated = bool(fail_ev is not None and fail_ev.kind == K.TRACEBACK and fail_ev.data.get("truncated")
                     and not (best and best.event.kind != K.TRACEBACK))
    result["truncated"] = truncated
    result["verdict"] = "failed"
    result["phase"] = _failure_phase(inc, fail_line, fail_ev, best)

    rule_label = best.signature.root_cause if best else None
    rule_conf = _rule_confidence(best, fails, truncated) if best else None
    label, conf, decided_by = rule_label, rule_conf, "signature" if best else None
    cands: list[dict[str, Any]] = []
    # The classifier is consulted where signatures are not conclusive (no
    # match, weak match, rival labels, a cut traceback), or always on request.
    needs_clf = best is None or truncated or (rule_conf or 0) < 0.9 or best.signature.strength != "strong"
    clf_answer = None
    if classifier is not None and (needs_clf or always_classify):
        clf_answer = classifier.predict_incident(inc, result["phase"], fail_line)
        if truncated and fail_ev is not None:
            clf_answer = _with_frame_priors(clf_answer, classifier, fail_ev)
        result["classifier"] = {"label": clf_answer["label"], "confidence": clf_answer["confidence"],
                                "candidates": clf_answer["candidates"]}
    predicted = _predicted_by_precursors(inc, fail_line) if best is None else None
    if best is None:
        if clf_answer is not None and predicted is not None:
            # A warning that predicted a label is evidence too: it lifts that label.
            probs = {c["label"]: c["confidence"] for c in clf_answer["candidates"]}
            boosted = {lab: p + (PRECURSOR_BOOST if lab == predicted else 0.0) for lab, p in probs.items()}
            boosted.setdefault(predicted, PRECURSOR_BOOST)
            label = max(boosted, key=lambda k: boosted[k])
            conf = round(min(0.9, boosted[label]), 3)
            if clf_answer["confidence"] < 0.5:
                label = predicted  # the classifier is unsure; the warning is the sharper evidence
            if label == predicted:
                conf = round(max(conf, 0.55), 3)  # as sure as the warning alone (rules-only answer)
            if label != predicted and _warned_at_failing_call(inc, fail_line, fail_ev, predicted):
                # The predicting warning was raised by the very call that then failed
                # (Python's "file:line: UserWarning" names a frame of the failure):
                # it says why that call failed, sharper than what the text resembles.
                label, conf = predicted, round(max(0.55, min(0.85, boosted.get(predicted, 0.0) + 0.3)), 3)
            if label != predicted and label in _precursor_predicts(inc, fail_line, predicted):
                # The warning named this outcome as a consequence of its own
                # cause (e.g. too few GPUs -> the start-up hangs): report the cause.
                label, conf = predicted, round(max(0.55, min(0.85, boosted[label])), 3)
            decided_by = "both"
            cands = clf_answer["candidates"]
        elif clf_answer is not None:
            label, conf, decided_by = clf_answer["label"], clf_answer["confidence"], "classifier"
            cands = clf_answer["candidates"]
        elif predicted is not None:
            label, conf, decided_by = predicted, 0.55, "signature"
        else:
            label, conf, decided_by = "unknown", 0.3, "signature"
    elif clf_answer is not None:
        cands = clf_answer["candidates"]
        if clf_answer["label"] != rule_label:
            decided_by = "both"
            strong = best.signature.strength == "strong" and not truncated
            if strong:
                # The rule stands; the disagreement costs confidence.
                conf = round(max(0.5, (rule_conf or 0.9) - 0.3 * clf_answer["confidence"]), 3)
            elif clf_answer["confidence"] > (rule_conf or 0.0):
                label, conf = clf_answer["label"], round(clf_answer["confidence"] * 0.9, 3)
            else:
                conf = round(max(0.4, (rule_conf or 0.5) - 0.2 * clf_answer["confidence"]), 3)
        else:
            decided_by = "both" if needs_clf else "signature"
            conf = round(min(0.99, max(rule_conf or 0.0, clf_answer["confidence"]) + 0.03), 3)
    if truncated and label != "unknown":
        conf = round(min(conf or 0.5, 0.8), 3)
    if conf is not None and conf < UNKNOWN_THRESHOLD and label != "unknown":
        # Never a confident wrong label: below the threshold say so, with candidates.
        result["candidates"] = cands[:3] or [{"label": label, "confidence": conf}]
        label = "unknown"
    result["root_cause"] = label
    result["confidence"] = conf
    result["decided_by"] = decided_by
    if cands and not result["candidates"]:
        result["candidates"] = cands[:3]
    result["evidence"] = _evidence(best, fails, fail_ev, fail_line, wrappers, inc)
    _add_proofs(inc, result["evidence"], fail_line)
    if best is not None:
        sig = best.signature
        result["signature"] = sig.id
        result["summary"] = sig.summary or f"{sig.title}."
    else:
        result["summary"] = _unknown_summary(fail_ev, truncated) if predicted is None or label != predicted else (
            f"The server failed without a known error message; an earlier warning predicted {predicted}.")
    if best is not None and label == best.signature.root_cause:
        result["remediation"] = best.signature.remediation
    else:
        # The classifier (or a warning) decided: advice from what the failing
        # lines name, a signature of that label, the catalogue, or the label.
        result["remediation"] = remediation_for(label, [e["text"] for e in result["evidence"]],
                                                [*fails, *inc.precursor_hits])
    _mark_consequences(inc, result, fail_ev, fail_line, best, fails, fatal_tbs)
    fail_ts = _ts_of(best.event if best else fail_ev)
    if best is not None and best.event.level in ("WARNING", "INFO"):
        # The cause was only logged as a warning; the process died later, at
        # another error. Show that fatal line too, and the warning as what
        # predicted it.
        later = [h for h in fails if h.line > best.line and h.event.level not in ("WARNING", "INFO")]
        later_tbs = [t for t in fatal_tbs if t.line > best.line]
        fatal: tuple[int, str, Any] | None = None
        fatal_ev: Event | None = None
        if later:
            h = min(later, key=lambda h: h.line)
            fatal, fatal_ev = (h.line, h.text, h.event.ts), h.event
        elif later_tbs:
            t = later_tbs[0]
            chain = t.data.get("chain") or ()
            fatal = ((chain[-1].line or t.line) if chain else t.line,
                     _clip_message(chain[-1].rendered) if chain else t.text, t.ts)
            fatal_ev = t
        if fatal is not None:
            # The process died at the fatal line: that is where start-up was.
            result["phase"] = _failure_phase(inc, fatal[0], fatal_ev, None)
            result["evidence"].insert(0, {"line": fatal[0], "text": fatal[1], "role": "fatal"})
            lead = round((fatal[2] - best.event.ts).total_seconds(), 3) if fatal[2] and best.event.ts else None
            if not any(w["line"] == best.line for w in result["early_warnings"]):
                result["early_warnings"].insert(0, {
                    "line": best.line, "text": best.text, "signature": best.signature.id, "predicts": [label],
                    "lead_seconds": lead, "count": 1})
    if classifier is not None and label not in (None, "unknown") and clf_answer is not None:
        known = {w["line"] for w in result["early_warnings"]}
        for ev, info in classifier.learned_warnings(inc, label, fail_line):
            if ev.line in known:
                continue
            lead = round((fail_ts - ev.ts).total_seconds(), 3) if fail_ts is not None and ev.ts is not None else None
            result["early_warnings"].append({
                "line": ev.line, "text": ev.text, "signature": None, "learned": True, "predicts": [label],
                "lead_seconds": lead, "count": 1, "support": info["support"], "lift": info["lift"]})
        result["early_warnings"].sort(key=lambda w: w["line"])
    result["early_warnings"] = early_warnings.link(inc, label, fail_line, fail_ts, result["evidence"],
                                                   prior=result["early_warnings"], rivals=result["candidates"])
    if fail_ts and inc.start_ts:
        result["time_to_failure_s"] = max(0.0, (fail_ts - inc.start_ts).total_seconds())
    return result


def _precursor_predicts(inc: Incident, fail_line: int, label: str) -> set[str]:
    """Everything the precursors of ``label`` said could follow."""
    out: set[str] = set()
    for h in inc.precursor_hits:
        if h.line < fail_line and h.signature.root_cause == label:
            out.update(h.signature.predicts)
    return out


_WARN_SITE = re.compile(r"(?:^|\s)(/?[\w./-]+\.py):(\d+): \w*Warning: ")


def _warned_at_failing_call(inc: Incident, fail_line: int, fail_ev: Event | None, label: str) -> bool:
    """A strong precursor predicting ``label`` was a Python warning raised at
    a file:line that is one of the failing traceback's frames."""
    if fail_ev is None or fail_ev.kind != K.TRACEBACK:
        return False
    sites = {(f.file, f.lineno) for e in (fail_ev.data.get("chain") or ()) for f in e.frames if f.lineno}
    if not sites:
        return False
    for h in inc.precursor_hits:
        sig = h.signature
        if h.line >= fail_line or label not in sig.predicts or sig.strength != "strong" or sig.status == "experimental":
            continue
        m = _WARN_SITE.search(h.event.text)
        if m and (m.group(1), int(m.group(2))) in sites:
            return True
    return False


def _predicted_by_precursors(inc: Incident, fail_line: int) -> str | None:
    """When no signature knows the failure itself, a strong precursor that
    predicted one label is the best evidence there is."""
    votes: dict[str, int] = {}
    for h in inc.precursor_hits:
        sig = h.signature
        if (h.line < fail_line and sig.strength == "strong" and sig.predicts and sig.status != "experimental"
                and sig.priority >= 40):
            lab = h.signature.root_cause if h.signature.root_cause in h.signature.predicts else h.signature.predicts[0]
            votes[lab] = max(votes.get(lab, 0), h.signature.priority)
    if not votes:
        return None
    return max(votes, key=lambda k: votes[k])


def _clip_message(text: str, limit: int = 600) -> str:
    """Exception text for evidence: the whole message (CUDA and NCCL put the
    telling part on later lines), clipped."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ts_of(ev: Event | None):  # type: ignore[no-untyped-def]
    return ev.ts if ev is not None else None


def _rule_confidence(best: Hit, fails: list[Hit], truncated: bool) -> float:
    sig = best.signature
    conf = 0.95 if sig.strength == "strong" else 0.7
    if sig.priority < 30:
        conf -= 0.15
    rivals = {h.signature.root_cause for h in fails
              if h.signature.root_cause != sig.root_cause and h.signature.priority >= sig.priority - 5}
    if rivals:
        conf -= 0.15
    return round(conf, 3)


def _failure_phase(inc: Incident, line: int, ev: Event | None, best: Hit | None,
                   fallback: str | None = "launch") -> str | None:
    """The phase of the failure: the last marker, corrected by what the
    frames were doing; without a marker, the frames, the signature's hint,
    the message's own words (or the function that prints it), else launch."""
    marker = inc.phase_at(line)
    framed = phase_infer.phase_of_traceback(ev) if ev is not None and ev.kind == K.TRACEBACK else None
    if framed is None:
        framed = _nearby_traceback_phase(inc, ev, line)
    if marker is not None:
        if framed is not None and marker != "shutdown" and (
                framed != "serving" or marker in ("ready", "serving")):
            return framed
        if marker == "ready":
            return "serving"
        if framed is None:
            # Weights loaded and nothing after: the next step is the memory plan.
            nxt = phase_infer.successor_phase(outcome.marker_before(inc, line), marker)
            if nxt is not None:
                return nxt
        return marker
    if framed is not None:
        return framed
    if ev is not None and ev.kind == K.TRACEBACK:
        framed = phase_infer.phase_of_traceback(ev, use_catalogue=True)
        if framed is not None:
            return framed
    if best is not None and best.signature.phase:
        return best.signature.phase
    texted = phase_infer.phase_of_text("\n".join(_texts_near(inc, ev, line, best)))
    if texted is not None:
        return texted
    return fallback


def _with_frame_priors(answer: dict[str, Any], classifier: Any, tb: Event) -> dict[str, Any]:
    """A cut traceback is judged by its frames too: mix the classifier's
    answer with P(label | frame modules and functions) learned from the corpus."""
    prior_of = getattr(classifier, "frame_prior", None)
    frames = list(tb.data.get("frames") or ())
    if prior_of is None or not frames:
        return answer
    from forensics.diagnosis.features import frame_tokens

    prior = prior_of(" ".join(frame_tokens(frames)))
    if not prior:
        return answer
    probs = {c["label"]: c["confidence"] for c in answer["candidates"]}
    labels = set(probs) | set(prior)
    # The cut traceback's own text says little; its frames weigh a little more.
    mixed = {lab: 0.4 * probs.get(lab, 0.0) + 0.6 * prior.get(lab, 0.0) for lab in labels}
    order = sorted(mixed, key=lambda k: -mixed[k])[:3]
    cands = [{"label": lab, "confidence": round(mixed[lab], 3)} for lab in order]
    return {"label": cands[0]["label"], "confidence": cands[0]["confidence"], "candidates": cands,
            "frame_prior": True}


def _texts_near(inc: Incident, ev: Event | None, line: int, best: Hit | None) -> list[str]:
    """The failing message and the error lines printed with it (a runtime's
    multi-line report, the wrapper just after)."""
    out = [best.text] if best is not None else []
    if ev is not None:
        out.append(ev.text)
    out.extend(e.text for e in outcome.errors_before(inc, line + 15) if e.line >= line - 2)
    return out


def _nearby_traceback_phase(inc: Incident, ev: Event | None, line: int) -> str | None:
    """A line that is not a traceback often comes with one of the same process
    just before or after it (the log line, then its stack): its frames say where."""
    if ev is None or ev.kind == K.TRACEBACK and (ev.data.get("frames") or ev.data.get("chain")
                                                and any(e.frames for e in ev.data.get("chain") or ())):
        return None
    proc = outcome.process_of(ev)
    for tb, _phase, _after in inc.tracebacks:
        if tb is not ev and abs(tb.line - line) <= 300 and outcome.process_of(tb) == proc:
            framed = phase_infer.phase_of_traceback(tb)
            if framed is not None:
                return framed
    return None


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
    cause_is_summary = cause is not None and outcome.proof_class(cause["text"]) in ("build", None) and \
        not outcome.is_compiler_error(cause["text"])
    pos = 1 if evidence else 0
    for ev, cls in proofs:
        text = _clip_message(ev.text)
        key = text.strip()
        if cause is not None and cause["text"].strip() == key:
            continue
        for i in range(len(evidence) - 1, 0, -1):  # a supporting copy moves up
            if evidence[i]["text"].strip() == key:
                evidence.pop(i)
        entry = {"line": ev.line, "text": text, "role": "build-error" if cls == "build" else "runtime-error"}
        if cls == "build" and cause_is_summary and outcome.is_compiler_error(ev.text) and pos == 1:
            evidence.insert(0, entry)  # the compiler's own error proves a failed build
        else:
            evidence.insert(pos, entry)
        pos += 1
    # Keep the cap, dropping supporting lines before the cause's proofs.
    while len(evidence) > _MAX_EVIDENCE:
        drop = next((i for i in range(len(evidence) - 1, 0, -1) if evidence[i]["role"] in ("supporting", "fragment")),
                    len(evidence) - 1)
        evidence.pop(drop)


def _mark_consequences(inc: Incident, result: dict[str, Any], fail_ev: Event | None, fail_line: int,
                       best: Hit | None, fails: list[Hit], fatal_tbs: list[Event]) -> None:
    """Multi-rank logs: name the process that failed first, and mark the later
    errors of the other processes (lost peers, timeouts) as consequences."""
    cause = best.event if best is not None else fail_ev
    if cause is None:
        return
    cands: list[tuple[int, str, Event]] = [(h.line, h.text, h.event) for h in fails if h is not best]
    for t in fatal_tbs:
        chain = t.data.get("chain") or ()
        cands.append((t.line, chain[-1].rendered if chain else t.text, t))
    cands.extend((e.line, e.text, e) for e in (inc.outcome.errors if inc.outcome is not None else ()))
    cons = outcome.consequences(inc, cause, fail_line, cands)
    procs = {outcome.process_of(c[2]) for c in cands} | {outcome.process_of(cause)}
    if cons or len(procs) > 1:
        result["failed_first"] = {"process": outcome.describe_process(outcome.process_of(cause)), "line": fail_line}
    result["consequences"] = cons
    cons_lines = {c["line"] for c in cons}
    for e in result["evidence"]:
        if e["line"] in cons_lines and e.get("role") != "cause":
            e["role"] = "consequence"


def _evidence(best: Hit | None, fails: list[Hit], fail_ev: Event | None, fail_line: int,
              wrappers: list[Hit], inc: Incident | None = None) -> list[dict[str, Any]]:
    ev_list: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(line: int, text: str, role: str) -> None:
        key = text.strip()
        if key in seen or len(ev_list) >= _MAX_EVIDENCE:
            return
        seen.add(key)
        ev_list.append({"line": line, "text": text, "role": role})

    if best is not None:
        add(best.line, best.text, "cause")
        for h in sorted(fails, key=lambda h: h.line):
            if h.signature.root_cause == best.signature.root_cause and h is not best:
                add(h.line, h.text, "supporting")
    elif fail_ev is not None:
        if fail_ev.kind == K.TRACEBACK:
            chain = fail_ev.data.get("chain") or ()
            if chain:
                add(chain[-1].line or fail_ev.line, _clip_message(chain[-1].rendered), "cause")
                if len(chain) > 1:
                    add(chain[0].line or fail_ev.line, _clip_message(chain[0].rendered), "root")
            elif inc is not None:
                # A stack without its exception line: the exception often arrives
                # as the next block of the same process ("During handling ...").
                nxt = _continuation(inc, fail_ev)
                if nxt is not None:
                    add(nxt[0], nxt[1], "cause")
            frames = fail_ev.data.get("frames") or ()
            if frames:
                f = frames[-1]
                add(fail_ev.end_line or fail_ev.line, f'File "{f.file}"' + (f", line {f.lineno}, in {f.function}" if f.lineno else " (cut short)"), "last-frame")
            for src in fail_ev.data.get("orphan_source") or ():
                add(fail_ev.line, src, "fragment")
        else:
            add(fail_ev.line, fail_ev.text, "cause")
    for h in wrappers[:1]:
        add(h.line, h.text, "wrapper")
    return ev_list


def _continuation(inc: Incident, tb: Event) -> tuple[int, str] | None:
    end = tb.end_line or tb.line
    for other, _phase, _after in inc.tracebacks:
        if end < other.line <= end + 6 and outcome.process_of(other) == outcome.process_of(tb):
            chain = other.data.get("chain") or ()
            if chain:
                return (chain[-1].line or other.line, _clip_message(chain[-1].rendered))
    return None


def _healthy_verdict(inc: Incident) -> str:
    if inc.ready_line is not None:
        return "ready"
    if inc.stop_requested_line is not None and inc.exit is not None:
        return "no-failure"  # stopped on request before it was ready
    if inc.phase is None:
        return "no-failure"
    if inc.end_ts and inc.last_progress_ts and (inc.end_ts - inc.last_progress_ts).total_seconds() > 900:
        return "stalled"
    return "starting"


def _healthy_summary(inc: Incident, verdict: str) -> str:
    if verdict == "no-failure" and inc.stop_requested_line is not None:
        return f"No failure found; the service was asked to stop during start-up (phase {inc.phase})."
    if verdict == "ready":
        return "The server reached readiness; no failure found."
    if verdict == "stalled":
        return f"No failure printed, but no progress for a long time while in phase {inc.phase}."
    if verdict == "starting":
        return f"No failure found; the log ends while the server is still starting (phase {inc.phase})."
    return "No failure found in this log."


def _unknown_summary(ev: Event | None, truncated: bool) -> str:
    if ev is None:
        return "The process ended with a failure status, but the log does not say why."
    if truncated:
        return "The server failed; the traceback is cut short, so the cause is not certain."
    return "The server failed with an error that no signature knows."
