"""The catalogue's lookup tables packed into a few flat buffers.

Held as Python objects, the lookup index (75k template byte strings, a 61k-key
dict of key word -> entry numbers) cost ~18 MiB for the whole run, and the
function table (7k modules, 42k functions) another ~7 MiB once a traceback
asked for it. Here each is one byte string plus arrays of offsets: the same
lookups, a few MiB, and loading costs a handful of C-speed passes.
"""
from __future__ import annotations

import bisect
import json
import re
import struct
import zlib
from array import array
from collections.abc import Iterator, Mapping
from itertools import accumulate, chain
from typing import Iterable, Sequence

from forensics.events.textmemo import remember

SEP = b"\x1f"


def gunzip(data: bytes) -> bytes:
    """``gzip.decompress(data)``, into one buffer of the size the gzip trailer
    gives (``zlib`` otherwise grows blocks and joins them: a transient of
    ~3x the output, 20 MB for the lookup index). That trailer is the first
    member's when no second member's header follows anywhere."""
    if len(data) >= 18 and data.find(_GZIP_MAGIC, 1) < 0:
        size = struct.unpack("<I", data[-4:])[0]
        out = zlib.decompress(data, 31, max(size, 1))  # checks the member's CRC and size itself
        if len(out) == size:
            return out
    import gzip

    return gzip.decompress(data)  # several members (or a damaged file: its own error)


_GZIP_MAGIC = b"\x1f\x8b\x08"  # ID1 ID2 CM (deflate): how every member starts


# 4-byte offsets where they fit (half the size of "q"); C leaves int's size open.
_U32 = "I" if array("I").itemsize >= 4 else "L"
_CHUNK = 1 << 16


def _split(blob: bytes) -> Iterator[list[bytes]]:
    """``blob.split(SEP)`` a ~64 KB run at a time: the same parts, never a
    list of all 75k of them (whose small objects would leave the heap
    fragmented for the rest of the run)."""
    pos, n = 0, len(blob)
    while True:
        end = blob.find(SEP, pos + _CHUNK) if pos + _CHUNK < n else -1
        if end < 0:
            yield blob[pos:].split(SEP)
            return
        yield blob[pos:end].split(SEP)
        pos = end + 1


class PackedStrings(Sequence):
    """Byte strings kept as one ``SEP``-joined blob and the running total of
    their lengths (item ``i`` starts ``i`` separators and ``cum[i]`` bytes
    in; an item may hold ``SEP`` itself: the lengths delimit them)."""

    __slots__ = ("blob", "_cum")

    def __init__(self, blob: bytes, lengths: Iterable[int]) -> None:
        self.blob = blob
        self._cum = array(_U32 if len(blob) < 1 << 32 else "q", accumulate(lengths, initial=0))

    @classmethod
    def split(cls, blob: bytes) -> "PackedStrings":
        """The items of a ``SEP``-joined blob (``blob.split(SEP)``, without the list)."""
        return cls(blob, chain.from_iterable(map(len, part) for part in _split(blob)))

    @classmethod
    def of(cls, items: Sequence[bytes]) -> "PackedStrings":
        return cls(SEP.join(items), map(len, items))

    @classmethod
    def at(cls, blob: bytes, cum: array) -> "PackedStrings":
        """Items whose running totals ``cum`` are given (offset by where they start in ``blob``)."""
        out = cls.__new__(cls)
        out.blob, out._cum = blob, cum
        return out

    def __len__(self) -> int:
        return len(self._cum) - 1

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("packed string index out of range")
        return self.blob[self._cum[i] + i:self._cum[i + 1] + i]


