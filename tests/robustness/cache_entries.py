"""Damage done to a start-up cache entry by the cache tests (a bit flipped, the
file cut short, a file others may write): each must read as a miss, never as a table."""
from __future__ import annotations

from pathlib import Path

DAMAGES = ["flip", "truncate", "foreign"]


def damage(entry: Path, how: str) -> None:
    raw = entry.read_bytes()
    if how == "flip":
        entry.write_bytes(raw[:-50] + bytes([raw[-50] ^ 4]) + raw[-49:])
    elif how == "truncate":
        entry.write_bytes(raw[:1000])
    else:
        entry.chmod(0o666)  # writable by others: not read
