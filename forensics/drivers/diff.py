"""``forensics diff GOOD BAD``: what differs between a run that worked and one that failed.

One streaming pass over each input (bounded memory: per lifetime at most
``MAX_TEMPLATES`` masked templates and the capped facts of
``forensics.incidents.facts``; only the lifetimes that can still be chosen are
kept). Then, most telling first:

1. the failure of BAD as ``classify`` reports it, and the phase GOOD passed and BAD did not;
2. warnings and errors of BAD whose masked template GOOD never printed, in order,
   with lead time before the failure, the diagnosis' early warnings marked;
3. the facts (versions, GPU, host, arguments, environment) that differ;
4. phase durations in both, and the first phase that took over twice as long;
5. templates GOOD printed, before the point where BAD failed, that BAD never printed.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterator

from forensics.diagnosis.diagnose import diagnose_incident, record_hits
from forensics.diagnosis.features import mask
from forensics.diagnosis.signatures import SignatureSet, signature_set
from forensics.errors import InputError
from forensics.report.contract import SCHEMA_VERSION
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.events.phases import PHASE_ORDER
from forensics.incidents.facts import Fact, RunFacts
from forensics.incidents.lifetimes import ALARM_RE, Incident, IncidentBuilder
from forensics.ingest.sources import Source
from forensics.pipeline import SourceEvents, load_classifier

MAX_TEMPLATES = 20000  # per lifetime; a 1M-line serving log has a few hundred
MAX_LISTED = 40  # messages listed per section (the JSON says how many there were)
SLOWER = 2.0  # a phase "took over twice as long"
MIN_PHASE_S = 1.0  # shorter phases are noise for the ratio

_WARNY = re.compile(r"(?i)warn|deprecat|falling back|fall back|fallback|not set|disabled|exceed|retry|retrying|"
                    r"could not|couldn't|not installed|not compatible|not available|ignored|ignoring")
# Progress bars, empty lines and the joints of chained tracebacks say nothing on their own.
_NOISE = re.compile(r"^\W*$|\d+%\||\d+% Completed|it/s\]|s/it\]|\[\d\d:\d\d<|^During handling of the above exception|"
                    r"^The above exception was the direct cause")
_FAIL_LEVELS = ("ERROR", "CRITICAL", "FATAL")
# glog (torch, XLA, JAX: "W1201 09:13:33.357000 7436 file.py:140] ...") and c10's "[W1201 09:08:22.16 file.cpp:340]".
_GLOG = re.compile(r"^\[?[WEF]\d{4} \d\d:\d\d:\d\d\.\d+ +(?:\d+ )?[^\s\]]+:\d+\]")


@dataclass
class Message:
    template: str
    line: int
    ts: datetime | None
    text: str
    level: str | None
    notable: bool  # a warning or an error
    end_line: int = 0  # last input line of the event (a traceback spans many)


def template_of(ev: Event) -> str:
    return mask(ev.text[:300])


def is_notable(ev: Event) -> bool:
    """A warning or an error: what ``diff`` lists when it is new in BAD."""
    if ev.kind == kinds.TRACEBACK or ev.kind == kinds.PACKAGE_WALK_WARNING:
        return True
    lvl = ev.level
    if lvl in ("WARNING", "WARN") or lvl in _FAIL_LEVELS:
        return True
    if lvl in ("INFO", "DEBUG", "TRACE"):
        return False
    if ev.kind not in (kinds.MESSAGE, kinds.LOG):
        return False
    t = ev.text
    return bool(_GLOG.match(t) or ALARM_RE.search(t) or _WARNY.search(t))


@dataclass
class LifetimeScan:
    """What diff keeps of one lifetime while it streams by."""

    index: int
    messages: dict[str, Message] = field(default_factory=dict)  # template -> first occurrence
    overflow: int = 0
    facts: RunFacts = field(default_factory=RunFacts)
    last_ts: datetime | None = None

    def observe(self, ev: Event) -> None:
        if ev.ts is not None:
            self.last_ts = ev.ts
        self.facts.observe(ev)
        kind = ev.kind
        if kind in (kinds.ACCESS, kinds.BLOB, kinds.JOURNAL_MARKER, kinds.UNIT_LIFECYCLE) or _NOISE.search(ev.text):
            return
        if kind == kinds.PHASE_MARKER and ev.data.get("marker") == "server_args":
            return  # its values are compared as facts
        tpl = template_of(ev)
        if not tpl:
            return
        notable = is_notable(ev)
        m = self.messages.get(tpl)
        if m is None:
            if len(self.messages) >= MAX_TEMPLATES:
                self.overflow += 1
                return
            self.messages[tpl] = Message(tpl, ev.line, ev.ts or self.last_ts, ev.text[:500], ev.level, notable,
                                         ev.end_line or ev.line)
        elif notable and not m.notable:
            self.messages[tpl] = Message(tpl, ev.line, ev.ts or self.last_ts, ev.text[:500], ev.level, True,
                                         ev.end_line or ev.line)


@dataclass
class Run:
    """One input, reduced to the chosen lifetime."""

    source: str
    incidents: list[dict[str, Any]]  # every lifetime's diagnosis, thin (no evidence lists)
    diagnosis: dict[str, Any] | None
    scan: LifetimeScan | None
    facts: dict[str, Fact]
    stats: dict[str, Any]


def _thin(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d.get(k) for k in ("index", "verdict", "root_cause", "phase", "start_line", "end_line")}


def scan_source(source: Source, want: str, index: int | None, input_format: str = "auto",
                sset: SignatureSet | None = None, classifier: Any = None) -> Run:
    """Stream one input; keep the lifetime ``index`` or else the last one whose verdict is ``want``
    ("healthy": not failed; "failed"), falling back to the last lifetime."""
    sset = signature_set() if sset is None else sset
    hits = record_hits(sset)
    scans: dict[int, LifetimeScan] = {}

    def on_event(inc: Incident, ev: Event) -> None:
        hits(inc, ev)
        if index is not None and inc.index != index:
            return
        s = scans.get(inc.index)
        if s is None:
            s = scans[inc.index] = LifetimeScan(inc.index)
        s.observe(ev)

    builder = IncidentBuilder(source.name, on_event)
    events = SourceEvents(source, input_format, thin=True)
    incidents: list[dict[str, Any]] = []
    chosen: tuple[dict[str, Any], LifetimeScan] | None = None
    last: tuple[dict[str, Any], LifetimeScan] | None = None

    def close(inc: Incident) -> None:
        nonlocal chosen, last
        d = diagnose_incident(inc, classifier)
        incidents.append(_thin(d))
        s = scans.pop(inc.index, None)
        if s is None:
            return
        if index is not None:
            chosen = (d, s)
            return
        ok = (d["verdict"] == "failed") == (want == "failed")
        if ok:
            chosen = (d, s)
        last = (d, s)

    for ev in events:
        for inc in builder.feed(ev):
            close(inc)
    for inc in builder.finish():
        close(inc)
    stats = events.stats.to_dict() if events.stats is not None else {}
    pick = chosen or (None if index is not None else last)
    if pick is None:
        return Run(source.name, incidents, None, None, {}, stats)
    d, s = pick
    return Run(source.name, incidents, d, s, s.facts.finish(), stats)


# ----------------------------------------------------------------------------- comparison


def _ts(s: Any) -> datetime | None:
    if isinstance(s, datetime):
        return s
    if isinstance(s, str):
        try:
            return datetime.fromisoformat(s)
        except ValueError:
            return None
    return None


def failure_point(d: dict[str, Any]) -> tuple[int | None, datetime | None]:
    """Line and time of BAD's failure: its first cause line, at start + time_to_failure."""
    line = None
    for e in d.get("evidence") or ():
        if e.get("line") is not None:
            line = e["line"] if line is None else min(line, e["line"])
    start = _ts(d.get("start_ts"))
    ttf = d.get("time_to_failure_s")
    ts = start + timedelta(seconds=ttf) if start is not None and ttf is not None else _ts(d.get("end_ts"))
    if line is None and d.get("verdict") == "failed":
        line = d.get("end_line")
    return line, ts


