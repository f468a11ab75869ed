"""--jobs: a file split across processes gives exactly the single-process result."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from forensics.pipeline import SourceEvents, assemble, diagnose_events, diagnose_source, ndjson_line
from forensics.diagnosis.signatures import signature_set
from forensics.events.parser import iter_source_events
from forensics.ingest.sources import Source

from conftest import CORPORA, REPO, run_cli


@pytest.fixture(scope="module")
def serving_log(tmp_path_factory):
    out = tmp_path_factory.mktemp("par") / "serving.log"
    subprocess.run([sys.executable, str(REPO / "bench" / "genlog.py"), "--lines", "60000", "-o", str(out)],
                   check=True, capture_output=True)
    return out


def _single_json(path):
    return [e.to_json(str(path)) for e in iter_source_events(Source(str(path), path))]


@pytest.mark.parametrize("chunk,warm", [(200_000, 64_000), (1_000_000, 512_000), (37_000, 300_000)])
def test_parse_chunks_equal_single_process(serving_log, chunk, warm):
    par = list(SourceEvents(Source(str(serving_log), serving_log), jobs=2, encode=ndjson_line, chunk_bytes=chunk,
                            warm_bytes=warm))
    assert par == _single_json(serving_log)


def test_parse_chunks_equal_on_traceback_heavy_log(tmp_path):
    # Many interleaved multi-rank tracebacks, cut into tiny chunks so that
    # tracebacks straddle chunk borders.
    src = (CORPORA / "seeds" / "seed1.short.log").read_text()
    big = tmp_path / "tb.log"
    big.write_text(src * 6)
    par = list(SourceEvents(Source(str(big), big), jobs=2, encode=ndjson_line, chunk_bytes=20_000, warm_bytes=150_000))
    assert par == _single_json(big)


def test_classify_jobs_equal_single_process(serving_log):
    single = diagnose_source(Source(str(serving_log), serving_log), jobs=1)
    sset = signature_set()
    evs = SourceEvents(Source(str(serving_log), serving_log), jobs=2, thin=True, chunk_bytes=300_000,
                       warm_bytes=100_000)
    incidents = diagnose_events(evs, str(serving_log), sset, None)
    par = assemble(str(serving_log), incidents, evs.stats_dict(), sset, None)
    single_rules = diagnose_source(Source(str(serving_log), serving_log), jobs=1, use_classifier=False)
    for k in ("verdict", "root_cause", "evidence", "early_warnings", "phase", "incidents", "stats"):
        assert json.dumps(par[k], sort_keys=True, default=str) == json.dumps(single_rules[k], sort_keys=True, default=str), k
    assert single["root_cause"] == par["root_cause"]


def test_cli_jobs_flag_same_output(serving_log):
    a = run_cli("classify", "--format", "json", "--jobs", "1", str(serving_log))
    b = run_cli("classify", "--format", "json", "--jobs", "2", str(serving_log))
    assert a.returncode == b.returncode == 1
    assert json.loads(a.stdout) == json.loads(b.stdout)
