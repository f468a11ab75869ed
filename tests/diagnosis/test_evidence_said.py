"""Where a program said its error first: the first copy of a message several ranks print, the error a
program logged before returning it in a chain of generic words (lines built here, not copied)."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis import evidence_said
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source

_WATCHDOG = "Widget watchdog fired (self.widget_timeout=300)"


def _incident(tmp_path: Path, lines: list[str]):  # type: ignore[no-untyped-def]
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    kept: list = []
    diagnose_source(Source(str(p), p), use_classifier=False, keep_incidents=kept)
    return kept[-1]


def test_the_first_rank_to_say_the_error_is_listed_and_its_copy_is_no_early_warning(tmp_path):
    inc = _incident(tmp_path, [
        "[2025-07-11 17:40:04] INFO:     10.0.0.1:43204 - \"GET /metrics HTTP/1.1\" 200 OK",
        f"[2025-07-11 17:40:14 DP0 TP2] {_WATCHDOG}",
        "",
        f"[2025-07-11 17:40:14 DP1 TP5] {_WATCHDOG}",
    ])
    evidence = [{"line": 4, "text": _WATCHDOG, "role": "cause"}]
    kept = evidence_said.earliest_copy(inc, evidence, [{"line": 2, "text": _WATCHDOG}, {"line": 1, "text": "x"}])
    assert evidence[0]["line"] == 2
    assert kept == [{"line": 1, "text": "x"}]


def test_a_retry_of_the_same_process_keeps_its_last_copy(tmp_path):
    inc = _incident(tmp_path, [
        "2024-11-15T06:11:47.441Z [APP]::Process exited with code null",
        "2024-11-15T06:11:47.441Z [APP]::Restarting process in 5000ms (Attempt 4/5)",
        "2024-11-15T06:12:53.971Z [APP]::Process exited with code null",
    ])
    evidence = [{"line": 3, "text": "[APP]::Process exited with code null", "role": "cause"}]
    evidence_said.earliest_copy(inc, evidence, [])
    assert evidence[0]["line"] == 3


def test_a_clients_error_gives_way_to_the_servers_line_that_logged_it(tmp_path):
    inc = _incident(tmp_path, [
        'time=2025-01-31T20:48:19.587Z level=INFO source=sched.go:428 msg="Load failed" model=/m/blob '
        'error="widget requires more frobs (391 units) than are available (366 units)"',
        '[GIN] 2025/01/31 - 20:48:19 | 500 |  1.394289898s |       127.0.0.1 | POST     "/api/generate"',
        "Error: 500 Internal Server Error: widget requires more frobs (391 units) than are available (366 units)",
    ])
    evidence = [{"line": 3, "text": "Error: 500 Internal Server Error: widget requires more frobs (391 units) than "
                                    "are available (366 units)", "role": "cause"}]
    evidence_said.echo_gives_way(inc, evidence)
    assert [e["line"] for e in evidence] == [1, 3]
    assert evidence[0]["role"] == "cause" and evidence[1]["role"] == "supporting"


def test_a_copy_another_rank_logged_as_a_warning_is_no_first_copy_and_stays_an_early_warning(tmp_path):
    # rank 0 warned and went on; rank 1's error is the failure (review22)
    msg = "Widget collective timed out after 600000 milliseconds on the frob channel"
    inc = _incident(tmp_path, [
        "(APIServer pid=10) INFO 02-27 10:00:01 [launcher.py:1] Application startup complete.",
        f"(Worker_TP0 pid=277) WARNING 02-27 10:31:10 [widget.py:10] {msg}",
        f"(Worker_TP1 pid=278) ERROR 02-27 10:31:15 [widget.py:10] {msg}",
    ])
    evidence = [{"line": 3, "text": msg, "role": "cause"}]
    warnings = [{"line": 2, "text": msg}]
    assert evidence_said.earliest_copy(inc, evidence, warnings) == warnings
    assert evidence[0]["line"] == 3


def test_a_chain_whose_last_cause_names_its_reason_keeps_it(tmp_path):
    # the line logged above with the same words is an earlier attempt's, with another reason (review22)
    inc = _incident(tmp_path, [
        "2024-05-01T10:00:01.000000Z ERROR widget_backend: src/lib.rs:300: Could not start backend: sprocket 7 is bent",
        "2024-05-01T10:00:01.500000Z  INFO widget_backend: src/lib.rs:310: Trying another backend",
        "Error: Could not create backend",
        "",
        "Caused by:",
        "    0: Could not start backend",
        "    1: Could not start backend: frobnicator socket /tmp/frob.sock refused the handshake",
    ])
    assert evidence_said.logged_reason(
        inc, 3, "Could not start backend: frobnicator socket /tmp/frob.sock refused the handshake") is None
    assert evidence_said.logged_reason(inc, 3, "Could not start backend: Could not start a suitable backend") == (
        1, "Could not start backend: sprocket 7 is bent")
