"""SIGINT / SIGTERM to a running ``forensics classify`` reading an endless
stdin pipe: one short line on stderr, exit 130, no Python traceback."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _restore_default_signals() -> None:
    # A non-interactive shell starts background jobs with SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler; undo that so the test
    # sees what a user at a terminal sees.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _blocked_in_read(pid: int, timeout: float = 30.0) -> None:
    """Wait until the process sleeps in a read on its stdin pipe (it has
    imported everything, installed its handlers and is waiting for input)."""
    deadline = time.monotonic() + timeout
    wchan = Path(f"/proc/{pid}/wchan")
    stat = Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
            where = wchan.read_text() if wchan.exists() else ""
        except OSError:
            state, where = "?", ""
        if state == "S" and ("pipe" in where or where in ("", "0")):
            # settle: the sleep must be the stdin read, not an import's I/O
            time.sleep(0.3)
            state2 = stat.read_text().rsplit(")", 1)[1].split()[0]
            if state2 == "S":
                return
        time.sleep(0.05)
    pytest.fail("forensics never blocked reading stdin")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("args", [["classify"], ["classify", "--format", "json"], ["parse"]],
                         ids=["classify-text", "classify-json", "parse"])
def test_signal_on_endless_stdin(sig, args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "forensics", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env,
                            preexec_fn=_restore_default_signals)
    try:
        # Some real-looking input, less than one read block, and the pipe stays open.
        lines = b"".join(b"[2026-03-14 09:00:%02d TP0] Load weight begin. avail mem=78.21 GB\n" % (i % 60)
                         for i in range(200))
        proc.stdin.write(lines)
        proc.stdin.flush()
        if Path("/proc").is_dir():
            _blocked_in_read(proc.pid)
        else:  # pragma: no cover
            time.sleep(3)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert proc.returncode == 130, (proc.returncode, text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines == ["forensics: interrupted"], text
    assert len(text) < 80


def test_sigterm_while_busy(tmp_path):
    """SIGTERM while working through a large file (not blocked in a read)."""
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.write(b"[2026-03-14 09:00:11 TP0] Decode batch. #running-req: 1, #token: 90\n" * 2_000_000)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "forensics", "parse", str(big)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=REPO, env=env, preexec_fn=_restore_default_signals)
    try:
        time.sleep(2.5)
        if proc.poll() is not None:
            pytest.skip("machine too fast: parse finished before the signal")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert proc.returncode == 130, (proc.returncode, text)
    assert [ln for ln in text.splitlines() if ln.strip()] == ["forensics: interrupted"], text
