"""Every write is atomic and private: a unique temp file beside the target,
fsync, rename; removed on any error or signal; concurrent writers never mix."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from forensics.atomic import atomic_path, atomic_write_bytes

REPO = Path(__file__).resolve().parents[2]
LOG = b"[2026-01-05 10:00:00] starting\nRuntimeError: boom\n"


def _env():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("FORENSICS_DEBUG", None)
    return env


def test_temp_names_are_unique_private_and_beside_the_target(tmp_path):
    target = tmp_path / "out.parquet"
    with atomic_path(target) as a, atomic_path(target) as b:
        assert a != b and a.parent == b.parent == tmp_path
        assert (a.stat().st_mode & 0o777) == 0o600  # nobody else can read a half-written table
        a.write_bytes(b"A")
        b.write_bytes(b"B")
    assert target.read_bytes() in (b"A", b"B")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_an_error_while_writing_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "t.csv"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("disk on fire")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_many_concurrent_writers_last_rename_wins_whole(tmp_path):
    target = tmp_path / "t.jsonl"
    payloads = [bytes([65 + i]) * 200_000 for i in range(8)]

    def write(p: bytes) -> None:
        for _ in range(5):
            atomic_write_bytes(target, p, fsync=False)

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]


def test_two_batch_runs_on_one_out_never_corrupt_it(tmp_path):
    """The named defect: both runs used ``.out.parquet.tmp`` and left a broken table."""
    from forensics.report.frames import read_table

    for k in ("a", "b"):
        d = tmp_path / k
        d.mkdir()
        for i in range(3 if k == "a" else 5):
            (d / f"{i}.log").write_bytes(LOG)
    out = tmp_path / "shared.parquet"
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "forensics", "batch", str(tmp_path / k), "--out", str(out),
                                   "--jobs", "1"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for k in ("a", "b")]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        df = read_table(out)
        assert len(df) in (3, 5)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "shared.parquet"]


_SLOW_WRITER = """
import sys, time
import forensics.report.frames as F
def slow(df, path):
    with open(path, "w") as f:
        f.write('{"partial": ')
        f.flush()
    print("WRITING", flush=True)
    time.sleep(60)
F._write_jsonl = slow
from forensics.cli.main import main
main(["batch", sys.argv[1], "--out", sys.argv[2]])
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_signal_during_the_write_removes_the_temp_file(tmp_path, sig):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_bytes(LOG)
    out = tmp_path / "out" / "t.jsonl"
    out.parent.mkdir()
    out.write_text('{"old": true}\n')
    p = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(logs), str(out)], env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"WRITING"
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert b"Traceback" not in err and b"interrupted" in err
    assert sorted(x.name for x in out.parent.iterdir()) == ["t.jsonl"], "temp file left behind"
    assert out.read_text() == '{"old": true}\n'


def test_train_and_corpus_writers_are_atomic():
    """Every writer goes through report.atomic (no bare write_text / to_parquet on a target)."""
    import re

    bare = re.compile(r"\.(write_text|write_bytes|to_parquet|to_csv)\(|open\([^)]*['\"]w|sio\.dump\(|GzipFile\(\s*path")
    offenders = []
    for p in (REPO / "forensics").rglob("*.py"):
        if p.name in ("atomic.py", "outputs.py"):
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if bare.search(line) and "tmp" not in line and "devnull" not in line and "fileobj=out" not in line \
                    and "(atomic)" not in line:
                offenders.append(f"{p.relative_to(REPO)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
