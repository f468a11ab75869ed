"""hang.timeout: real deadlines firing on work that never finishes."""
import socket
import subprocess
import sys
import threading
import time

import common


def futures_result():
    import concurrent.futures as cf
    ex = cf.ThreadPoolExecutor(1)
    ev = threading.Event()
    fut = ex.submit(ev.wait)  # a worker that never reports back
    try:
        fut.result(timeout=3)
    finally:
        ev.set()


def asyncio_wait_for():
    import asyncio

    async def wait_for_detokenizer():
        await asyncio.Event().wait()

    async def main():
        await asyncio.wait_for(wait_for_detokenizer(), timeout=2)
    asyncio.run(main())


_KEEP = []


def _silent_server():
    """A peer that accepts connections and never answers (a stuck server)."""
    srv = socket.socket()
    _KEEP.append(srv)
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    def acc():
        while True:
            _KEEP.append(srv.accept())
    threading.Thread(target=acc, daemon=True).start()
    return srv.getsockname()[1]


def socket_poll():
    port = _silent_server()
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
    s.recv(4096)


def urllib_health():
    import urllib.request
    port = _silent_server()
    deadline = time.time() + 20
    while time.time() < deadline:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health_generate", timeout=2).read()


def subprocess_timeout():
    subprocess.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=2, check=True)


def subprocess_timeout_sleep():
    subprocess.check_output(["sleep", "30"], timeout=1.5)


def tcpstore_wait():
    import datetime
    import torch.distributed as dist
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=3))
    store.wait(["worker_1_ready"])


VARIANTS = {
    "futures": futures_result,
    "asyncio": asyncio_wait_for,
    "socket": socket_poll,
    "urllib": urllib_health,
    "subprocess": subprocess_timeout,
    "subprocess_sleep": subprocess_timeout_sleep,
    "tcpstore": tcpstore_wait,
}

if __name__ == "__main__":
    common.main(VARIANTS)
