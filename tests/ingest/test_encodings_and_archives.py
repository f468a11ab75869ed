"""Every input people hand over (issue 32): UTF-16/UTF-32 logs (what
PowerShell's ``>`` and ``Out-File`` write), archives as logs (how logs are
attached to tickets), and a closed stdin."""
from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import CORPORA, REPO, run_cli
from helpers import classify_json, one_line_error

from forensics.ingest import archives
from forensics.ingest.encoding import StreamDecoder, sniff_encoding
from forensics.ingest.sources import expand_paths

SEED1 = CORPORA / "seeds" / "seed1.short.log"  # a failing SGLang journal (env.module-missing)
EXAMPLE = REPO / "examples" / "sglang-b300-flash-attn-cute.log"


def _same_answer(a: dict, b: dict) -> None:
    """Equal but for the name, and the encoding and compression the stats record."""
    a, b = json.loads(json.dumps(a)), json.loads(json.dumps(b))
    for d in (a, b):
        d.pop("source")
        d["stats"].pop("encoding", None)
        d["stats"].pop("compression", None)
        d.pop("versions", None)
    assert a == b


# ------------------------------------------------------------------ encodings
ENCODINGS = {
    # what PowerShell 5's `>` / Out-File write (UTF-16 LE with a mark), and the others
    "utf-16": ("utf-16-le", lambda t: t.encode("utf-16")),
    "utf-16-le, no mark": ("utf-16-le", lambda t: t.encode("utf-16-le")),
    "utf-16-be, no mark": ("utf-16-be", lambda t: t.encode("utf-16-be")),
    "utf-16-be with a mark": ("utf-16-be", lambda t: b"\xfe\xff" + t.encode("utf-16-be")),
    "utf-32": ("utf-32-le", lambda t: t.encode("utf-32")),
    "utf-32-be, no mark": ("utf-32-be", lambda t: t.encode("utf-32-be")),
    "utf-8 with a mark": ("utf-8-sig", lambda t: t.encode("utf-8-sig")),
}


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_a_wide_log_gets_the_utf8_answer_and_no_phantom_line(tmp_path, kind):
    codec, encode = ENCODINGS[kind]
    text = SEED1.read_text(encoding="utf-8")
    p = tmp_path / "windows.log"
    p.write_bytes(encode(text))
    rc_plain, (plain,) = classify_json(str(SEED1))
    rc, (res,) = classify_json(str(p))
    assert rc == rc_plain == 1
    assert res["stats"]["encoding"] == codec
    assert res["stats"]["lines"] == text.count("\n")  # the trailing NULs used to count as a line
    _same_answer(res, plain)


def test_powershell_out_file_on_stdin_compressed_and_with_crlf(tmp_path):
    text = SEED1.read_text(encoding="utf-8")
    crlf = text.replace("\n", "\r\n").encode("utf-16")  # Out-File: a mark, CRLF line ends
    _, (plain,) = classify_json(str(SEED1))
    for data in (crlf, gzip.compress(crlf)):
        rc, (res,) = classify_json(input=data)
        assert rc == 1 and res["root_cause"] == plain["root_cause"], res["summary"]
        assert res["stats"]["lines"] == plain["stats"]["lines"]
        assert res["evidence"][0]["line"] == plain["evidence"][0]["line"]
    assert res["stats"]["compression"] == "gzip" and res["stats"]["encoding"] == "utf-16-le"


def test_watch_reads_a_utf16_stream():
    text = SEED1.read_text(encoding="utf-8").encode("utf-16")
    p = run_cli("watch", "--format", "json", "--no-classifier", "--grace", "0.2", "--stall-timeout", "30",
                input=text)
    assert p.returncode == 1, p.stderr.decode()
    events = [json.loads(ln) for ln in p.stdout.decode().splitlines()]
    final = [e for e in events if e.get("final")]
    assert final and final[-1]["diagnosis"]["root_cause"] == "env.module-missing"


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le"])
def test_watch_reads_a_short_utf16_stream_the_decoder_holds_to_its_end(codec):
    # Shorter than the decision needs without a mark: everything arrives with the end of the stream.
    p = run_cli("watch", "--format", "json", "--no-classifier", "--grace", "0.2", "--stall-timeout", "30",
                input="[2026-01-05 10:00:00] starting\nRuntimeError: boom\n".encode(codec))
    assert p.returncode == 1, p.stdout.decode()
    final = [json.loads(ln) for ln in p.stdout.decode().splitlines() if '"final": true' in ln]
    assert final[-1]["diagnosis"]["evidence"][0]["text"] == "RuntimeError: boom"


def test_sniffing_keeps_utf8_logs_with_nul_runs_and_binary_refused(tmp_path):
    # A log a crash left with a zeroed block: NULs everywhere, not every other byte.
    log = b"Jun 01 12:00:01 h python3[1]: ok\n" * 3000 + b"\x00" * 4096 + b"Jun 01 12:00:02 h python3[1]: more\n"
    assert sniff_encoding(log) is None
    assert sniff_encoding(b"\x00" * 1000) is None
    assert sniff_encoding("plain ascii".encode("utf-16-le")) == ("utf-16-le", 0)
    p = tmp_path / "zeroed.log"
    p.write_bytes(log)
    rc, (res,) = classify_json(str(p))
    assert "encoding" not in res["stats"] and res["stats"]["lines"] == 3001
    one_line_error(run_cli("classify", input=b"\x00\x01\x02\x03" * 5000), "not a text log")


