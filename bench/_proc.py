"""Shared helpers: run a child process and measure its wall time, CPU time and
peak RSS exactly (``os.wait4`` returns the rusage of that one child)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
OUT = BENCH / "out"


@dataclass
class Measured:
    wall_s: float
    cpu_s: float  # user + sys of the child
    max_rss_kib: int
    returncode: int


def child_env() -> dict[str, str]:
    """Environment for children: the repository on PYTHONPATH so that
    ``python -m forensics`` works without installing the package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def forensics_argv() -> list[str]:
    """``forensics`` from PATH when it is this checkout's, else ``python -m forensics``."""
    exe = shutil.which("forensics")
    if exe and os.environ.get("BENCH_USE_PATH_FORENSICS"):
        return [exe]
    return [sys.executable, "-m", "forensics"]


def measure(argv: list[str], stdout=subprocess.DEVNULL, stdin=None, stderr=None, env=None) -> Measured:  # type: ignore[no-untyped-def]
    """Run ``argv`` to completion through ``_launch.py``; wall time from spawn to
    exit (interpreter start included), CPU and peak RSS of that process alone."""
    fd, result = tempfile.mkstemp(prefix="bench-", suffix=".json")
    os.close(fd)
    try:
        subprocess.run([sys.executable, str(BENCH / "_launch.py"), result, *argv], stdout=stdout, stdin=stdin,
                       stderr=stderr, env=env or child_env(), cwd=ROOT, check=True)
        with open(result) as f:
            r = json.load(f)
    finally:
        os.unlink(result)
    return Measured(r["wall_s"], r["user_s"] + r["sys_s"], int(r["max_rss_kib"]), r["rc"])


def warm_cache(path: Path) -> None:
    """Read a file once so every measured run starts with it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
