"""Hostile inputs and odd environments, every command, one table of cases.

Each case runs the real CLI (``python -m forensics ...``) in its own process
under a memory cap (RLIMIT_AS) and a wall-clock bound, and asserts:

* the exit code (0 no failure, 1 failure found, 2 unusable input / usage);
* no Python traceback on stderr, and exit 2 comes with exactly one
  ``forensics: error:`` line;
* bounded time (``timeout``) and memory (peak RSS of that process, from
  ``wait4``, under ``mem_mb``);
* line accounting where it applies: ``stats.lines`` (``classify --format
  json`` or ``parse --stats``) equals the input's physical line count.

The cases run concurrently (one process each, as many at a time as there are
cores) the first time any of them is asked for; each test then checks its
own.
"""
from __future__ import annotations

import gzip
import json
import os
import resource
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

REPO = Path(__file__).resolve().parents[2]
# The checkout whose CLI the cases run (another one shows what the battery catches there).
TARGET = Path(os.environ.get("FORENSICS_BATTERY_TARGET", REPO))
AS_LIMIT = 3 << 30  # address space of one case: a bomb fails inside it, not on the machine


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass
class Run:
    rc: int
    out: bytes
    err: str
    wall: float
    rss_mb: float
    dir: Path


@dataclass
class Case:
    name: str
    args: list[str]  # "{f}": the first input file, "{d}": the case directory
    files: dict[str | bytes, bytes | Callable[[], bytes]] = field(default_factory=dict)
    stdin: bytes | Callable[[], bytes] = b""
    rc: int | tuple[int, ...] = 0
    lines: int | str | None = None  # "auto": physical lines of the first file (or stdin)
    timeout: float = 60.0
    mem_mb: int = 600
    env: dict[str, str] = field(default_factory=dict)
    stdout: str = "pipe"  # pipe | full | closed | devnull
    stderr_closed: bool = False
    check: Callable[[Run], None] | None = None
    needs: str | None = None  # another branch of issue 16 fixes it (xfail until merged)
    setup: Callable[[Path], None] | None = None


def _data(v: bytes | Callable[[], bytes]) -> bytes:
    return v() if callable(v) else v


