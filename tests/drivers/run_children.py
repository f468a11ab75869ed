"""Real child processes for ``forensics run``'s tests (``python run_children.py KIND ...``).

- ``replay SPEEDUP [kill|hang]``: seed 1 (``examples/sglang-b300-flash-attn-cute.log``):
  the server's own messages (the journald envelope and systemd's lines
  removed), each at its real time divided by SPEEDUP, to stderr as SGLang
  logs; then, as in the seed, the main process is killed by SIGKILL (or,
  with ``hang``, it waits forever).
- ``ready PORT``: a short SGLang start-up that reaches "fired up and ready",
  with its own HTTP server on PORT (``/health`` answers 200 from the start,
  as SGLang's does before warm-up ends), then serves until SIGTERM (exit 0).
- ``hang``: start-up lines up to CUDA graph capture, then silence.
- ``flood MB``: MB megabytes of serving lines and odd bytes (no newline at the
  very end) to stdout and stderr, as fast as the pipe takes them; exit 0.
- ``chatter MB``: MB megabytes of lines no diagnosis needs, a pause, then an
  out-of-memory traceback on stderr and exit 1.
- ``burst KB``: KB kilobytes of lines to stdout at once, then exit 0.
- ``killed SIGNAL``: a few lines, a partial last line, then killed by SIGNAL.
- ``signals FILE``: records each of SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 with the
  time it arrived (``time.time()``) in FILE; exits 143 on SIGTERM.
"""
from __future__ import annotations

import http.server
import os
import re
import signal
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

SEED = Path(__file__).resolve().parents[2] / "examples" / "sglang-b300-flash-attn-cute.log"
ENVELOPE = re.compile(r"^(\w{3} +\d+ [\d:]{8}) \S+ (\S+?)\[\d+\]: ?(.*)$")


RECORD = os.environ.get("RUN_CHILD_RECORD")


def out(fd: int, data: bytes) -> None:
    """Write to stdout (1) or stderr (2), and keep a copy of exactly what was
    written in $RUN_CHILD_RECORD.1 / .2 (what ``run`` must pass through)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if RECORD:
            with open(f"{RECORD}.{fd}", "ab") as f:
                f.write(view[:n])
        view = view[n:]


def seed_messages() -> list[tuple[float, str]]:
    """(seconds from the first line, message) of the server's lines in seed 1."""
    out, t0 = [], None
    for line in SEED.read_text(encoding="utf-8").splitlines():
        m = ENVELOPE.match(line)
        if m is None or m.group(2) == "systemd":
            continue
        t = datetime.strptime("2026 " + m.group(1), "%Y %b %d %H:%M:%S").timestamp()
        t0 = t if t0 is None else t0
        out.append((t - t0, m.group(3)))
    return out


def replay(speedup: float, then: str = "kill") -> None:
    start = time.monotonic()
    for at, msg in seed_messages():
        delay = start + at / speedup - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        out(2, (msg + "\n").encode())
    if then == "hang":  # as a server whose rank died may: the parent waits forever
        time.sleep(3600)
    os.kill(os.getpid(), signal.SIGKILL)


STARTUP = [
    "[2026-05-30 06:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tp_size=1, port=30000)",
    "[2026-05-30 06:00:05 TP0] Load weight begin. avail mem=78.50 GB",
    "[2026-05-30 06:00:20 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=63.00 GB, mem usage=15.50 GB.",
    "[2026-05-30 06:00:21 TP0] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
    "[2026-05-30 06:00:22 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=22.00 GB",
]
READY = [
    "[2026-05-30 06:00:40 TP0] Capture cuda graph end. Time elapsed: 18.00 s. mem usage=1.00 GB. avail mem=21.00 GB.",
    "[2026-05-30 06:00:41] INFO:     Started server process [4242]",
    "[2026-05-30 06:00:41] INFO:     Application startup complete.",
    "[2026-05-30 06:00:41] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-05-30 06:00:43] INFO:     127.0.0.1:51234 - \"GET /get_model_info HTTP/1.1\" 200 OK",
    "[2026-05-30 06:00:45] The server is fired up and ready to roll!",
]


