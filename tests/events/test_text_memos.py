"""Memos by text (events/textmemo.py, the traceback parse memo) answer what
a fresh computation answers, with the input lines of the tokens at hand."""
from __future__ import annotations

from forensics.events import grammars
from forensics.events.textmemo import LIMIT, MAX_LEN, memo_by_text

CHAINED = [
    ("HEADER", "Traceback (most recent call last):"),
    ("FILE", '  File "/usr/lib/python3/dist-packages/vllm/worker.py", line 12, in load_model'),
    ("SOURCE", "    self.model = get_model()"),
    ("EXC", "ValueError: bad config"),
    ("CAUSE", "The above exception was the direct cause of the following exception:"),
    ("HEADER", "Traceback (most recent call last):"),
    ("FILE", '  File "/srv/app/main.py", line 3, in <module>'),
    ("EXC", "RuntimeError: Engine core initialization failed"),
]


def _at(lines: list[int]) -> list[tuple[str, str, int]]:
    return [(t, text, n) for (t, text), n in zip(CHAINED, lines)]


def test_a_memoised_traceback_parse_carries_its_own_exception_lines():
    grammars._TB_MEMO.clear()
    first = grammars.parse_traceback(_at(list(range(10, 18))))
    # the same traceback again, printed elsewhere with other lines between (another rank)
    again = grammars.parse_traceback(_at([100, 102, 103, 107, 108, 110, 111, 115]))
    grammars._TB_MEMO.clear()
    fresh = grammars.parse_traceback(_at([100, 102, 103, 107, 108, 110, 111, 115]))
    assert [e.line for e in first["chain"]] == [13, 17]
    assert [e.line for e in again["chain"]] == [107, 115]
    assert again == fresh
    assert [e.exc_type for e in again["chain"]] == ["ValueError", "RuntimeError"]
    assert again["chain"][1].relation == "cause"


def test_memo_by_text_stays_bounded_and_skips_long_texts():
    calls: list[str] = []

    @memo_by_text
    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert shout("abc") == "ABC" and shout("abc") == "ABC" and calls == ["abc"]
    long = "x" * (MAX_LEN + 1)
    shout(long), shout(long)
    assert calls.count(long) == 2  # never kept
    for i in range(LIMIT + 5):
        shout(str(i))
    assert shout("abc") == "ABC"  # cleared when full, still right
