"""How many processes read one big file (issue 14): one when ``--jobs`` is
not given, for classify and parse alike (a split was measured to cost more
than it saves: classify on a serving log and a crash loop; parse once its
NDJSON fast path made one process cheaper than two); an explicit ``--jobs``
is taken as given where the file can be split at all."""
from __future__ import annotations

import io
import sys

from forensics.events import parallel
from forensics.ingest.sources import Source
from forensics.pipeline import _diagnosis_jobs

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import crashloop  # noqa: E402  (bench/crashloop.py)


def test_classify_and_parse_read_a_big_file_in_one_process_unless_asked(tmp_path):
    loop = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=60, seed=11)
    loop.write_bytes(buf.getvalue())
    src = Source(str(loop), loop)
    assert parallel.split_jobs(loop, None) == 1  # what parse does with it
    assert parallel.split_jobs(loop, 2) == 2
    assert _diagnosis_jobs(src, None, thin=True) == 1
    assert _diagnosis_jobs(src, 3, thin=True) == 3
    assert _diagnosis_jobs(src, 3, thin=False) == 1  # the unthinned path is never split


def test_an_explicit_split_of_what_cannot_be_split_is_one_process(tmp_path):
    import gzip

    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=5, seed=3)
    gz = tmp_path / "loop.log.gz"
    gz.write_bytes(gzip.compress(buf.getvalue()))
    binary = tmp_path / "core"
    binary.write_bytes(bytes(range(256)) * 64)
    assert parallel.split_jobs(gz, 4) == 1
    assert parallel.split_jobs(binary, 4) == 1
    assert parallel.split_jobs(tmp_path / "missing.log", 4) == 1
    assert parallel.split_jobs(None, 4) == 1