def say(lines: list[str], pause: float, fd: int = 2) -> None:
    for line in lines:
        out(fd, (line + "\n").encode())
        time.sleep(pause)


def ready(port: int, pause: float) -> None:
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            # As SGLang's /health and /v1/models: 200 long before the model can serve.
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *a: (out(1, b"shutting down on SIGTERM\n"), os._exit(0)))
    say(STARTUP, pause)
    say(READY[:-1], pause)
    time.sleep(pause * 4)  # the log says ready only after the last line
    if RECORD:
        Path(f"{RECORD}.ready_at").write_text(repr(time.time()))
    say(READY[-1:], 0)
    n = 0
    while True:
        n += 1
        say([f"[2026-05-30 06:01:{n % 60:02d}] INFO:     127.0.0.1:5{n % 9999:04d} - \"POST /generate HTTP/1.1\" 200 OK"],
            0.05, fd=1)


def hang(pause: float) -> None:
    say(STARTUP, pause)
    time.sleep(3600)


def flood(megabytes: float) -> None:
    total = int(megabytes * 1e6)
    line = (b"[2026-05-30 06:01:02 TP0] Decode batch. #running-req: 12, #token: 4242, token usage: 0.12, "
            b"gen throughput (token/s): 1234.56, #queue-req: 0\n")
    odd = b"\xff\xfe progress \r 42%\r 43% \x1b[31mred\x1b[0m\n"
    block = (line * 400 + odd) * 4
    sent = 0
    say(STARTUP[:2], 0)
    while sent < total:
        chunk = block[:total - sent]
        out(1 if (sent // len(block)) % 3 else 2, chunk)
        sent += len(chunk)
    out(1, b"last line without newline")


OOM = """[2026-05-30 06:00:20 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2310, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 612, in load_model
    self.model = get_model(model_config=self.model_config, load_config=self.load_config)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB \
of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use.

[2026-05-30 06:00:21] Received sigquit from a child process. It usually means the child failed.
"""


def chatter(megabytes: float) -> None:
    """MB of lines no diagnosis needs, a pause, then an out-of-memory death (exit 1)."""
    say(STARTUP[:2], 0)
    line = b"[2026-05-30 06:00:10 TP0] step %d: scheduler tick with %d tokens in flight and nothing to say\n"
    block = b"".join(line % (i, i * 7 % 1000) for i in range(5000))
    for _ in range(int(megabytes * 1e6 / len(block)) + 1):
        out(1, block)
    time.sleep(1.5)
    out(2, OOM.encode())
    sys.exit(1)


def burst(kilobytes: float) -> None:
    out(1, b"".join(b"%07d burst line\n" % i for i in range(int(kilobytes * 1000 / 20))) + b"end")


def killed(signame: str) -> None:
    say(STARTUP[:3], 0.01)
    out(2, b"half a line, then")
    os.kill(os.getpid(), getattr(signal, signame))
    time.sleep(5)


def signals(path: str) -> None:
    """Records each forwarded signal with its arrival time; exits on SIGTERM."""
    def on_signal(signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        at = time.time()
        # Echo first, record last: the test sends the next signal once the record has this one, and a
        # handler can be entered again between its writes (a loaded machine showed stdout and its copy
        # in different orders when the record came first).
        try:
            out(1, f"got {name}\n".encode())
        except OSError:  # run was killed outright: its end of the pipe may be gone, the record must still be made
            pass
        with open(path, "a") as f:
            f.write(f"{name} {at!r}\n")
        if signum == signal.SIGTERM:
            os._exit(143)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, on_signal)
    say(STARTUP[:2], 0)
    out(1, b"waiting\n")
    while True:
        time.sleep(1)


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "replay":
        replay(float(args[0]), *args[1:])
    elif kind == "ready":
        ready(int(args[0]), float(args[1]) if len(args) > 1 else 0.05)
    elif kind == "hang":
        hang(float(args[0]) if args else 0.02)
    elif kind == "flood":
        flood(float(args[0]))
    elif kind == "chatter":
        chatter(float(args[0]))
    elif kind == "burst":
        burst(float(args[0]))
    elif kind == "killed":
        killed(args[0])
    elif kind == "signals":
        signals(args[0])
    else:
        sys.exit(f"unknown child {kind}")
