"""The per-lifetime answers of one log, kept compressed: memory flat in the
number of process lifetimes.

A crash-looping service leaves thousands of lifetimes in one log; each
finished incident's answer (a dict of ~2 KB as JSON, several times that as
Python objects) is packed into zlib blocks of ``BLOCK`` answers as soon as
it is diagnosed (a block packs to ~100-200 bytes an answer), so 10,000
lifetimes cost a few MB instead of hundreds, and sealed blocks go to a
temporary file (memory flat in the number of lifetimes; in memory when no
file can be written). It reads as a sequence of the
same dicts (``len``, indexing, slices, iteration), and ``dumps`` writes a
result holding one as JSON, identical to ``json.dumps`` of the plain list,
one answer at a time.
"""
from __future__ import annotations

import json
import tempfile
import zlib
from collections.abc import Sequence
from typing import Any, Callable, Iterator, TextIO

BLOCK = 128


class IncidentSpool(Sequence):
    """Append-only sequence of JSON-able dicts, stored as compressed blocks."""

    def __init__(self) -> None:
        # Sealed blocks: (offset, size) in a temporary file, so memory stays flat
        # however many lifetimes; the bytes themselves where no file can be written.
        self._blocks: list[tuple[int, int] | bytes] = []
        self._file: Any = None
        self._open: list[str] = []  # JSON texts of the block being filled
        self._n = 0
        self._cache: tuple[int, list[dict[str, Any]]] | None = None
        # The candidates for the top level, as given (not through JSON): the
        # last failed answer, else the last one.
        self.last: dict[str, Any] | None = None
        self.last_failed: dict[str, Any] | None = None

    def append(self, item: dict[str, Any]) -> None:
        self._open.append(json.dumps(item, ensure_ascii=False, default=str))
        self.last = item
        if item.get("verdict") == "failed":
            self.last_failed = item
        self._n += 1
        if len(self._open) >= BLOCK:
            self._seal()

    def _seal(self) -> None:
        data = zlib.compress(("\n".join(self._open)).encode("utf-8", "surrogatepass"), 6)
        self._open = []
        self._blocks.append(self._store(data))

    def _store(self, data: bytes) -> tuple[int, int] | bytes:
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="forensics-spool-")
            at = self._file.seek(0, 2)
            self._file.write(data)
            return (at, len(data))
        except OSError:  # no temporary directory, a full disk: kept in memory
            return data

    def _sealed(self, b: int) -> bytes:
        kept = self._blocks[b]
        if isinstance(kept, bytes):
            return kept
        at, size = kept
        self._file.seek(at)
        data = self._file.read(size)
        if len(data) != size:
            raise OSError("the incident spool's temporary file was cut short")
        return data

    def _block(self, b: int) -> list[dict[str, Any]]:
        if b == len(self._blocks):
            return [json.loads(t) for t in self._open]
        if self._cache is None or self._cache[0] != b:
            text = zlib.decompress(self._sealed(b)).decode("utf-8", "surrogatepass")
            self._cache = (b, [json.loads(t) for t in text.split("\n")])
        return self._cache[1]

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("incident index out of range")
        return self._block(i // BLOCK)[i % BLOCK]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for b in range(len(self._blocks) + 1):
            yield from self._block(b)

    def texts(self) -> Iterator[str]:
        """Each answer's JSON text as stored: ``json.dumps(item,
        ensure_ascii=False, default=str)``, what the encoder would write for it
        (a JSON round trip encodes back to the same text)."""
        for b in range(len(self._blocks)):
            yield from zlib.decompress(self._sealed(b)).decode("utf-8", "surrogatepass").split("\n")
        yield from self._open

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (IncidentSpool, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _Streamed(list):
    """What the pure-Python JSON encoder iterates for a spool: its items, one
    at a time (the list itself stays empty)."""

    def __init__(self, spool: IncidentSpool) -> None:
        super().__init__()
        self.spool = spool

    def __iter__(self) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        return iter(self.spool)

    def __len__(self) -> int:
        return len(self.spool)

    def __bool__(self) -> bool:
        return len(self.spool) > 0


def _default(fallback: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def default(o: Any) -> Any:
        if isinstance(o, IncidentSpool):
            return _Streamed(o)
        if fallback is not None:
            return fallback(o)
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    return default


class _NestedSpool(Exception):
    """A spool below the top level: the general (pure-Python) encoder streams it."""


def _no_spool(fallback: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def default(o: Any) -> Any:
        if isinstance(o, IncidentSpool):
            raise _NestedSpool
        if fallback is not None:
            return fallback(o)
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    return default


def _dump_top(obj: dict[str, Any], out: TextIO, default: Callable[[Any], Any] | None) -> bool:
    """The common shape, written fast: a dict whose spools are its own values.
    Its other values go through the C encoder, a spool's answers are written
    as stored (no decoding and encoding again); the same text as the general
    path (separators ", " and ": ", as ``json.dumps`` without indent). False,
    having written nothing, when ``obj`` is not of that shape."""
    enc = json.JSONEncoder(ensure_ascii=False, default=_no_spool(default))
    parts: list[str | IncidentSpool] = []
    try:
        for k, v in obj.items():
            if not isinstance(k, str):
                return False
            parts.append(enc.encode(k) + ": ")
            parts.append(v if isinstance(v, IncidentSpool) else enc.encode(v))
    except _NestedSpool:
        return False
    out.write("{")
    for i in range(0, len(parts), 2):
        if i:
            out.write(", ")
        out.write(parts[i])  # type: ignore[arg-type]
        v = parts[i + 1]
        if isinstance(v, IncidentSpool):
            _write_spool(v, out)
        else:
            out.write(v)
    out.write("}")
    return True


def _write_spool(spool: IncidentSpool, out: TextIO) -> None:
    buf: list[str] = ["["]
    size = 0
    for n, text in enumerate(spool.texts()):
        if n:
            buf.append(", ")
        buf.append(text)
        size += len(text)
        if size >= 1 << 16:
            out.write("".join(buf))
            buf, size = [], 0
    buf.append("]")
    out.write("".join(buf))


def dump(obj: Any, out: TextIO, indent: int | None = None, default: Callable[[Any], Any] | None = str) -> None:
    """``out.write(json.dumps(obj, ensure_ascii=False, indent=indent, default=default))``,
    streaming any spool inside ``obj`` instead of building it in memory."""
    if indent is None and isinstance(obj, dict) and _dump_top(obj, out, default):
        return
    enc = json.JSONEncoder(ensure_ascii=False, indent=indent, default=_default(default))
    buf: list[str] = []
    size = 0
    for chunk in enc.iterencode(obj):
        buf.append(chunk)
        size += len(chunk)
        if size >= 1 << 16:
            out.write("".join(buf))
            buf, size = [], 0
    out.write("".join(buf))


def dumps(obj: Any, indent: int | None = None, default: Callable[[Any], Any] | None = str) -> str:
    import io

    buf = io.StringIO()
    dump(obj, buf, indent, default)
    return buf.getvalue()
