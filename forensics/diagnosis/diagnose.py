"""Stage 5: an incident -> a diagnosis (label, confidence, evidence, phase,
early warnings, remediation). Signatures decide what they know; wrappers and
carriers never decide; what no signature knows goes to the classifier.

Whether a process died, survived a traceback or is healthy is judged by
``incidents.verdicts``; rules against the classifier is ``arbitrate``, with
every confidence figure named in ``confidence``; the result's keys are
``result``. This module finds the failure line, its phase and evidence."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.incidents import outcome, stops, verdicts
from forensics.incidents.lifetimes import Hit, Incident
from forensics.diagnosis import (arbitrate, evidence, evidence_offered, evidence_restated, evidence_said, failure_phase,
                                 phase_infer, phase_priors, summaries)
from forensics.diagnosis.decision import death, learned
from forensics.diagnosis.remedies import remediation_for
from forensics.diagnosis.signatures import SignatureSet
from forensics.diagnosis import early_warnings
from forensics.diagnosis.result import incident_skeleton, normalize_incident


def infer_phase_from_frames(ev: Event) -> str | None:
    """Phase from what the innermost frames were doing (kept for callers; see phase_infer)."""
    return phase_infer.phase_of_traceback(ev)


def record_hits(sset: SignatureSet):  # type: ignore[no-untyped-def]
    """An IncidentBuilder hook that matches signatures as events stream by."""
    collect = early_warnings.Collector()  # one per builder: start-up warnings cross a boundary that is no exit

    def on_event(inc: Incident, ev: Event) -> None:
        outcome.observe(inc, ev)
        if not matched_kind(ev):
            return
        collect(inc, ev)
        if match_into(sset, inc, ev, inc.phase, inc.ready_line is not None):
            outcome.keep_context(inc, ev)  # what was printed just before a hit (evidence.offered)

    return on_event


def matched_kind(ev: Event) -> bool:
    """Whether signatures and early warnings look at ``ev`` at all (not at
    access lines or batch statistics: the serving bulk; but a report that
    generated nothing is kept: reports of requests running with no tokens
    coming, one after another, are how a stalled engine shows before it dies)."""
    kind = ev.kind
    if kind == kinds.ACCESS:
        return False
    if kind == kinds.PHASE_MARKER and ev.data.get("marker") == "batch_stats":
        return _NO_TOKENS[0] in ev.text or _NO_TOKENS[1] in ev.text
    return True


_NO_TOKENS = ("throughput: 0.0 tokens/s", "(token/s): 0.0")  # vLLM's and SGLang's stats lines


def match_into(sset: SignatureSet, inc: Incident, ev: Event, phase: str | None, after_ready: bool) -> int:
    """Record on ``inc`` the signatures ``ev`` matches, as of ``phase`` and
    readiness (the state the lifetime was in when ``ev`` arrived); how many
    failure or wrapper hits were recorded."""
    recorded = 0
    for sig, view in sset.match_event(ev):
        text, line = _hit_text(ev, view, sig.kind == "failure")
        hit = Hit(sig, ev, view, phase, after_ready, line, text)
        bucket = inc.failure_hits if sig.kind == "failure" else (
            inc.precursor_hits if sig.kind == "precursor" else inc.wrapper_hits)
        if len(bucket) < 400:
            bucket.append(hit)
            recorded += sig.kind != "precursor"
        else:
            inc.dropped += 1
    return recorded


def _hit_text(ev: Event, view: int, failure: bool = True) -> tuple[str, int]:
    if ev.kind == kinds.TRACEBACK:
        chain = ev.data.get("chain") or ()
        if view < len(chain):
            exc = chain[view]
            return evidence.clip_message(exc.rendered), exc.line or ev.line
        # Past the traceback's own views is its carrier, the message printed before
        # "Traceback (most recent call last):": what a cut traceback says failed, when a
        # failure signature matched there (a wrapper's carrier keeps the traceback's text).
        own = len(chain) if chain else max(1, len(ev.data.get("orphan_source") or ()))
        carrier = ev.data.get("carrier")
        if failure and carrier and view >= own:
            return evidence.clip_message(carrier), ev.line
        return ev.text, ev.end_line or ev.line
    return ev.text, ev.line


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


def _deadline_expired(inc: Incident, h: Hit) -> bool:
    """A serving-time watchdog's or health checker's deadline expired (Ray Serve marking a
    replica unhealthy, SGLang's scheduler watchdog, vLLM's engine iteration timeout): the
    process was busy or stuck, so work lines printed after it (an excerpt's stats lines)
    are not proof that it survived; the supervisor acts on it. Not after a shutdown began."""
    sig = h.signature
    return (sig.root_cause == "hang.timeout" and sig.phase == "serving" and sig.kind == "failure"
            and not (inc.shutdown_line is not None and h.line >= inc.shutdown_line))


@dataclass
class _Findings:
    """What the signatures and the lifetime judgements found in one lifetime."""
    fails: list[Hit]
    wrappers: list[Hit]
    fatal_tbs: list[Event]
    tail: Event | None  # the error-level line the log ends on, before readiness
    exit_failed: bool

    @property
    def failed(self) -> bool:
        return bool(self.fails or self.fatal_tbs or self.wrappers or self.exit_failed or self.tail is not None)


def _findings(inc: Incident) -> _Findings:
    fails = [h for h in inc.failure_hits if _ends_service(inc, h) or (
             verdicts.relevant(inc, h.line, h.after_ready, h.event) and not verdicts.survived(inc, h.line)
             and not verdicts.warned_and_went_on(inc, h.event) and not verdicts.dismissed(inc, h.event)
             and not (h.event.kind == kinds.TRACEBACK and verdicts.progressed_after(inc, h.event))
             and not death.clears(h.event))]
    # A death line that is a teardown report or follows one, or a kill before the run's own word that
    # it finished well, is no death of the server (death.clears, death.teardown_bounds).
    wrappers = [h for h in inc.wrapper_hits
                if verdicts.relevant(inc, h.line, h.after_ready) and not verdicts.survived(inc, h.line)
                and not stops.after_stop_request(inc, h.line) and not stops.echoes_a_stop(inc, h.line)
                and not stops.killed_while_up(inc, h.event) and not death.clears(h.event)]
    if wrappers:
        bounds = death.teardown_bounds(inc)
        wrappers = [h for h in wrappers if not death.torn_down(bounds, h.line)]
    deaths = [h.event for h in wrappers]
    fatal_tbs = [t for t in verdicts.fatal_tracebacks(inc, {h.event.line for h in fails})
                 if not outcome.crash_report_stack(t, deaths)]
    tail = _ends_in_error(inc)
    if tail is not None and death.clears(tail):
        tail = None  # a teardown report or a side service's failure is not the server's last word
    exit_failed = verdicts.exit_failed(inc)
    if not (fails or fatal_tbs or wrappers or exit_failed or tail is not None):
        # Only where nothing else ended it: a later failure is what the deadline warned of.
        fails = [h for h in inc.failure_hits if _deadline_expired(inc, h)]
    if not (fails or fatal_tbs or wrappers or exit_failed or tail is not None):
        tail = death.died_at(inc)  # nothing a rule knows says it died: the learned detector reads its end
        if tail is not None and stops.echoes_a_stop(inc, tail.line):
            tail = None  # what it read is a parent's report of an operator's stop
    return _Findings(fails, wrappers, fatal_tbs, tail, exit_failed)


def _ends_service(inc: Incident, hit: Hit) -> bool:
    """A failure its signature says fails the deployment's service while the processes stay up and
    answer (``ends_service``: a PD deployment's KV transfer on a request): it holds after readiness and
    with answers after it, not after the operator asked the server to stop or it shut down. Before a
    readiness line it holds only where no start-up marker came before it (an excerpt that begins
    mid-serving): printed during a start-up the server went on past, it is a start-up error it survived."""
    if not hit.signature.ends_service or stops.after_stop_request(inc, hit.line):
        return False
    if verdicts.survived(inc, hit.line) and inc.phase_at(hit.line) not in (None, "ready", "serving"):
        return False
    return inc.shutdown_line is None or hit.line < inc.shutdown_line


def _ends_in_error(inc: Incident) -> Event | None:
    """The log ends on error-level lines before the server was ever ready (and nobody asked it to
    stop): that error is the last thing the process said. A shutdown it logged right after such a
    line is the program cleaning up before it exits on that error (llama.cpp's server: 'E ... couldn't
    bind HTTP server socket', 'I ... cleaning up before exit...', 'E ... exiting due to HTTP server
    error'), not an operator's stop, which comes after quiet lines. So is an error that ends the log
    after the shutdown: a program that was never ready, cleaned up, and then names the error it exits
    on as its last word (Triton's 'error: creating server: Internal - failed to load all models' after
    it unloaded its models; vLLM's 'Got fatal signal from worker processes, shutting down' after its
    executor shut down). An operator's stop ends on the stop's own lines, not on an error."""
    tail = outcome.ends_in_error(inc)
    if tail is None or inc.ready_line is not None or inc.stop_requested_line is not None \
            or stops.echoes_a_stop(inc, tail.line):
        return None
    if inc.shutdown_line is None or tail.line > inc.shutdown_line or death.cleanup_of_a_failure(inc):
        return tail
    return None


def _healthy_phase(inc: Incident, verdict: str) -> str | None:
    """The last phase a lifetime without a failure reached. Killed from outside while up, it is
    where it was at the kill (what the dying processes print after it, a leaked process group's
    warning, is no stop). Starting with no marker at all: launch."""
    killed = [h.line for h in inc.wrapper_hits if stops.killed_while_up(inc, h.event)]
    if killed:
        return inc.phase_at(killed[0]) or inc.reached()
    reached = inc.reached()
    if reached is None and inc.shutdown_line is not None:
        # No step before the stop at all: an excerpt that begins at the operator's stop is the stop.
        return "shutdown"
    if reached is None and verdict == "starting":
        return "launch"  # it printed lines and no step past launch (healthy_verdict): it is launching
    return reached


def lifetime_failed(inc: Incident) -> bool:
    """Whether ``diagnose_incident`` would call this lifetime failed, without
    diagnosing it (a text report diagnoses in full only what it shows)."""
    return _findings(inc).failed


def diagnose_incident(inc: Incident, classifier: Any = None, always_classify: bool = False) -> dict[str, Any]:
    """One process lifetime's diagnosis, in the JSON contract's shape (every key present)."""
    return normalize_incident(_diagnose_incident(inc, classifier, always_classify))


def _diagnose_incident(inc: Incident, classifier: Any = None, always_classify: bool = False) -> dict[str, Any]:
    found = _findings(inc)
    result = incident_skeleton(inc)
    if not found.failed:
        result["verdict"] = verdicts.healthy_verdict(inc)
        result["phase"] = _healthy_phase(inc, result["verdict"])
        if verdicts.answered_requests(inc):
            # a request handled (its handler's traceback) is serving (taxonomy), readiness line or not
            result["phase"] = result["reached_phase"] = "serving"
        result["summary"] = summaries.healthy_summary(inc, result["verdict"], result["phase"])
        return result
    best = _best_hit(found)
    fail_line, fail_ev = _failure_point(inc, found, best)
    truncated = bool(fail_ev is not None and fail_ev.kind == kinds.TRACEBACK and fail_ev.data.get("truncated")
                     and not (best and best.event.kind != kinds.TRACEBACK))
    result["truncated"] = truncated
    result["verdict"] = "failed"
    near = failure_phase.texts_near(inc, fail_ev, fail_line, best)
    startup = phase_priors.startup_failed(near)
    phase = failure_phase.marked_phase(inc, fail_line, fail_ev, best, startup)
    result["phase"] = phase or "launch"  # what the classifier sees; refined by the label below
    rule_conf = arbitrate.rule_confidence(best, found.fails, truncated) if best else None
    clf_answer = None
    if classifier is not None and (arbitrate.needs_classifier(best, truncated, rule_conf) or always_classify):
        clf_answer = arbitrate.consult(classifier, inc, result["phase"], fail_line, fail_ev, truncated)
        result["classifier"] = {k: clf_answer[k] for k in ("label", "confidence", "candidates", "jit_site") if k in clf_answer}
    predicted = arbitrate.predicted_by_precursors(inc, fail_line) if best is None else None
    decision = arbitrate.decide(inc, best, truncated, rule_conf, clf_answer, predicted, fail_line, fail_ev)
    result["evidence"], offered = _evidence(inc, best, found, fail_ev, fail_line)
    _mark_consequences(inc, result, fail_ev, fail_line, best, found.fails, found.fatal_tbs)
    if classifier is not None:
        decision = learned.decide(learned.inputs_of(best, found.fails, rule_conf, truncated, clf_answer, predicted,
                                                    fail_ev, found.wrappers, found.tail, found.exit_failed,
                                                    inc, fail_line, near, learned.lead_of(result["evidence"], offered),
                                                    learned.evidence_texts(result["evidence"], offered)),
                                  decision, arbitrate.needs_classifier(best, truncated, rule_conf), inc)
    label = decision.label
    if phase is None:
        # Nothing in the excerpt says where: where failures of this kind happen.
        result["phase"] = failure_phase.unmarked_phase(inc, fail_line, decision.phase_label or label, startup, near)
    result["root_cause"] = label
    result["confidence"] = decision.confidence
    result["decided_by"] = decision.decided_by
    result["candidates"] = decision.candidates
    _explain(result, inc, best, found.fails, fail_ev, truncated, predicted)
    fail_ts = _ts_of(best.event if best else fail_ev)
    if best is not None and best.event.level in ("WARNING", "INFO"):
        _fatal_after_warning(inc, result, best, found, label)
    if classifier is not None and label not in (None, "unknown") and clf_answer is not None:
        _add_learned_warnings(result, inc, classifier, label, fail_line, fail_ts)
    result["early_warnings"] = early_warnings.link(inc, label, fail_line, fail_ts, result["evidence"],
                                                   prior=result["early_warnings"], rivals=result["candidates"])
    result["evidence"] = _ranked_evidence(result, offered, inc, classifier)
    if classifier is not None and learned.phase_wanted():
        result["phase"] = learned.decide_phase(
            learned.phase_inputs(result["phase"], inc, fail_line, fail_ev, best, label, startup, truncated, near, phase),
            result["phase"], inc)
    if fail_ts and inc.start_ts:
        result["time_to_failure_s"] = max(0.0, (fail_ts - inc.start_ts).total_seconds())
    return result


def _ranked_evidence(result: dict[str, Any], offered: list[dict[str, Any]], inc: Incident,
                     classifier: Any) -> list[dict[str, Any]]:
    """The listed and offered lines in the learned ranker's order (offered ones it did not put first
    go), the first at the first copy of its message (an early warning on that copy goes)."""
    out = evidence_offered.settle(learned.rank_evidence(evidence_offered.wrapped_first(
        result["evidence"] + offered), inc)) if classifier is not None else result["evidence"]
    evidence_said.echo_gives_way(inc, out)
    result["early_warnings"] = evidence_said.earliest_copy(inc, out, result["early_warnings"])
    return out


def _evidence(inc: Incident, best: Hit | None, found: _Findings, fail_ev: Event | None,
              fail_line: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The evidence the rules list, and the lines near it they did not: the error a death line
    followed goes first, a first line whose detail follows gets it (before the early warnings
    are linked, which leave the evidence's lines out); the others are offered to the learned
    ranker, and those it does not put first go (``evidence_offered.settle``)."""
    listed = evidence.assemble(best, found.fails, fail_ev, fail_line, found.wrappers, inc)
    evidence_offered.explained_first(inc, listed)
    offered = evidence_offered.offered(inc, listed, found.fatal_tbs)
    evidence_offered.death_gives_way(listed, offered)
    evidence_offered.frame_gives_way(listed, offered, inc)
    evidence_restated.own_message_joined(inc, listed)
    evidence_restated.reason_first(inc, listed)
    evidence_restated.exception_over_restatement(listed)
    evidence_restated.nccl_detail_first(inc, listed)
    evidence_restated.device_lost_gives_way(listed)
    evidence_restated.kernel_assert_first(listed, offered)
    evidence_restated.child_error_first(listed, offered)
    evidence.pointed_to_first(inc, listed)  # a restatement promoted first gives way to its reason in turn
    evidence_offered.detail_joined(inc, listed)
    return listed, offered


def _best_hit(found: _Findings) -> Hit | None:
    """The signature hit that names the failure: a peer's timeout after another
    rank failed is a consequence; a raw kernel assertion never beats the error
    that names what failed."""
    if not found.fails:
        return None
    return max(_primary_hits(found.fails, found.fatal_tbs),
               key=lambda h: (h.signature.priority - (10 if _is_kernel_assert(h) else 0), -h.line))


def _failure_point(inc: Incident, found: _Findings, best: Hit | None) -> tuple[int, Event | None]:
    """Which line is the failure? the best signature hit, else the first fatal
    traceback, else the error that the death (or the end of the log) followed."""
    if best is not None:
        return best.line, best.event
    if found.fatal_tbs:
        tb = _unwrapped(found.fatal_tbs, found.wrappers)
        return tb.line, tb
    wrappers = found.wrappers
    if wrappers or found.tail is not None:
        at = min(h.line for h in wrappers) if wrappers else inc.end_line
        proof = outcome.best_proof(inc, at, exclude={h.line for h in wrappers})
        if proof is not None:
            return proof.line, proof
        if wrappers:
            ev = min(wrappers, key=lambda h: h.line).event
            said = outcome.own_message(inc, ev)
            return (said.line, said) if said is not None else (ev.line, ev)
        return found.tail.line, found.tail  # type: ignore[union-attr]
    return (inc.exit or {}).get("line", inc.end_line), None


def _unwrapped(fatal_tbs: list[Event], wrappers: list[Hit]) -> Event:
    """The first fatal traceback, unless it ends in a wrapper that quotes the message of a
    later one ("Exception: Capture cuda graph failed: shape mismatch ..." printed before the
    "RuntimeError: shape mismatch ..." it wraps): then the wrapped one."""
    first = fatal_tbs[0]
    chain = first.data.get("chain") or ()
    if not chain or not any(h.event is first and h.view == len(chain) - 1 for h in wrappers):
        return first
    said = chain[-1].rendered
    for tb in fatal_tbs[1:]:
        inner = tb.data.get("chain") or ()
        msg = (inner[-1].exc_message or "").strip() if inner else ""
        if len(msg) >= 20 and msg[:200] in said:
            return tb
    return first


def _explain(result: dict[str, Any], inc: Incident, best: Hit | None, fails: list[Hit], fail_ev: Event | None,
             truncated: bool, predicted: str | None) -> None:
    """The summary, signature id and remediation of a failure."""
    label = result["root_cause"]
    if best is not None:
        sig = best.signature
        result["signature"] = sig.id
        result["summary"] = sig.summary or f"{sig.title}."
    else:
        site = (result.get("classifier") or {}).get("jit_site")
        result["summary"] = summaries.unknown_summary(fail_ev, truncated, site) if predicted is None or label != predicted else (
            f"The server failed without a known error message; an earlier warning predicted {predicted}.")
    if best is not None and label == best.signature.root_cause:
        result["remediation"] = best.signature.remediation
    else:
        # The classifier (or a warning) decided: advice from what the failing
        # lines name, a signature of that label, the catalogue, or the label.
        result["remediation"] = remediation_for(label, [e["text"] for e in result["evidence"]],
                                                [*fails, *inc.precursor_hits])


def _fatal_after_warning(inc: Incident, result: dict[str, Any], best: Hit, found: _Findings,
                         label: str | None) -> None:
    """The cause was only logged as a warning; the process died later, at
    another error. Show that fatal line too, and the warning as what predicted it."""
    if outcome.is_compiler_error(best.text):
        return  # a compiler's own error printed on a line a warning began (no newline between): no warning
    later = [h for h in found.fails if h.line > best.line and h.event.level not in ("WARNING", "INFO")]
    later_tbs = [t for t in found.fatal_tbs if t.line > best.line]
    fatal: tuple[int, str, Any] | None = None
    fatal_ev: Event | None = None
    if later:
        h = min(later, key=lambda h: h.line)
        fatal, fatal_ev = (h.line, h.text, h.event.ts), h.event
    elif later_tbs:
        t = later_tbs[0]
        chain = t.data.get("chain") or ()
        fatal = ((chain[-1].line or t.line) if chain else t.line,
                 evidence.clip_message(chain[-1].rendered) if chain else t.text, t.ts)
        fatal_ev = t
    if fatal is None:
        return
    # The process died at the fatal line: that is where start-up was.
    result["phase"] = failure_phase.failure_phase(inc, fatal[0], fatal_ev, None)
    result["evidence"].insert(0, {"line": fatal[0], "text": fatal[1], "role": "fatal"})
    lead = early_warnings.lead_seconds(fatal[2], best.event.ts)
    if not any(w["line"] == best.line for w in result["early_warnings"]):
        result["early_warnings"].insert(0, {
            "line": best.line, "text": best.text, "signature": best.signature.id, "predicts": [label],
            "lead_seconds": lead, "count": 1})


def _add_learned_warnings(result: dict[str, Any], inc: Incident, classifier: Any, label: str, fail_line: int,
                          fail_ts: Any) -> None:
    """Warning lines the classifier learned to precede ``label``."""
    known = {w["line"] for w in result["early_warnings"]}
    for ev, info in classifier.learned_warnings(inc, label, fail_line):
        if ev.line in known:
            continue
        lead = early_warnings.lead_seconds(fail_ts, ev.ts)
        result["early_warnings"].append({
            "line": ev.line, "text": ev.text, "signature": None, "learned": True, "predicts": [label],
            "lead_seconds": lead, "count": 1, "support": info["support"], "lift": info["lift"]})
    result["early_warnings"].sort(key=lambda w: w["line"])


def _ts_of(ev: Event | None):  # type: ignore[no-untyped-def]
    return ev.ts if ev is not None else None


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
