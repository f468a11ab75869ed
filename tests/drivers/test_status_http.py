"""``forensics run --serve``: a probe answered while the supervisor exits
gets its whole answer (CI once saw a body cut mid-way: the handler ran on a
daemon thread that the interpreter's exit killed)."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time

from conftest import REPO

# A supervisor in miniature: its status server, a state whose snapshot is
# slow, and an exit as soon as the first probe is being answered.
_SCRIPT = textwrap.dedent("""
    import sys, threading, time
    from forensics.drivers.status_http import StatusServer

    asked = threading.Event()

    class SlowState:
        def snapshot(self):
            asked.set()
            time.sleep(0.5)
            return {"ready": False, "state": "starting", "phase": "load", "alive": True, "pad": "x" * 4000}

    server = StatusServer(("127.0.0.1", 0), SlowState())
    server.start()
    print(server.port, flush=True)
    asked.wait(10)
    server.close()
""")


def _probe(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /startupz HTTP/1.0\r\nHost: x\r\n\r\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_probe_in_flight_at_exit_gets_its_whole_answer() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _SCRIPT], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    reply = _probe(port)
    assert proc.wait(10) == 0
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 503")
    length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
    assert len(body) == length
    assert json.loads(body)["state"] == "starting"


def test_a_silent_prober_does_not_hold_the_exit() -> None:
    script = _SCRIPT.replace("asked.wait(10)", "time.sleep(0.3)")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        start = time.monotonic()
        assert proc.wait(15) == 0  # says nothing: its handler times out, the exit goes on
    assert time.monotonic() - start < 10