# ------------------------------------------------------------------ inputs
def jlines(*objs: Any) -> bytes:
    return b"".join((o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objs)


FAIL = b"[2026-01-05 10:00:00] starting\nRuntimeError: boom\n"
OK = b"[2026-01-05 10:00:00] starting\n[2026-01-05 10:00:01] all good\n"
SHORT = "Jan 05 10:00:{s:02d} host python3[{pid}]: {msg}\n"


def short(msg: str, pid: str = "12", s: int = 0) -> bytes:
    return SHORT.format(s=s, pid=pid, msg=msg).encode()


def box_log() -> bytes:
    rows = [b"| [2026-01-05 10:00:0%d] line %d |" % (i, i) for i in range(6)]
    return b"\n".join(rows + [b"| " + b" " * 40_000 + b"x", b"| RuntimeError: boom |"]) + b"\n"


def long_lines_log() -> bytes:
    base = [b"[2026-01-05 10:00:0%d] INFO Registering 12 cuda graph addresses" % i for i in range(3)]
    block = [b"x" * 300_000, b"Traceback (most recent call last):", b'  File "a.py", line 1, in f',
             b"ValueError: boom", b"y" * 300_000, b"RuntimeError: end"]
    return b"\n".join(base + block * 30) + b"\n"


def gzip_bomb() -> bytes:
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    return c.compress(b"".join([b"RuntimeError: boom\n"])) + b"".join(c.compress(chunk) for _ in range(64)) + c.flush()


def scorer_bomb() -> bytes:
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    return b"".join(c.compress(chunk) for _ in range(400)) + c.flush()


def alias_bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        p, c = chr(96 + i), chr(97 + i)
        lines.append(f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]")
    return ("\n".join(lines) + "\nid: x.y\ntitle: t\nroot_cause: env.module-missing\nkind: failure\n"
            "remediation: r\nmatch: {text: a}\nexamples: {match: *i}\n").encode()


def skops_exploit(marker: Path) -> bytes:
    import io
    import zipfile

    code = f"open({str(marker)!r}, 'w').write('ran')"
    node = {"__class__": "runstring", "__module__": "numpy.testing._private.utils",
            "__loader__": "ConstructorFromReduceNode",
            "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "content": [
                {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
                 "content": json.dumps(code), "is_json": True},
                {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {},
                 "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                               "content": []}}]},
            "protocol": 2, "_skops_version": "0.16.0"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("schema.json", json.dumps(node))
    return buf.getvalue()


def zip_bomb() -> bytes:
    """One member of 1 GiB of newlines-free 'x' (about 1 MB zipped): streamed, clipped, never held."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z, z.open("big.log", "w", force_zip64=True) as f:
        block = b"x" * (1 << 20)
        for _ in range(1024):
            f.write(block)
    return buf.getvalue()


def tgz_pax_bomb() -> bytes:
    """A pax header claiming 1 GiB (zeros: 1 MB gzipped), which tarfile would read whole."""
    import tarfile
    import zlib

    hdr = tarfile.TarInfo("././@PaxHeader")
    hdr.type = tarfile.XHDTYPE
    hdr.size = 1 << 30
    z = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    out = [z.compress(hdr.tobuf(format=tarfile.USTAR_FORMAT))]
    zeros = bytes(1 << 20)
    out += [z.compress(zeros) for _ in range(1024)]
    return b"".join(out) + z.flush()


def tgz_with_oddities() -> bytes:
    """A failing log beside a symlink to /etc/passwd, a hard link, a FIFO and a device: only the file is read."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("logs/server.log")
        info.size = len(FAIL)
        tf.addfile(info, io.BytesIO(FAIL))
        for name, kind in (("logs/passwd.log", tarfile.SYMTYPE), ("logs/hard.log", tarfile.LNKTYPE),
                           ("logs/fifo.log", tarfile.FIFOTYPE), ("logs/sda.log", tarfile.BLKTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else "logs/server.log"
            tf.addfile(info)
    return buf.getvalue()


def zip_of_log() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("server.log", FAIL * 50)
    return buf.getvalue()


def xz_of_log() -> bytes:
    import lzma

    return lzma.compress(FAIL * 50)


def bz2_of_log() -> bytes:
    import bz2

    return bz2.compress(FAIL * 50)


ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
BAD = os.fsdecode(b"bad\xff\xfename.log")


# ------------------------------------------------------------------ checks
def no_marker(run: Run) -> None:
    assert not (run.dir / "MARKER").exists(), "loading the model ran code"


def table_keeps_far_time(run: Run) -> None:
    from forensics.report.frames import read_table

    for suffix in ("parquet", "csv", "jsonl"):
        df = read_table(run.dir / f"out.{suffix}")
        far = df[df["source"].str.endswith("far.log")]
        assert len(far) == 1 and far["start_ts"].isna().all(), suffix
        assert far["start_ts_text"].iloc[0].startswith("2300-01-01"), suffix


def table_keeps_bad_name(run: Run) -> None:
    from forensics.report.frames import read_table

    df = read_table(run.dir / "out.parquet")
    raw = [b for b in df["source_bytes"] if isinstance(b, bytes)]
    assert raw and raw[0].endswith(b"bad\xff\xfename.log"), list(df["source_bytes"])
    assert df["source"].str.contains("\\xff", regex=False).any()
    assert len(df) == 2


def out_has_original_name(run: Run) -> None:
    assert b"bad\xff\xfename.log" in run.out, run.out[:300]


def json_has_original_name(run: Run) -> None:
    d = json.loads(run.out)  # valid UTF-8 JSON ...
    assert os.fsencode(d["source"]).endswith(b"bad\xff\xfename.log"), d["source"]  # ... that reads back exactly


def same_output_for_jobs(run: Run) -> None:
    one = subprocess.run([sys.executable, "-m", "forensics", "parse", str(run.dir / "in.log")], capture_output=True,
                         env=_env({}), timeout=120).stdout
    assert run.out == one, "--jobs 2 differs from one process"


def report_counts(n: int) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert run.out.decode().startswith(f"{n} files"), run.out[:200]
    return check


def names_column(column: str, why: str) -> Callable[[Run], None]:
    """A table that is not ours: one line on stderr naming the column (or row) and why."""
    def check(run: Run) -> None:
        lines = run.err.strip().splitlines()
        assert len(lines) == 1 and column in lines[0] and why in lines[0], run.err[:400]
        assert not run.out, run.out[:200]
    return check


def json_out(pred: Callable[[dict], bool]) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        d = json.loads(run.out)
        assert pred(d), json.dumps(d)[:800]
    return check


def csv_table(rows: list[list[str]]) -> bytes:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue().encode()


INCIDENT_HEAD = ["source", "incident", "start_ts", "end_ts", "duration_s", "verdict", "root_cause", "confidence",
                 "phase", "main", "truncated", "early_warning_count", "first_lead_s", "early_warnings", "lines", "error"]

# ------------------------------------------------------------------ the table
C = Case
CASES: list[Case] = [
    # ---- numbers, pids, times at the edge (classify / parse)
    C("pid-superscript-json", ["classify", "--format", "json", "{f}"], {"in.log": jlines(
        {"MESSAGE": "starting", "_PID": "\u00b2", "__REALTIME_TIMESTAMP": "1767607200000000"},
        {"MESSAGE": "RuntimeError: boom", "_PID": "\u00b2"})}, rc=1, lines="auto"),
    C("pid-arabic-indic-short", ["classify", "--format", "json", "{f}"],
      {"in.log": short("starting", "\u0663") + short("RuntimeError: boom", "\u0663", 1)}, rc=1, lines="auto"),
    C("pid-5000-digits", ["parse", "--stats", "{f}"], {"in.log": short("hello", "9" * 5000) * 3}, lines="auto"),
    C("pid-as-list-dict-float", ["parse", "--stats", "--input-format", "json", "{f}"], {"in.log": jlines(
        {"MESSAGE": "a", "_PID": [1, 2]}, {"MESSAGE": "b", "_PID": {"x": 1}}, {"MESSAGE": "c", "_PID": 1.5},
        {"MESSAGE": "d", "_PID": True}, {"MESSAGE": "e", "SYSLOG_PID": "-1"})}, lines="auto"),
    C("month-superscript-and-cjk", ["parse", "--stats", "{f}"], {"in.log": (
        "x\u00b2 05 10:00:00 h python3[1]: hi\n\u00b2\u6708 05 10:00:00 h python3[1]: hi\n"
        "13\u6708 05 10:00:00 h python3[1]: hi\n").encode()}, lines="auto"),
    C("realtime-5000-digits", ["parse", "--stats", "--input-format", "json", "{f}"], {"in.log": jlines(
        {"MESSAGE": "a", "__REALTIME_TIMESTAMP": "9" * 5000}, {"MESSAGE": "b", "__REALTIME_TIMESTAMP": "-5"},
        {"MESSAGE": "c", "_SOURCE_REALTIME_TIMESTAMP": "\u0661\u0662"})}, lines="auto"),
    C("jsonl-time-inf-nan-huge", ["classify", "--format", "json", "--input-format", "jsonl", "{f}"], {"in.log": (
        b'{"msg":"a","time":1e400}\n{"msg":"b","time":Infinity}\n{"msg":"c","time":NaN}\n'
        b'{"msg":"d","time":-1e300}\n{"msg":"e","time":99999999999999999999}\n{"msg":"f","time":"9999-99-99"}\n')},
      lines="auto"),
    C("cuda-graph-count-30-digits", ["parse", "--stats", "{f}"],
      {"in.log": b"Registering " + b"9" * 30 + b" cuda graph addresses\n" * 2}, lines="auto"),
    C("frame-line-5000-digits", ["classify", "--format", "json", "{f}"], {"in.log": (
        b'Traceback (most recent call last):\n  File "a.py", line ' + b"9" * 5000 + b", in f\nValueError: x\n")},
      rc=1, lines="auto"),
    C("access-status-arabic-digits", ["parse", "--stats", "{f}"], {"in.log": (
        '[2026-01-05 10:00:00] INFO:     1.2.3.4:5 - "GET /health HTTP/1.1" \u0662\u0660\u0660 OK\n').encode() * 3},
      lines="auto"),
    C("restart-counter-huge", ["parse", "--stats", "{f}"], {"in.log": short(
        "sglang.service: Scheduled restart job, restart counter is at " + "9" * 400 + ".", "1")
        + short("sglang.service: Main process exited, code=exited, status=" + "9" * 400 + "/FAIL", "1")},
      lines="auto"),
    C("iso-year-9999", ["classify", "--format", "json", "{f}"], {"in.log": (
        b"9999-12-31T23:59:58Z h python3[1]: starting\n9999-12-31T23:59:59Z h python3[1]: RuntimeError: boom\n")},
      rc=1, lines="auto"),
    C("iso-year-0001-and-invalid", ["classify", "--format", "json", "{f}"], {"in.log": (
        b"0001-01-01T00:00:00Z h python3[1]: starting\n2026-13-45T99:99:99Z h python3[1]: x\n"
        b"0001-01-01T00:00:01Z h python3[1]: RuntimeError: boom\n")}, rc=1, lines="auto"),
    C("unix-and-monotonic-huge", ["parse", "--stats", "{f}"], {"in.log": (
        b"99999999999.000000 h python3[1]: a\n99999999999.000000 h python3[1]: b\n"
        b"[99999999999999999999.000000] h python3[1]: c\n")}, lines="auto"),
    C("docker-timestamps-invalid", ["parse", "--stats", "--input-format", "docker", "{f}"], {"in.log": (
        b"2026-13-45T10:00:00.123456789Z stdout F a\n0000-00-00T00:00:00Z stderr P b\n"
        b"9999-12-31T23:59:59.999999999+99:99 stdout F c\n")}, lines="auto"),
    # ---- strings and encodings
    C("json-lone-surrogates", ["classify", "--format", "json", "--input-format", "json", "{f}"], {"in.log": (
        b'{"MESSAGE":"RuntimeError: bad \\ud800 x","_PID":"1"}\n'
        b'{"MESSAGE":"ok","_HOSTNAME":"\\udfff","SYSLOG_IDENTIFIER":"\\udc80"}\n')}, rc=1, lines="auto"),
    C("jsonl-lone-surrogates", ["parse", "--stats", "--input-format", "jsonl", "{f}"],
      {"in.log": b'{"log":"a \\ud83d","stream":"\\udc00","host":"\\ud800"}\n'}, lines="auto"),
    C("json-surrogates-text-output", ["classify", "--input-format", "json", "{f}"],
      {"in.log": b'{"MESSAGE":"RuntimeError: \\ud800\\udfff\\ud800"}\n'}, rc=1),
    C("utf8-encoded-surrogates-and-overlong", ["classify", "--format", "json", "{f}"],
      # (inside a log: a file that is mostly invalid bytes is refused as binary instead)
      {"in.log": b"[2026-12-01 09:00:00] Starting server with the arguments below\n" * 3
       + b"\xed\xa0\x80 \xc0\xaf \xf8\x88\x80\x80\x80\nRuntimeError: \xed\xbf\xbf\n"}, rc=1, lines="auto"),
    C("utf16-file", ["parse", "--stats", "{f}"], {"in.log": "\ufeffRuntimeError: boom\nok\n".encode("utf-16")},
      rc=0, check=lambda r: b"RuntimeError: boom" in r.out and '"lines": 2,' in r.err),  # decoded, no phantom line
    C("utf8-bom", ["classify", "--format", "json", "{f}"], {"in.log": b"\xef\xbb\xbf" + FAIL}, rc=1, lines="auto"),
    C("unicode-line-separators", ["parse", "--stats", "{f}"],
      {"in.log": "a\u2028b\u0085c\u2029d\x1ce\x1df\x1eg\n\x0c\x0b\n".encode()}, lines="auto"),
    C("cr-only-line-endings", ["parse", "--stats", "{f}"], {"in.log": b"RuntimeError: boom\r" * 100_000},
      lines="auto"),
    C("ansi-csi-without-end", ["parse", "--stats", "{f}"], {"in.log": b"\x1b[" + b"1;" * 500_000 + b"\n"},
      lines="auto"),
    C("osc-without-end", ["parse", "--stats", "{f}"], {"in.log": b"\x1b]0;" + b"t" * 1_000_000 + b"\nok\n"},
      lines="auto"),
    C("lost-esc-colour-flood", ["parse", "--stats", "{f}"], {"in.log": b"[1;31m[0m" * 200_000 + b"\n"},
      lines="auto"),
    C("syslog-escapes-flood", ["parse", "--stats", "{f}"], {"in.log": short("Traceback#012" * 20_000)},
      lines="auto"),
    C("non-utf8-file-name-text", ["classify", "{f}"], {BAD: FAIL}, rc=1, check=out_has_original_name),
    C("non-utf8-file-name-json", ["classify", "--format", "json", "{f}"], {BAD: FAIL}, rc=1, lines="auto",
      check=json_has_original_name),
    C("non-utf8-file-name-parse", ["parse", "--stats", "{f}"], {BAD: FAIL}, lines="auto"),
    C("newline-in-file-name", ["classify", "--format", "ndjson", "{f}"], {"a\nb.log": FAIL}, rc=1),
    C("ascii-only-locale", ["classify", "{f}"], {"in.log": "RuntimeError: caf\u00e9 \u2603\n".encode()}, rc=1,
      env={"LC_ALL": "C", "PYTHONIOENCODING": "ascii"}),
    # ---- structure: nesting, floods, wrappers
    C("json-nested-100k", ["parse", "--stats", "--input-format", "json", "{f}"],
      {"in.log": b'{"MESSAGE":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n" + jlines({"MESSAGE": "ok"})},
      lines="auto"),
    C("json-message-deep-but-valid", ["parse", "--stats", "--input-format", "json", "{f}"],
      {"in.log": b'{"MESSAGE":' + b"[" * 900 + b"1" + b"]" * 900 + b"}\n"}, lines="auto"),
    C("json-message-byte-array-odd", ["parse", "--stats", "--input-format", "json", "{f}"], {"in.log": jlines(
        {"MESSAGE": [-1, 10 ** 30, 255, 0]}, {"MESSAGE": [True, None, "x"]}, {"MESSAGE": {"a": [1]}})}, lines="auto"),
    C("box-border-40k-spaces", ["classify", "--format", "json", "{f}"], {"in.log": box_log}, rc=1, lines="auto",
      timeout=30),
    C("compose-wrapper-huge-column", ["parse", "--stats", "{f}"], {"in.log": (
        b"svc-1  | a\nsvc-1  | b\nsvc-1  | c\n" + b"svc-1" + b" " * 50_000 + b"x\n")}, lines="auto", timeout=30),
    C("host-marker-flood", ["parse", "--stats", "{f}"],
      {"in.log": b"h >> a\nh >> b\nh >> " + b"h >> " * 50_000 + b"\n"}, lines="auto", timeout=30),
    C("exception-group-1000-deep", ["classify", "--format", "json", "{f}"], {"in.log": (
        b"  + Exception Group Traceback (most recent call last):\n"
        + b"".join(b"  " + b"| " * i + b"+-+---------------- 1 ----------------\n" for i in range(1, 1000))
        + b"    | ValueError: deep\n")}, rc=(0, 1), lines="auto"),
    C("chained-causes-1000", ["classify", "--format", "json", "{f}"], {"in.log": (
        b"Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: x\n\n"
        b"During handling of the above exception, another exception occurred:\n\n") * 1000
        + b"Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nRuntimeError: end\n"},
      rc=1, lines="auto"),
    C("10k-pids-open-tracebacks", ["parse", "--stats", "{f}"], {"in.log": b"".join(
        short("Traceback (most recent call last):", str(p)) for p in range(10_000))}, lines="auto"),
    C("traceback-header-50k", ["parse", "--stats", "{f}"],
      {"in.log": b"Traceback (most recent call last):\n" * 50_000}, lines="auto"),
    C("export-binary-field-flood", ["parse", "--stats", "--input-format", "export", "{f}"], {"in.log": (
        b"MESSAGE\n" + b"\xff\x00" * 100_000 + b"\n\n__CURSOR=x\nMESSAGE=hi\n\n")}, rc=2),  # refused: not text
    C("export-fields-without-values", ["parse", "--stats", "--input-format", "export", "{f}"],
      {"in.log": b"ABC\n" * 100_000}, lines="auto"),
    C("verbose-100k-fields", ["parse", "--stats", "--input-format", "verbose", "{f}"], {"in.log": (
        b"Mon 2026-01-05 10:00:00.000000 UTC [s=1;i=2;b=3;m=4;t=5;x=6]\n" + b"    MESSAGE=x\n" * 100_000)},
      lines="auto"),
    C("cri-partials-never-end", ["parse", "--stats", "--input-format", "docker", "{f}"],
      {"in.log": b"2026-01-05T10:00:00.000000000Z stdout P " + b"x" * 100 + b"\n" * 1} , lines="auto"),
    C("forced-json-on-plain", ["classify", "--format", "json", "--input-format", "json", "{f}"], {"in.log": FAIL},
      rc=1, lines="auto"),
    C("forced-export-on-binary", ["parse", "--stats", "--input-format", "export", "{f}"],
      {"in.log": bytes(range(256)) * 400}, rc=2),
    C("long-lines-jobs-equal", ["parse", "--jobs", "2", "{f}"], {"in.log": long_lines_log},
      check=same_output_for_jobs, timeout=120),
    # ---- compressed and non-text inputs
    C("gzip-bomb-input", ["classify", "--format", "json", "{f}"], {"in.log.gz": gzip_bomb}, rc=(1, 2), timeout=90),
    C("gzip-then-garbage", ["parse", "--stats", "{f}"], {"in.log.gz": gzip.compress(FAIL) + b"garbage" * 100},
      lines=2),
    C("zip-is-read-member-by-member", ["classify", "{f}"], {"in.zip": zip_of_log}, rc=1,
      check=lambda r: r.out.startswith(f"{r.dir}/in.zip:server.log: FAILED".encode())),
    C("zip-member-bomb-is-streamed", ["classify", "--no-classifier", "{f}"], {"bomb.zip": zip_bomb}, rc=0,
      timeout=120),
    C("tgz-pax-header-bomb", ["classify", "{f}"], {"bomb.tgz": tgz_pax_bomb}, rc=2, timeout=120,
      check=lambda r: "an extended header of 1,073,741,824 bytes" in r.err),
    C("tgz-with-links-and-devices", ["classify", "{f}"], {"in.tgz": tgz_with_oddities}, rc=1,
      check=lambda r: r.out.count(b": FAILED") == 1 and b"passwd" not in r.out),
    C("utf16-powershell-log", ["classify", "{f}"], {"ps.log": lambda: FAIL.replace(b"\n", b"\r\n").decode()
                                                   .encode("utf-16")}, rc=1),
    C("utf32-be-no-mark", ["classify", "{f}"], {"in.log": lambda: FAIL.decode().encode("utf-32-be")}, rc=1),
    C("utf16-watch-stdin", ["watch", "--no-classifier", "--grace", "0.2", "--stall-timeout", "20"],
      stdin=lambda: FAIL.decode().encode("utf-16"), rc=1),
    C("xz-is-read-or-refused", ["classify", "{f}"], {"in.log.xz": xz_of_log}, rc=(1, 2),
      check=lambda r: r.rc == 1 or "xz" in r.err),
    C("bz2-is-read-or-refused", ["classify", "{f}"], {"in.log.bz2": bz2_of_log}, rc=(1, 2),
      check=lambda r: r.rc == 1 or "bz" in r.err),
    C("elf-binary-is-refused", ["classify", "{f}"], {"a.out": ELF}, rc=2),
    C("png-is-refused", ["classify", "{f}"], {"a.png": PNG}, rc=2),
    # ---- odd stdouts / stderrs
    C("stdout-dev-full", ["classify", "{f}"], {"in.log": FAIL}, rc=2, stdout="full"),
    C("stdout-dev-full-parse", ["parse", "{f}"], {"in.log": FAIL * 100}, rc=2, stdout="full"),
    C("stdout-closed", ["classify", "{f}"], {"in.log": FAIL}, rc=1, stdout="closed"),
    C("stdout-and-stderr-closed", ["classify", "{f}"], {"in.log": FAIL}, rc=1, stdout="closed", stderr_closed=True),
    C("stdout-closed-signatures-list", ["signatures", "list"], rc=0, stdout="closed"),
    C("stdout-dev-full-report", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD])}, rc=2, stdout="full"),
    # ---- batch
    C("batch-far-future-and-tables", ["batch", "{d}/logs", "--out", "{d}/out.parquet"], {
        "logs/far.log": b"2300-01-01T00:00:00Z h python3[1]: starting\n2300-01-01T00:00:05Z h python3[1]: RuntimeError: x\n",
        "logs/ok.log": OK}, check=lambda r: (_batch_more(r), table_keeps_far_time(r))),
    C("batch-non-utf8-name", ["batch", "{d}/logs", "--out", "{d}/out.parquet"],
      {"logs/" + BAD: FAIL, "logs/ok.log": OK}, check=table_keeps_bad_name),
    C("batch-out-missing-dir", ["batch", "{d}/logs", "--out", "{d}/nope/out.csv"], {"logs/a.log": FAIL}, rc=2),
    C("batch-out-is-a-directory", ["batch", "{d}/logs", "--out", "{d}/dir.csv"], {"logs/a.log": FAIL,
                                                                                "dir.csv/x": b""}, rc=2),
    C("batch-out-unknown-suffix", ["batch", "{d}/logs", "--out", "{d}/out.xlsx"], {"logs/a.log": FAIL}, rc=2),
    C("batch-out-proc", ["batch", "{d}/logs", "--out", "/proc/forensics-out.csv"], {"logs/a.log": FAIL}, rc=2),
    C("batch-one-bad-value-many-files", ["batch", "{d}/logs", "--out", "{d}/out.jsonl", "--jobs", "2"], {
        "logs/a.log": jlines({"MESSAGE": "RuntimeError: \\ud800", "_PID": "\u00b2"}),
        "logs/b.log": b"9999-12-31T23:59:59Z h python3[1]: RuntimeError: boom\n",
        "logs/c.log": short("x", "9" * 5000)}, check=lambda r: _table_rows(r, "out.jsonl", 3)),
    # ---- report on malformed tables
    C("report-empty-parquet", ["report", "{f}"], {"t.parquet": b""}, rc=2),
    C("report-random-parquet", ["report", "{f}"], {"t.parquet": b"PAR1" + bytes(range(256)) * 10 + b"PAR1"}, rc=2),
    C("report-csv-garbage-values", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, [
        "a.log", "abc", "9999-99-99", "2300-01-01T00:00:00+00:00", "x", "failed", "env.module-missing", "nan%",
        "warmup", "maybe", "2", "1e400", "zz", "{not json", "-1", ""], ["b.log", "1e30"] + [""] * 14])},
      rc=2, check=names_column("incident", "'abc' is not a number")),
    C("report-csv-wrong-columns", ["report", "{f}"], {"t.csv": b"x,y\n1,2\n"},
      rc=2, check=names_column("'source', 'verdict', 'root_cause', 'error'", "no")),
    C("report-csv-infinity", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, [
        "a.log", "0", "", "", "1.5", "failed", "", "Infinity", "", "", "", "0", "", "[]", "1", ""]])},
      rc=2, check=names_column("confidence", "'Infinity' is not a finite number")),
    C("report-csv-ragged", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, ["a.log", "0", ""]])},
      rc=2, check=names_column("row 1", "has 3 fields")),
    C("report-csv-huge-field", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, ["a" * 5_000_000] + [""] * 15])},
      check=report_counts(1)),
    C("report-jsonl-odd-lines", ["report", "{f}"], {"t.jsonl": (
        b'[1,2]\n"x"\nnull\n{"source":"a","incident":"x","early_warnings":[1,{"lead_seconds":"no"}]}\n'
        b'{"source":"\\ud800","confidence":"high","start_ts":12345,"lines":1e400}\n')},
      rc=2, check=names_column("line 1", "is not a JSON object")),
    C("report-jsonl-wrong-values", ["report", "{f}"], {"t.jsonl": (
        b'{"source":"\\ud800","verdict":"failed","root_cause":null,"error":null,"confidence":"high"}\n')},
      rc=2, check=names_column("confidence", "'high' is not a number")),
    C("report-jsonl-deep", ["report", "{f}"], {"t.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n"}, rc=2),
    C("report-early-warnings-malformed", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, [
        "a.log", "0", "", "", "", "failed", "", "", "", "", "", "1", "", '[{"lead_seconds": "soon"}, 5, null]', "1",
        ""]])}, rc=2, check=names_column("early_warnings", "lead_seconds ('soon')")),
    C("report-early-warnings-not-a-list", ["report", "{f}"], {"t.csv": csv_table([INCIDENT_HEAD, [
        "a.log", "0", "", "", "", "failed", "", "", "", "", "", "1", "", '{"lead_seconds": 1}', "1", ""]])},
      rc=2, check=names_column("early_warnings", "is not a JSON list")),
    C("report-directory", ["report", "{d}"], rc=2),
    C("report-missing", ["report", "{d}/none.parquet"], rc=2),
    # ---- eval on malformed corpora
    C("eval-no-labels", ["eval", "--no-classifier", "{d}"], rc=2),
    C("eval-labels-garbage", ["eval", "--no-classifier", "{d}"], {"labels.csv": b"\xff\xfe\x00garbage\x00\n,,,\n",
                                                                "1.log": FAIL}, rc=2),
    C("eval-labels-missing-columns", ["eval", "--no-classifier", "--format", "json", "{d}"],
      {"labels.csv": b"name,label\n1,env.module-missing\n", "1.log": FAIL}, rc=2),
    C("eval-labels-odd-ids", ["eval", "--no-classifier", "--format", "json", "{d}"], {"labels.csv": (
        b"id,root_cause\n../../../../etc/passwd,env.module-missing\n,\n" + b"x" * 100_000 + b",y\n1,unknown-label\n"),
        "1.log": FAIL}, rc=(0, 2)),
    C("eval-log-unreadable-bytes", ["eval", "--no-classifier", "{d}"], {"labels.csv": b"id,root_cause\n1,\n",
                                                                      "1.log": bytes(range(256)) * 100},
      check=lambda r: "skipped" in r.err),
    # ---- signatures
    C("signatures-alias-bomb", ["signatures", "test", "--signatures", "{f}"], {"s.yaml": alias_bomb}, rc=2),
    C("signatures-deep-nesting", ["signatures", "list", "--signatures", "{f}"],
      {"s.yaml": b"[" * 50_000 + b"]" * 50_000}, rc=2),
    C("signatures-huge-file", ["signatures", "list", "--signatures", "{f}"],
      {"s.yaml": b"# " + b"x" * (5 << 20) + b"\n"}, rc=2),
    C("signatures-python-tag", ["signatures", "list", "--signatures", "{f}"],
      {"s.yaml": b"!!python/object/apply:os.system ['touch MARKER']\n"}, rc=2, check=no_marker),
    C("signatures-not-utf8", ["signatures", "list", "--signatures", "{f}"], {"s.yaml": b"id: \xff\xfe\n"}, rc=2),
    C("signatures-env-missing-dir", ["classify", "{f}"], {"in.log": FAIL}, rc=2,
      env={"FORENSICS_SIGNATURES": "/nonexistent/sigs"}),
    C("signatures-catastrophic-regex", ["classify", "--signatures", "{d}/s.yaml", "{d}/in.log"], {
        "s.yaml": (b"id: custom.catastrophic\ntitle: t\nroot_cause: env.module-missing\nkind: failure\n"
                   b"remediation: r\nmatch: {text: '(a|aa)+$'}\n"),
        "in.log": (b"a" * 30 + b"!\n") * 2000}, rc=(0, 1), timeout=10),
    # ---- models
    C("model-skops-exploit-env", ["classify", "{d}/in.log"], {"in.log": FAIL}, rc=2, check=no_marker,
      env={"FORENSICS_MODEL": "{d}/evil.skops"}, setup=lambda d: (d / "evil.skops").write_bytes(skops_exploit(d / "MARKER"))),
    C("model-skops-exploit-flag", ["classify", "--model", "{d}/evil.skops", "{d}/in.log"], {"in.log": FAIL}, rc=2,
      check=no_marker, setup=lambda d: (d / "evil.skops").write_bytes(skops_exploit(d / "MARKER"))),
    C("model-scorer-gzip-bomb", ["classify", "{d}/in.log"], {"in.log": FAIL, "m.scorer.json.gz": scorer_bomb},
      rc=2, env={"FORENSICS_MODEL": "{d}/m.scorer.json.gz"}, timeout=60),
    C("model-scorer-not-gzip", ["classify", "--model", "{d}/m.scorer.json.gz", "{d}/in.log"],
      {"in.log": FAIL, "m.scorer.json.gz": b"\x1f\x8b\x08garbage"}, rc=2),
    C("model-missing", ["classify", "{d}/in.log"], {"in.log": FAIL}, rc=2,
      env={"FORENSICS_MODEL": "{d}/none.scorer.json.gz"}),
    # ---- corpus / train
    C("corpus-negative-count", ["corpus", "generate", "--count", "-5", "--healthy", "-1", "--out", "{d}/c"], rc=2),
    C("corpus-negative-healthy", ["corpus", "generate", "--count", "1", "--healthy", "-1", "--out", "{d}/c"], rc=2),
    C("corpus-out-is-a-file", ["corpus", "generate", "--count", "1", "--healthy", "0", "--out", "{f}"],
      {"c": b"x"}, rc=2),
    C("corpus-seed-not-int", ["corpus", "generate", "--seed", "1e999", "--out", "{d}/c"], rc=2),
    C("train-empty-dir", ["train", "--out", "{d}/m.skops", "{d}"], rc=2),
    C("train-garbage-labels", ["train", "--out", "{d}/m.skops", "{d}"],
      {"labels.csv": b"id,root_cause,split\n1,not-a-label,train\n", "1.log": b"\xff" * 100}, rc=2),
    # ---- watch (the watch branch owns deadlines and exit codes)
    C("watch-no-newlines-ready-timeout", ["watch", "--ready-timeout", "2", "--stall-timeout", "60"],
      stdin=b"x" * 10_000, rc=3, timeout=30),  # stdin ends: not ready (an open stream: test_watch.py)
    C("watch-nan-timeout", ["watch", "--ready-timeout", "nan"], stdin=OK, rc=2),
    C("watch-negative-stall", ["watch", "--stall-timeout", "-1"], stdin=OK, rc=2),
    C("watch-lone-surrogate-json", ["watch", "--input-format", "json", "--no-classifier"],
      stdin=b'{"MESSAGE":"RuntimeError: \\ud800"}\n{"MESSAGE":"Traceback (most recent call last):"}\n', rc=(0, 1, 3)),
    C("watch-binary-stdin", ["watch", "--no-classifier", "--stall-timeout", "5"], stdin=bytes(range(256)) * 100,
      rc=2),  # refused in one line as classify refuses a binary file (be69188)
]


