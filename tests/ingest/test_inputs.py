"""Honest about every input (issue 17): compressors by magic bytes, binary
input refused, missing paths and empty directories, native journal files and
their filters. (Time zones and years: envelope/test_clock.py; colour and
wording: report/test_text.py; the Python API: pipeline/test_api.py.)"""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import forensics
from conftest import CORPORA, REPO, run_cli
from helpers import classify_json, one_line_error

SEED1 = CORPORA / "seeds" / "seed1.short.log"
EXAMPLE = REPO / "examples" / "sglang-b300-flash-attn-cute.log"
JOURNAL_GZ = CORPORA / "journald" / "fixture.journal.gz"  # made by systemd-journal-remote 252 (README there)
needs_journalctl = pytest.mark.skipif(shutil.which("journalctl") is None,
                                      reason="journalctl not installed (apt-get install systemd)")


# ---------------------------------------------------------------- compressors
def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


COMPRESSORS = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress, "zst": _zstd}


@pytest.mark.parametrize("ext", sorted(COMPRESSORS))
def test_every_compressor_gives_the_plain_answer(tmp_path, ext):
    data = SEED1.read_bytes()
    # A misleading name: the magic bytes decide, not the suffix.
    p = tmp_path / "server.log"
    p.write_bytes(COMPRESSORS[ext](data))
    _, (plain,) = classify_json(str(SEED1))
    rc, (res,) = classify_json(str(p))
    assert rc == 1
    assert (res["root_cause"], res["phase"], res["stats"]["lines"]) == \
        (plain["root_cause"], plain["phase"], plain["stats"]["lines"])
    assert res["stats"]["compression"] == {"gz": "gzip", "xz": "xz", "bz2": "bzip2", "zst": "zstd"}[ext]
    _, (piped,) = classify_json(input=COMPRESSORS[ext](data))  # stdin too
    assert piped["root_cause"] == plain["root_cause"]


@pytest.mark.parametrize("ext", ["xz", "bz2", "zst"])
def test_cut_compressed_file_reads_what_survives(tmp_path, ext):
    data = b"".join(b"[2026-03-14 09:00:%02d TP0] step %d\n" % (i % 60, i) for i in range(40000))
    data = data[:300_000] + b"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" \
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + data[300_000:]
    packed = COMPRESSORS[ext](data)
    p = tmp_path / f"cut.log.{ext}"
    p.write_bytes(packed[: int(len(packed) * 0.7)])
    proc = run_cli("classify", "--format", "json", str(p))
    assert proc.returncode == 1, proc.stderr
    res = json.loads(proc.stdout)
    assert res["stats"]["truncated_gzip"] is True and res["root_cause"] == "gpu.out-of-memory"
    assert "stream ends early" in proc.stderr.decode()


def test_compressed_files_inside_batch(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for ext, pack in COMPRESSORS.items():
        (logs / f"s.log.{ext}").write_bytes(pack(SEED1.read_bytes()))
    out = tmp_path / "t.jsonl"
    proc = run_cli("batch", str(logs), "--out", str(out), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert len({r["source"] for r in rows}) == 4
    assert all(r["error"] is None for r in rows)
    assert {r["root_cause"] for r in rows if r["main"]} == {"env.module-missing"}


# ---------------------------------------------------------------- not a text log
def _binaries(tmp: Path) -> dict[str, tuple[Path, str]]:
    tmp.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[Path, str]] = {}
    # (archives and UTF-16 text are read: test_encodings_and_archives.py)
    out["elf"] = (Path(sys.executable).resolve(), "an ELF executable")
    pdf = tmp / "report.pdf"
    pdf.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + bytes(range(256)) * 40)
    out["pdf"] = (pdf, "a PDF document")
    png = tmp / "shot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(5000))
    out["png"] = (png, "a PNG image")
    db = tmp / "state.db"
    con = sqlite3.connect(db)
    con.execute("create table t (x)")
    con.commit()
    con.close()
    out["sqlite"] = (db, "an SQLite database")
    rnd = tmp / "random.log"
    rnd.write_bytes(random.Random(2).randbytes(100_000))
    out["random"] = (rnd, "binary data")
    return out


