"""``--jobs`` left to forensics: a diagnosis is split across processes only
when the file is mostly serving bulk (issue 14: on a crash loop the split
costs more than it saves)."""
from __future__ import annotations

import io
import sys

from forensics.events import parallel

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import crashloop  # noqa: E402  (bench/crashloop.py)
import genlog  # noqa: E402  (bench/genlog.py)


def _small_threshold(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)


def test_a_crash_loop_is_diagnosed_in_one_process_and_a_serving_log_split(tmp_path, monkeypatch):
    _small_threshold(monkeypatch)
    loop = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=60, seed=11)
    loop.write_bytes(buf.getvalue())
    serving = tmp_path / "serving.log"
    with open(serving, "wb") as f:
        genlog.generate(f, lines=20000, seed=7, tp=4)
    assert parallel.bulk_share(loop, loop.stat().st_size) < parallel.MIN_BULK_SHARE
    assert parallel.bulk_share(serving, serving.stat().st_size) > 0.9
    assert parallel.auto_jobs(loop, None, serving_bulk=True) == 1
    assert parallel.auto_jobs(serving, None, serving_bulk=True) == 2
    # parse ships lines of text back, not events: it still splits, and an explicit --jobs always wins
    assert parallel.auto_jobs(loop, None) == 2
    assert parallel.auto_jobs(loop, 3, serving_bulk=True) == 3


def test_a_file_too_short_to_probe_is_not_split(tmp_path, monkeypatch):
    _small_threshold(monkeypatch)
    tiny = tmp_path / "tiny.log"
    tiny.write_text("one line\n")
    assert parallel.bulk_share(tiny, tiny.stat().st_size) == 0.0
    assert parallel.auto_jobs(tiny, None, serving_bulk=True) == 1