def _batch_more(run: Run) -> None:
    for suffix in ("csv", "jsonl"):
        p = subprocess.run([sys.executable, "-m", "forensics", "batch", str(run.dir / "logs"), "--out",
                            str(run.dir / f"out.{suffix}")], capture_output=True, env=_env({}), timeout=120)
        assert p.returncode == 0, p.stderr


def _table_rows(run: Run, name: str, n: int) -> None:
    from forensics.report.frames import read_table

    df = read_table(run.dir / name)
    assert len(df) == n and df["error"].isna().all(), df[["source", "error"]].to_string()


# ------------------------------------------------------------------ runner
def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(TARGET))
    for k in ("FORENSICS_DEBUG", "FORENSICS_MODEL", "FORENSICS_SIGNATURES", "PYTHONWARNINGS"):
        env.pop(k, None)
    env.update(extra)
    return env


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()


def run_case(case: Case, root: Path) -> Run:
    d = root / case.name
    d.mkdir(parents=True)
    first: Path | None = None
    for name, content in case.files.items():
        p = Path(os.fsdecode(name)) if isinstance(name, bytes) else Path(name)
        p = d / p
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(_data(content))
        first = first or p
    if case.setup is not None:
        case.setup(d)
    sub = {"{d}": str(d), "{f}": str(first) if first else str(d)}

    def fill(s: str) -> str:
        for k, v in sub.items():
            s = s.replace(k, v)
        return s

    args = [fill(a) for a in case.args]
    env = _env({k: fill(v) for k, v in case.env.items()})
    stdin = _data(case.stdin)
    (d / "stdin").write_bytes(stdin)
    out_path = d / "stdout"
    with open(d / "stdin", "rb") as fin, open(out_path, "wb") as fout, open(d / "stderr", "wb") as ferr:
        if case.stdout == "full":
            fout = open("/dev/full", "wb")  # noqa: SIM115
        kw: dict[str, Any] = {"stdin": fin, "stdout": fout, "stderr": ferr}
        if case.stdout == "closed" or case.stderr_closed:
            # close fd 1 (and 2) in the child before exec: "python ... >&-"
            closing = [1] if case.stdout == "closed" else []
            closing += [2] if case.stderr_closed else []
            kw["stdout"] = subprocess.DEVNULL if case.stdout == "closed" else fout
            kw["stderr"] = ferr
            pre = lambda: (_limit(), [os.close(fd) for fd in closing])  # noqa: E731
        else:
            pre = _limit
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "forensics", *args], cwd=d, env=env,
                                preexec_fn=pre, **kw)
        deadline = t0 + case.timeout
        rusage = None
        status = 0
        peak_kb = 0
        while True:
            peak_kb = max(peak_kb, _vm_hwm_kb(proc.pid))
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                break
            time.sleep(0.02)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status) if proc.returncode != -9 else -9
        if case.stdout == "full":
            fout.close()
    return Run(proc.returncode, out_path.read_bytes(), (d / "stderr").read_bytes().decode("utf-8", "replace"), wall,
               peak_kb / 1024, d)


