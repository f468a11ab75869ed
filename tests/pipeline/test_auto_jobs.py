"""How many processes read one big file when ``--jobs`` is not given (issue
14): classify stays in one (a split was measured to cost more than it saves,
on a serving log and on a crash loop alike); parse, which ships lines of text
back, splits; an explicit ``--jobs`` always wins."""
from __future__ import annotations

import io
import sys

from forensics.events import parallel
from forensics.ingest.sources import Source
from forensics.pipeline import _diagnosis_jobs

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import crashloop  # noqa: E402  (bench/crashloop.py)


def test_classify_reads_a_big_file_in_one_process_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)
    loop = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=60, seed=11)
    loop.write_bytes(buf.getvalue())
    src = Source(str(loop), loop)
    assert parallel.auto_jobs(loop, None) == 2  # what parse does with it
    assert _diagnosis_jobs(src, None, thin=True) == 1
    assert _diagnosis_jobs(src, 3, thin=True) == 3
    assert _diagnosis_jobs(src, 3, thin=False) == 1  # the unthinned path is never split
