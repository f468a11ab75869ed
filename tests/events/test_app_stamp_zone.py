"""An application stamp that prints its zone (``+08:00``, ``-0500``) is that zone's time: read
as UTC it put a Python-logging line eight hours away from the journald or Rust (``Z``) lines
beside it (clock13's leftover)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from forensics.events.prefixes import split_prefix

UTC = timezone.utc


@pytest.mark.parametrize("line, want", [
    ("2025-03-27 19:09:32,123+08:00 - vllm.engine - ERROR - boom", datetime(2025, 3, 27, 11, 9, 32, 123000, UTC)),
    ("2025-03-27T19:09:32.5-0500 ERROR worker: boom", datetime(2025, 3, 28, 0, 9, 32, 500000, UTC)),
    ("2025-03-27T19:09:32+05:45 INFO ready", datetime(2025, 3, 27, 13, 24, 32, tzinfo=UTC)),
    ("2025-03-27T19:09:32Z ERROR boom", datetime(2025, 3, 27, 19, 9, 32, tzinfo=UTC)),
    ("2025-03-27 19:09:32 - vllm - INFO - no zone printed", datetime(2025, 3, 27, 19, 9, 32, tzinfo=UTC)),
])
def test_a_printed_offset_moves_the_stamp_to_utc(line, want):
    p = split_prefix(line, 2025)
    assert p.app_ts == want
    assert not p.text[:1].isdigit()  # the stamp and its zone are peeled off the message


def test_the_zone_does_not_change_what_the_line_says():
    zoned, plain = (split_prefix(t, 2025) for t in (
        "2025-03-27 19:09:32,123+08:00 - vllm.engine - ERROR - CUDA out of memory",
        "2025-03-27 19:09:32,123 - vllm.engine - ERROR - CUDA out of memory"))
    assert (zoned.text, zoned.level, zoned.logger) == (plain.text, plain.level, plain.logger)


@pytest.mark.parametrize("line, want", [
    # no zone is 99 hours and 99 minutes (or a whole day) from UTC: not an offset, the stamp as printed
    ("2025-03-27 19:09:32,123+99:99 - vllm.engine - ERROR - boom", datetime(2025, 3, 27, 19, 9, 32, 123000, UTC)),
    ("2025-03-27 19:09:32,123+2400 - vllm.engine - ERROR - boom", datetime(2025, 3, 27, 19, 9, 32, 123000, UTC)),
    ("2025-03-27 19:09:32,123+14:00 - vllm.engine - ERROR - boom", datetime(2025, 3, 27, 5, 9, 32, 123000, UTC)),
    ("2025-03-27 19:09:32,123-12:00 - vllm.engine - ERROR - boom", datetime(2025, 3, 28, 7, 9, 32, 123000, UTC)),
    ("2025-12-31 23:30:00,000-05:00 - vllm.engine - ERROR - boom", datetime(2026, 1, 1, 4, 30, tzinfo=UTC)),
    # a valid offset that moves the stamp past what a datetime holds: the stamp as printed, no crash
    ("0001-01-01 00:30:00,000+05:30 - vllm.engine - ERROR - boom", datetime(1, 1, 1, 0, 30, tzinfo=UTC)),
    ("9999-12-31 23:30:00,000-05:00 - vllm.engine - ERROR - boom", datetime(9999, 12, 31, 23, 30, tzinfo=UTC)),
])
def test_an_offset_no_zone_has_or_past_the_calendar_leaves_the_stamp_as_printed(line, want):
    p = split_prefix(line, 2025)
    assert p.app_ts == want and p.text == "boom"


@pytest.mark.parametrize("line, want, text", [
    # a zone after a space (Go's "2006-01-02 15:04:05 -0700", "%(asctime)s %z") before a logger or a level
    ("2025-03-27 19:09:32 -0500 - app - ERROR - boom", datetime(2025, 3, 28, 0, 9, 32, tzinfo=UTC), "boom"),
    ("2025-03-27 19:09:32 +0800 ERROR boom", datetime(2025, 3, 27, 11, 9, 32, tzinfo=UTC), "boom"),
    # a number that starts the message is not a zone
    ("2025-03-27 19:09:32 -1234 tokens dropped", datetime(2025, 3, 27, 19, 9, 32, tzinfo=UTC), "-1234 tokens dropped"),
    # ... nor is one before a capitalised word that is no level
    ("2025-03-27 19:09:32 +1000 NCCL rings built", datetime(2025, 3, 27, 19, 9, 32, tzinfo=UTC), "+1000 NCCL rings built"),
    ("2025-03-27 19:09:32,123 +1024 BLOCKS allocated", datetime(2025, 3, 27, 19, 9, 32, 123000, tzinfo=UTC),
     "+1024 BLOCKS allocated"),
])
def test_a_zone_printed_after_a_space_is_read_only_before_a_logger_or_a_level(line, want, text):
    p = split_prefix(line, 2025)
    assert (p.app_ts, p.text) == (want, text)
