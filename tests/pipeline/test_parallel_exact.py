"""--jobs equals one process event for event, whatever the line lengths, and
a file that changes while it is read is reported, not silently miscounted."""
from __future__ import annotations

import random

import pytest

from forensics.events.parser import BulkGate, iter_source_events
from forensics.ingest.sources import Source
from forensics.pipeline import SourceEvents, ndjson_line


def _single(p, gate=False):
    return [e.to_json(str(p)) for e in iter_source_events(Source(str(p), p), bulk_gate=BulkGate() if gate else None)]


def _split(p, mode="parse", **kw):
    """``mode``: parse (NDJSON lines, every line parsed) or classify (events, serving runs thinned)."""
    return SourceEvents(Source(str(p), p), jobs=2, thin=mode == "classify",
                        encode=ndjson_line if mode == "parse" else None, **kw)


def _par(p, chunk, warm, mode="parse"):
    evs = _split(p, mode, chunk_bytes=chunk, warm_bytes=warm)
    return list(evs) if mode == "parse" else [e.to_json(str(p)) for e in evs]


BASE = ["[2026-01-05 10:00:0%d] INFO Registering 12 cuda graph addresses" % i for i in range(3)]


@pytest.mark.parametrize("length", [4095, 4096, 65536, (1 << 20) + 1, (4 << 20) + 1])
def test_long_lines_around_a_chunk_border_lose_no_event(tmp_path, length):
    """A traceback whose message runs on over a long line, across a chunk
    border: the old warm-up (bytes, not lines) lost it (5 events, not 6)."""
    lines = BASE + ["x" * length, "Traceback (most recent call last):", '  File "a.py", line 1, in f',
                    "ValueError: boom", "y" * length, "RuntimeError: end"]
    p = tmp_path / "f.log"
    p.write_text("\n".join(lines) + "\n")
    want = _single(p)
    for chunk, warm in [(4096, 1024), (1 << 20, 256 << 10), (4 << 20, 256 << 10)]:
        assert _par(p, chunk, warm) == want, (chunk, warm)


_PIECES = [
    lambda r: "Jan 05 10:00:%02d h python3[%d]: INFO Registering 12 cuda graph addresses" % (r.randrange(60), r.choice([10, 11])),
    lambda r: "Jan 05 10:00:01 h python3[%d]: Traceback (most recent call last):" % r.choice([10, 11]),
    lambda r: 'Jan 05 10:00:01 h python3[%d]:   File "a.py", line 3, in f' % r.choice([10, 11]),
    lambda r: "Jan 05 10:00:01 h python3[%d]: ValueError: boom" % r.choice([10, 11]),
    lambda r: "Jan 05 10:00:01 h python3[%d]: %s" % (r.choice([10, 11]), "z" * r.choice([10, 3000, 70000])),
    lambda r: "                 continuation " + "q" * r.choice([5, 5000]),
    lambda r: 'Jan 05 10:00:01 h python3[10]: INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 200 OK',
    lambda r: "Jan 05 10:00:01 h python3[10]: [2026-01-05 10:00:01] Decode batch. #running-req: 1",
]


@pytest.mark.parametrize("seed", range(12))
def test_random_structure_equals_one_process(tmp_path, seed):
    r = random.Random(seed)
    lines = [r.choice(_PIECES)(r) for _ in range(r.randrange(20, 200))]
    p = tmp_path / "g.log"
    p.write_text("\n".join(lines) + ("\n" if seed % 3 else ""))
    want = _single(p)
    for chunk, warm in [(2000, 500), (9000, 100), (30000, 4000)]:
        assert _par(p, chunk, warm) == want, (chunk, warm)
    assert _par(p, 3000, 700, "classify") == _single(p, gate=True)


def _lines_file(p, n):
    p.write_text("".join(f"[2026-01-05 10:00:00] INFO line {i} Registering 3 cuda graph addresses\n" for i in range(n)))


@pytest.mark.parametrize("change", ["grow", "truncate", "replace"])
def test_file_changing_while_read_is_reported(tmp_path, capfd, change):
    p = tmp_path / "live.log"
    _lines_file(p, 40000)
    run = _split(p, chunk_bytes=200_000, warm_bytes=1000)
    events = iter(run)
    first = [next(events)]
    if change == "grow":
        with open(p, "a") as f:
            f.write("appended line\n" * 1000)
    elif change == "truncate":
        with open(p, "r+") as f:
            f.truncate(p.stat().st_size // 3)
    else:
        q = tmp_path / "new.log"
        _lines_file(q, 10)
        q.replace(p)
    rest = list(events)
    st = run.stats
    assert st.changed is True and st.to_dict()["changed"] is True
    assert "changed while it was read" in capfd.readouterr().err
    assert len(first) + len(rest) <= 40000  # never more than the file had when the run began


def test_unchanged_file_is_not_flagged(tmp_path, capfd):
    p = tmp_path / "still.log"
    _lines_file(p, 20000)
    run = _split(p, chunk_bytes=100_000)
    n = len(list(run))
    assert n == 20000 and run.stats.lines == 20000
    assert "changed" not in run.stats.to_dict()
    assert "changed while" not in capfd.readouterr().err
