"""The shapes the death detector reads (``decision/death_shapes.yaml``): every shape's examples,
and a line's tokens carry the shapes it holds."""
from __future__ import annotations

import pytest

import forensics.diagnosis.decision.death as death
from forensics.events.tables import load_table

SHAPES = load_table(death.__file__, "death_shapes.yaml")["shapes"]
CASES = [(s["id"], t, True) for s in SHAPES for t in s["examples"]["match"]] + \
        [(s["id"], t, False) for s in SHAPES for t in s["examples"]["no_match"]]


@pytest.mark.parametrize("sid,text,hit", CASES)
def test_every_example(sid: str, text: str, hit: bool) -> None:
    assert (sid in death.tokens(text)) is hit, (sid, text)


def test_shapes_are_unique_tokens_no_word_can_be() -> None:
    ids = [s["id"] for s in SHAPES]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("__") and i.endswith("__") for i in ids)  # a word token never has them
    for s in SHAPES:
        assert s["examples"]["match"] and s["examples"]["no_match"], s["id"]


def test_a_supervisors_report_of_its_childs_death_reads_as_one() -> None:
    toks = death.tokens('time=2025-03-14T19:08:08.931+01:00 level=ERROR source=server.go:449 '
                        'msg="llama runner terminated" error="exit status 0xc0000409"')
    assert "__exit_status__" in toks and "__child_died__" in toks
    assert "__exit_status__" not in death.tokens('msg="llama runner terminated" error="exit status 0"')
