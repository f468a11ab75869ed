"""The one composer: source -> events -> incidents -> diagnoses.

``SourceEvents`` gives the events of a source (one process, or ``--jobs``
processes over a big regular file) and its parse statistics as a value;
``write_events`` prints them as NDJSON (``forensics parse``);
``diagnose_source`` turns them into the JSON contract of ``forensics
classify``; ``LivePipeline`` runs the same stages one record at a time
(``forensics watch``). classify, parse, watch, batch, diff, the API, eval
and train all come through here.
"""
from __future__ import annotations

import copy
import dataclasses
from functools import partial
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Iterator

from forensics.envelope.journald import SHORT_ALIASES, SHORT_PATTERNS
from forensics.envelope.readers import iter_records
from forensics.envelope.record import COLOURED, Record
from forensics.events.types import Event
from forensics.events.parallel import WARM_BYTES, LineEncoder, SplitRun, split_jobs, split_source
from forensics.events.parser import BulkGate, EventParser, ParseStats, SourcePlan, iter_source_events
from forensics.ingest.sources import Source
from forensics.versions import TAXONOMY_VERSION, __version__

if TYPE_CHECKING:
    from forensics.diagnosis.signatures import SignatureSet
    from forensics.incidents.lifetimes import Incident, IncidentBuilder
    from forensics.report.shown import ShownLifetimes
# The incident and diagnosis stages are imported where they are used, not
# here: ``forensics parse`` needs only the events and starts ~60 ms sooner.

TOP_FIELDS = ("verdict", "root_cause", "confidence", "decided_by", "signature", "summary", "remediation",
              "phase", "evidence", "early_warnings", "candidates", "truncated", "time_to_failure_s", "duration_s",
              "failed_first", "consequences")
EMPTY_STATS = {"lines": 0, "parsed": 0, "unparsed": 0, "events": 0}
BATCH_EVENTS = 4096  # events per batch on the one-process path of ``batches()``
WRITE_EVENTS = 512  # NDJSON lines per write of ``write_events`` (a file's events)
# One NDJSON line per event (``forensics parse``); picklable, so --jobs workers encode too.
ndjson_line: LineEncoder = Event.to_json


class SourceEvents:
    """The events of one source, streaming, and its ``stats`` (complete once
    they are consumed). ``jobs`` > 1 splits a regular file across processes
    (same events, same order); ``thin`` skips the middle of runs of serving
    lines (for a diagnosis); ``encode`` (for ``batches()``) hands events back
    as lines of text."""

    def __init__(self, source: Source, input_format: str = "auto", jobs: int = 1, thin: bool = False,
                 encode: LineEncoder | None = None, chunk_bytes: int | None = None,
                 warm_bytes: int = WARM_BYTES) -> None:
        self.source, self.input_format, self.jobs, self.thin, self.encode = source, input_format, jobs, thin, encode
        self.chunk_bytes, self.warm_bytes = chunk_bytes, warm_bytes
        self._parsers: list[EventParser] = []
        self._split: SplitRun | None = None

    @property
    def stats(self) -> ParseStats | None:
        if self._split is not None:
            return self._split.stats
        return self._parsers[0].stats if self._parsers else None

    def stats_dict(self) -> dict[str, Any]:
        st = self.stats
        return st.to_dict() if st is not None else dict(EMPTY_STATS)

    def _one_process(self) -> Iterator[Event]:
        gate = BulkGate() if self.thin else None
        return iter_source_events(self.source, self.input_format, parser_out=self._parsers, bulk_gate=gate)

    def _split_run(self) -> SplitRun | None:
        if self.jobs < 2 or self.source.path is None:
            return None
        self._split = split_source(self.source, self.jobs, self.input_format, self.thin, self.encode,
                                   self.chunk_bytes, self.warm_bytes)
        return self._split

    def __iter__(self) -> Iterator[Any]:
        """Payloads one by one: events, or (with ``encode``) lines of text."""
        if self.jobs < 2:
            return self._one_process()  # no generator layer of ours on the common path
        return self._flat()

    def _flat(self) -> Iterator[Any]:
        for batch in self.batches():
            if self.encode is not None:
                for text in batch:  # whole chunks arrive newline-joined
                    yield from text.split("\n")
            else:
                yield from batch

    def batches(self) -> Iterator[list[Any]]:
        """Payloads in lists (one write per chunk); encoded lines may come
        several to a string, newline-joined."""
        run = self._split_run()
        if run is not None:
            yield from run.batches()
            return
        encode, name = self.encode, self.source.name
        batch: list[Any] = []
        for ev in self._one_process():
            batch.append(encode(ev, name, None) if encode is not None else ev)  # type: ignore[arg-type]
            if len(batch) >= BATCH_EVENTS:
                yield batch
                batch = []
        yield batch