def test_binary_inputs_are_refused_with_what_they_look_like(tmp_path):
    for kind, (path, what) in _binaries(tmp_path).items():
        for cmd in ("classify", "parse"):
            one_line_error(run_cli(cmd, str(path)), f"not a text log (looks like {what}")
    z = tmp_path / "logs.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("server.log", SEED1.read_text())
    # an archive on stdin: a zip's table of contents is at its end, so archives are read from a path
    one_line_error(run_cli("classify", input=z.read_bytes()),
                   "not a text log (looks like a zip archive); pass an archive as a path")


def test_a_binary_file_inside_a_directory_is_skipped_not_fatal(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    shutil.copy(SEED1, d / "a.log")
    (d / "b.log").write_bytes(random.Random(3).randbytes(10_000))
    proc = run_cli("classify", "--format", "json", str(d))
    assert proc.returncode == 1
    assert len(proc.stdout.decode().splitlines()) == 1
    assert "b.log: not a text log (looks like binary data) (skipped)" in proc.stderr.decode()


def test_text_with_some_nuls_and_latin1_is_still_text(tmp_path):
    p = tmp_path / "odd.log"
    p.write_bytes(b"\x00" * 40 + SEED1.read_bytes().replace(b"INFO", b"INFO \xe9\xe8", 20))
    rc, (res,) = classify_json(str(p))
    assert rc == 1 and res["root_cause"] == "env.module-missing"


def test_missing_path_and_empty_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    for cmd in ("classify", "parse"):
        one_line_error(run_cli(cmd, str(tmp_path / "server.lgo")), "No such file or directory")
        one_line_error(run_cli(cmd, str(tmp_path / "empty")), "no log files in this directory")


# ---------------------------------------------------------------- journal files
@pytest.fixture
def journal_dir(tmp_path) -> Path:
    d = tmp_path / "journal" / "3c1e7a2b9d8f4e6a8b0c1d2e3f405162"
    d.mkdir(parents=True)
    (d / "system.journal").write_bytes(gzip.decompress(JOURNAL_GZ.read_bytes()))
    return d


@needs_journalctl
def test_journal_file_reads_like_its_export(journal_dir, tmp_path):
    exported = CORPORA / "journald" / "fixture.export.log"
    _, (ref,) = classify_json(str(exported))
    rc, (res,) = classify_json(str(journal_dir / "system.journal"))
    assert rc == 1 and res["stats"]["format"] == "export"
    keys = ("verdict", "root_cause", "phase", "signature")
    assert [res[k] for k in keys] == [ref[k] for k in keys]
    assert [i["verdict"] for i in res["incidents"]] == [i["verdict"] for i in ref["incidents"]]
    # Compressed as archived (the shipped fixture is gzipped), a rotated file (*.journal~),
    # a journal directory, and the directory above it.
    _, (packed,) = classify_json(str(JOURNAL_GZ))
    assert packed["root_cause"] == ref["root_cause"] and packed["stats"]["compression"] == "gzip"
    rotated = journal_dir / "system@0005f1-0005f2.journal~"
    shutil.copy(journal_dir / "system.journal", rotated)
    (journal_dir / "system.journal").unlink()
    for arg in (rotated, journal_dir, journal_dir.parent):
        _, results = classify_json(str(arg))
        assert len(results) == 1 and results[0]["root_cause"] == ref["root_cause"], arg


@needs_journalctl
def test_journal_filters_as_journalctl_spells_them(journal_dir):
    f = str(journal_dir / "system.journal")
    _, (everything,) = classify_json(f)
    assert len(everything["incidents"]) == 3
    # The fixture's boots: A 09:00:00-09:14:02 UTC (two runs), B from 09:19:41.
    _, (late,) = classify_json("--since", "2026-03-14 09:19:00", "--tz", "UTC", f)
    _, (early,) = classify_json("--until", "2026-03-14 09:05:00", f)
    assert late["stats"]["lines"] < everything["stats"]["lines"] and early["stats"]["lines"] < everything["stats"]["lines"]
    assert all(i["start_ts"] >= "2026-03-14T09:19" for i in late["incidents"])
    assert all(i["end_ts"] <= "2026-03-14T09:05:01" for i in early["incidents"])
    _, (unit,) = classify_json("-u", "sglang.service", f)
    _, (none,) = classify_json("--unit", "no-such.service", f)
    assert 0 < unit["stats"]["lines"] < everything["stats"]["lines"]
    assert none["verdict"] == "no-failure" and none["stats"]["lines"] == 0
    proc = run_cli("parse", "--since", "2026-03-14 09:19:00", f)
    assert proc.returncode == 0 and all(json.loads(ln)["ts"] >= "2026-03-14T09:19" for ln in
                                        proc.stdout.decode().splitlines() if json.loads(ln)["ts"])
    one_line_error(run_cli("classify", "--since", "not a time at all", f), "journalctl")


def test_journal_without_journalctl_or_bindings_names_what_to_install(tmp_path, monkeypatch):
    p = tmp_path / "system.journal"
    p.write_bytes(gzip.decompress(JOURNAL_GZ.read_bytes()))
    env = dict(os.environ, FORENSICS_JOURNALCTL=str(tmp_path / "no-journalctl"), PYTHONPATH=str(REPO),
               PYTHONNOUSERSITE="1")
    code = ("import sys; sys.modules['systemd'] = None\n"  # the bindings are absent, whatever is installed
            "from forensics.cli.main import main; main(['classify', sys.argv[1]])")
    proc = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, env=env)
    one_line_error(proc, "apt-get install systemd) or the systemd Python bindings (pip install systemd-python)")