def _vm_hwm_kb(pid: int) -> int:
    """The child's own peak RSS (VmHWM), read while it runs: ru_maxrss is no
    measure, since a forked child keeps the forking pytest's peak across exec."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


_RESULTS: dict[str, Run] = {}
_BY_NAME = {c.name: c for c in CASES}


class _OnDemand(dict):
    """Each case run when its test asks for it (under pytest-xdist)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, name: str) -> Run:
        self[name] = run_case(_BY_NAME[name], self.root)
        return self[name]


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Every xdist worker collects every case but runs only the ones it is handed: running the whole
        # battery up front ran it once per worker (two workers: ~90 s of setup each). The workers are
        # the pool here, so each case runs once, when its test asks.
        return _OnDemand(tmp_path_factory.mktemp("hostile"))
    wanted = {item.callspec.params["case"].name for item in request.session.items
              if getattr(item, "callspec", None) and isinstance(item.callspec.params.get("case"), Case)}
    todo = [c for c in CASES if c.name in wanted and c.name not in _RESULTS]
    root = tmp_path_factory.mktemp("hostile")
    # Longest first, so the pool does not end on one slow case.
    todo.sort(key=lambda c: -c.timeout)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for c, r in zip(todo, pool.map(lambda c: run_case(c, root), todo)):
            _RESULTS[c.name] = r
    return _RESULTS