def write_events(source: Source, write: Callable[[str], Any], input_format: str = "auto", jobs: int | None = None,
                 kinds: frozenset[str] = frozenset()) -> ParseStats | None:
    """``forensics parse`` of one source: its events as NDJSON lines through
    ``write`` (only those of ``kinds`` when given); returns its parse statistics.
    ``jobs``: as ``--jobs`` (None: one process)."""
    n_jobs = split_jobs(source.path if source.member is None else None, jobs)  # a member is no file to cut
    if n_jobs > 1 and not kinds:
        events = SourceEvents(source, input_format, jobs=n_jobs, encode=ndjson_line)
        for batch in events.batches():
            if batch:
                write("\n".join(batch))
                write("\n")
        return events.stats
    from forensics.events.ndjson import SourceLines, write_lines

    # A regular file's lines are written WRITE_EVENTS at a time (a write per line
    # costs more than encoding it); stdin or a pipe, maybe a live stream, line by line.
    per_write = WRITE_EVENTS if source.path is not None and _is_regular(source.path) else 1
    lines = SourceLines(source, input_format, kinds, fast=per_write > 1)
    write_lines(lines, write, per_write)
    return lines.stats


def _is_regular(path: Any) -> bool:
    try:
        return bool(path.is_file())
    except OSError:
        return False


def load_classifier(use: bool, model: str | None = None) -> Any:
    """The classifier of a run: ``model`` (an explicit ``--model`` file,
    ``.scorer.json.gz`` or ``.skops``), else ``default_model()``."""
    if not use:
        return None
    from forensics.diagnosis.classifier.loader import default_model, model_at

    import os

    if model:
        clf = model_at(model, allow_skops=True)
    elif os.environ.get("FORENSICS_MODEL"):
        clf = default_model()
    else:
        return default_model()  # the shipped scorer loads on first use
    clf.model  # a model the user named is checked now: refused before any work, in one line
    return clf


def diagnose_events(events, source_name: str, sset: SignatureSet, classifier: Any = None,  # type: ignore[no-untyped-def]
                    always_classify: bool = False, keep_incidents: list | None = None,
                    spool: bool = False) -> list[dict[str, Any]]:
    """One answer per incident. ``spool``: keep them compressed as they come
    (an ``IncidentSpool``: memory flat in the number of lifetimes)."""
    from forensics.diagnosis import memo
    from forensics.diagnosis.diagnose import diagnose_incident, record_hits
    from forensics.incidents.lifetimes import IncidentBuilder
    from forensics.report.spool import IncidentSpool

    out: Any = IncidentSpool() if spool else []
    diagnose = lambda inc: diagnose_incident(inc, classifier, always_classify)  # noqa: E731
    if keep_incidents is None and memo.enabled():
        # Incidents nobody keeps: a crash loop's repeated lifetimes are diagnosed once per shape.
        diagnose = partial(memo.LifetimeMemo().diagnose, compute=diagnose)
    for inc in _finished(events, IncidentBuilder(source_name, record_hits(sset))):
        out.append(diagnose(inc))
        if keep_incidents is not None:
            keep_incidents.append(inc)
    return out


def diagnose_shown(events, source_name: str, sset: SignatureSet, classifier: Any = None,  # type: ignore[no-untyped-def]
                   always_classify: bool = False) -> ShownLifetimes:
    """What a text report shows, and only that: the first ``LISTED``
    lifetimes and the top-level one diagnosed in full, every other lifetime
    only judged failed or not (the same answers, without the cost of
    diagnosing thousands of lifetimes of a crash loop in full)."""
    from forensics.diagnosis.deferred import DeferringHook
    from forensics.diagnosis.diagnose import diagnose_incident
    from forensics.incidents.lifetimes import IncidentBuilder
    from forensics.report.shown import LISTED, ShownLifetimes

    out = ShownLifetimes()
    hook = DeferringHook(sset, LISTED)  # only the lifetimes read in full are matched in full
    failed_inc = last_inc = None  # the last failed / the last lifetime, not yet diagnosed
    for inc in _finished(events, IncidentBuilder(source_name, hook, settle=hook.settle)):
        out.count += 1
        if len(out.listed) < LISTED:
            answer = diagnose_incident(inc, classifier, always_classify)
            out.listed.append(answer)
            out.last = answer
            if answer["verdict"] == "failed":
                out.last_failed = answer
            continue
        out.last, last_inc = None, inc
        if hook.failed(inc):
            out.last_failed, failed_inc = None, inc
    if failed_inc is not None:
        hook.settle(failed_inc)
        out.last_failed = diagnose_incident(failed_inc, classifier, always_classify)
    elif out.last_failed is None and last_inc is not None:
        hook.settle(last_inc)
        out.last = diagnose_incident(last_inc, classifier, always_classify)
    return out


