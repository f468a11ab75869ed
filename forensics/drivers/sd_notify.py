"""systemd's readiness protocol (``sd_notify(3)``), spoken by ``forensics run``.

A unit with ``Type=notify`` sets ``NOTIFY_SOCKET`` (an ``AF_UNIX`` datagram
socket; a leading ``@`` names one in the abstract namespace) and, with
``WatchdogSec=``, ``WATCHDOG_USEC`` (and ``WATCHDOG_PID``, the process meant
to ping). Each message is one datagram of ``KEY=value`` lines. Only the
standard library; a send that fails is dropped (a supervisor never takes the
child down over its own bookkeeping).
"""
from __future__ import annotations

import os
import socket
from typing import Mapping

# What the child must not inherit: with ``NotifyAccess=main`` systemd ignores
# it anyway, but a server that speaks sd_notify itself would then say READY=1
# when *it* thinks it is ready, and ping a watchdog meant for us.
NOTIFY_ENV = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")
MAX_STATUS = 1000  # characters of one STATUS= (systemctl status shows one line)


class SystemdNotifier:
    """One process's voice to systemd. ``watchdog_s`` is the ping period
    (half of ``WatchdogSec=``, as ``sd_watchdog_enabled(3)`` advises), or
    None when no watchdog is asked of this process."""

    def __init__(self, address: str, watchdog_s: float | None = None) -> None:
        self.address = "\0" + address[1:] if address.startswith("@") else address
        self.watchdog_s = watchdog_s
        self.sent = 0
        self.failed = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)  # a full socket buffer drops a message, never blocks the caller

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "SystemdNotifier | None":
        env = os.environ if env is None else env
        address = env.get("NOTIFY_SOCKET", "")
        if not address or not (address.startswith("/") or address.startswith("@")):
            return None  # unset, or a vsock address (not for a service on this host)
        watchdog_s = None
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            watchdog_s = int(usec) / 2e6
        try:
            return cls(address, watchdog_s)
        except OSError:
            return None

    def send(self, *fields: str) -> bool:
        """One datagram of ``KEY=value`` lines; False when it could not be sent."""
        data = "\n".join(fields).encode("utf-8", "replace")
        try:
            self.sock.sendto(data, self.address)
        except OSError:
            self.failed += 1
            return False
        self.sent += 1
        return True

    def status(self, text: str) -> bool:
        line = " ".join(text.split())[:MAX_STATUS]  # one line: a newline would start another field
        return self.send(f"STATUS={line}")

    def close(self) -> None:
        self.sock.close()
