"""``longtext.found`` gives ``re``'s answer: on long ASCII lines RE2 is
asked instead, and it must agree for every pattern handed to it (the
outcome judgements' error, proof and compiler patterns), whatever the line
holds around the words they look for."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.events import longtext
from forensics.events.longtext import LONG_TEXT, found
from forensics.incidents import outcome

PATTERNS = [(outcome._ERROR_LEVEL, True), (outcome._KERNEL_ASSERT, False), (outcome._BUILD, False),
            (outcome._RUNTIME, False), (outcome._COMPILER, False), (outcome.CONSEQUENCE.rx, False)]
# patterns that read word characters, boundaries, classes and case around non-ASCII text
PATTERNS += [(re.compile(p), False) for p in (
    r"\b\w{3}\b", r"[^\W\d]{2}\s", r"(?i)k\w", r"[A-Z_]+:", r"\W\w\W", r".{3}é", r"(?i)[p-r]\b",
    r"\bq", r"[^a-z\x01-\x1f]x", r"\S{2}\d")]

# pieces of what these patterns look for, and of what sits around them
PIECES = ["ERROR", "FATAL", "CRITICAL", "error: ", "fatal error: ", "FAILED: ", "NCCL WARN", " failed",
          "level=error", "[Error]: ", "Error]:", "cudaErrorIllegalAddress", "CUDA error: ", "HIP error: ",
          "EE1234", "panicked at ", "terminate called", "what():  ", "Assertion `x < n` failed.",
          "block: [1,0,0], thread: [3,0,0]", "ninja: build stopped", "nvcc fatal", "ptxas error",
          "undefined reference to `f", "collect2: error", "ld: cannot find", "CompilationError", "a.cu(12): error: ",
          "x.cc:12:3: error: ", "Xid 79", "NVRM: ", "timed out", "Connection Reset", "SIGTERM", "heartbeat",
          "NCCL error", "aclnnAdd failed", "rtMemcpy execution failed", "hcclAllReduce failed",
          " ", "\n", "\t", "\x0b", "\x1c", ":", "_", "x", "9", "(", "`", "k", "q",
          # outside ASCII: letters, symbols, a non-decimal digit, and those the text must go to re for
          "é", "Ж", "█", "—", "²", "ſ", "\u212a", "İ", "\u0663", "\xa0", "\u2028"]


@st.composite
def long_lines(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(PIECES), min_size=0, max_size=30))
    filler = draw(st.sampled_from(["a", "word ", "x_1,", " ", "obj=GenerateReqInput(rid='r'), "]))
    at_start = draw(st.booleans())
    body = "".join(parts)
    pad = filler * (LONG_TEXT // len(filler) + 1)
    text = body + pad if at_start else pad + body
    return text + draw(st.sampled_from(["", "\n", "ERROR", "ERROR\n", " ERROR"]))


@settings(max_examples=400, deadline=None)
@given(long_lines())
def test_found_agrees_with_re_on_long_lines(text: str) -> None:
    for rx, dollar_ok in PATTERNS:
        assert found(rx, text, dollar_ok=dollar_ok) == (rx.search(text) is not None), (rx.pattern[:60], text[:200])


def test_long_ascii_lines_go_to_re2() -> None:
    text = "x" * (LONG_TEXT + 1) + " ERROR"
    assert found(outcome._ERROR_LEVEL, text, dollar_ok=True)
    assert longtext._program(outcome._ERROR_LEVEL, True) is not None


def test_patterns_re2_could_read_otherwise_stay_with_re() -> None:
    for pattern in [r"(?<=a)b", r"a(?=b)", r"(a)\1", r"(?P<x>a)(?P=x)", r"ERROR$", r"(?x) a b"]:
        assert longtext._program(re.compile(pattern), False) is None, pattern
    assert longtext._program(re.compile(r"(?:\s|$)"), True) is not None
    assert longtext._program(re.compile(r"a", re.M), False) is None  # flags other than re.I


@pytest.mark.parametrize("body", [
    "\xa0ERROR ", "x\u2028ERROR:", "EE\u0663\u0663\u0663\u0663 ", "Xid \u0663", "\u017fIGTERM", "heartbeat",
    "\u212aILLED ERROR\xa0", "é ERROR é", "Жfatal error: x", "█CUDA error: █", "cudaErrorЖ", "²EE1234²"])
@pytest.mark.parametrize("at_start", [True, False])
def test_found_agrees_with_re_on_chosen_lines(body: str, at_start: bool) -> None:
    pad = "obj=GenerateReqInput(rid='r—1'), " * (LONG_TEXT // 30)
    text = body + pad if at_start else pad + body
    for rx, dollar_ok in PATTERNS:
        assert found(rx, text, dollar_ok=dollar_ok) == (rx.search(text) is not None), (rx.pattern[:60], body)


def test_non_ascii_long_lines_go_to_re2_in_an_ascii_copy() -> None:
    text = "é—Ж " * LONG_TEXT + " ERROR"
    copy = longtext.ascii_copy(outcome._ERROR_LEVEL, text)
    assert copy is not None and copy.isascii() and len(copy) == len(text)
    assert found(outcome._ERROR_LEVEL, text, dollar_ok=True)
    assert longtext.ascii_copy(outcome._ERROR_LEVEL, text + "\xa0") is None  # Python's \s: re answers
