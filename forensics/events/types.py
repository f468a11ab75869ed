"""Typed events: what every later stage consumes.

One small frozen dataclass for all kinds keeps the hot path cheap (a single
class, ``__slots__``); kind-specific fields live in ``data`` and are merged
into the JSON form, so ``forensics parse`` prints ``count`` for a
``cuda_graph_registration`` and ``frames`` for a ``traceback`` at top level.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

_EMPTY: Mapping[str, Any] = {}  # shared and never mutated (a plain dict pickles; MappingProxyType does not)

# Event kinds (the `kind` field of `forensics parse`).
MESSAGE = "message"  # a line the grammar does not know (kept, never dropped)
LOG = "log"  # a line with a recognised logger prefix / level
TRACEBACK = "traceback"
UNIT_LIFECYCLE = "unit_lifecycle"
PHASE_MARKER = "phase_marker"
CUDA_GRAPH_REGISTRATION = "cuda_graph_registration"
PACKAGE_WALK_WARNING = "package_walk_warning"
ACCESS = "access"
JOURNAL_MARKER = "journal_marker"
BLOB = "blob"  # journald's "[5.3K blob data]": content unknown

KINDS = (
    MESSAGE, LOG, TRACEBACK, UNIT_LIFECYCLE, PHASE_MARKER, CUDA_GRAPH_REGISTRATION,
    PACKAGE_WALK_WARNING, ACCESS, JOURNAL_MARKER, BLOB,
)


@dataclass(frozen=True, slots=True)
class Frame:
    file: str
    lineno: int | None
    function: str | None
    source: str | None = None
    partial: bool = False  # the File line itself was cut (e.g. ends mid-path)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "line": self.lineno, "function": self.function}
        if self.source is not None:
            d["source"] = self.source
        if self.partial:
            d["partial"] = True
        return d

    @property
    def module(self) -> str:
        """Dotted module guess from the path (``.../site-packages/flashinfer/jit/core.py`` -> ``flashinfer.jit.core``)."""
        path = self.file.replace("\\", "/")
        for anchor in ("site-packages/", "dist-packages/", "/python/", "/src/"):
            i = path.rfind(anchor)
            if i >= 0:
                path = path[i + len(anchor):]
                break
        else:
            path = path.rsplit("/", 3)[-1] if "/" in path else path
        if path.endswith(".py"):
            path = path[:-3]
        return path.strip("/").replace("/", ".")


@dataclass(frozen=True, slots=True)
class ExceptionRecord:
    """One exception of a (possibly chained) traceback."""

    exc_type: str | None
    exc_message: str
    frames: tuple[Frame, ...] = ()
    relation: str | None = None  # how it links to the previous one: "cause" | "context" | "group-member"
    line: int | None = None  # input line of the exception line

    @property
    def rendered(self) -> str:
        if self.exc_type is None:
            return self.exc_message
        return f"{self.exc_type}: {self.exc_message}" if self.exc_message else self.exc_type

    def to_dict(self) -> dict[str, Any]:
        return {
            "exc_type": self.exc_type,
            "exc_message": self.exc_message,
            "relation": self.relation,
            "line": self.line,
            "frames": [f.to_dict() for f in self.frames],
        }


_encode_basestring = json.encoder.encode_basestring  # the C implementation when available
_LINE_SEPARATORS = ("\u2028", "\u2029", "\u0085")


def _encode_str(value: str) -> str:
    """JSON string; also escapes the characters that ``str.splitlines()``
    treats as line breaks, so NDJSON stays one object per line for every reader."""
    js = _encode_basestring(value)
    return js if value.isascii() else _no_line_separators(js)


def _no_line_separators(js: str) -> str:
    for ch in _LINE_SEPARATORS:
        if ch in js:
            js = js.replace(ch, f"\\u{ord(ch):04x}")
    return js


def _flat_fragment(data: Mapping[str, Any]) -> str | None:
    """``,"key":value`` for each item of a flat ``data`` (str, int, None,
    bool values); None when a value needs the general encoder."""
    bits = []
    for k, v in data.items():
        t = type(v)
        if t is str:
            bits.append(f',"{k}":{_encode_str(v)}')
        elif t is int:
            bits.append(f',"{k}":{v}')
        elif v is None:
            bits.append(f',"{k}":null')
        elif t is bool:
            bits.append(f',"{k}":{"true" if v else "false"}')
        else:
            return None
    return "".join(bits)
_SIMPLE = (str, int, float, bool, type(None))
_ENC_CACHE: dict[Any, str] = {None: "null"}  # host, ident, rank, level: few distinct values
_WHO_CACHE: dict[tuple, str] = {}
_EXTRA_CACHE: dict[int, tuple[Any, str]] = {}  # shared data dicts -> their JSON fragment
_SHARED: list = []  # data dicts that stages reuse for many events (kept alive here)
_SHARED_IDS: set[int] = set()
# Data dicts shared by the events of many lines for a while (``hot_data``):
# id -> (the dict, its JSON fragment once made). Bounded: cleared when full.
_HOT_EXTRA: dict[int, tuple[Any, str | None]] = {}
HOT_LIMIT = 4096


def share_data(d: dict) -> dict:
    """Mark ``d`` as shared by many events (never mutated), so its JSON is encoded once."""
    _SHARED.append(d)
    _SHARED_IDS.add(id(d))
    return d


_SOURCE_FRAGMENTS: dict[str, str] = {}  # source name -> ',"source":"name"' (one or a few a run)


def _source_fragment(source: str) -> str:
    frag = ',"source":' + (_ENC_CACHE.get(source) or _cached_enc(source))
    if len(_SOURCE_FRAGMENTS) >= 64:
        _SOURCE_FRAGMENTS.clear()
    _SOURCE_FRAGMENTS[source] = frag
    return frag


def hot_data(d: dict) -> dict:
    """Mark ``d`` (never mutated) as shared by the events of many lines, so
    ``to_json`` encodes it once while it is remembered (a bounded table)."""
    if len(_HOT_EXTRA) >= HOT_LIMIT:
        _HOT_EXTRA.clear()
    _HOT_EXTRA[id(d)] = (d, None)
    return d


def _cached_enc(value: str | None) -> str:
    if value is None:
        return "null"
    js = _encode_str(value)
    if len(_ENC_CACHE) < 4096:
        _ENC_CACHE[value] = js
    return js



def _who_fragment(who: tuple) -> str:
    """The JSON of host/ident/pid/rank/level: they repeat across thousands of
    lines, so each combination is encoded once (``_WHO_CACHE``)."""
    c = _ENC_CACHE
    host, ident, pid, rank, level = who
    frag = "".join((',"host":', c.get(host) or _cached_enc(host),
                    ',"ident":', c.get(ident) or _cached_enc(ident),
                    ',"pid":', "null" if pid is None else str(pid),
                    ',"rank":', c.get(rank) or _cached_enc(rank),
                    ',"level":', c.get(level) or _cached_enc(level)))
    if len(_WHO_CACHE) > 4096:
        _WHO_CACHE.clear()
    _WHO_CACHE[who] = frag
    return frag

class Event:
    """One event. A plain ``__slots__`` class rather than a frozen dataclass:
    it is built once per input line, and frozen-dataclass construction costs
    several times more. Stages never mutate events."""

    __slots__ = ("kind", "line", "text", "ts", "host", "ident", "pid", "rank", "level", "logger", "end_line",
                 "source", "data")

    def __init__(self, kind: str, line: int, text: str, ts: datetime | None = None, host: str | None = None,
                 ident: str | None = None, pid: int | None = None, rank: str | None = None,
                 level: str | None = None, logger: str | None = None, end_line: int | None = None,
                 source: str = "-", data: Mapping[str, Any] | None = None) -> None:
        self.kind = kind
        self.line = line
        self.text = text
        self.ts = ts
        self.host = host
        self.ident = ident
        self.pid = pid
        self.rank = rank
        self.level = level
        self.logger = logger
        self.end_line = end_line
        self.source = source
        self.data = data if data is not None else _EMPTY

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Event({self.kind!r}, line={self.line}, text={self.text[:60]!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    # Traceback conveniences (None on other kinds).
    @property
    def exceptions(self) -> tuple[ExceptionRecord, ...]:
        return self.data.get("chain", ())

    def to_json(self, source: str | None = None, ts_cache: list | None = None) -> str:
        """The NDJSON form of ``to_dict()`` (plus ``source``), built directly
        for the common flat events: this runs once per input line."""
        data = self.data
        if data:
            key = id(data)
            cached = _EXTRA_CACHE.get(key) or _HOT_EXTRA.get(key)
            if cached is not None and cached[0] is data and cached[1] is not None:
                extra = cached[1]
            else:
                extra = _flat_fragment(data)
                if extra is None:  # frames, chains: the general encoder
                    d = self.to_dict()
                    if source is not None:
                        d["source"] = source
                    return json.dumps(d, ensure_ascii=False, default=str)
                if key in _SHARED_IDS:
                    _EXTRA_CACHE[key] = (data, extra)
                elif cached is not None and cached[0] is data:
                    _HOT_EXTRA[key] = (data, extra)
        else:
            extra = ""
        ts = self.ts
        if ts is None:
            ts_s = "null"
        elif ts_cache is not None and ts_cache[0] is ts:
            ts_s = ts_cache[1]
        else:
            ts_s = '"' + ts.isoformat() + '"'
            if ts_cache is not None:
                ts_cache[0], ts_cache[1] = ts, ts_s
        who = (self.host, self.ident, self.pid, self.rank, self.level)
        frag = _WHO_CACHE.get(who) or _who_fragment(who)
        text = self.text
        js = _encode_basestring(text)
        if not text.isascii():
            js = _no_line_separators(js)
        logger = self.logger
        end = self.end_line
        c = _ENC_CACHE
        tail = "" if logger is None else ',"logger":' + (c.get(logger) or _cached_enc(logger))
        if end is not None and end != self.line:
            tail += f',"end_line":{end}'
        src = "" if source is None else _SOURCE_FRAGMENTS.get(source) or _source_fragment(source)
        return f'{{"kind":"{self.kind}","line":{self.line},"ts":{ts_s}{frag},"text":{js}{tail}{extra}{src}}}'

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "line": self.line,
            "ts": self.ts.isoformat() if self.ts is not None else None,
            "host": self.host,
            "ident": self.ident,
            "pid": self.pid,
            "rank": self.rank,
            "level": self.level,
            "text": self.text,
        }
        if self.logger is not None:
            d["logger"] = self.logger
        if self.end_line is not None and self.end_line != self.line:
            d["end_line"] = self.end_line
        for k, v in self.data.items():
            if k == "chain":
                d["chain"] = [e.to_dict() for e in v]
            elif k == "frames":
                d["frames"] = [f.to_dict() for f in v]
            else:
                d[k] = v
        return d
