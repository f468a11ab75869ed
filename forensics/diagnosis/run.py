"""Source -> diagnosis dict (the JSON contract of ``forensics classify``)."""
from __future__ import annotations

from typing import Any

from forensics import TAXONOMY_VERSION, __version__
from forensics.events.parser import BulkGate, iter_source_events
from forensics.incidents.lifetimes import IncidentBuilder
from forensics.ingest.sources import Source
from forensics.diagnosis.diagnose import diagnose_incident, record_hits
from forensics.diagnosis.signatures import SignatureSet, signature_set
from forensics.report.contract import normalize_result
from forensics.report.spool import IncidentSpool

TOP_FIELDS = ("verdict", "root_cause", "confidence", "decided_by", "signature", "summary", "remediation",
              "phase", "evidence", "early_warnings", "candidates", "truncated", "time_to_failure_s", "duration_s",
              "failed_first", "consequences")


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
    builder = IncidentBuilder(source_name, record_hits(sset))
    out: Any = IncidentSpool() if spool else []

    def done(inc):  # type: ignore[no-untyped-def]
        out.append(diagnose_incident(inc, classifier, always_classify))
        if keep_incidents is not None:
            keep_incidents.append(inc)

    for ev in events:
        for inc in builder.feed(ev):
            done(inc)
    for inc in builder.finish():
        done(inc)
    return out


def assemble(source_name: str, incidents: list[dict[str, Any]], stats: dict[str, Any], sset: SignatureSet,
             classifier: Any = None) -> dict[str, Any]:
    """Top level = the incident that matters most: the last failed one, else the last one."""
    main = None
    if isinstance(incidents, IncidentSpool):
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
                    spool: bool = False) -> dict[str, Any]:
    """Diagnose one source. ``thin`` skips the middle of runs of serving
    lines (same answer, several times faster on long serving logs). ``spool``:
    ``incidents`` is an ``IncidentSpool`` (compressed; write it with
    ``forensics.report.spool.dump``), for logs of any number of lifetimes."""
    sset = sset or signature_set()
    if classifier is None:
        classifier = load_classifier(use_classifier)
    holder: list = []
    n_jobs = 1
    if jobs != 1 and thin and source.path is not None:
        from forensics.events.parallel import auto_jobs

        n_jobs = auto_jobs(source.path, jobs)
    if n_jobs > 1:
        from forensics.events.parallel import parallel_events

        events = parallel_events(source, n_jobs, "classify", input_format, stats_out=holder)
    else:
        gate = BulkGate() if thin else None
        events = iter_source_events(source, input_format, parser_out=holder, bulk_gate=gate)
    incidents = diagnose_events(events, source.name, sset, classifier, always_classify, keep_incidents, spool)
    st = holder[0] if holder else None
    if st is not None and hasattr(st, "stats"):
        st = st.stats
    stats = st.to_dict() if st is not None else {"lines": 0, "parsed": 0, "unparsed": 0, "events": 0}
    stats["compression"] = source.stats.compression
    return assemble(source.name, incidents, stats, sset, classifier)
