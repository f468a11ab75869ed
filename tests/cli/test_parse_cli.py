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


def test_a_binary_file_in_a_folder_is_skipped_and_the_logs_beside_it_parsed(tmp_path):
    """A ticket's folder holds the service log and a core file / binary. parse stopped at the binary (sorted
    first) with exit 2 and printed no event of the log beside it; classify skips it with one line and goes on.
    parse now does the same: the log's events, one '(skipped)' line, exit 2 for the unreadable file."""
    folder = tmp_path / "ticket"
    folder.mkdir()
    (folder / "core.bin").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 16)
    (folder / "sglang.log").write_bytes(SEED1.read_bytes())
    p = run_cli("parse", "--stats", str(folder))
    err = p.stderr.decode()
    assert p.returncode == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("forensics: error:")]
    assert errors == [f"forensics: error: {folder / 'core.bin'}: not a text log (looks like an ELF executable) (skipped)"]
    stats = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
    assert [s["source"] for s in stats] == [str(folder / "sglang.log")]
    assert stats[0]["lines"] == len(SEED1.read_bytes().splitlines())
    rows = [json.loads(x) for x in p.stdout.decode().splitlines()]
    assert any(r["kind"] == "cuda_graph_registration" and r["count"] == 336 for r in rows)
