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


def test_probes_around_requests_thinned_equal_full(tmp_path):
    """Runs of probes with a request inside: the thinned run keeps the request (serving)."""
    head = ["[2025-06-01 12:00:00] server_args=ServerArgs(model_path='m', tp_size=1)",
            "[2025-06-01 12:00:45] The server is fired up and ready to roll!"]
    probe = '[2025-06-01 12:01:00] INFO:     127.0.0.1:40000 - "GET /health HTTP/1.1" 200 OK'
    gen = '[2025-06-01 12:01:01] INFO:     127.0.0.1:40001 - "POST /generate HTTP/1.1" 200 OK'
    chat = '[2025-06-01 12:01:02] INFO:     127.0.0.1:40002 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    for body in ([probe] * 50 + [chat] + [probe] * 50, [probe] * 30 + [gen] + [probe] * 30 + [chat] + [probe] * 30):
        out = tmp_path / "probes.log"
        out.write_text("\n".join(head + body) + "\n")
        fast, full = _both(out)
        assert fast == full
        assert json.loads(fast)["incidents"][-1]["reached_phase"] == "serving"
