"""Bad inputs through the real CLI (``python -m forensics ...`` in a subprocess).

Every case states its expected outcome. For all of them:

* no Python traceback from forensics itself on stderr;
* the exit code is right: 0 no failure, 1 failure diagnosed, 2 unusable
  input (with exactly one ``forensics: error: ...`` line on stderr);
* line accounting holds: ``forensics parse --stats`` prints a JSON stats
  line on stderr where ``lines == parsed + unparsed`` and ``lines`` is the
  number of physical lines of the input (``wc -l``, +1 when the last line
  has no newline).
"""
from __future__ import annotations

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable


# ---------------------------------------------------------------- helpers
def run_cli(*args: str, stdin: bytes | None = None, timeout: float = 120, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([PY, "-m", "forensics", *args], input=stdin if stdin is not None else b"",
                          capture_output=True, timeout=timeout, cwd=cwd, env=env)


def physical_lines(data: bytes) -> int:
    """``wc -l``, +1 when the last line has no newline."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def assert_clean_stderr(proc: subprocess.CompletedProcess) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback (most recent call last)" not in err, err[-3000:]
    assert "Error:" not in err.replace("forensics: error:", ""), err[-3000:]
    return err


def stats_of(proc: subprocess.CompletedProcess) -> list[dict]:
    out = []
    for ln in proc.stderr.decode("utf-8", "replace").splitlines():
        if ln.startswith("{"):
            out.append(json.loads(ln))
    return out


def parse_stats(path: Path, *extra: str, expect_lines: int | None = None) -> tuple[dict, list[dict]]:
    """Run ``forensics parse --stats PATH``; check exit 0, clean stderr, accounting.
    Returns (stats, events)."""
    proc = run_cli("parse", "--stats", *extra, str(path))
    assert_clean_stderr(proc)
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = stats_of(proc)
    assert len(stats) == 1, proc.stderr
    st = stats[0]
    check_accounting(st, path.read_bytes() if expect_lines is None else None, expect_lines)
    # NDJSON splits on "\n" only (str.splitlines would also split on U+0085, U+2028...)
    events = [json.loads(ln) for ln in proc.stdout.decode("utf-8").split("\n") if ln.strip()]
    for ev in events:
        assert 1 <= ev["line"] <= max(st["lines"], 1), ev
        if "end_line" in ev:
            assert ev["line"] <= ev["end_line"] <= st["lines"], ev
    return st, events


def check_accounting(st: dict, data: bytes | None, expect_lines: int | None = None) -> None:
    want = physical_lines(data) if data is not None else expect_lines
    assert st["lines"] == want, (st, want)
    assert st["lines"] == st["parsed"] + st["unparsed"], st
    assert 0 <= st["unparsed"] <= st["lines"], st


def classify(path: Path | None, *extra: str, stdin: bytes | None = None) -> tuple[int, dict]:
    args = ["classify", "--format", "json", *extra]
    if path is not None:
        args.append(str(path))
    proc = run_cli(*args, stdin=stdin)
    assert_clean_stderr(proc)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    res = json.loads(proc.stdout)
    assert res["verdict"] in ("failed", "ready", "starting", "stalled", "no-failure")
    # exit code and verdict agree
    assert proc.returncode == (1 if res["verdict"] == "failed" else 0), (proc.returncode, res["verdict"])
    return proc.returncode, res


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str = "") -> str:
    err = assert_clean_stderr(proc)
    assert proc.returncode == 2, (proc.returncode, err)
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("{")]
    assert len(lines) == 1, err
    assert lines[0].startswith("forensics: error: "), err
    assert needle in lines[0], err
    return lines[0]


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 2356, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
    '  File "/opt/sglang/python/sglang/srt/model_executor/model_runner.py", line 215, in __init__\n'
    "    self.initialize(min_per_gpu_memory)\n"
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def tracebacks(events: list[dict]) -> list[dict]:
    return [e for e in events if e["kind"] == "traceback"]


# ---------------------------------------------------------------- empty & whitespace
def test_empty_file(tmp_path):
    p = write(tmp_path, "empty.log", b"")
    st, events = parse_stats(p)
    assert st["lines"] == 0 and events == []
    rc, res = classify(p)
    assert rc == 0 and res["verdict"] == "no-failure"


def test_empty_stdin():
    proc = run_cli("parse", "--stats", stdin=b"")
    assert_clean_stderr(proc)
    assert proc.returncode == 0 and proc.stdout == b""
    check_accounting(stats_of(proc)[0], b"")
    rc, res = classify(None, stdin=b"")
    assert rc == 0 and res["verdict"] == "no-failure"


@pytest.mark.parametrize("data", [b" ", b"\n", b"\n\n\n", b"  \t \n   \n\t", b"\r\n\r\n", b"\x0b\x0c\n \n"])
def test_only_whitespace(tmp_path, data):
    p = write(tmp_path, "ws.log", data)
    parse_stats(p)
    rc, res = classify(p)
    assert rc == 0 and res["verdict"] == "no-failure"


# ---------------------------------------------------------------- binary junk
def test_random_bytes(tmp_path):
    rnd = random.Random(1234)
    data = bytes(rnd.getrandbits(8) for _ in range(256 * 1024))
    p = write(tmp_path, "random.bin", data)
    for cmd in ("parse", "classify"):
        assert_one_line_error(run_cli(cmd, str(p)), "not a text log (looks like binary data)")


def test_random_bytes_on_stdin():
    rnd = random.Random(99)
    data = bytes(rnd.getrandbits(8) for _ in range(64 * 1024))
    assert_one_line_error(run_cli("parse", "--stats", stdin=data), "not a text log")
    assert_one_line_error(run_cli("classify", stdin=data), "not a text log")


def test_nul_bytes(tmp_path):
    data = (b"\x00" * 100 + b"\n" + b"INFO 06-01 12:00:00 [core.py:1] hello\x00world\n"
            + TRACEBACK.replace("RuntimeError", "Runtime\x00Error").encode()
            + b"\x00\x00\x00\n" + TRACEBACK.encode() + b"tail\x00")
    p = write(tmp_path, "nul.log", data)
    st, events = parse_stats(p)
    assert all("\x00" not in e["text"] for e in events)
    assert any(t["exc_type"] == "RuntimeError" for t in tracebacks(events))
    rc, res = classify(p)
    assert rc == 1


def test_nul_only_file(tmp_path):
    p = write(tmp_path, "zeros.log", b"\x00" * 1_000_000)
    assert_one_line_error(run_cli("classify", str(p)), "not a text log (looks like NUL bytes only)")


# ---------------------------------------------------------------- gzip
def _gz_payload() -> bytes:
    rnd = random.Random(7)
    lines = [b"[2026-03-14 09:00:%02d TP0] step %d token %08x\n" % (i % 60, i, rnd.getrandbits(32)) for i in range(60000)]
    lines.insert(100, TRACEBACK.encode())
    return b"".join(lines)


def test_gzip_cut_in_half(tmp_path):
    """A .gz cut in half: everything that can be decompressed is read, the
    cut is recorded in the stats (``truncated_gzip``), the failure in the
    surviving half is still diagnosed."""
    gz = gzip.compress(_gz_payload())
    cut = gz[: len(gz) // 2]
    p = write(tmp_path, "half.log.gz", cut)
    recoverable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)
    assert 0 < len(recoverable)
    st, events = parse_stats(p, "--kind", "traceback", expect_lines=physical_lines(recoverable))
    assert st.get("truncated_gzip") is True
    assert len(events) == 1 and events[0]["exc_type"] == "RuntimeError"
    rc, res = classify(p)
    assert rc == 1 and res["stats"].get("truncated_gzip") is True
    # the same through stdin
    proc = run_cli("parse", "--stats", "--kind", "traceback", stdin=cut)
    assert_clean_stderr(proc)
    assert proc.returncode == 0
    check_accounting(stats_of(proc)[0], recoverable)


def test_gzip_cut_inside_header(tmp_path):
    gz = gzip.compress(_gz_payload())
    for n in (2, 5, 10, 11):  # nothing recoverable: unusable input, not "no failure"
        p = write(tmp_path, f"tiny{n}.log.gz", gz[:n])
        assert_one_line_error(run_cli("parse", "--stats", str(p)), "gzip data is corrupt or cut before the first line")


def test_gzip_whole_and_concatenated_members(tmp_path):
    a, b = TRACEBACK.encode(), b"second member line\n"
    p = write(tmp_path, "multi.log.gz", gzip.compress(a) + gzip.compress(b))
    st, _ = parse_stats(p, expect_lines=physical_lines(a + b))
    assert "truncated_gzip" not in st


def test_gz_suffix_that_is_not_gzip(tmp_path):
    """A ``.gz`` name is not trusted: the magic bytes decide; this one is text."""
    data = TRACEBACK.encode()
    p = write(tmp_path, "plain.log.gz", data)
    st, events = parse_stats(p)
    assert "truncated_gzip" not in st
    assert tracebacks(events)[0]["exc_type"] == "RuntimeError"
    rc, _ = classify(p)
    assert rc == 1


def test_gzip_magic_then_garbage(tmp_path):
    p = write(tmp_path, "bad.log.gz", b"\x1f\x8b" + b"this is not deflate at all\n" * 10)
    for cmd in ("parse", "classify"):
        assert_one_line_error(run_cli(cmd, str(p)), "corrupt")


# ---------------------------------------------------------------- paths & directories
def test_missing_path_is_one_line_error(tmp_path):
    proc = run_cli("parse", str(tmp_path / "nope.log"))
    assert_one_line_error(proc, "nope.log")
    proc = run_cli("classify", str(tmp_path / "nope.log"))
    assert_one_line_error(proc, "nope.log")


def _tree_with_loops(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    (d / "sub").mkdir(parents=True)
    (d / "a.log").write_bytes(b"just a line\n")
    (d / "sub" / "b.log").write_bytes(TRACEBACK.encode())
    os.symlink("..", d / "sub" / "up")  # directory loop
    os.symlink("loop2.log", d / "loop1.log")  # file symlink loop
    os.symlink("loop1.log", d / "loop2.log")
    os.symlink(str(tmp_path / "gone.log"), d / "dangling.log")  # a file that vanished
    os.mkfifo(d / "fifo.log")  # opening it would block forever
    return d


def test_directory_with_symlink_loops_dangling_links_and_fifo(tmp_path):
    """Loops, dangling links and FIFOs inside a walked directory are skipped."""
    d = _tree_with_loops(tmp_path)
    proc = run_cli("parse", "--stats", str(d), timeout=60)
    assert_clean_stderr(proc)
    assert proc.returncode == 0, proc.stderr
    st = stats_of(proc)
    assert sorted(Path(s["source"]).name for s in st) == ["a.log", "b.log"]
    proc = run_cli("classify", "--format", "ndjson", str(d), timeout=60)
    assert_clean_stderr(proc)
    assert proc.returncode == 1
    results = [json.loads(ln) for ln in proc.stdout.split(b"\n") if ln.strip()]
    assert [Path(r["source"]).name for r in results] == ["a.log", "b.log"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_directory_with_unreadable_file(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    (d / "a.log").write_bytes(b"line\n")
    secret = d / "b.log"
    secret.write_bytes(b"line\n")
    secret.chmod(0)
    try:
        proc = run_cli("classify", str(d))
        assert_one_line_error(proc, "b.log")
    finally:
        secret.chmod(0o644)


def test_file_that_vanishes_between_listing_and_open(tmp_path):
    """Simulates the unreadable file when running as root: the directory walk
    lists a file, which is deleted before forensics opens it -> exit 2, one line."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "a.log").write_bytes(b"line one\n")
    (d / "b.log").write_bytes(b"line two\n")
    driver = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        import forensics.ingest.sources as S
        orig = S.expand_paths
        def vanishing(paths, skipped=None, **kw):
            for src in orig(paths, skipped, **kw):
                if src.path is not None and src.path.name == "b.log":
                    os.unlink(src.path)
                yield src
        S.expand_paths = vanishing
        from forensics.cli.main import main
        main(sys.argv[1:])
    """)
    for cmd in (["parse"], ["classify"]):
        proc = subprocess.run([PY, "-c", driver, *cmd, str(d)], capture_output=True, timeout=120)
        line = assert_one_line_error(proc, "b.log")
        assert "No such file" in line
        (d / "b.log").write_bytes(b"line two\n")


# ---------------------------------------------------------------- encodings & control codes
def test_invalid_utf8_in_the_middle_of_a_traceback(tmp_path):
    lines = TRACEBACK.encode().splitlines(keepends=True)
    lines.insert(3, b"    x = '\xff\xfe\xc3\x28 bad \xed\xa0\x80 surrogate'\n")
    lines[2] = lines[2].replace(b"server_args", b"server_\x80args")
    data = b"".join(lines)
    p = write(tmp_path, "badutf8.log", data)
    st, events = parse_stats(p)
    tbs = tracebacks(events)
    assert len(tbs) == 1
    assert tbs[0]["exc_type"] == "RuntimeError" and tbs[0]["truncated"] is False
    assert "\ufffd" in json.dumps(tbs[0], ensure_ascii=False)
    rc, res = classify(p)
    assert rc == 1


def test_windows_line_endings(tmp_path):
    text = "INFO 06-01 12:00:00 [core.py:1] starting\n" + TRACEBACK
    data = text.replace("\n", "\r\n").encode()
    p = write(tmp_path, "crlf.log", data)
    st, events = parse_stats(p)
    assert all("\r" not in e["text"] for e in events)
    tb = tracebacks(events)[0]
    assert tb["exc_type"] == "RuntimeError" and len(tb["frames"]) == 2 and not tb["truncated"]
    assert tb["exc_message"] == "CUDA error: no kernel image is available for execution on the device"
    rc, _ = classify(p)
    assert rc == 1


def test_mixed_line_endings_and_lone_cr(tmp_path):
    data = b"a\r\nb\rc\n\rd\r\r\n\r\n" + TRACEBACK.encode().replace(b"\n", b"\r\n", 2) + b"no newline at end\r"
    p = write(tmp_path, "mixed.log", data)
    parse_stats(p)
    classify(p)


def test_ansi_colour_and_cursor_movement(tmp_path):
    esc = "\x1b"
    tb = TRACEBACK.splitlines()
    lines = [
        f"{esc}[1;36m(EngineCore_DP0 pid=123){esc}[0;0m INFO 06-01 12:00:00 [core.py:1] start",
        f"Loading safetensors checkpoint shards:  50% Completed | 1/2{esc}[K\r{esc}[2K{esc}[1G"
        f"Loading safetensors checkpoint shards: 100% Completed | 2/2",
        f"{esc}[2J{esc}[H{esc}[?25l{esc}[10;20H{esc}[3A{esc}[5C{esc}7{esc}8{esc}]0;title{esc}\\ progress",
        f"{esc}[31m{tb[0]}{esc}[0m",
        *(f"{esc}[2m{ln}{esc}[0m" if i % 2 else ln for i, ln in enumerate(tb[1:-1])),
        f"{esc}[1;31m{tb[-1]}{esc}[0m{esc}[K",
    ]
    data = ("\n".join(lines) + "\n").encode()
    p = write(tmp_path, "ansi.log", data)
    st, events = parse_stats(p)
    assert all(esc not in e["text"] for e in events)
    tb_ev = tracebacks(events)
    assert tb_ev and tb_ev[0]["exc_type"] == "RuntimeError" and len(tb_ev[0]["frames"]) == 2
    rc, _ = classify(p)
    assert rc == 1


def test_box_drawing_borders_around_every_line(tmp_path):
    """Logs copied from a TUI / web console: ``│ ... │`` around every line."""
    body = ["INFO 06-01 12:00:00 [core.py:1] starting", *TRACEBACK.splitlines()]
    width = max(len(b) for b in body) + 2
    lines = ["┌" + "─" * width + "┐"] + [f"│ {b:<{width - 2}} │" for b in body] + ["└" + "─" * width + "┘"]
    data = ("\n".join(lines) + "\n").encode()
    p = write(tmp_path, "box.log", data)
    st, events = parse_stats(p)
    tb = tracebacks(events)
    assert len(tb) == 1 and tb[0]["exc_type"] == "RuntimeError" and len(tb[0]["frames"]) == 2
    assert "│" not in tb[0]["text"]
    rc, res = classify(p)
    assert rc == 1


def test_table_borders_with_line_numbers(tmp_path):
    body = TRACEBACK.splitlines()
    lines = ["+----+------+"] + [f"| {i:>3} | {b} |" for i, b in enumerate(body, 1)] + ["+----+------+"]
    p = write(tmp_path, "table.log", ("\n".join(lines) + "\n").encode())
    st, events = parse_stats(p)
    rc, _ = classify(p)
    assert rc == 1


# ---------------------------------------------------------------- size
def test_single_50mb_line(tmp_path):
    """One 50 MB physical line: clipped (memory stays bounded), counted once."""
    p = tmp_path / "monster.log"
    with open(p, "wb") as f:
        f.write(b"first\n")
        chunk = b"0123456789abcdef" * 65536  # 1 MiB
        for _ in range(50):
            f.write(chunk)
        f.write(b"\n" + TRACEBACK.encode())
    proc = run_cli("parse", "--stats", "--kind", "traceback", str(p))
    assert_clean_stderr(proc)
    assert proc.returncode == 0
    st = stats_of(proc)[0]
    check_accounting(st, None, 2 + TRACEBACK.count("\n"))
    assert st["clipped_lines"] == 1
    rc, _ = classify(p)
    assert rc == 1


def test_single_50mb_line_without_newline(tmp_path):
    p = tmp_path / "monster2.log"
    with open(p, "wb") as f:
        chunk = b"y" * (1 << 20)
        for _ in range(50):
            f.write(chunk)
    proc = run_cli("parse", "--stats", "--kind", "traceback", str(p))
    assert_clean_stderr(proc)
    assert proc.returncode == 0
    st = stats_of(proc)[0]
    check_accounting(st, None, 1)


def test_one_million_identical_lines(tmp_path):
    line = b"[2026-03-14 09:00:11 TP0] Decode batch. #running-req: 1, #token: 90, token usage: 0.00, #queue-req: 0\n"
    p = tmp_path / "million.log"
    with open(p, "wb") as f:
        block = line * 10000
        for _ in range(100):
            f.write(block)
    # --kind keeps stdout small; every line is still parsed and counted.
    proc = run_cli("parse", "--stats", "--kind", "traceback", str(p), timeout=60)
    assert_clean_stderr(proc)
    assert proc.returncode == 0
    st = stats_of(proc)[0]
    check_accounting(st, None, 1_000_000)
    assert st["events"] == 1_000_000


# ---------------------------------------------------------------- traceback shapes
@pytest.fixture(scope="module")
def deep_traceback(tmp_path_factory) -> bytes:
    """Real CPython output of a 5,000-frame recursion (mutual, so CPython does
    not fold it into "[Previous line repeated N more times]")."""
    d = tmp_path_factory.mktemp("deep")
    script = d / "recurse.py"
    script.write_text(textwrap.dedent("""
        import sys
        sys.setrecursionlimit(5000)
        sys.tracebacklimit = 100000
        def ping(n):
            return pong(n + 1)
        def pong(n):
            return ping(n + 1)
        ping(0)
    """))
    proc = subprocess.run([PY, str(script)], capture_output=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count(b'\n  File "') >= 4990
    return proc.stderr


def test_traceback_of_5000_frames(tmp_path, deep_traceback):
    p = write(tmp_path, "deep.log", b"INFO starting\n" + deep_traceback)
    st, events = parse_stats(p)
    tb = tracebacks(events)
    assert len(tb) == 1
    tb = tb[0]
    assert tb["exc_type"] == "RecursionError" and not tb["truncated"]
    assert tb["end_line"] == st["lines"]
    nframes = deep_traceback.count(b'\n  File "')
    # deep recursion is kept up to a cap and the rest counted, never silently lost
    assert len(tb["frames"]) == nframes or st.get("caps_hit", {}).get("traceback_frames", 0) > 0
    assert tb["frames"][0]["function"] == "<module>"
    rc, res = classify(p)
    assert rc == 1 and "RecursionError" in json.dumps(res["evidence"])


def test_direct_recursion_with_repeated_line_marker(tmp_path):
    script = tmp_path / "r.py"
    script.write_text("def f(n):\n    return f(n + 1)\nf(0)\n")
    proc = subprocess.run([PY, str(script)], capture_output=True, timeout=60)
    assert b"Previous line repeated" in proc.stderr
    p = write(tmp_path, "r.log", proc.stderr)
    st, events = parse_stats(p)
    tb = tracebacks(events)
    assert len(tb) == 1 and tb[0]["exc_type"] == "RecursionError"


def test_traceback_with_no_exception_line(tmp_path):
    """Header and frames, then the log ends (or moves on): a truncated traceback."""
    cut = "".join(TRACEBACK.splitlines(keepends=True)[:-1])
    for name, data in (("eof.log", cut), ("moves-on.log", cut + "INFO 06-01 12:00:05 [core.py:9] next\n"),
                       ("header-only.log", "Traceback (most recent call last):\n")):
        p = write(tmp_path, name, data.encode())
        st, events = parse_stats(p)
        tb = tracebacks(events)
        assert len(tb) == 1, (name, tb)
        assert len(tb[0]["frames"]) == (0 if name == "header-only.log" else TRACEBACK.count('  File "')), (name, tb)
        # a prefixed log line after the frames is not taken as the exception line
        assert tb[0]["truncated"] is True and tb[0]["exc_type"] is None, (name, tb)
        classify(p)


def test_exception_line_with_no_traceback(tmp_path):
    for data in (b"RuntimeError: CUDA error: out of memory\n", b"ValueError\n",
                 b"INFO 06-01 12:00:00 [core.py:1] x\ntorch.OutOfMemoryError: CUDA out of memory.\nINFO next\n"):
        p = write(tmp_path, "exc.log", data)
        st, events = parse_stats(p)
        classify(p)


def test_many_interleaved_unfinished_tracebacks(tmp_path):
    """More open tracebacks than the assembler keeps at once (distinct pids)."""
    lines = []
    for pid in range(1000, 1600):
        lines.append(f"Mar 14 09:00:12 node python3[{pid}]: Traceback (most recent call last):")
        lines.append(f'Mar 14 09:00:12 node python3[{pid}]:   File "/x/{pid}.py", line 1, in f')
    p = write(tmp_path, "open.log", ("\n".join(lines) + "\n").encode())
    st, events = parse_stats(p)
    assert len(tracebacks(events)) == 600
    classify(p)


# ---------------------------------------------------------------- timestamps
def test_timestamps_going_backwards_and_jumping_days(tmp_path):
    stamps = ["Mar 14 09:00:00", "Mar 14 08:00:00", "Mar 20 09:00:00", "Jan  1 00:00:00", "Dec 31 23:59:59",
              "Feb 29 12:00:00", "Feb 30 12:00:00", "Mar 14 09:00:01"]
    lines = [f"{ts} node python3[42]: [2026-03-14 09:00:{i:02d} TP0] step {i}" for i, ts in enumerate(stamps)]
    lines += [f"Mar 14 09:00:02 node python3[42]: {ln}" for ln in TRACEBACK.splitlines()]
    lines.append("Mar 13 09:00:03 node systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE")
    p = write(tmp_path, "time.log", ("\n".join(lines) + "\n").encode())
    st, events = parse_stats(p)
    assert st["format"] == "short"
    rc, res = classify(p)
    assert rc == 1
    for inc in res["incidents"]:
        for k in ("duration_s", "time_to_failure_s"):
            assert inc.get(k) is None or inc[k] >= 0, (k, inc.get(k))


def test_iso_timestamps_backwards_and_far_jumps(tmp_path):
    stamps = ["2026-03-14T09:00:00+0000", "2020-01-01T00:00:00+0000", "2099-12-31T23:59:59+0000",
              "2026-03-14T08:59:59.999999+0000", "9999-12-31T23:59:59+0000", "0001-01-01T00:00:00+0000"]
    lines = [f"{ts} node python3[42]: line {i}" for i, ts in enumerate(stamps)]
    lines += [f"2026-03-14T09:00:05+0000 node python3[42]: {ln}" for ln in TRACEBACK.splitlines()]
    p = write(tmp_path, "iso.log", ("\n".join(lines) + "\n").encode())
    st, events = parse_stats(p)
    rc, res = classify(p)
    assert rc == 1


# ---------------------------------------------------------------- journal JSON
def _json_entry(msg, pid=42, t=1773478811000000, **extra) -> bytes:
    d = {"__REALTIME_TIMESTAMP": str(t), "_PID": str(pid), "SYSLOG_IDENTIFIER": "python3",
         "_HOSTNAME": "node", "_BOOT_ID": "3c1e7a2b9d8f4e6a8b0c1d2e3f405162", "MESSAGE": msg, **extra}
    return json.dumps(d).encode() + b"\n"


def test_journal_json_with_truncated_last_object(tmp_path):
    data = b"".join(_json_entry(ln, t=1773478811000000 + i) for i, ln in enumerate(TRACEBACK.splitlines()))
    data += _json_entry("after")[:37]  # cut mid-object, no newline
    p = write(tmp_path, "cut.json", data)
    st, events = parse_stats(p)
    assert st["format"] == "json"
    tb = tracebacks(events)
    assert len(tb) == 1 and tb[0]["exc_type"] == "RuntimeError" and tb[0]["pid"] == 42
    rc, _ = classify(p)
    assert rc == 1


def test_journal_json_message_as_byte_array(tmp_path):
    tb_lines = TRACEBACK.splitlines()
    entries = [_json_entry(ln) for ln in tb_lines[:-1]]
    last = ("\x1b[1;31m" + tb_lines[-1] + "\x1b[0m").encode() + b" \xff\xfe"  # invalid UTF-8 too
    entries.append(_json_entry(list(last)))
    entries.append(_json_entry([1, 2, 300, -5, 0]))  # out-of-range "bytes"
    entries.append(_json_entry(None))  # journalctl nulls 4096+ byte fields
    entries.append(_json_entry(["a", "b"]))  # repeated field
    entries.append(_json_entry({"nested": 1}))
    entries.append(_json_entry(12345))
    p = write(tmp_path, "bytes.json", b"".join(entries))
    st, events = parse_stats(p)
    tb = tracebacks(events)
    assert len(tb) == 1 and tb[0]["exc_type"] == "RuntimeError"
    assert "\x1b" not in tb[0]["text"]
    rc, _ = classify(p)
    assert rc == 1


@pytest.mark.parametrize("junk", [
    b'{"MESSAGE": "x", "_PID": ["1", "2"], "__REALTIME_TIMESTAMP": "99999999999999999999999"}\n',
    b'{"MESSAGE": "x", "__REALTIME_TIMESTAMP": "-1", "_PID": "-3"}\n',
    b'{"MESSAGE": "x", "__REALTIME_TIMESTAMP": ["1", 2], "_BOOT_ID": 7}\n',
    b'{"MESSAGE": "x"}\n[1, 2, 3]\n"string"\nnull\n{"MESSAGE": "x", "_PID": "1e400"}\n',
    b'\x1e{"MESSAGE": "x"}\n\x1e{"MESSAGE": \n\x1e\n',
    b'data: {"MESSAGE": "x"}\ndata: {bad\n\n',
    b'{"MESSAGE": "' + b"[" * 100000 + b'"}\n' + b"[" * 100000 + b"\n",
], ids=lambda b: f"{len(b)}-bytes-{b[:12]!r}")
def test_journal_json_odd_values(tmp_path, junk):
    p = write(tmp_path, "odd.json", junk)
    parse_stats(p)
    classify(p)


def test_journal_export_truncated_and_binary(tmp_path):
    import struct
    entry = (b"__CURSOR=s=1;i=1\n__REALTIME_TIMESTAMP=1773478811000000\n_PID=42\nSYSLOG_IDENTIFIER=python3\n"
             b"MESSAGE=hello\n\n")
    payload = b"line one\nline \xff two"
    binary = (b"__CURSOR=s=1;i=2\n__REALTIME_TIMESTAMP=1773478812000000\n_PID=42\nMESSAGE\n"
              + struct.pack("<Q", len(payload)) + payload + b"\n\n")
    cut = b"__CURSOR=s=1;i=3\n__REALTIME_TIMESTAMP=17734788"
    p = write(tmp_path, "x.export", entry + binary + cut)
    st, _ = parse_stats(p)
    assert st["format"] == "export"
    classify(p)


# ---------------------------------------------------------------- pipes
def test_broken_pipe_is_quiet(tmp_path):
    p = tmp_path / "big.log"
    with open(p, "wb") as f:
        f.write(b"INFO 06-01 12:00:00 [core.py:1] some line of text\n" * 200_000)
    small = tmp_path / "small.log"
    small.write_bytes(b"INFO 06-01 12:00:00 [core.py:1] some line of text\n" * 5_000)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # exit with the status of the forensics stage (cat itself dies of SIGPIPE)
    for cmd in (f"{PY} -m forensics parse {p} | head -1; exit ${{PIPESTATUS[0]}}",
                f"{PY} -m forensics classify --format ndjson {small} {small} {small} | head -c 10; exit ${{PIPESTATUS[0]}}",
                f"{PY} -m forensics parse --stats {p} | head -1; exit ${{PIPESTATUS[0]}}",
                f"cat {p} | {PY} -m forensics parse | head -1; exit ${{PIPESTATUS[1]}}"):
        proc = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=120, cwd=REPO, env=env)
        assert proc.returncode == 0, (cmd, proc.returncode, proc.stderr)
        assert proc.stderr == b"", (cmd, proc.stderr)
        assert proc.stdout


def test_stdout_closed_before_start(tmp_path):
    p = write(tmp_path, "a.log", TRACEBACK.encode())
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([PY, "-m", "forensics", "parse", str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=60, cwd=REPO, env=env,
                          preexec_fn=lambda: os.close(1))
    assert b"Traceback (most recent call last)" not in proc.stderr, proc.stderr
