"""The catalogue's lookup index, unpacked, in the start-up cache (issue 29).

Loading the packed index (``catalogue_index``) decompresses 2.2 MB into
7 MB and walks it three times (template lengths, key lengths and their
CRC-32s): ~0.1 s of every run whose lines reach the catalogue (the archives
of real logs, the classifier's features), as long as a short start. Here the
result is kept as it is held in memory: the three byte strings end to end and
the offset and CRC arrays, in one entry of the cache directory
(``forensics.cache``: private, digest-checked; keyed by the index file's
bytes, this code and the machine's array layout). Read back, the three tables
point into that one body (their offsets shifted by where each starts): one
copy of the bytes, no pass over them. Any doubt is a miss, and the index is
unpacked as without a cache.
"""
from __future__ import annotations

import hashlib
import marshal
import sys
from array import array
from pathlib import Path
from typing import Any

from forensics.events.catalogue_packed import FunctionTable, KeyTable, PackedStrings

KIND = "catalogue-index"
FUNCTIONS_KIND = "catalogue-functions"
FORMAT = 1


def key_of(raw: bytes) -> str:
    """The entry's key: the index file's bytes, the code that writes and reads
    the tables (this module and ``catalogue_packed``, by their source), the array layout."""
    from forensics.events import catalogue_packed

    h = hashlib.sha256(raw)
    h.update(f"{FORMAT}|{sys.byteorder}|{array('I').itemsize}|{array('q').itemsize}".encode())
    for mod in (__file__, catalogue_packed.__file__):
        try:
            h.update(Path(mod).with_suffix(".py").read_bytes())
        except OSError:
            h.update(mod.encode())
    return h.hexdigest()[:32]


def read(key: str) -> tuple[bytes, PackedStrings, KeyTable] | None:
    """(the header's JSON, the templates, the key table), or None."""
    from forensics.cache import read_entry

    body = read_entry(KIND, key, max_bytes=256 << 20)
    if body is None or len(body) < 8:
        return None
    try:
        n = int.from_bytes(body[-8:], "little")
        head, tables, crcs, order = marshal.loads(body[-8 - n:-8])
        packed = []
        for typecode, at, end, count in tables:  # templates, keys, values
            cum = _array(body, (typecode, at, end))
            if len(cum) != count + 1 or (count and cum[-1] + count - 1 > len(body)):
                return None
            packed.append(PackedStrings.at(body, cum))
        templates, keys, values = packed
        table = KeyTable.of_arrays(keys, values, _array(body, crcs), _array(body, order) if order else None)
    except (ValueError, EOFError, TypeError, IndexError, OverflowError):
        return None
    return head, templates, table


def _array(body: bytes, where: tuple[str, int, int]) -> array:
    typecode, at, end = where
    out = array(typecode)
    out.frombytes(body[at:end])
    return out


def write(key: str, head: bytes, templates: PackedStrings, table: KeyTable) -> None:
    """Best effort: the tables as ``read`` finds them (each table's offsets
    shifted by where its bytes start in the body)."""
    from forensics.cache import write_entry

    parts: list[bytes] = []
    size = 0

    def put(data: bytes) -> tuple[int, int]:
        nonlocal size
        at = size
        parts.append(data)
        size += len(data)
        return at, size

    three = (templates, table.keys, table.values)
    starts = [put(p.blob)[0] for p in three]
    tables = []
    for p, start in zip(three, starts):
        cum = array("I" if start + len(p.blob) < 1 << 32 else "q", (c + start for c in p._cum))
        tables.append((cum.typecode, *put(cum.tobytes()), len(p)))
    crcs = (table._crcs.typecode, *put(table._crcs.tobytes()))
    order: Any = None
    if table._order is not None:
        order = (table._order.typecode, *put(table._order.tobytes()))
    meta = marshal.dumps((head, tables, crcs, order))
    put(meta)
    put(len(meta).to_bytes(8, "little"))
    write_entry(KIND, key, b"".join(parts))


def read_functions(key: str) -> FunctionTable | None:
    """The function table as ``FunctionTable`` packed it (names, spans, compressed runs), or None."""
    from forensics.cache import read_entry

    body = read_entry(FUNCTIONS_KIND, key, max_bytes=64 << 20)
    if body is None:
        return None
    try:
        blob, cum, at, runs = marshal.loads(body)
        names = PackedStrings.at(blob, _array(cum, (cum[:1].decode("ascii"), 1, len(cum))))
        return FunctionTable.of_parts(names, _array(at, (at[:1].decode("ascii"), 1, len(at))), list(runs))
    except (ValueError, EOFError, TypeError, IndexError, OverflowError, UnicodeDecodeError):
        return None


def write_functions(key: str, table: FunctionTable) -> None:
    from forensics.cache import write_entry

    parts = table.parts()
    if parts is None:
        return
    names, at, runs = parts
    try:
        body = marshal.dumps((names.blob, names._cum.typecode.encode() + names._cum.tobytes(),
                              at.typecode.encode() + at.tobytes(), tuple(runs)))
    except ValueError:
        return
    write_entry(FUNCTIONS_KIND, key, body)
