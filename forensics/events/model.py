"""Typed events: what every later stage consumes.

One small frozen dataclass for all kinds keeps the hot path cheap (a single
class, ``__slots__``); kind-specific fields live in ``data`` and are merged
into the JSON form, so ``forensics parse`` prints ``count`` for a
``cuda_graph_registration`` and ``frames`` for a ``traceback`` at top level.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Mapping

_EMPTY: Mapping[str, Any] = MappingProxyType({})

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


@dataclass(frozen=True, slots=True)
class Event:
    kind: str
    line: int
    text: str
    ts: datetime | None = None
    host: str | None = None
    ident: str | None = None
    pid: int | None = None
    rank: str | None = None
    level: str | None = None
    logger: str | None = None
    end_line: int | None = None
    source: str = "-"
    data: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    # Traceback conveniences (None on other kinds).
    @property
    def exceptions(self) -> tuple[ExceptionRecord, ...]:
        return self.data.get("chain", ())

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
