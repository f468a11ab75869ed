"""Seeded generator of a crash-looping service's journal: thousands of
process lifetimes, nearly all start-ups that fail, in varied ways (the
benchmark's start-up-heavy workload, beside genlog.py's serving-heavy one).

Each lifetime is one run of the project's own log generator
(``forensics.lab.generator.generate.build_log``: the real-format templates of SGLang
and vLLM start-ups and of every failure label of the taxonomy, with their
precursors and tracebacks), rendered as ``journalctl -o short-iso`` on one
host and laid end to end in time, with systemd's restart lines between them.
Nothing is read from outside the repository. 88% of lifetimes fail (the label
drawn uniformly from the taxonomy's failure labels), 12% are start-ups that
are stopped or reach ready and are then stopped. The output is a pure
function of ``--seed`` and ``--lifetimes``; written streaming.

    python bench/crashloop.py --lifetimes 1000 -o bench/out/crashloop-1000.log
    python bench/crashloop.py --lifetimes 10000 | forensics classify -
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from random import Random
from typing import BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from forensics.lab.generator.generate import build_log  # noqa: E402
from forensics.lab.generator.failures import LABELS  # noqa: E402
from forensics.lab.generator.records import LogState  # noqa: E402
from forensics.lab.generator.render import render  # noqa: E402

HOST = "gpu-node-3"
START_EPOCH = 1780120800.0  # 2026-05-30T06:00:00Z
HEALTHY_SHARE = 0.12


def lifetime(seed: int, i: int) -> tuple[LogState, str]:
    """One process lifetime: its records and what it was drawn to be."""
    rng = Random(f"crashloop:{seed}:{i}")
    if rng.random() < HEALTHY_SHARE:
        label, end = None, rng.choice(["starting", "shutdown"])
    else:
        label, end = rng.choice(LABELS), ""
    st, _info = build_log(rng, label, "short-iso", end)
    st.c.host = HOST
    return st, label or f"healthy-{end}"


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


def generate(out: BinaryIO, lifetimes: int = 1000, seed: int = 11,
             same: bool = False) -> tuple[int, int, dict[str, int]]:
    """Write the log; return (lines, bytes, lifetimes per drawn label).
    ``same``: every lifetime is the first one's draw (the same start-up and
    failure each time, its own times and rendering), as a service that keeps
    failing the same way prints it."""
    t = START_EPOCH
    n = nbytes = 0
    drawn: dict[str, int] = {}
    for i in range(lifetimes):
        st, what = lifetime(seed, 0 if same else i)
        drawn[what] = drawn.get(what, 0) + 1
        if st.recs:
            shift = t - st.recs[0].t
            for rc in st.recs:
                rc.t += shift
            st.boot_t0 += shift
        lines, _owners = render(st, "short-iso", Random(f"crashloop-render:{seed}:{i}"))
        if i:
            lines.insert(0, f"{_stamp(t - 1)} {HOST} systemd[1]: {st.unit}: Scheduled restart job, "
                            f"restart counter is at {i}.")
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
        out.write(data)
        n += len(lines)
        nbytes += len(data)
        last = st.recs[-1].t if st.recs else t
        t = last + Random(f"crashloop-gap:{seed}:{i}").uniform(5, 40)
    return n, nbytes, drawn


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lifetimes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--same", action="store_true", help="every lifetime the same draw (a real crash loop)")
    ap.add_argument("-o", "--out", default="-")
    a = ap.parse_args(argv)
    if a.out == "-":
        n, b, _ = generate(sys.stdout.buffer, a.lifetimes, a.seed, a.same)
    else:
        with open(a.out, "wb") as f:
            n, b, _ = generate(f, a.lifetimes, a.seed, a.same)
    print(f"{n} lines, {b} bytes, {a.lifetimes} lifetimes", file=sys.stderr)


if __name__ == "__main__":
    main()
