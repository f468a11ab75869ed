"""What the death detector reads (issue 27 item 3) for the bar after readiness: a healthy server that
served and was stopped, read up to its stop."""
from __future__ import annotations

from pathlib import Path

from forensics.diagnosis.decision import death
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source


def _incidents(tmp_path: Path, lines: list[str]) -> list:
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    kept: list = []
    diagnose_source(Source(str(p), p), use_classifier=False, keep_incidents=kept)
    return kept


_UP = ["INFO 06-01 12:00:00 [api_server.py:1895] vLLM API server version 0.11.0",
       "INFO:     Application startup complete.",
       'INFO:     127.0.0.1:50000 - "POST /v1/completions HTTP/1.1" 200 OK']


def test_a_stopped_servers_lines_before_its_stop_are_what_the_bar_after_readiness_learns_from(tmp_path):
    died = "ERROR 06-01 12:05:00 [client.py:300] Engine core proc EngineCore_0 died unexpectedly, shutting down client."
    stop = ["INFO:     Shutting down", "INFO:     Finished server process [4242]"]
    # (probes answered after it: an HTTP answer is no progress, ``_last_progress_up``)
    quiet = [f'INFO:     127.0.0.1:5000{k} - "GET /health HTTP/1.1" 200 OK' for k in range(1, 5)]
    [inc] = _incidents(tmp_path, _UP + [died] + quiet + stop)
    at = death.stopped_at(inc)
    assert at is not None and not death.consulted_up(inc)  # stopped: the detector itself does not read it
    assert [ev.text for ev in death.candidates(inc, up=True, end=at)] == [died.split("] ", 1)[1]]  # its message
    [inc] = _incidents(tmp_path, _UP + stop)  # nothing between the last answer and the stop
    assert death.stopped_at(inc) is not None and death.candidates(inc, up=True, end=death.stopped_at(inc)) == []
    [inc] = _incidents(tmp_path, _UP)  # never stopped: nothing to read up to
    assert death.stopped_at(inc) is None
