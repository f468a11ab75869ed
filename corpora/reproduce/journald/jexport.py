"""Shared helpers: build journal export-format input, turn it into a real
journal file with systemd-journal-remote, and print it with real journalctl.

Export format (systemd `JOURNAL_EXPORT_FORMATS`, see shared/reference/log-formats.md
§3.5 and §10): an entry is a list of fields followed by one empty line.  A
field is `NAME=value\\n` when the value is printable UTF-8 without newlines,
otherwise `NAME\\n` + 8-byte little-endian length + raw bytes + `\\n`.
"""
from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

Value = Union[str, bytes, int]

JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"


def _as_bytes(v: Value) -> bytes:
    if isinstance(v, bytes):
        return v
    return str(v).encode("utf-8")


def _needs_binary(b: bytes) -> bool:
    if any(c < 0x20 or c == 0x7F for c in b):  # \n, \r, ESC, NUL, ...
        return True
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def encode_entry(fields: Sequence[tuple[str, Value]]) -> bytes:
    out = bytearray()
    for name, value in fields:
        b = _as_bytes(value)
        if _needs_binary(b):
            out += name.encode() + b"\n" + struct.pack("<Q", len(b)) + b + b"\n"
        else:
            out += name.encode() + b"=" + b + b"\n"
    out += b"\n"
    return bytes(out)


def write_export(entries: Iterable[Sequence[tuple[str, Value]]], path: Path) -> int:
    n = 0
    with open(path, "wb") as f:
        for e in entries:
            f.write(encode_entry(e))
            n += 1
    return n


def build_journal(export_path: Path, journal_path: Path) -> str:
    """Run the real systemd-journal-remote; returns its stderr (it logs there)."""
    if journal_path.exists():
        journal_path.unlink()  # writing twice would append duplicates
    p = subprocess.run(
        [JOURNAL_REMOTE, "-o", str(journal_path), str(export_path)],
        capture_output=True, text=True, check=True,
    )
    return p.stderr.strip()


def journalctl(journal_path: Path, mode: str, tz: str = "UTC",
               extra: Sequence[str] = ()) -> bytes:
    env = dict(os.environ, TZ=tz, SYSTEMD_COLORS="0", LC_ALL="C.UTF-8")
    env.pop("SYSTEMD_PAGER", None)
    p = subprocess.run(
        ["journalctl", "--file", str(journal_path), "--no-pager", "-o", mode, *extra],
        capture_output=True, env=env, check=True,
    )
    return p.stdout


def tool_versions() -> dict:
    jv = subprocess.run(["journalctl", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    pkg = {}
    for name in ("systemd", "systemd-journal-remote"):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True)
        pkg[name] = r.stdout.strip() or None
    return {"journalctl": jv, "packages": pkg}


# ---------------------------------------------------------------------------
# Python traceback text helpers (CPython 3.11/3.12 layout)


def frame(path: str, line: int, func: str, src: str | None = None,
          caret_from: str | None = None, caret_len: int | None = None) -> list[str]:
    """One traceback frame.  `src` is the stripped source line; `caret_from`
    marks where the failing expression starts (3.11+ prints `^` from there to
    the end of the expression; a whole-line expression gets no carets)."""
    lines = [f'  File "{path}", line {line}, in {func}']
    if src is not None:
        lines.append("    " + src)
        if caret_from is not None:
            start = src.index(caret_from)
            n = caret_len if caret_len is not None else len(src) - start
            lines.append("    " + " " * start + "^" * n)
    return lines
