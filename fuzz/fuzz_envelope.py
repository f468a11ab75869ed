"""Atheris target: every envelope reader, forced (``--input-format X``).

The first byte picks the format (so the fuzzer explores each reader, not just
what sniffing would choose); the rest is the log. Invariants: no exception,
``lines == parsed + unparsed``, ``lines`` equals the physical line count,
every event's line is inside the input, every event serialises to JSON that
encodes as UTF-8.

    python fuzz/fuzz_envelope.py /tmp/fz-env fuzz/corpus-envelope -max_total_time=120
"""
from __future__ import annotations

import contextlib
import sys

try:
    import atheris
except ImportError:
    atheris = None

# Instrument forensics only when run as a fuzzer (tests import these targets plainly).
_instrumented = (atheris.instrument_imports(include=["forensics"]) if atheris is not None and __name__ == "__main__"
                 else contextlib.nullcontext())
with _instrumented:
    from forensics.api import to_sources
    from forensics.envelope.readers import FORMATS
    from forensics.events.parser import iter_source_events


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_one(data: bytes) -> None:
    if not data:
        return
    fmt = FORMATS[data[0] % len(FORMATS)]
    body = data[1:]
    (src,) = to_sources(body)
    holder: list = []
    n = physical_lines(body)
    for ev in iter_source_events(src, fmt, parser_out=holder):
        assert 1 <= ev.line <= max(n, 1), (fmt, ev.line, n)
        ev.to_json("x").encode("utf-8")
    if holder:
        st = holder[0].stats
        assert st.lines == n, (fmt, st.lines, n)
        assert st.lines == st.parsed + st.unparsed, (fmt, st)


def main() -> None:
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    atheris.Setup(sys.argv, check_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