class KeyTable:
    """Key words -> their text (the entry numbers, ``"i,j"``): ``get`` answers
    as ``dict(zip(keys, values)).get`` would. The keys are found by their
    CRC-32 in a sorted array (``bisect``, in C), then compared in full. The
    miner writes the keys in CRC order, so loading sorts nothing; an index in
    any other order is sorted here (slower, same answers)."""

    __slots__ = ("keys", "values", "_crcs", "_order")

    def __init__(self, keys: PackedStrings, values: PackedStrings, crcs: list[int]) -> None:
        """``keys``: the key words' UTF-8; ``values``: the text of each, in the
        same order; ``crcs``: each key's CRC-32."""
        if not len(keys) == len(values) == len(crcs):
            raise ValueError("catalogue index: as many keys as entry lists")
        self.keys, self.values = keys, values
        self._order: array | None = None
        in_order = sorted(crcs)  # linear on the miner's order (one run)
        if in_order != crcs:
            order = sorted(range(len(crcs)), key=crcs.__getitem__)
            self._order = array(_U32, order)
        self._crcs = array(_U32, in_order)

    @classmethod
    def of_arrays(cls, keys: PackedStrings, values: PackedStrings, crcs: array, order: array | None) -> "KeyTable":
        """A table as ``__init__`` left one: ``crcs`` sorted, ``order`` their keys' places (or None)."""
        if not len(keys) == len(values) == len(crcs) or order is not None and len(order) != len(crcs):
            raise ValueError("catalogue index: as many keys as entry lists")
        out = cls.__new__(cls)
        out.keys, out.values, out._crcs, out._order = keys, values, crcs, order
        return out

    @classmethod
    def split(cls, keys: bytes, values: bytes) -> "KeyTable":
        """From the index's two ``SEP``-joined lines (keys, then their values)."""
        lengths: list[int] = []
        crcs: list[int] = []
        for part in _split(keys):  # one pass gives both
            lengths += map(len, part)
            crcs += map(zlib.crc32, part)
        return cls(PackedStrings(keys, lengths), PackedStrings.split(values), crcs)

    @classmethod
    def of(cls, keys: Sequence[str], values: Sequence[str]) -> "KeyTable":
        raw = [k.encode("utf-8") for k in keys]
        return cls(PackedStrings.of(raw), PackedStrings.of([v.encode("ascii") for v in values]),
                   list(map(zlib.crc32, raw)))

    def __len__(self) -> int:
        return len(self.keys)

    def _find(self, key: str) -> int:
        try:
            b = key.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no key of a UTF-8 index holds one
            return -1
        h = zlib.crc32(b)
        crcs, order, keys = self._crcs, self._order, self.keys
        j = bisect.bisect_left(crcs, h)
        while j < len(crcs) and crcs[j] == h:
            k = order[j] if order is not None else j
            if keys[k] == b:
                return k
            j += 1
        return -1

    def __contains__(self, key: str) -> bool:
        return self._find(key) >= 0

    def get(self, key: str) -> str | None:
        k = self._find(key)
        return None if k < 0 else self.values[k].decode("ascii")

    def items(self) -> Iterator[tuple[str, str]]:
        for k, v in zip(self.keys, self.values):
            yield k.decode("utf-8"), v.decode("ascii")


def crc_order(keys: Sequence[str]) -> list[int]:
    """The order the miner writes key words in (by CRC-32 of their UTF-8, then
    the key), so that ``KeyTable`` loads them without sorting."""
    return sorted(range(len(keys)), key=lambda i: (zlib.crc32(keys[i].encode("utf-8")), keys[i]))


# One module of the function table's JSON: "module":{"function":"phase",...}.
# Only a table written without escapes or spaces is read this way (see FunctionTable).
_MODULE = re.compile(rb'"([^"]*)":(\{[^{}]*\})')
MODULES_KEPT = 64  # modules' function maps kept parsed (a traceback names a few)


