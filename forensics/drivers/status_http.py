"""``forensics run --serve HOST:PORT``: the start-up state over HTTP, for
Kubernetes probes and anything else that asks.

- ``/livez``: 200 while the child process lives.
- ``/readyz``: 200 only once the log said ready (and, with ``--probe``, the
  server's own probe agreed after that), while nothing has failed since.
- ``/startupz``: the state as JSON (``StartupState.snapshot``): state,
  phase, detail, seconds in the phase and since start, early warnings, the
  diagnosis once failed; 200 once ready, else 503 (a ``startupProbe``
  passes when start-up is over).

Standard library only: ``http.server`` in a daemon thread. It never writes to
the terminal (the child's stderr is passed through there).
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from forensics.drivers.startup import StartupState
from forensics.errors import ForensicsError


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (every address), ``[::1]:PORT``."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ForensicsError(f"--serve must be HOST:PORT (e.g. 0.0.0.0:8081), not {value!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "0.0.0.0", int(port)


class _Server(ThreadingHTTPServer):
    # A probe answered while the supervisor exits gets its whole answer:
    # server_close() joins the handler threads (each bounded by the
    # handler's socket timeout), so none is cut mid-body at exit.
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True
    state: StartupState

    def __init__(self, address: tuple[str, int], handler: type, state: StartupState) -> None:
        import socket

        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.state = state
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "forensics-run"
    protocol_version = "HTTP/1.0"
    timeout = 2  # a prober that connects and says nothing cannot hold the supervisor's exit

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        path = urlsplit(self.path).path.rstrip("/") or "/"
        state = self.server.state
        if path == "/livez":
            alive = state.snapshot()["alive"]
            self._send(200 if alive else 503, {"alive": alive}, body)
        elif path == "/readyz":
            snap = state.snapshot()
            self._send(200 if snap["ready"] else 503,
                       {"ready": snap["ready"], "state": snap["state"], "phase": snap["phase"]}, body)
        elif path == "/startupz":
            snap = state.snapshot()
            self._send(200 if snap["ready"] else 503, snap, body)
        else:
            self._send(404, {"error": "not found", "paths": ["/livez", "/readyz", "/startupz"]}, body)

    def _send(self, code: int, payload: dict[str, Any], body: bool) -> None:
        data = (json.dumps(payload, default=str, ensure_ascii=True) + "\n").encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if body:
                self.wfile.write(data)
        except OSError:
            pass  # the prober hung up: its problem, not ours

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # stderr belongs to the child


class StatusServer:
    """Bound at construction (a port in use is a usage error, before the
    child starts); serves from a daemon thread once ``start`` is called."""

    def __init__(self, address: tuple[str, int], state: StartupState) -> None:
        try:
            self.httpd = _Server(address, _Handler, state)
        except OSError as e:
            raise ForensicsError(f"--serve {address[0]}:{address[1]}: {e.strerror or e}") from None
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="forensics-status-http", daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
