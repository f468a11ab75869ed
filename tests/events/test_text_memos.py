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


# Every terminal of traceback.lark, with a line of each type as the assembler classifies them.
_LINES = {
    "HEADER": "Traceback (most recent call last):",
    "FILE": '  File "/srv/app/engine.py", line 41, in run',
    "SOURCE": "    self.step()",
    "CARET": "    ^^^^^^^^^^^",
    "EXC": "RuntimeError: CUDA error: an illegal memory access was encountered",
    "CONT": "CUDA kernel errors might be asynchronously reported at some other API call",
    "CAUSE": "The above exception was the direct cause of the following exception:",
    "CONTEXT": "During handling of the above exception, another exception occurred:",
    "REPEAT": "  [Previous line repeated 996 more times]",
    "GROUP_HEAD": "  | ExceptionGroup: errors (2 sub-exceptions)",
    "GROUP_SEP": "  +---------------- 1 ----------------",
}


def _lark_parse(key: tuple[tuple[str, str], ...]):  # type: ignore[no-untyped-def]
    from lark.exceptions import LarkError

    try:
        return grammars.traceback_parser().parse([(t, text, i) for i, (t, text) in enumerate(key)])
    except LarkError:
        return None


def _shape_parse(key: tuple[tuple[str, str], ...]):  # type: ignore[no-untyped-def]
    plan = grammars.traceback_plan(tuple(t for t, _text in key))
    return None if plan is None else grammars._apply_plan(plan, key)


def test_a_traceback_parsed_from_its_shape_is_what_lark_parses():
    from hypothesis import given, settings, strategies as st

    texts = st.sampled_from(sorted(_LINES)).flatmap(
        lambda t: st.tuples(st.just(t), st.sampled_from([_LINES[t], _LINES[t] + " (rank 1)", "  "])))

    @settings(max_examples=400, deadline=None)
    @given(st.lists(texts, max_size=14))
    def same(items: list[tuple[str, str]]) -> None:
        key = tuple(items)
        assert _shape_parse(key) == _lark_parse(key)

    same()
    # the chained traceback above, and a shape the grammar rejects (None both ways)
    assert _shape_parse(tuple(CHAINED)) == _lark_parse(tuple(CHAINED)) is not None


def test_two_tracebacks_of_one_shape_share_a_plan_and_keep_their_own_texts():
    grammars._TB_MEMO.clear()
    grammars._PLAN_MEMO.clear()
    other = [(t, text.replace("ValueError: bad config", "KeyError: 'rope_scaling'")) for t, text in CHAINED]
    a = grammars.parse_traceback(_at(list(range(10, 18))))
    b = grammars.parse_traceback([(t, text, n) for (t, text), n in zip(other, range(10, 18))])
    assert len(grammars._PLAN_MEMO) == 1
    assert [e.exc_type for e in a["chain"]] == ["ValueError", "RuntimeError"]
    assert [e.exc_type for e in b["chain"]] == ["KeyError", "RuntimeError"]
    assert b["chain"][0].exc_message == "'rope_scaling'"


def test_a_shape_too_long_to_pack_is_kept_as_it_is_and_parses_the_same():
    grammars._PLAN_MEMO.clear()
    key = (("HEADER", _LINES["HEADER"]), ("FILE", _LINES["FILE"]), ("EXC", _LINES["EXC"]),
           *[("CONT", f"  detail {i}") for i in range(300)])  # an exception message of 301 lines
    assert not isinstance(grammars.traceback_plan(tuple(t for t, _ in key)), bytes)
    assert isinstance(grammars.traceback_plan(tuple(t for t, _ in CHAINED)), bytes)  # the usual case: packed
    assert _shape_parse(key) == _lark_parse(key)
    assert _shape_parse(key)["chain"][0].exc_message.endswith("detail 299")