def _params() -> list:
    out = []
    for c in CASES:
        marks = [pytest.mark.xfail(reason=f"needs {c.needs} branch", strict=True)] if c.needs else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


def test_battery_is_large_and_names_are_unique():
    assert len({c.name for c in CASES}) == len(CASES)
    assert len(CASES) >= 60
    commands = {c.args[0] for c in CASES}
    assert {"classify", "parse", "batch", "report", "eval", "signatures", "corpus", "train", "watch"} <= commands


@pytest.mark.parametrize("case", _params())
def test_hostile(case: Case, results):
    run = results[case.name]
    err = run.err
    assert run.rc != -9, f"ran past {case.timeout} s"
    assert "Traceback (most recent call last)" not in err, err[-3000:]
    assert "internal error" not in err, err[-2000:]
    assert "Exception ignored" not in err, err[-2000:]
    want = case.rc if isinstance(case.rc, tuple) else (case.rc,)
    assert run.rc in want, f"exit {run.rc}, want {want}; stderr: {err[-1500:]}"
    if run.rc == 2 and not case.stderr_closed:
        errs = [ln for ln in err.splitlines() if ln.startswith("forensics: error:") or ln.startswith("Error:")]
        assert len(errs) == 1, err[-1500:]
    assert run.rss_mb < case.mem_mb, f"peak RSS {run.rss_mb:.0f} MiB"
    if case.lines is not None:
        if case.lines == "auto":
            first = next(iter(case.files.values()), case.stdin)
            expect = physical_lines(_data(first))
        else:
            expect = int(case.lines)
        stats = None
        if case.args[0] == "classify":
            stats = json.loads(run.out)["stats"]
        else:
            found = [json.loads(ln) for ln in err.splitlines() if ln.startswith("{")]
            assert found, err[-1500:]
            stats = found[-1]
        assert stats["lines"] == expect, (stats, expect)
        assert stats["lines"] == stats["parsed"] + stats["unparsed"], stats
    if case.check is not None:
        assert case.check(run) is not False, f"{case.name}: check failed; stderr: {err[-800:]}"
