"""The baseline workloads, each run by ``bench/run.py`` as its own process::

    python bench/workloads.py plain  FILE   # for line in f: n += 1
    python bench/workloads.py regex  FILE   # one precompiled regex splits the journald prefix
    python bench/workloads.py drain3 FILE   # drain3.TemplateMiner() (default config) over the messages

Each prints one JSON object (counts) on stdout, so the harness can check that
every workload saw the same number of lines.
"""
from __future__ import annotations

import json
import re
import sys

# journalctl -o short-iso: "2026-05-30T14:47:43+0000 host ident[pid]: message"
# (also accepts short-iso-precise timestamps and identifiers without a pid).
JOURNAL_PREFIX = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?) (?P<host>\S+) "
    r"(?P<ident>[^\s\[]+?)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)"
)


def plain(path: str) -> dict:
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for _line in f:
            n += 1
    return {"lines": n}


def regex(path: str) -> dict:
    n = matched = 0
    match = JOURNAL_PREFIX.match
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            n += 1
            m = match(line)
            if m is not None:
                m.groups()
                matched += 1
    return {"lines": n, "matched": matched}


def drain3(path: str) -> dict:
    from drain3 import TemplateMiner  # the peer: default config, in-memory state

    miner = TemplateMiner()
    add = miner.add_log_message
    match = JOURNAL_PREFIX.match
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            n += 1
            m = match(line)
            add(m.group("msg") if m is not None else line.rstrip("\n"))
    return {"lines": n, "clusters": len(miner.drain.clusters)}


WORKLOADS = {"plain": plain, "regex": regex, "drain3": drain3}


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in WORKLOADS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(WORKLOADS)}}} FILE")
    print(json.dumps(WORKLOADS[sys.argv[1]](sys.argv[2])))


if __name__ == "__main__":
    main()
