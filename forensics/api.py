"""The Python API (a contract): classify, classify_text, parse, read_events, batch, diff.
The Python face only: the work is done by ``forensics.pipeline`` and ``forensics.drivers``.

What each function accepts as a log (``source``):

* a path (``str`` or ``os.PathLike``): a file (plain, .gz, .xz, .bz2, .zst), a
  journald file or directory, or a directory of logs. A path that does not
  exist raises ``FileNotFoundError`` (a typo is never read as log text);
* a file object opened in binary or text mode (``open(p, "rb")``, ``sys.stdin``,
  ``io.StringIO``);
* an iterable of lines (``list[str]``, a generator, ``proc.stdout``), with or
  without their newlines;
* ``bytes``: the log's raw content;
* a ``str`` with a newline in it: the log text itself (``classify_text`` says
  so explicitly, and also takes text without a newline).

Input that is not a text log raises ``forensics.errors.InputError`` (its
message is the CLI's one-line error).
"""
from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Iterator, Union

from forensics.events.types import Event
from forensics.ingest.journal import ChunkStream
from forensics.ingest.sources import Source, expand_paths

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

LogSource = Union[str, "os.PathLike[str]", bytes, BinaryIO, io.TextIOBase, Iterable[str], Source]


class _TextSource(Source):
    """A source over in-memory data (for notebooks and tests)."""

    def __init__(self, text: str | bytes, name: str = "<text>") -> None:
        super().__init__(name, None)
        self._data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text

    def open_binary(self):  # type: ignore[override]
        return io.BufferedReader(io.BytesIO(self._data))  # type: ignore[arg-type]


class _StreamSource(Source):
    """A source over a file object or an iterable of lines, read once, streaming."""

    def __init__(self, obj: Any, name: str) -> None:
        super().__init__(name, None)
        self._obj = obj

    def open_binary(self):  # type: ignore[override]
        obj = self._obj
        if hasattr(obj, "read"):
            probe = obj.read(0)
            if isinstance(probe, bytes):
                return io.BufferedReader(ChunkStream(iter(lambda: obj.read(1 << 20), b"")))  # type: ignore[arg-type]
            return io.BufferedReader(ChunkStream(_encode(iter(lambda: obj.read(1 << 20), ""))))  # type: ignore[arg-type]
        return io.BufferedReader(ChunkStream(_encode(_lines(obj))))  # type: ignore[arg-type]


def _lines(items: Iterable[Any]) -> Iterator[str | bytes]:
    for ln in items:
        if isinstance(ln, bytes):
            yield ln if ln.endswith(b"\n") else ln + b"\n"
        else:
            s = str(ln)
            yield s if s.endswith("\n") else s + "\n"


def _encode(chunks: Iterable[str | bytes]) -> Iterator[bytes]:
    for c in chunks:
        yield c if isinstance(c, bytes) else c.encode("utf-8", "surrogateescape")


def _member_address(name: str) -> bool:
    """``archive.tgz:path/in/it``: an archive that exists before a colon."""
    return any(os.path.isfile(name[:i]) for i, ch in enumerate(name) if ch == ":" and i > 0)


def _is_path(obj: Any) -> bool:
    return isinstance(obj, os.PathLike) or (isinstance(obj, str) and "\n" not in obj and obj != "")


def _path_sources(p: Any) -> list[Source]:
    name = os.fspath(p)
    if name != "-" and not os.path.exists(name) and not _member_address(name):
        raise FileNotFoundError(2, "No such file or directory (to analyse log text, use classify_text)", name)
    return list(expand_paths([name]))


def to_sources(source: Any) -> list[Source]:
    """The sources of ``source`` (see the module docstring for what it may be).

    >>> [s.name for s in to_sources("examples/sglang-b300-flash-attn-cute.log")]
    ['examples/sglang-b300-flash-attn-cute.log']
    >>> [s.name for s in to_sources(["line one", "line two"])]
    ['<lines>']
    """
    if isinstance(source, Source):
        return [source]
    if isinstance(source, (bytes, bytearray)):
        return [_TextSource(bytes(source))]
    if isinstance(source, str) and not _is_path(source):
        return [_TextSource(source)]
    if _is_path(source):
        return _path_sources(source)
    if hasattr(source, "read"):
        return [_StreamSource(source, str(getattr(source, "name", "<stream>")))]
    if isinstance(source, (list, tuple)) and source and all(isinstance(p, os.PathLike) for p in source):
        out: list[Source] = []
        for p in source:
            out.extend(_path_sources(p))
        return out
    if isinstance(source, Iterable):
        return [_StreamSource(source, "<lines>")]
    raise TypeError(f"cannot read a log from {type(source).__name__}: pass a path, a file object, "
                    "an iterable of lines, bytes, or use classify_text")