def test_a_stream_decoder_gives_the_same_bytes_in_any_chunking():
    data = ("ünïcode line\n" * 300 + "last, no newline").encode("utf-16")
    whole = StreamDecoder().feed(data, final=True)
    for size in (1, 3, 7, 4096):
        dec = StreamDecoder()
        out = b"".join(dec.feed(data[i:i + size]) for i in range(0, len(data), size)) + dec.finish()
        assert out == whole == ("ünïcode line\n" * 300 + "last, no newline").encode("utf-8")
    dec = StreamDecoder()  # a live UTF-8 stream is passed on at once, not held for a decision
    assert dec.feed(b"INFO ready\n") == b"INFO ready\n"
    odd = StreamDecoder()  # a UTF-16 file cut in the middle of a character: U+FFFD, not a crash
    assert odd.feed("ab\n".encode("utf-16") + b"\x41", final=True) == "ab\n\ufffd".encode("utf-8")


# ------------------------------------------------------------------ archives
def _tree(tmp: Path) -> Path:
    src = tmp / "tree"
    (src / "node1").mkdir(parents=True)
    (src / "node2").mkdir()
    (src / "node1" / "sglang.log").write_bytes(SEED1.read_bytes())
    (src / "node2" / "rotated.log.1.gz").write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    (src / "node2" / "windows.log").write_bytes(SEED1.read_text().encode("utf-16"))
    (src / "node2" / ".hidden").write_bytes(b"not read\n")
    (src / "notes.md").write_bytes(b"# not a log\n")
    return src


MEMBERS = ["node1/sglang.log", "node2/rotated.log.1.gz", "node2/windows.log"]


def _tar(src: Path, out: Path, mode: str = "w") -> Path:
    with tarfile.open(out, mode) as tf:
        for p in sorted(src.rglob("*")):
            tf.add(p, arcname=str(p.relative_to(src)), recursive=False)
    return out


