"""Every phase marker's examples (events/phases.yaml) parse as that marker,
through the whole per-line path (prefixes peeled, the keyword pre-filter, the
marker regexes, the logger a marker is tied to), with RE2 and with ``re``."""
from __future__ import annotations

import pytest

from forensics import parse
from forensics.events import phases
from forensics.events.tables import load_table

ROWS = load_table(phases.__file__, "phases.yaml")
CASES = [(row["name"], ex) for row in ROWS for ex in row.get("examples") or ()]


def test_every_marker_has_an_example():
    assert all(row.get("examples") for row in ROWS), [row["name"] for row in ROWS if not row.get("examples")]


@pytest.mark.parametrize("name,line", CASES)
def test_example_parses_as_its_marker(name, line):
    evs = [e for e in parse([line]) if e.text.strip()]
    assert evs and evs[0].kind == "phase_marker", (line, [(e.kind, e.text, e.logger) for e in evs])
    assert evs[0].data["marker"] == name


@pytest.mark.parametrize("name,line", CASES)
def test_example_matches_without_re2(name, line, monkeypatch):
    ev = next(e for e in parse([line]) if e.text.strip())
    monkeypatch.setattr(phases, "_SET_MATCH", None)
    assert phases.match_marker(ev.text, ev.logger) == name


@pytest.mark.parametrize("text,logger", [
    ("Connected", "some_client"),  # a bare word counts only from the router that prints it
    ("Ready", None),
    ("Supported tasks: ['generate']", "api_server.py"),  # the API server lists its tasks before it listens
])
def test_logger_bound_markers_need_their_logger(text, logger):
    assert phases.match_marker(text, logger) is None