def test_journal_through_the_systemd_bindings(tmp_path, monkeypatch):
    """Without journalctl, ``systemd.journal.Reader`` entries become export records."""
    import types
    import uuid
    from datetime import datetime, timedelta, timezone

    from forensics.ingest import journal as J

    boot = uuid.UUID("3c1e7a2b9d8f4e6a8b0c1d2e3f405162")
    t0 = datetime(2026, 3, 14, 9, 0, 0, tzinfo=timezone.utc)
    msgs = ["Traceback (most recent call last):", '  File "/srv/x.py", line 3, in <module>',
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.1 GiB"]
    entries = [{"__REALTIME_TIMESTAMP": t0 + timedelta(seconds=i), "__MONOTONIC_TIMESTAMP": (timedelta(seconds=i), boot),
                "_BOOT_ID": boot, "_PID": 42, "SYSLOG_IDENTIFIER": "python3", "_HOSTNAME": "gpu-node-7",
                "_SYSTEMD_UNIT": "sglang.service", "MESSAGE": m} for i, m in enumerate(msgs)]

    class Reader:
        def __init__(self, path=None, files=None):
            self.matches = []

        def add_match(self, **kw):
            self.matches.append(kw)

        def add_disjunction(self):
            pass

        def seek_realtime(self, when):
            pass

        def __iter__(self):
            return iter(entries)

    systemd = types.ModuleType("systemd")
    systemd.journal = types.SimpleNamespace(Reader=Reader)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "systemd", systemd)
    monkeypatch.setitem(sys.modules, "systemd.journal", systemd.journal)
    monkeypatch.setenv("FORENSICS_JOURNALCTL", str(tmp_path / "absent"))
    assert J.journal_backend() == "python"
    p = tmp_path / "system.journal"
    p.write_bytes(J.JOURNAL_MAGIC + b"\0" * 100)
    res = forensics.classify(p)
    assert res["root_cause"] == "gpu.out-of-memory" and res["stats"]["format"] == "export"
    assert res["incidents"][0]["start_ts"] == "2026-03-14T09:00:00+00:00"
