"""The thinned fast path gives exactly the diagnosis of the full parse."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.pipeline import diagnose_source
from forensics.ingest.sources import Source

from conftest import CORPORA, REPO, shared_logs

SAMPLES = sorted((CORPORA / "seeds").glob("*.log")) + sorted((CORPORA / "journald").glob("fixture.short*.log")) + \
    sorted((CORPORA / "generated").glob("g7-00[0-4]*.log")) + shared_logs("corpora-real/healthy")


def _both(path: Path) -> tuple[str, str]:
    fast = diagnose_source(Source(str(path), path), thin=True)
    full = diagnose_source(Source(str(path), path), thin=False)
    return json.dumps(fast, sort_keys=True, default=str), json.dumps(full, sort_keys=True, default=str)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_thinned_equals_full(path):
    fast, full = _both(path)
    assert fast == full


def test_long_serving_log_equals_full(tmp_path):
    """A generated serving log with tens of thousands of access/batch lines."""
    import subprocess
    import sys

    out = tmp_path / "serving.log"
    subprocess.run([sys.executable, str(REPO / "bench" / "genlog.py"), "--lines", "40000", "-o", str(out)],
                   check=True, capture_output=True)
    fast, full = _both(out)
    assert fast == full
    d = json.loads(fast)
    assert d["stats"]["lines"] == d["stats"]["parsed"] + d["stats"]["unparsed"]
