"""Atheris fuzz target: arbitrary bytes through parse and classify.

Nothing is caught here: any exception that escapes ``forensics.parse`` or
``forensics.classify`` (or a broken invariant below) is a bug: the tool must
never crash on its input.

    python fuzz/fuzz_parse.py /tmp/fuzz-work fuzz/corpus -max_total_time=600

libFuzzer writes new interesting inputs into the FIRST directory, so give it
a scratch directory first and ``fuzz/corpus`` (seeds + regressions) second.
See fuzz/README.md. ``check_one`` is also imported by
tests/robustness/test_fuzz_regressions.py, which replays fuzz/corpus without atheris.
"""
from __future__ import annotations

import contextlib
import sys

try:
    import atheris
except ImportError:  # the replay test runs without atheris
    atheris = None

# Instrument forensics only when run as a fuzzer (tests import these targets plainly).
_instrumented = (atheris.instrument_imports(include=["forensics"]) if atheris is not None and __name__ == "__main__"
                 else contextlib.nullcontext())
with _instrumented:
    import forensics
    from forensics.api import to_sources
    from forensics.errors import InputError
    from forensics.events.parser import iter_source_events

VERDICTS = ("failed", "ready", "starting", "stalled", "no-failure")


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_one(data: bytes) -> None:
    # 1. the parse path, with its line accounting
    (src,) = to_sources(data)
    holder: list = []
    try:
        events = list(iter_source_events(src, "auto", parser_out=holder))
    except InputError as e:
        # Not a text log (binary, a corrupt compressed stream): refused in one line, not a crash.
        assert ("not a text log" in str(e) or "corrupt or cut" in str(e)) and "\n" not in str(e), e
        return
    n = physical_lines(data)
    if holder:
        st = holder[0].stats
        assert st.lines == n, (st.lines, n)
        assert st.lines == st.parsed + st.unparsed and 0 <= st.unparsed <= st.lines, st
    for ev in events:
        assert 1 <= ev.line <= n, (ev.line, n)
        assert ev.end_line is None or ev.line <= ev.end_line <= n, (ev.line, ev.end_line, n)
        ev.to_dict()
    # 2. the public API: parse and the whole diagnosis
    for _ in forensics.parse(data):
        pass
    result = forensics.classify(data)
    assert result["verdict"] in VERDICTS, result["verdict"]
    assert result["stats"]["lines"] == n, (result["stats"], n)


def TestOneInput(data: bytes) -> None:
    check_one(data)


def main(argv: list[str]) -> None:
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris")
    # Load the signature set and the model once, outside the timed inputs.
    forensics.classify(b"warm up\n")
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