def phase_durations(d: dict[str, Any]) -> dict[str, float | None]:
    """Seconds from each phase's first line to the next phase's first line (the last: to the end)."""
    spans = sorted(d.get("phases") or (), key=lambda p: p["first_line"])
    end = _ts(d.get("end_ts"))
    out: dict[str, float | None] = {}
    for i, p in enumerate(spans):
        a = _ts(p.get("first_ts"))
        b = _ts(spans[i + 1].get("first_ts")) if i + 1 < len(spans) else (end or _ts(p.get("last_ts")))
        out[p["phase"]] = round(max(0.0, (b - a).total_seconds()), 3) if a is not None and b is not None else None
    return out


def compare_timing(good: dict[str, Any], bad: dict[str, Any], bad_failed: bool) -> dict[str, Any]:
    g, b = phase_durations(good), phase_durations(bad)
    order = sorted(set(g) | set(b), key=lambda p: PHASE_ORDER.get(p, 99))
    rows = []
    first = None
    fail_phase = bad.get("phase") if bad_failed else None
    for p in order:
        gs, bs = g.get(p), b.get(p)
        ratio = round(bs / gs, 2) if gs and bs is not None and gs > 0 else None
        row = {"phase": p, "good_s": gs, "bad_s": bs, "ratio": ratio}
        rows.append(row)
        # The phase BAD died in is cut short by the failure: its time says nothing.
        if first is None and ratio is not None and ratio > SLOWER and bs is not None and bs - (gs or 0) >= MIN_PHASE_S \
                and p != fail_phase:
            first = row
    return {"phases": rows, "first_slower": first}


