"""Retrospective linking (``classify``): the early warnings of a failed incident."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Iterator

from forensics.diagnosis.early_warnings.baseline import Baseline, baseline
from forensics.diagnosis.early_warnings.learned import learned_scores, listing_model, record
from forensics.diagnosis.early_warnings.candidates import (
    _FAST_KEY, MAX_HANDLED, Candidate, Notes, is_noise_after_the_fact, template, text_level)
from forensics.diagnosis.early_warnings.context import matching
from forensics.diagnosis.early_warnings.resources import _START_GPU
from forensics.diagnosis.early_warnings.scoring import (
    BEST_FLOOR, FEW, LIST_THRESHOLD, MAX_LISTED, MAX_STRONG, MORE_LISTED, SPECIFIC, STRONG, WARNED_BAR, WARNED_LEVELS,
    Failure, _shared, failure_context, score_candidate, worth_reading)
from forensics.diagnosis.early_warnings.subjects import subjects
from forensics.diagnosis.early_warnings.vocab import SURVIVED_RE, UNNAMED_ARCH_FAILURE, _lazy
from forensics.events import types as kinds
from forensics.events.textmemo import memo_by_text
from forensics.events.types import Event

_CALL_SITE = _lazy(r"[\w.-]+\.(?:py|cc|cpp|cu|h|c):\d+\]")


def _call_site(ev: Event) -> str | None:
    if ev.logger and ":" in ev.logger:
        return ev.logger
    return _call_site_in(ev.text[:200])


@memo_by_text
def _call_site_in(head: str) -> str | None:
    """The ``file.py:123]`` a line names (a crash loop links the same lines every lifetime)."""
    m = _CALL_SITE.search(head)
    return m.group(0) if m else None


@memo_by_text
def _seen_key(text: str) -> str:
    """A candidate's key for counting repeats: digits masked, except where the
    line names GPUs (GPU indices matter to arithmetic)."""
    return text if _START_GPU.search(text) else _FAST_KEY.sub("N", text)


# A level in brackets after a tool's own tag ("[NVSHARE][WARN]: ..."): read only here, where a
# line the process survived is told from the one it died at (as a candidate's level it would make
# every bracketed tag of every tool a warning).
_BRACKETED_WARNING = _lazy(r"\[WARN(?:ING)?\]")
_TEXT_STAMP = _lazy(r"\b[WEIF]\d{4} \d\d:\d\d:\d\d\.\d+")


def record_key(ev: Event) -> tuple | None:
    """One logging call printed many lines (a compiler dump through glog, a
    multi-line vLLM error): the same call site at the same time. None when the
    line names no call site."""
    site = _call_site(ev)
    if site is None:
        return None
    stamp = _TEXT_STAMP.search(ev.text[:80])
    return (site, ev.ts, stamp.group(0) if stamp else None, ev.pid, ev.rank, ev.level)


CHAINED = 4  # lines between a traceback and the next when Python chains them ("During handling of ...")


def _handled_tracebacks(inc: Any, fail: Failure, death: int = 0) -> Iterator[Candidate]:
    """Tracebacks before the failure that the process survived: warnings too
    (one per distinct message, the latest few: a serving log can hold dozens
    of request errors). After the first evidence line, only those that say
    the program went on (a handled error that fell back), before it died."""
    latest: dict[str, tuple[Event, Any]] = {}
    tbs = getattr(inc, "tracebacks", ())
    starts = sorted(ev.line for ev, _p, _a in tbs)
    for ev, _phase, _after in tbs:
        end = ev.end_line or ev.line
        chain = ev.data.get("chain") or ()
        if not chain or any(end < s <= end + CHAINED for s in starts) \
                and not SURVIVED_RE.search(chain[-1].rendered[:1000]):
            continue  # (another follows at once, "During handling of the above exception": one report, unless it went on)
        if (end >= fail.line or ev.line == fail.line) and (end >= death
                                                           or not SURVIVED_RE.search(chain[-1].rendered[:1000])):
            continue
        key = _FAST_KEY.sub("N", chain[-1].rendered[:160])
        latest.pop(key, None)
        latest[key] = (ev, chain[-1])
    for ev, exc in list(latest.values())[-MAX_HANDLED:]:
        view = Event(kinds.LOG, exc.line or ev.line, exc.rendered[:600], ev.ts, ev.host, ev.ident, ev.pid, ev.rank,
                     ev.level, ev.logger)
        yield Candidate(view, "TRACEBACK")


def link(inc: Any, label: str | None, fail_line: int, fail_ts: Any, evidence: Iterable[dict[str, Any]],
         use_signatures: bool = True, base: Baseline | None = None,
         prior: list[dict[str, Any]] | None = None,
         rivals: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The early warnings of a failed incident, in line order: the ~3
    strongest, more only when they are strong. ``prior``: warnings the
    diagnosis already named (kept, completed with the same fields).
    When the cause was only logged as a warning and the process died at a
    later ``fatal`` line, that line is the failure and the warning a candidate."""
    base = base or baseline()
    fail_line, evidence = _fatal_failure(fail_line, list(evidence))
    fail = failure_context(inc, label, fail_line, fail_ts, evidence)
    fail.rivals = tuple(c["label"] for c in rivals if c.get("label") not in (None, "unknown"))[:3]
    notes: Notes | None = getattr(inc, "ew_notes", None)
    if notes is not None:
        _stated_arch(fail, notes.facts.get("context", frozenset()))
    if notes is not None:
        notes.failure = (label, fail_line, fail_ts, evidence, list(rivals))
    survivors, death = survived_evidence(evidence, fail_line)
    linker = _Linker(inc, label, fail, base, _evidence_lines(inc, evidence) - set(survivors), use_signatures,
                     dict(notes.facts) if notes is not None else {}, survivors)
    linker.death = death
    linker.gather(notes)
    _few_bonus(linker.scored)
    record(linker.scored, label)
    model = listing_model()
    if model is not None:
        learned_scores(linker.scored, label, model)
    out = _rank(linker.scored, model.threshold if model is not None else None)
    lines = {w["line"] for w in out}
    for p in prior or ():
        if p["line"] not in lines:
            out.append(_complete_prior(p, linker.scored.get(p["line"]), label))
    return sorted(out, key=lambda w: w["line"])