def _finished(events, builder: IncidentBuilder) -> Iterator[Incident]:  # type: ignore[no-untyped-def]
    """The lifetimes ``builder`` makes of ``events``, as each one ends."""
    for ev in events:
        yield from builder.feed(ev)
    yield from builder.finish()


def assemble(source_name: str, incidents: list[dict[str, Any]], stats: dict[str, Any], sset: SignatureSet,
             classifier: Any = None) -> dict[str, Any]:
    """Top level = the incident that matters most: the last failed one, else the last one."""
    from forensics.report.contract import normalize_result
    from forensics.report.shown import ShownLifetimes
    from forensics.report.spool import IncidentSpool

    main = None
    if isinstance(incidents, (IncidentSpool, ShownLifetimes)):
        main = incidents.last_failed or incidents.last
    else:
        for inc in reversed(incidents):
            if inc["verdict"] == "failed":
                main = inc
                break
        if main is None and incidents:
            main = incidents[-1]
    result: dict[str, Any] = {"source": source_name}
    if main is None:
        result.update({"verdict": "no-failure", "root_cause": None, "confidence": None, "decided_by": None,
                       "signature": None, "summary": "The input is empty.", "remediation": None, "phase": None,
                       "evidence": [], "early_warnings": [], "candidates": [], "truncated": False,
                       "time_to_failure_s": None, "duration_s": None, "classifier": None, "incident": None})
    else:
        for k in TOP_FIELDS:
            result[k] = main.get(k)
        result["classifier"] = main.get("classifier")
        result["incident"] = main["index"]
    result["incidents"] = incidents
    result["stats"] = stats
    result["versions"] = {"forensics": __version__, "taxonomy": TAXONOMY_VERSION, "signatures": sset.digest,
                          "model": getattr(classifier, "version", None)}
    result["warnings"] = [w.message for w in sset.warnings]
    return normalize_result(result)


def diagnose_source(source: Source, input_format: str = "auto", use_classifier: bool = True,
                    sset: SignatureSet | None = None, classifier: Any = None, always_classify: bool = False,
                    keep_incidents: list | None = None, thin: bool = True, jobs: int | None = 1,
                    spool: bool = False, shown_only: bool = False) -> dict[str, Any]:
    """Diagnose one source. ``thin`` skips the middle of runs of serving
    lines (same answer, several times faster on long serving logs). ``spool``:
    ``incidents`` is an ``IncidentSpool`` (compressed; write it with
    ``forensics.report.spool.dump``), for logs of any number of lifetimes.
    ``shown_only``: only what a text report shows is diagnosed in full
    (``incidents`` is a ``ShownLifetimes``; ``render_text`` gives the same text)."""
    from forensics.diagnosis.signatures import signature_set

    sset = signature_set() if sset is None else sset  # an empty set is asked for, not "the shipped one"
    if classifier is None:
        classifier = load_classifier(use_classifier)
    events = SourceEvents(source, input_format, jobs=_diagnosis_jobs(source, jobs, thin), thin=thin)
    if shown_only:
        incidents: Any = diagnose_shown(events, source.name, sset, classifier, always_classify)
    else:
        incidents = diagnose_events(events, source.name, sset, classifier, always_classify, keep_incidents, spool)
    stats = events.stats_dict()
    stats["compression"] = source.stats.compression
    if source.stats.encoding:  # only when not plain UTF-8: the answers on UTF-8 logs keep their shape
        stats["encoding"] = source.stats.encoding
    return assemble(source.name, incidents, stats, sset, classifier)


def _diagnosis_jobs(source: Source, jobs: int | None, thin: bool) -> int:
    """Processes for a diagnosis: one, unless ``--jobs`` asks for more. A split
    pays for neither kind of big log: thinned, a serving log costs little per
    line and each more process only adds its start-up; on a crash loop the main
    process's incident work is the bottleneck, and shipping every event back
    from the workers costs more than parsing it (1,000 lifetimes: 2 jobs 6.5 s,
    one process 2.8 s). Asked, as parse: where the file can be split at all
    (``split_jobs``); the unthinned path never is."""
    return split_jobs(source.path if source.member is None else None, jobs) if thin else 1