def _lead(fail_ts: datetime | None, ts: datetime | None) -> float | None:
    if fail_ts is None or ts is None:
        return None
    try:
        return round((fail_ts - ts).total_seconds(), 3)
    except TypeError:  # naive vs aware
        return None


def _ew_lines(d: dict[str, Any]) -> dict[int, dict[str, Any]]:
    out = {}
    for w in d.get("early_warnings") or ():
        if isinstance(w, dict) and w.get("line") is not None:
            out[int(w["line"])] = w
    return out


def new_in_bad(good: LifetimeScan, bad: LifetimeScan, bad_diag: dict[str, Any], fail_line: int | None,
               fail_ts: datetime | None) -> list[dict[str, Any]]:
    ews = _ew_lines(bad_diag)
    # the diagnosis may quote a later copy of the same message (another rank): match by template too
    ew_by_template = {mask(str(w.get("text") or "")[:300]): w for w in ews.values()}
    evidence = {e.get("line") for e in bad_diag.get("evidence") or ()} - {None}
    last_evidence = max(evidence, default=None)
    end = bad_diag.get("end_line")
    out = []
    for m in sorted(bad.messages.values(), key=lambda m: m.line):
        if not m.notable or m.template in good.messages:
            continue
        if end is not None and m.line > end:
            continue
        ew = ews.get(m.line) or ew_by_template.get(m.template)
        after = last_evidence is not None and m.line > last_evidence
        span = range(m.line, max(m.line, m.end_line) + 1)
        lead = None if after else _lead(fail_ts, m.ts)
        out.append({"line": m.line, "text": m.text, "template": m.template, "level": m.level,
                    "lead_seconds": lead if lead is None or lead >= 0 else 0.0,
                    "lines_before": fail_line - m.line if fail_line is not None and m.line <= fail_line else None,
                    "after_failure": after,
                    "early_warning": ew is not None, "why": (ew or {}).get("why"),
                    "end_line": max(m.line, m.end_line),
                    "fatal": any(e in span for e in evidence)})
    # early warnings that the diagnosis linked but whose template GOOD printed too stay out:
    # in GOOD they did not predict a failure.
    return out


