"""A test harness's own tracebacks: code that checks a server (its speed, its answers), not the
server. SGLang's CI, for one, runs its server and then unittest's assertions against it; a failed
check is the harness judging a server that served (``verdicts.a_tests_assertion``)."""
from __future__ import annotations

import re

from forensics.events.types import Event
from forensics.incidents.request_errors import traceback_frames

# A test runner's frames (unittest's TestCase, pytest's) and a test suite's own files (test_*.py,
# *_test.py, a tests/ or test/ package such as sglang.test): code that checks a server, not the server.
HARNESS_FRAME = re.compile(r"[/\\]unittest[/\\]case\.py$|[/\\]_pytest[/\\]|[/\\]tests?[/\\][^/\\]+\.py$"
                           r"|(?:^|[/\\])(?:test_\w+|\w+_test)\.py$")


def harness_assertion(ev: Event) -> bool:
    """The traceback's exception is an ``AssertionError`` raised in a test's code (unittest's
    ``self.fail`` under ``assertGreaterEqual``, a test file's ``assert``): a check failed."""
    chain = ev.data.get("chain") or ()
    if not chain or not (chain[-1].exc_type or "").endswith("AssertionError"):
        return False
    frames = chain[-1].frames if chain[-1].frames else ev.data.get("frames") or ()
    return bool(frames) and bool(HARNESS_FRAME.search(frames[-1].file or ""))


def in_harness_frames(ev: Event) -> bool:
    """Some frame of the traceback (any exception of its chain) is a test harness's code."""
    return any(HARNESS_FRAME.search(f.file or "") for f in traceback_frames(ev))