def fork_incident(inc: Incident) -> Incident:
    """A copy that feeding events to cannot change the original (events and
    hits are never mutated, so they are shared)."""
    from forensics.incidents.lifetimes import Hit, PhaseSpan

    new = copy.copy(inc)
    for name, v in vars(inc).items():
        if isinstance(v, (list, dict, set, deque)):
            setattr(new, name, copy.copy(v))
        elif hasattr(v, "__dict__") and not isinstance(v, (Event, Hit, PhaseSpan, type)):
            setattr(new, name, copy.deepcopy(v))  # e.g. notes a diagnosis hook keeps on the incident
    new.phases = {k: dataclasses.replace(s) for k, s in inc.phases.items()}
    if inc.exit is not None:
        new.exit = dict(inc.exit)
    return new


def fork_parser(p: EventParser) -> EventParser:
    q = copy.copy(p)
    q.tb = p.tb.fork()
    q.stats = copy.deepcopy(p.stats)
    q.clock = copy.copy(p.clock)
    return q


class LivePipeline:
    """classify's stages for one plan, fed one record at a time (``forensics
    watch``). A journal entry whose next line may continue it is held (as the
    file reader holds it for one line of lookahead); ``snapshot`` diagnoses a
    copy as if the stream ended now."""

    def __init__(self, plan: SourcePlan, on_hit: Any, classifier: Any) -> None:
        self.plan = plan
        self.clock = clock = plan.clock()
        self.parser = EventParser("-", clock, plan.wrappers)
        self.parser.stats.format = plan.fmt
        from forensics.incidents.lifetimes import IncidentBuilder

        self.builder = IncidentBuilder("-", on_hit)
        self.clf = classifier
        fmt = plan.fmt.removesuffix(COLOURED)  # a coloured source: read as its format once uncoloured
        self.merge = SHORT_ALIASES.get(fmt, fmt) in SHORT_PATTERNS
        self.held: Record | None = None
        self.closed: list[dict[str, Any]] = []  # diagnoses of finished lifetimes

    def records(self, lines: Iterator[tuple[int, str]]) -> Iterator[Record]:
        return iter_records(lines, self.plan.fmt, self.clock, merge=False)

    def feed(self, rec: Record) -> list[tuple[Event, Incident, list[Incident]]]:
        """Feed one record; returns (event, its incident, lifetimes it closed)."""
        if self.merge:
            held = self.held
            if rec.cont and held is not None and held.marker is None:
                held.text = held.text + "\n" + rec.text
                if rec.line != held.line:
                    held.line_step = 1
                return []
            self.held = rec
            if held is None:
                return []
            rec = held
        return self._events(self.parser.feed(rec), self.builder, self.closed)

    def _events(self, events: list[Event], builder: IncidentBuilder,
                closed: list[dict[str, Any]]) -> list[tuple[Event, Incident, list[Incident]]]:
        from forensics.diagnosis.diagnose import diagnose_incident

        out = []
        for ev in events:
            done = list(builder.feed(ev))
            for inc in done:
                closed.append(diagnose_incident(inc, self.clf))
            out.append((ev, builder.cur, done))  # type: ignore[arg-type]
        return out

    def snapshot(self, include_open: bool, incomplete_last: bool = False
                 ) -> tuple[list[dict[str, Any]], list[tuple[Event, Incident, list[Incident]]], dict[str, Any]]:
        """Diagnoses of every lifetime if the stream ended now (the held
        record fed, tracebacks closed: all of them with ``include_open``,
        else those whose exception line has arrived). The real state is
        untouched. Returns (diagnoses, events the copy produced, stats)."""
        parser, builder = self.parser, self.builder
        closed = list(self.closed)
        fed: list[tuple[Event, Incident, list[Incident]]] = []
        if self.held is not None or parser.tb.open:
            parser = fork_parser(parser)
            builder = copy.copy(builder)
            builder.cur = fork_incident(builder.cur) if builder.cur is not None else None
            evs: list[Event] = []
            if self.held is not None:
                evs.extend(parser.feed(copy.copy(self.held)))
            evs.extend(parser.finish(incomplete_last) if include_open else parser.tb.close_complete())
            fed = self._events(evs, builder, closed)
        if builder.cur is not None:
            from forensics.diagnosis.diagnose import diagnose_incident

            closed.append(diagnose_incident(builder.cur, self.clf))
        return closed, fed, parser.stats.to_dict()