def _stated_arch(fail: Failure, context: frozenset[str]) -> None:
    """A failure about an architecture it does not name is about the one the start-up stated
    (``arch:blackwell`` from the GPU's name or capability): a warning naming that GPU's SM
    version shares it."""
    if not any(s.startswith("arch:") for s in fail.subjects) and UNNAMED_ARCH_FAILURE.search(fail.text[:2000]):
        stated = {t for t in context if t.startswith("arch:")}
        if stated:
            fail.subjects = fail.subjects | stated


def _fatal_failure(fail_line: int, evidence: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    """The process died at a later ``fatal`` evidence line: that line is the
    failure, and only evidence from it on speaks for the failure."""
    fatal = [e for e in evidence if e.get("role") == "fatal" and e.get("line") is not None]
    if fatal:
        fail_line = max(fail_line, max(int(e["line"]) for e in fatal))
        evidence = [e for e in evidence if e.get("role") == "fatal"] + [
            e for e in evidence if e.get("role") != "fatal" and (e.get("line") or 0) >= fail_line]
    return fail_line, evidence


RIVAL_SHARE = 0.6  # of a precursor's prior, when it predicts one of the failure's candidate labels
DISAGREEING = 2.0  # a strong, unfamiliar precursor that predicts another label than the failure's
CATCH_ALL_LITERAL = 12  # a signature whose text is this short names a kind of line ("NCCL WARN"), not a message


@lru_cache(maxsize=256)
def catch_all(sg: Any) -> bool:
    """A precursor that matches a level marker, not a message: every text it
    requires is short (``NCCL WARN``)."""
    from forensics.diagnosis.matcher import required_literals

    lits = [required_literals(p.pattern) for c in sg.conditions for _f, p in c.patterns]
    return bool(lits) and all(ls is not None and max((len(x) for x in ls), default=0) <= CATCH_ALL_LITERAL
                              for ls in lits)


def survived(text: str, level: bool = False) -> str | None:
    """Why the program did not die at this line: the wording it printed to go
    on (falling back, retrying, continuing), or (``level``) a warning level.
    None if it may have died there."""
    m = SURVIVED_RE.search(text[:1000])
    if m is not None:
        return f"the program went on after it ({m.group(0).lower()!r}), then failed"
    if level and (text_level(Event(kinds.LOG, 0, text.split("\n", 1)[0])) == "WARNING"
                  or _BRACKETED_WARNING.search(text[:80])):
        return "logged as a warning before the process failed"
    return None


def survived_evidence(evidence: list[dict[str, Any]], fail_line: int) -> tuple[dict[int, str], int]:
    """Evidence lines the process survived -- before the line where it died,
    worded as going on, or logged as a warning before the failure's first
    line -- with why; and that last line. Such a line warned before it became
    evidence: an early warning too."""
    lines = [int(e["line"]) for e in evidence if e.get("line") is not None]
    death = max(lines, default=0)
    out: dict[int, str] = {}
    for e in evidence:
        line = e.get("line")
        if line is None or int(line) >= death or int(line) in out:
            continue
        # (the failure's own first line too, when the log wrote it as a warning and the process
        # died at a later evidence line: "[NVSHARE][WARN]: ... CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")
        why = survived(str(e.get("text", "")), level=int(line) <= fail_line)
        if why is not None:
            out[int(line)] = why
    return out, death


def _evidence_lines(inc: Any, evidence: list[dict[str, Any]]) -> set[Any]:
    """The evidence lines are the failure itself, except a supporting one that a
    precursor signature also names (it warned before it became evidence)."""
    precursor_lines = {h.line for h in getattr(inc, "precursor_hits", ())}
    ev_lines = {e.get("line") for e in evidence if e.get("line") not in precursor_lines
                or e.get("role") != "supporting"}
    ev_lines |= {h.line for h in getattr(inc, "wrapper_hits", ())}  # "EngineCore failed to start": the failure speaking
    return ev_lines


class _Linker:
    """The candidates of one failure, scored once each (repeats counted)."""

    def __init__(self, inc: Any, label: str | None, fail: Failure, base: Baseline, ev_lines: set[Any],
                 use_signatures: bool, facts: dict[str, Any], survivors: dict[int, str] | None = None) -> None:
        self.inc, self.label, self.fail, self.base, self.ev_lines, self.facts = inc, label, fail, base, ev_lines, facts
        self.server = getattr(inc, "server", None)
        self.survivors: dict[int, str] = survivors or {}  # evidence lines the process went on after, with why
        self.sig_by_line: dict[int, Any] = {}
        if use_signatures:
            for h in getattr(inc, "precursor_hits", ()):
                if (h.line < fail.line or h.line in self.survivors) and h.line not in self.sig_by_line:
                    self.sig_by_line[h.line] = h
        self.scored: dict[int, dict[str, Any]] = {}
        self.seen_text: dict[str, int] = {}
        self.death = fail.line  # the last evidence line: lines the process survived before it are candidates

    def gather(self, notes: Notes | None) -> None:
        """Collected lines, handled tracebacks, then precursor lines the
        collector did not keep (once per signature)."""
        if notes is not None:
            records: set[tuple] = set()
            for cand in sorted(notes.candidates(), key=lambda c: c.event.line):
                key = record_key(cand.event)
                if key is not None and (key[1] is not None or key[2] is not None):
                    if key in records:
                        continue  # a multi-line message logged line by line: its first line speaks for it
                    records.add(key)
                self.consider(cand)
        for cand in _handled_tracebacks(self.inc, self.fail, self.death):
            self.consider(cand)
        seen_sigs: set[str] = set()
        for _line, hit in sorted(self.sig_by_line.items()):
            if hit.signature.id in seen_sigs:
                continue
            seen_sigs.add(hit.signature.id)
            self.consider(Candidate(Event(kinds.LOG, hit.line, hit.text, hit.event.ts, level=hit.event.level),
                                    text_level(hit.event)))

    def _prior(self, sg: Any, subs: frozenset[str]) -> float:
        """What a precursor signature that predicts this label adds. A
        weak one is a weaker prior; a catch-all one (any NCCL WARN) weaker
        still when the line shares nothing specific with the failure (NUMA
        balancing, iommu advice: start-up chatter of the same library)."""
        if sg.strength == "strong" and sg.status != "experimental" and sg.priority >= 40:
            return 5.0
        if catch_all(sg) and _shared(self.fail, subs, self.base)[0] < SPECIFIC:
            return 1.5
        return 3.0

    def _disagreeing(self, sg: Any, subs: frozenset[str], text: str, reasons: list[str]) -> float:
        """What a precursor that predicts another label adds, when healthy start-ups do
        not print its line and it names a message (not a kind of line, ``NCCL WARN``).
        One of the failure's candidate labels: that label's prior, discounted. A strong
        one: still a warning of this failure (the label may be the wrong one; the line
        says what it predicts)."""
        if catch_all(sg) or self.base.familiar(text):
            return 0.5  # a kind of line, or one healthy start-ups print: no news about another label
        rival = next((r for r in self.fail.rivals if r != self.label and r in sg.predicts), None)
        if rival is not None:
            reasons.insert(0, f"precursor {sg.id} predicts {rival}, a candidate for this failure")
            return RIVAL_SHARE * self._prior(sg, subs)
        if self._prior(sg, subs) >= 5.0:
            reasons.insert(0, f"precursor {sg.id} predicts {', '.join(sg.predicts[:2])}")
            return DISAGREEING
        return 0.5

    def consider(self, cand: Candidate) -> None:
        ev = cand.event
        if ev.line in self.ev_lines or is_noise_after_the_fact(ev.text) and ev.line not in self.sig_by_line:
            return  # (a line a precursor names is no noise, whatever it looks like: a warning's source line)
        went_on = self.survivors.get(ev.line)
        if ev.line >= self.fail.line:
            # after the first evidence line: only what the process survived on its way to dying
            if ev.line >= self.death or (went_on is None and (went_on := survived(ev.text)) is None):
                return
        text = ev.text.strip()[:300]
        key = _seen_key(text)
        if key in self.seen_text:
            self.scored[self.seen_text[key]]["count"] += cand.count
            return
        label = self.label
        hit = self.sig_by_line.pop(ev.line, None)
        if hit is not None and not _in_context(hit.signature, self.facts):
            hit = None  # in the context healthy runs print it in: a line like any other, no prior
        foretold = hit is not None and label in hit.signature.predicts
        s, reasons, subs = score_candidate(cand, self.fail, self.base, self.facts, self.server, foretold)
        if went_on is not None and (ev.line >= self.fail.line or ev.line in self.survivors):
            reasons.insert(0, went_on)
        sig = None
        predicts: list[str] = []
        if hit is not None:
            sig = hit.signature.id
            predicts = list(hit.signature.predicts)
            if label in hit.signature.predicts:
                s += self._prior(hit.signature, subs)
                reasons.insert(0, f"precursor {sig} predicts {label}")
            else:
                s += self._disagreeing(hit.signature, subs, ev.text, reasons)
        rec = {"line": ev.line, "text": ev.text if len(ev.text) <= 600 else ev.text[:599] + "…",
               "why": "; ".join(reasons) or "reads as a warning", "subjects": sorted(subs)[:12],
               "score": round(s, 2), "lead_seconds": lead_seconds(self.fail.ts, ev.ts), "signature": sig,
               "count": cand.count}
        if predicts:
            rec["predicts"] = predicts
        rec["_level"] = cand.level
        rec["_reads"] = worth_reading(text, cand.level, self.fail)
        self.scored[ev.line] = rec
        self.seen_text[key] = ev.line


def _in_context(sig: Any, facts: dict[str, Any]) -> bool:
    """A precursor printed in the only context healthy runs print it in (``quiet_when``, and none
    of its ``live_when``) foretells nothing there, as ``watch`` keeps it quiet there: transformers'
    max-length reminder where the config states rotary positions. Where the start-up stated
    neither, the signature's prediction stands."""
    have = facts.get("context", frozenset())
    return not (sig.quiet_when and not matching(sig.live_when, have) and matching(sig.quiet_when, have))


def _few_bonus(scored: dict[int, dict[str, Any]]) -> None:
    """A short excerpt with one or two warnings before the failure: what a
    person reads first, so they need less to be listed."""
    few = {template(w["text"]) for w in scored.values() if w.get("_level") in ("WARNING", "ERROR", "TRACEBACK")}
    if 0 < len(few) <= FEW:
        for w in scored.values():
            w["score"] = round(w["score"] + 0.4, 2)
            if w["why"] in ("reads as a warning", "not printed by healthy start-ups"):
                w["why"] = "one of the few warnings before the failure"


def _rank(scored: dict[int, dict[str, Any]], learned_bar: float | None = None, bar: float | None = None,
          floor: float | None = None, warned: float | None = None) -> list[dict[str, Any]]:
    """The strongest ~3, one per message template (the strongest alone from ``BEST_FLOOR`` where none
    is at the bar; a line its program printed as a warning, an error or a traceback it went on after
    from ``WARNED_BAR``); more only when strong. With ``learned_bar`` the learned listing decides
    (``learned_p`` at or above it). ``bar``, ``floor`` and ``warned``: hand-set ones to try instead
    of the shipped ones (``forensics.lab.ew_bar`` chooses them)."""
    bar = LIST_THRESHOLD if bar is None else bar
    floor = BEST_FLOOR if floor is None else floor
    warned = WARNED_BAR if warned is None else warned
    ranked = []
    by_template: dict[str, dict[str, Any]] = {}
    order = (lambda w: (-w["learned_p"], w["line"])) if learned_bar is not None else (lambda w: (-w["score"], w["line"]))
    for w in sorted(scored.values(), key=order):
        t = template(w["text"])
        if t in by_template:  # the same message again (other numbers, ranks): the strongest one speaks
            by_template[t]["count"] += w["count"]
            continue
        by_template[t] = w
        ranked.append(w)
    if learned_bar is not None:
        out = _capped([w for w in ranked if w["learned_p"] >= learned_bar])
    else:
        out = _capped([w for w in ranked if (w["score"] >= bar or w["score"] >= warned and w.get("_level") in WARNED_LEVELS)
                       and (w["score"] >= STRONG or not _heads_what_follows(w["text"]))])
        if not out and ranked and ranked[0]["score"] >= floor and not _heads_what_follows(ranked[0]["text"]):
            out = ranked[:1]  # the strongest of a failure with none at the bar
    if len(ranked) <= FEW:
        # One or two messages before the failure (an excerpt a person pasted, a short run): each that
        # reads as trouble on its own (scoring.worth_reading) is listed whatever it scores -- the reader's
        # list is no longer for it. (corpora/public read as rules_holdout reads it: 165 -> 168 of 241
        # labelled warnings, 0.67 -> 0.73 lines a failure: vLLM's 'Available KV cache memory' and '# GPU
        # blocks' pasted above an engine's death, onnxruntime's 'Init provider bridge failed'.)
        out = [w for w in ranked if w in out or w["score"] >= STRONG
               or w.get("_reads", True) and not _heads_what_follows(w["text"])]
    out += [w for w in ranked[MAX_LISTED:MAX_STRONG] if w["score"] >= STRONG and w not in out]
    for w in scored.values():
        w.pop("_level", None)
        w.pop("_reads", None)
        w.pop("learned_p", None)
    return out


def _capped(over: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first ``MAX_LISTED`` lines over the bar, then up to ``MORE_LISTED`` in all of those at the full
    bar (not the warned bar's lower one) that their program printed as a warning, an error or a traceback it
    went on after, and that read as trouble on their own (``scoring.worth_reading``). (A line with trouble
    words but no level -- a shell loop pasted into a report, its 'timeout 20' and 'FAILED' -- stays out.)"""
    more = [w for w in over[MAX_LISTED:] if w.get("_reads", True) and w["score"] >= LIST_THRESHOLD
            and w.get("_level") in WARNED_LEVELS]
    return over[:MAX_LISTED] + more[:MORE_LISTED - MAX_LISTED]


def _heads_what_follows(text: str) -> bool:
    """A line that ends in a colon heads the lines after it ("request failed (bs=1):", "Process 0
    terminated with the following error:", Python's "The above exception was the direct cause of the
    following exception:"): the failure's own report begins there, no warning to read alone (listed
    only when strong: a precursor names it)."""
    return text.rstrip().endswith(":")


def _complete_prior(p: dict[str, Any], known: dict[str, Any] | None, label: str | None) -> dict[str, Any]:
    """A warning the diagnosis already named, completed with the same fields."""
    rec = dict(p)
    if known:
        why = known["why"]
    elif p.get("learned"):
        why = f"the corpus shows this warning before {label} (lift {p.get('lift')})"
    else:
        why = f"precursor {p['signature']}" if p.get("signature") else "logged as the cause"
    rec.setdefault("why", why)
    rec.setdefault("subjects", sorted(subjects(p.get("text", "")))[:12])
    rec.setdefault("score", known["score"] if known else STRONG)
    rec.setdefault("signature", None)
    rec.setdefault("lead_seconds", None)
    return rec


def relink(inc: Any, use_signatures: bool = False) -> list[dict[str, Any]] | None:
    """``link`` again for the failure last linked on ``inc`` (``forensics eval``
    scores linking without precursor signatures this way); None if none was."""
    notes: Notes | None = getattr(inc, "ew_notes", None)
    if notes is None or notes.failure is None:
        return None
    label, fail_line, fail_ts, evidence, rivals = notes.failure
    return link(inc, label, fail_line, fail_ts, evidence, use_signatures=use_signatures, rivals=rivals)
    # (``prior`` is left out on purpose: it holds what signatures decided.)


def lead_seconds(fail_ts: Any, ts: Any) -> float | None:
    """How long before the failure a warning was printed; None when either has no time, or when the
    warning's clock reads later than the failure's (a proving line at WARNING level that an engine
    process's later warnings follow, or clocks of two processes): the lead is not known, and the
    contract has no negative leads."""
    if fail_ts is None or ts is None:
        return None
    lead = round((fail_ts - ts).total_seconds(), 3)
    return lead if lead >= 0 else None
