"""Every real labelled log parses, and its fatal line is an event."""
from __future__ import annotations

from conftest import REAL, needs_real


@needs_real
def test_every_real_log_parses_and_fatal_line_is_an_event():
    import csv

    from forensics import parse

    for sub in ("dev", "early-warning", "healthy"):
        rows = list(csv.DictReader(open(REAL / sub / "labels.csv")))
        for row in rows:
            evs = list(parse(REAL / sub / f"{row['id']}.log"))
            fatal = row.get("fatal_substring")
            if not fatal:
                continue
            texts = []
            for e in evs:
                texts.append(e.text)
                for c in e.data.get("chain") or ():
                    texts.append(c.rendered)
            assert any(fatal in t for t in texts), (sub, row["id"], fatal)
