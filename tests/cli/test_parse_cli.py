"""forensics parse: the NDJSON contract, and a closed pipe is quiet."""
from __future__ import annotations

import json

from conftest import CORPORA, run_cli


SEED1 = CORPORA / "seeds" / "seed1.short.log"


def test_parse_cli_ndjson_contract(tmp_path):
    p = run_cli("parse", str(SEED1))
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.decode().splitlines()]
    for r in rows[:50]:
        for k in ("kind", "line", "ts", "host", "pid", "rank"):
            assert k in r
    reg = [r for r in rows if r["kind"] == "cuda_graph_registration"]
    assert reg[0]["count"] == 336


def test_parse_head_closes_quietly(tmp_path):
    big = tmp_path / "big.log"
    big.write_text(SEED1.read_text() * 40)
    import subprocess, sys, os
    from conftest import REPO
    cmd = f"{sys.executable} -m forensics parse {big} | head -1"
    p = subprocess.run(cmd, shell=True, capture_output=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.returncode == 0
    assert b"Traceback" not in p.stderr and p.stderr.strip() == b""
    assert p.stdout.count(b"\n") == 1