def _archives(tmp: Path) -> dict[str, Path]:
    src = _tree(tmp)
    tar = _tar(src, tmp / "logs.tar")
    out = {"tar": tar, "tar.gz": _tar(src, tmp / "logs.tar.gz", "w:gz"),
           "tar.xz": _tar(src, tmp / "logs.tar.xz", "w:xz"), "tar.bz2": _tar(src, tmp / "logs.tar.bz2", "w:bz2")}
    import zstandard

    (tmp / "logs.tar.zst").write_bytes(zstandard.ZstdCompressor().compress(tar.read_bytes()))
    out["tar.zst"] = tmp / "logs.tar.zst"
    with zipfile.ZipFile(tmp / "logs.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                zf.write(p, str(p.relative_to(src)))
    out["zip"] = tmp / "logs.zip"
    try:
        import py7zr
    except ImportError:
        return out
    with py7zr.SevenZipFile(tmp / "logs.7z", "w") as z7:
        for p in sorted(src.rglob("*")):
            if p.is_file():
                z7.write(p, str(p.relative_to(src)))
    out["7z"] = tmp / "logs.7z"
    return out


def test_every_archive_kind_is_read_member_by_member(tmp_path):
    found = _archives(tmp_path)
    _, plain = classify_json(str(SEED1), str(EXAMPLE))
    for kind, path in found.items():
        rc, results = classify_json(str(path))
        assert rc == 1, kind
        assert [r["source"] for r in results] == [f"{path}:{m}" for m in MEMBERS], kind
        _same_answer(results[0], plain[0])  # node1/sglang.log
        _same_answer(results[1], plain[1])  # the gzipped member: decompressed
        _same_answer(results[2], plain[0])  # the UTF-16 member: decoded
        assert results[1]["stats"]["compression"] == "gzip" and results[2]["stats"]["encoding"] == "utf-16-le"


def test_a_member_can_be_named_and_a_wrong_name_is_one_line(tmp_path):
    tgz = _archives(tmp_path)["tar.gz"]
    rc, (one,) = classify_json(f"{tgz}:node2/windows.log")
    assert rc == 1 and one["source"] == f"{tgz}:node2/windows.log"
    rc, folder = classify_json(f"{tgz}:node2")
    assert [r["source"] for r in folder] == [f"{tgz}:{m}" for m in MEMBERS[1:]]
    one_line_error(run_cli("classify", f"{tgz}:node3/none.log"), "no such member")


def test_archives_in_a_directory_and_in_batch(tmp_path):
    arch = _archives(tmp_path / "a")
    d = tmp_path / "attached"
    d.mkdir()
    for kind in ("tar.gz", "zip"):
        (d / arch[kind].name).write_bytes(arch[kind].read_bytes())
    (d / "plain.log").write_bytes(SEED1.read_bytes())
    rc, results = classify_json(str(d))
    assert len(results) == 2 * len(MEMBERS) + 1
    out = tmp_path / "t.csv"
    p = run_cli("batch", str(d), "--out", str(out), "--jobs", "2")
    assert p.returncode == 0, p.stderr.decode()
    from forensics.report.frames import read_table

    df = read_table(out)
    assert sorted(df["source"]) == sorted([str(d / "plain.log")]
                                          + [f"{d / arch[k].name}:{m}" for k in ("tar.gz", "zip") for m in MEMBERS])
    assert df["error"].isna().all() and (df["verdict"] == "failed").all()


def test_a_cut_or_damaged_archive(tmp_path):
    tgz = _archives(tmp_path)["tar.gz"]
    cut = tmp_path / "cut.tgz"
    data = tgz.read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    p = run_cli("classify", "--format", "json", str(cut))
    results = [json.loads(ln) for ln in p.stdout.decode().splitlines()]
    assert results and results[0]["source"] == f"{cut}:node1/sglang.log" and results[0]["root_cause"]
    err = p.stderr.decode()
    assert "ends early" in err and "Traceback" not in err, err
    bad_zip = tmp_path / "cut.zip"
    bad_zip.write_bytes(_archives(tmp_path / "z")["zip"].read_bytes()[:3000])
    one_line_error(run_cli("classify", str(bad_zip)), "not a readable zip archive")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("README.md", "no logs here")
    one_line_error(run_cli("classify", str(empty)), "no log files in this zip archive")


def test_member_count_is_limited(tmp_path, monkeypatch):
    z = tmp_path / "many.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for i in range(30):
            zf.writestr(f"logs/{i:03d}.log", "INFO ok\n")
    monkeypatch.setattr(archives, "MAX_MEMBERS", 10)
    skipped: list[str] = []
    names = [s.name for s in expand_paths([str(z)], skipped)]
    assert names == [f"{z}:logs/{i:03d}.log" for i in range(10)]
    assert skipped == [f"{z}: more than 10 entries; the rest were not read"]


def test_members_of_a_compressed_tar_cost_one_pass(tmp_path, monkeypatch):
    src = tmp_path / "many"
    src.mkdir()
    for i in range(25):
        (src / f"{i:02d}.log").write_bytes(SEED1.read_bytes())
    tgz = _tar(src, tmp_path / "many.tgz", "w:gz")
    opened = []
    real = archives._TarCursor.__init__

    def counting(self, *a):  # type: ignore[no-untyped-def]
        opened.append(1)
        real(self, *a)

    monkeypatch.setattr(archives._TarCursor, "__init__", counting)
    import forensics

    res = forensics.classify(str(tgz), use_classifier=False)  # an archive: a list, as a directory
    assert len(res) == 25 and {r["root_cause"] for r in res} == {"env.module-missing"}
    assert len(opened) == 1  # one decompression from the start, not one per member


def test_a_huge_member_streams_in_bounded_memory(tmp_path):
    # 300 MB of one line, 300 KB zipped: read (clipped), never held whole.
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("big.log", "w") as f:
            block = b"x" * (1 << 20)
            for _ in range(300):
                f.write(block)
    assert z.stat().st_size < 2_000_000
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
            "from forensics.cli.main import main; main(sys.argv[1:])")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", code, "classify", "--format", "json", "--no-classifier", str(z)],
                       capture_output=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-500:]
    res = json.loads(p.stdout)
    assert res["source"] == f"{z}:big.log" and res["stats"]["clipped_lines"] == 1


def test_7z_without_py7zr_is_one_line(tmp_path):
    pytest.importorskip("py7zr")
    z7 = _archives(tmp_path)["7z"]
    code = ("import sys; sys.modules['py7zr'] = None; "
            "from forensics.cli.main import main; main(sys.argv[1:])")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", code, "classify", str(z7)], capture_output=True, env=env, timeout=120)
    one_line_error(p, "forensics[archives]")


# ------------------------------------------------------------------ a closed stdin
@pytest.mark.parametrize("args", [["classify"], ["parse"], ["watch"], ["diff", "-", str(SEED1)], ["classify", "-"]])
def test_a_closed_stdin_is_one_line(args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-m", "forensics", *args], stdin=None, capture_output=True, env=env,
                       timeout=120, preexec_fn=lambda: os.close(0))
    one_line_error(p, "stdin is closed")


def test_stdin_archives_say_to_pass_a_path():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(SEED1, arcname="a.log")
    one_line_error(run_cli("classify", input=buf.getvalue()), "pass an archive as a path")


def test_other_compressors_of_a_tar_name_nothing_by_suffix(tmp_path):
    # A .tar.xz named .log, a .tbz2: the bytes decide.
    src = _tree(tmp_path)
    raw = _tar(src, tmp_path / "x.tar").read_bytes()
    for i, pack in enumerate((lzma.compress, bz2.compress)):
        p = tmp_path / f"odd{i}.log"
        p.write_bytes(pack(raw))
        rc, results = classify_json(str(p))
        assert [r["source"] for r in results] == [f"{p}:{m}" for m in MEMBERS]
