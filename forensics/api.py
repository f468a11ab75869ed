"""The Python API (a contract): parse, classify, read_events, batch, diff."""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from forensics.events.model import Event
from forensics.events.parser import iter_source_events
from forensics.ingest.sources import Source, expand_paths

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


class _TextSource(Source):
    """A source over an in-memory string (for notebooks and tests)."""

    def __init__(self, text: str | bytes, name: str = "<text>") -> None:
        super().__init__(name, None)
        self._data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text

    def open_binary(self):  # type: ignore[override]
        return io.BufferedReader(io.BytesIO(self._data))  # type: ignore[arg-type]



def to_sources(path_or_text: Any) -> list[Source]:
    """A path (str/Path), a list of paths, or log text (a str containing a newline)."""
    if isinstance(path_or_text, Source):
        return [path_or_text]
    if isinstance(path_or_text, bytes):
        return [_TextSource(path_or_text)]
    if isinstance(path_or_text, (list, tuple)):
        out: list[Source] = []
        for p in path_or_text:
            out.extend(to_sources(p))
        return out
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str) and "\n" not in path_or_text
                                          and (path_or_text == "-" or os.path.exists(path_or_text))):
        return list(expand_paths([str(path_or_text)]))
    return [_TextSource(str(path_or_text))]


def parse(path_or_text: Any, input_format: str = "auto") -> Iterator[Event]:
    """Yield the events of a log (path, list of paths, or the log text itself)."""
    for src in to_sources(path_or_text):
        yield from iter_source_events(src, input_format)


def read_events(path_or_text: Any, input_format: str = "auto") -> "pd.DataFrame":
    """One row per event (see ``forensics.report.frames.EVENT_COLUMNS``)."""
    from forensics.report.frames import events_frame

    return events_frame(parse(path_or_text, input_format))


def classify(path_or_text: Any, input_format: str = "auto", use_classifier: bool = True) -> dict[str, Any]:
    """Diagnose a log; returns the JSON-contract dict (see design.md)."""
    from forensics.diagnosis.run import diagnose_source

    sources = to_sources(path_or_text)
    results = [diagnose_source(s, input_format, use_classifier=use_classifier) for s in sources]
    return results[0] if len(results) == 1 else {"results": results}


def diff(good: Any, bad: Any, input_format: str = "auto", good_incident: int | None = None,
         bad_incident: int | None = None, use_classifier: bool = True) -> dict[str, Any]:
    """What differs between a run that worked and one that failed (the JSON contract of
    ``forensics diff --format json``). Each side: a path, or the log text itself."""
    from forensics.drivers.diff import diff_sources

    g, b = to_sources(good), to_sources(bad)
    if len(g) != 1 or len(b) != 1:
        raise ValueError("diff compares one log with one log")
    return diff_sources(g[0], b[0], input_format, good_incident, bad_incident, use_classifier)


def batch(paths: Any, jobs: int | None = None, engine: str = "processes", scheduler: str | None = None) -> "pd.DataFrame":
    """One row per incident over many logs (see ``forensics.report.frames.INCIDENT_COLUMNS``)."""
    from forensics.batch import run_batch

    if isinstance(paths, (str, Path)):
        paths = [paths]
    return run_batch([str(p) for p in paths], jobs=jobs, engine=engine, scheduler=scheduler)
