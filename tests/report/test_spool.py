"""The per-lifetime answers of a long log, kept compressed and on disk
(issue 14: memory flat in the number of lifetimes): the spool reads back as
the very list it was given, and its JSON is ``json.dumps`` of that list,
with a temporary file or, where none can be written, in memory."""
from __future__ import annotations

import json
import tempfile

import pytest

from forensics.report import spool as S


def _answers(n: int) -> list[dict]:
    return [{"index": i, "verdict": "failed" if i % 3 else "ready", "text": f"line {i} \u00e9 \udcff",
             "evidence": [{"line": i, "text": "x" * (i % 50)}]} for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, S.BLOCK - 1, S.BLOCK, S.BLOCK + 1, 5 * S.BLOCK + 7])
def test_the_spool_reads_back_as_the_list_it_was_given(n):
    items = _answers(n)
    sp = S.IncidentSpool()
    for it in items:
        sp.append(it)
    want = json.loads(json.dumps(items, ensure_ascii=False))
    assert len(sp) == n and list(sp) == want and sp == want
    if n:
        assert sp[-1] == want[-1] and sp[n // 2] == want[n // 2] and sp[1:4] == want[1:4]
        failed = [i for i in items if i["verdict"] == "failed"]
        assert sp.last == items[-1] and sp.last_failed == (failed[-1] if failed else None)
    doc = {"source": "x", "incidents": sp}
    assert S.dumps(doc) == json.dumps({"source": "x", "incidents": items}, ensure_ascii=False, default=str)
    if n >= S.BLOCK:
        assert sp._file is not None and all(isinstance(b, tuple) for b in sp._blocks)  # sealed blocks are on disk


def test_without_a_temporary_file_the_blocks_stay_in_memory(monkeypatch):
    def refuse(*a, **k):
        raise OSError("read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    items = _answers(3 * S.BLOCK + 5)
    sp = S.IncidentSpool()
    for it in items:
        sp.append(it)
    assert all(isinstance(b, bytes) for b in sp._blocks)
    assert list(sp) == json.loads(json.dumps(items, ensure_ascii=False))


def test_a_temporary_file_cut_short_is_an_error_not_a_wrong_answer():
    sp = S.IncidentSpool()
    for it in _answers(2 * S.BLOCK + 1):
        sp.append(it)
    sp._file.truncate(10)
    with pytest.raises(OSError):
        list(sp)


def test_the_fast_dump_writes_what_the_general_encoder_writes():
    """The spool's stored answers written as they are (issue 29: JSON as fast
    as text): the same text as json.dumps of the plain lists, whatever else
    the document holds, and the general path where a spool is nested deeper."""
    from datetime import datetime, timezone
    from pathlib import Path

    items = _answers(2 * S.BLOCK + 3)
    items[5]["when"] = datetime(2026, 1, 2, tzinfo=timezone.utc)  # default=str, inside a stored answer
    items[6]["confidence"] = 0.1 + 0.2
    sp, sp2 = S.IncidentSpool(), S.IncidentSpool()
    for it in items:
        sp.append(it)
    sp2.append({"k": 1})
    plain = json.loads(json.dumps(items, ensure_ascii=False, default=str))
    odd = {"path": Path("/tmp/x \u00e9"), "lone": "\udcff", 1: "int key", None: [1.5, float("inf")]}
    for doc, as_list in (
            ({"source": "x", "incidents": sp, "stats": {"lines": 3}, "more": sp2},
             {"source": "x", "incidents": plain, "stats": {"lines": 3}, "more": [{"k": 1}]}),
            ({"source": "x", **odd, "incidents": sp}, {"source": "x", **odd, "incidents": plain}),
            ({"runs": [{"incidents": sp}]}, {"runs": [{"incidents": plain}]}),  # nested: the general path
            ({"empty": S.IncidentSpool()}, {"empty": []})):
        assert S.dumps(doc) == json.dumps(as_list, ensure_ascii=False, default=str)