class FunctionTable(Mapping):
    """``module -> {function: phase}`` read from the table's JSON text as it
    is needed: the module names (packed), and each module's object in a run
    of ~``RUN_CHARS`` of the text kept zlib-compressed (~0.7 MB instead of
    the 1.7 MB text; a lookup decompresses one run). A table this cannot
    vouch for (escapes, spaces, modules out of order, anything but one flat
    object per module) is parsed whole instead."""

    def __init__(self, text: bytes) -> None:
        """``text``: the table's JSON as UTF-8 (bytes: the 1.7 MB is held once,
        briefly, and never decoded whole)."""
        self._parsed: dict[str, dict[str, str]] = {}
        self._whole: dict[str, dict[str, str]] | None = None
        self._runs: list[bytes] = []
        self._run: tuple[int, bytes] = (-1, b"")  # the last run decompressed
        spans = _module_spans(text)
        if spans is None:
            self._whole = json.loads(text)
            spans = array(_U32), array(_U32)
        names, objs = spans
        self._names = PackedStrings.of([text[names[k]:names[k + 1]] for k in range(0, len(names), 2)])
        self._at = array(_U32)  # per module: its run, and its object's start and end in the run
        self._pack_runs(text, objs)

    @classmethod
    def of_parts(cls, names: PackedStrings, at: array, runs: list[bytes]) -> "FunctionTable":
        """A table as ``__init__`` packed one (``parts`` gives them)."""
        if len(at) != 3 * len(names) or any(r >= len(runs) for r in at[::3]):
            raise ValueError("function table: a module's run is missing")
        out = cls.__new__(cls)
        out._parsed, out._whole, out._run = {}, None, (-1, b"")
        out._names, out._at, out._runs = names, at, runs
        return out

    def parts(self) -> tuple[PackedStrings, array, list[bytes]] | None:
        """What ``of_parts`` takes, or None for a table parsed whole."""
        return None if self._whole is not None else (self._names, self._at, self._runs)

    def _pack_runs(self, text: bytes, objs: array) -> None:
        start = 0  # where the run being filled starts in text
        for k in range(0, len(objs), 2):
            a, b = objs[k], objs[k + 1]
            if b - start > RUN_CHARS and k:
                self._runs.append(zlib.compress(text[start:a], 1))
                start = a
            self._at.extend((len(self._runs), a - start, b - start))
        if len(objs):
            self._runs.append(zlib.compress(text[start:objs[-1]], 1))

    def _name(self, j: int) -> str:
        return self._names[j].decode("utf-8")

    def __len__(self) -> int:
        return len(self._whole) if self._whole is not None else len(self._names)

    def __iter__(self) -> Iterator[str]:
        if self._whole is not None:
            return iter(self._whole)
        return (self._name(j) for j in range(len(self)))

    def __getitem__(self, module: str) -> dict[str, str]:
        if self._whole is not None:
            return self._whole[module]
        got = self._parsed.get(module)
        if got is None:
            try:
                want = module.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: no module of a UTF-8 table
                raise KeyError(module) from None
            n, names = len(self), self._names
            j = bisect.bisect_left(range(n), want, key=names.__getitem__)  # UTF-8 keeps code point order
            if j >= n or names[j] != want:
                raise KeyError(module)
            r, a, b = self._at[3 * j:3 * j + 3]
            if self._run[0] != r:
                self._run = (r, zlib.decompress(self._runs[r]))
            got = remember(self._parsed, module, json.loads(self._run[1][a:b]), MODULES_KEPT)
        return got


RUN_CHARS = 1 << 14


def _module_spans(text: bytes) -> tuple[array, array] | None:
    """Each module's name and object span in ``text``, when ``text`` is exactly
    ``{"m":{...},"m":{...}}`` with modules in strictly increasing order and no
    escapes (so every quote delimits a string); else None."""
    if b"\\" in text or not text.startswith(b"{") or not text.endswith(b"}"):
        return None
    names, objs = array(_U32), array(_U32)
    pos, prev, last = 1, None, len(text) - 1
    if text == b"{}":
        return names, objs
    for m in _MODULE.finditer(text, 1, last):
        if m.start() != pos or (prev is not None and not prev < m.group(1)):
            return None
        names.extend(m.span(1))
        objs.extend(m.span(2))
        prev, pos = m.group(1), m.end() + 1
        if m.end() == last:
            return names, objs
        if text[m.end()] != 0x2C:  # ","
            return None
    return None
