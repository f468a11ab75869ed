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
