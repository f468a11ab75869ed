"""Values from a log are bounded at the edge (forensics.ingest.values) and
the readers use those bounds: one odd value never aborts a run."""
from __future__ import annotations

import json
import sys

import pytest

import forensics
from forensics.envelope.clock import from_epoch_us
from forensics.envelope.record import MAX_JSON_DEPTH
from forensics.ingest.values import bounded_int, json_nesting_exceeds, no_surrogates, pid_value, table_datetime


@pytest.mark.parametrize("text,want", [("12", 12), ("\u00b2", None), ("\u0663", None), ("9" * 20, None),
                                       ("9" * 5000, None), ("", None), ("-1", None), (" 1", None),
                                       ("9223372036854775807", 2 ** 63 - 1), ("9223372036854775808", None)])
def test_bounded_int(text, want):
    assert bounded_int(text) == want


def test_pid_value_limits():
    assert pid_value("4194304") == 4194304
    assert pid_value("99999999999") is None


def test_epoch_values_never_raise():
    assert from_epoch_us("9" * 5000) is None
    assert from_epoch_us("-5") is None
    assert from_epoch_us("\u0661\u0662") is None
    assert from_epoch_us(str(300_000 * 365 * 86400 * 10 ** 6)) is None  # past year 9999


def test_lone_surrogates_replaced_only():
    assert no_surrogates("a\ud800b\U0001f600") == "a\ufffdb\U0001f600"


def test_table_datetime_range():
    from datetime import datetime, timezone

    assert table_datetime(datetime(2300, 1, 1, tzinfo=timezone.utc)) is None
    assert table_datetime(datetime(1600, 1, 1)) is None
    assert table_datetime(datetime(2026, 1, 1)) is not None


def test_json_nesting_bound_skips_strings():
    assert json_nesting_exceeds("[" * (MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)
    assert not json_nesting_exceeds(json.dumps({"MESSAGE": "[" * 500}), MAX_JSON_DEPTH)
    assert not json_nesting_exceeds(json.dumps({"MESSAGE": ["]" * 3, "\\\"["] * 300}), MAX_JSON_DEPTH)


def _deep_line(depth: int) -> bytes:
    return b'{"MESSAGE":' + b"[" * depth + b"1" + b"]" * depth + b"}\n" + b'{"MESSAGE":"RuntimeError: x"}\n'


def _parse_at_depth(data: bytes, extra: int):
    def nest(k):
        return nest(k - 1) if k else [(e.kind, e.line, e.text) for e in forensics.parse(data, "json")]
    return nest(extra)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500, 950])
def test_deep_json_line_is_text_whatever_the_stack(depth):
    """The answer for a deeply nested line does not depend on how much stack
    the caller had left (a bound of ours, not Python's recursion limit)."""
    limit = sys.getrecursionlimit()
    a = _parse_at_depth(_deep_line(depth), 0)
    b = _parse_at_depth(_deep_line(depth), max(0, limit - 300))
    assert a == b
    assert a[0][1] == 1 and a[0][2].startswith('{"MESSAGE":[[[')