def gone_in_bad(good: LifetimeScan, bad: LifetimeScan, bad_failed: bool) -> tuple[list[dict[str, Any]], int | None]:
    """GOOD's templates that BAD never printed, up to the last message both printed
    (where BAD stopped following GOOD), and the GOOD line of that cut."""
    shared = [m.line for t, m in good.messages.items() if t in bad.messages]
    if not shared:
        return [], None
    cut = max(shared) if bad_failed else max(m.line for m in good.messages.values())
    out = [{"line": m.line, "text": m.text, "template": m.template, "level": m.level}
           for m in sorted(good.messages.values(), key=lambda m: m.line)
           if m.line <= cut and m.template not in bad.messages]
    return out, cut


# Facts that change on every run and say nothing about why one failed.
_VOLATILE = re.compile(r"^(?:arg\.(?:random_seed|seed|port|nccl_port|dist_init_addr|host|file_storage_path|"
                       r"metrics_port|served_model_name)|engine\.seed)$")


# Facts read off file paths: absent from a run that printed no traceback, which is no difference.
_BOTH_SIDES = {"python.site-packages"}

# Numbers that wobble from run to run of the same machine: equal within 5 %.
_TOLERANT = {"gpu_free_gib"}


def _same(k: str, a: str, b: str) -> bool:
    if a == b:
        return True
    if k in _TOLERANT:
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        return abs(x - y) <= 0.05 * max(abs(x), abs(y))
    return False


def compare_facts(g: dict[str, Fact], b: dict[str, Fact], good_cut: int | None = None) -> list[dict[str, Any]]:
    """Facts that differ, old -> new. A fact GOOD printed after the point where BAD
    stopped following it is no difference: BAD never got there."""
    out = []
    for k in list(g) + [k for k in b if k not in g]:
        gv, bv = g.get(k), b.get(k)
        if gv is not None and bv is not None and _same(k, gv.value, bv.value):
            continue
        if bv is None and gv is not None and good_cut is not None and gv.line > good_cut:
            continue
        if k in _BOTH_SIDES and (gv is None or bv is None):
            continue
        out.append({"key": k, "good": gv.value if gv else None, "bad": bv.value if bv else None,
                    "good_line": gv.line if gv else None, "bad_line": bv.line if bv else None,
                    "volatile": bool(_VOLATILE.match(k)),
                    # an argument one server version has and the other lacks: version skew, not a setting
                    "one_sided": k.startswith(("arg.", "engine.")) and (gv is None or bv is None)})
    rank = {"server_version": 0, "gpu": 1, "gpu (inferred from free memory)": 1, "compute_capability": 1,
            "kernel_arch": 1, "gpu_free_gib": 2, "ranks.tp": 2, "gpu_count": 2, "driver": 3, "cuda": 3,
            "nvcc": 3, "torch": 3, "nccl": 3, "flashinfer": 3, "triton": 3, "python": 3, "host": 4}

    def key(c: dict[str, Any]) -> tuple:
        k = c["key"]
        group = rank.get(k, 5 if k.startswith("env.") else 6 if k.startswith("arg.") else 7)
        return (c["volatile"], c["one_sided"], group)

    return sorted(out, key=key)