def parse(source: LogSource, input_format: str = "auto") -> Iterator[Event]:
    """Yield the structured events of a log, streaming.

    >>> import forensics
    >>> kinds = {ev.kind for ev in forensics.parse("examples/sglang-b300-flash-attn-cute.log")}
    >>> "traceback" in kinds
    True
    """
    from forensics.pipeline import SourceEvents

    for src in to_sources(source):
        yield from SourceEvents(src, input_format)


def read_events(source: LogSource, input_format: str = "auto") -> "pd.DataFrame":
    """One row per event (columns: ``forensics.report.frames.EVENT_COLUMNS``). Needs ``forensics[batch]``.

    >>> import forensics
    >>> df = forensics.read_events("examples/sglang-b300-flash-attn-cute.log")
    >>> int((df["kind"] == "traceback").sum()) > 0
    True
    """
    from forensics.extras import need

    need("batch", "pandas")
    from forensics.report.frames import events_frame

    return events_frame(parse(source, input_format))


def classify(source: LogSource, input_format: str = "auto", use_classifier: bool = True) -> Any:
    """Diagnose a log: the JSON contract as a dict (``forensics/report/schema/forensics.schema.json``).

    One file, stream or text gives one dict; a directory, an archive (one dict
    per member; ``archive:path/in/it`` names one) or a list of paths gives a
    list of dicts, one per input (what ``classify --format json`` prints, line
    by line). A missing path raises ``FileNotFoundError``.

    >>> import forensics
    >>> res = forensics.classify("examples/sglang-b300-flash-attn-cute.log")
    >>> res["verdict"], res["root_cause"], res["phase"]
    ('failed', 'env.module-missing', 'warmup')
    >>> forensics.classify("server.lgo")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] No such file or directory (to analyse log text, use classify_text): 'server.lgo'
    >>> with open("examples/sglang-b300-flash-attn-cute.log", "rb") as f:
    ...     forensics.classify(f)["root_cause"]
    'env.module-missing'
    """
    from forensics.pipeline import diagnose_source

    sources = to_sources(source)
    results = [diagnose_source(s, input_format, use_classifier=use_classifier) for s in sources]
    many = (isinstance(source, (list, tuple)) and all(isinstance(p, os.PathLike) for p in source)) or \
        (_is_path(source) and os.path.exists(os.fspath(source))  # type: ignore[arg-type]
         and (os.path.isdir(os.fspath(source)) or any(s.member is not None for s in sources)))  # type: ignore[arg-type]
    return results if many else results[0]


def classify_text(text: str | bytes, input_format: str = "auto", use_classifier: bool = True,
                  name: str = "<text>") -> dict[str, Any]:
    """Diagnose log text held in memory (a paste, a notebook cell); ``name`` becomes ``source``.

    >>> import forensics
    >>> res = forensics.classify_text("RuntimeError: CUDA error: an illegal memory access was encountered\\n")
    >>> res["verdict"], res["root_cause"]
    ('failed', 'gpu.illegal-access')
    >>> forensics.classify_text("")["verdict"]
    'no-failure'
    """
    from forensics.pipeline import diagnose_source

    return diagnose_source(_TextSource(text, name), input_format, use_classifier=use_classifier)


def diff(good: Any, bad: Any, input_format: str = "auto", good_incident: int | None = None,
         bad_incident: int | None = None, use_classifier: bool = True) -> dict[str, Any]:
    """What differs between a run that worked and one that failed (the JSON contract of
    ``forensics diff --format json``). Each side: a path, or the log text itself.

    >>> import forensics
    >>> d = forensics.diff("corpora/gpu-pairs/gpu-pair-cxx-missing-good.log",
    ...                    "corpora/gpu-pairs/gpu-pair-cxx-missing-bad.log")
    >>> d["exit"], d["failure"]["root_cause"], d["new_in_bad_total"] > 0
    (1, 'toolchain.compiler-missing', True)
    """
    from forensics.drivers.diff import diff_sources

    g, b = to_sources(good), to_sources(bad)
    if len(g) != 1 or len(b) != 1:
        raise ValueError("diff compares one log with one log")
    return diff_sources(g[0], b[0], input_format, good_incident, bad_incident, use_classifier)


def batch(paths: Any, jobs: int | None = None, engine: str = "processes", scheduler: str | None = None) -> "pd.DataFrame":
    """One row per incident over many logs (columns: ``forensics.report.frames.INCIDENT_COLUMNS``).
    Needs ``forensics[batch]``.

    >>> import forensics
    >>> df = forensics.batch(["corpora/seeds"], jobs=1)
    >>> sorted(set(df["verdict"].dropna()))[:1]
    ['failed']
    """
    from forensics.extras import need

    need("batch", "pandas")
    from forensics.drivers.batch import run_batch

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for p in paths:
        if os.fspath(p) != "-" and not os.path.exists(os.fspath(p)):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(p))
    return run_batch([os.fspath(p) for p in paths], jobs=jobs, engine=engine, scheduler=scheduler)