def diff_runs(good: Run, bad: Run) -> dict[str, Any]:
    if good.diagnosis is None or good.scan is None:
        raise InputError(f"{good.source}: no lifetime {good_index_hint(good)}")
    if bad.diagnosis is None or bad.scan is None:
        raise InputError(f"{bad.source}: no lifetime {good_index_hint(bad)}")
    gd, bd = good.diagnosis, bad.diagnosis
    bad_failed = bd.get("verdict") == "failed"
    fail_line, fail_ts = failure_point(bd) if bad_failed else (None, None)
    g_phases = [p["phase"] for p in gd.get("phases") or ()]
    b_phases = [p["phase"] for p in bd.get("phases") or ()]
    not_reached = [p for p in g_phases if p not in b_phases]
    fail_phase = bd.get("phase") if bad_failed else None
    good_passed = None
    if fail_phase is not None:
        later = [p for p in g_phases if PHASE_ORDER.get(p, 0) > PHASE_ORDER.get(fail_phase, 0)]
        if fail_phase in g_phases and later or gd.get("verdict") != "failed" and gd.get("reached_phase") in ("ready", "serving"):
            good_passed = fail_phase
    new = new_in_bad(good.scan, bad.scan, bd, fail_line, fail_ts)
    gone, cut = gone_in_bad(good.scan, bad.scan, bad_failed)
    facts = compare_facts(good.facts, bad.facts, cut if bad_failed else None)
    timing = compare_timing(gd, bd, bad_failed)
    relevant_facts = [f for f in facts if not f["volatile"] and not f["one_sided"]]
    differences = len(new) + len(relevant_facts) + (1 if timing["first_slower"] else 0) + len(gone)
    failure = None
    if bad_failed:
        failure = {k: bd.get(k) for k in ("verdict", "root_cause", "confidence", "decided_by", "signature", "summary",
                                          "remediation", "phase", "evidence", "early_warnings", "time_to_failure_s")}
        failure["line"] = fail_line
        failure["ts"] = fail_ts.isoformat() if fail_ts else None
    return {
        "schema_version": SCHEMA_VERSION,
        "good": _side(good), "bad": _side(bad),
        "failure": failure,
        "phase_good_passed": good_passed,
        "phases_not_reached": not_reached,
        "new_in_bad": new[:MAX_LISTED * 5],
        "new_in_bad_total": len(new),
        "facts": {"changed": facts, "good": {k: f.value for k, f in good.facts.items()},
                  "bad": {k: f.value for k, f in bad.facts.items()}},
        "timing": timing,
        "gone_in_bad": gone[:MAX_LISTED * 5],
        "gone_in_bad_total": len(gone),
        "gone_cut_line": cut,
        "differences": differences,
        "exit": 1 if bad_failed and differences > 0 else 0,
    }


def good_index_hint(r: Run) -> str:
    return f"with that index (it has {len(r.incidents)}: 0..{len(r.incidents) - 1})" if r.incidents else "(the input is empty)"


def _side(r: Run) -> dict[str, Any]:
    d = r.diagnosis or {}
    return {"source": r.source, "incident": d.get("index"), "incidents": len(r.incidents), "verdict": d.get("verdict"),
            "root_cause": d.get("root_cause"), "reached_phase": d.get("reached_phase"),
            "start_line": d.get("start_line"), "end_line": d.get("end_line"),
            "templates": len(r.scan.messages) if r.scan else 0, "templates_overflow": r.scan.overflow if r.scan else 0,
            "lines": r.stats.get("lines")}


def diff_sources(good: Source, bad: Source, input_format: str = "auto", good_incident: int | None = None,
                 bad_incident: int | None = None, use_classifier: bool = True) -> dict[str, Any]:
    sset = signature_set()
    clf = load_classifier(use_classifier)
    g = scan_source(good, "healthy", good_incident, input_format, sset, clf)
    b = scan_source(bad, "failed", bad_incident, input_format, sset, clf)
    return diff_runs(g, b)


def diff_paths(good: str, bad: str, input_format: str = "auto", good_incident: int | None = None,
               bad_incident: int | None = None, use_classifier: bool = True) -> dict[str, Any]:
    """``diff`` over two paths (``-`` is stdin, for one of them at most)."""
    if good == "-" and bad == "-":
        raise InputError("only one of GOOD and BAD can be - (stdin)")
    return diff_sources(_one_source(good), _one_source(bad), input_format, good_incident, bad_incident, use_classifier)


def _one_source(p: str) -> Source:
    from forensics.ingest.sources import expand_paths

    if p != "-" and os.path.isdir(p):
        raise InputError(f"{p} is a directory: diff compares two logs")
    srcs = list(expand_paths([p]))
    if len(srcs) != 1:
        raise InputError(f"{p}: expected one log")
    return srcs[0]


def iter_changed(result: dict[str, Any], volatile: bool = False) -> Iterator[dict[str, Any]]:
    for c in result["facts"]["changed"]:
        if volatile or not c["volatile"]:
            yield c
