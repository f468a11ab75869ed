"""Wrapper layers people add when they hand a log over, peeled before the
parser: here the margin of a pasted block (a markdown code block, a list
item, an e-mail, a YAML literal) and how it nests with the other layers."""
from __future__ import annotations

import json
import pickle

import pytest

from forensics import parse
from forensics.envelope.wrappers import IndentLayer, detect_indent, detect_wrappers, unwrap

from helpers import traceback_lines as _traceback_lines

# A plain log: its header and exception lines start at column 0, only
# Python's own frame lines are indented.
PLAIN = [
    "[2025-06-01 12:00:00] server_args=ServerArgs(model_path='m')",
    "[2025-06-01 12:00:01] Load weight begin. avail mem=78.50 GB",
    *_traceback_lines(0),
]


def _tracebacks(lines: list[str]) -> list:
    return [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]


def _peeled(lines: list[str]) -> list[str]:
    layers = detect_wrappers(lines)
    return [unwrap(x, layers) for x in lines]


@pytest.mark.parametrize("margin", ["    ", "  ", "\t", "      "])
def test_a_pasted_block_loses_exactly_its_margin(margin):
    block = [margin + x for x in PLAIN]
    assert detect_wrappers(block) == [IndentLayer(margin)]
    # Frame lines keep Python's own indentation under the margin.
    assert _peeled(block) == PLAIN
    tbs = _tracebacks(block)
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch.OutOfMemoryError" and tbs[0].rank == "TP0"
    assert len(tbs[0].data["frames"]) == 2


def test_a_plain_log_with_indented_frames_has_no_margin():
    assert detect_indent(PLAIN) is None and detect_wrappers(PLAIN) == []


@pytest.mark.parametrize("lines", [
    # A log that starts inside a traceback: every line is indented, by Python.
    ['  File "/x/scheduler.py", line 10, in run', "    self.step()", '  File "/x/runner.py", line 20, in step',
     "    out = self.model(x)", "          ^^^^^^^^^^^^^"],
    # An exception group, which Python indents by two.
    ["  + Exception Group Traceback (most recent call last):", '  |   File "x.py", line 1, in <module>',
     "  | ExceptionGroup: two (2 sub-exceptions)", "  +-+---------------- 1 ----------------",
     "    | ValueError: one"],
    # A right-aligned level column (TGI after its timestamp): padding, not a margin.
    [" INFO text_generation_launcher: Args", " WARN text_generation_launcher: No cuda graphs"],
])
def test_python_s_own_indentation_and_padded_columns_are_not_a_margin(lines):
    assert detect_indent(lines) is None


def test_the_margin_is_the_common_one_and_blank_lines_belong_to_the_block():
    block = ["    a", "", "      b", "    ", "    c"]
    assert detect_indent(block) == IndentLayer("    ")
    assert _peeled(block) == ["a", "", "  b", "", "c"]
    # A line without the margin after the sample is left as it is.
    assert unwrap("not indented", [IndentLayer("    ")]) == "not indented"


@pytest.mark.parametrize("render", [
    lambda x: "    " + f"sglang-1  | {x}",  # an indented compose log
    lambda x: f"sglang-1  |     {x}",  # a compose log of an indented block
    lambda x: "> " + "    " + x,  # a quoted code block
    lambda x: "    " + "> " + x,  # a quote pasted as a code block
    lambda x: "    " + f"2025-10-09T04:13:06.6371779Z {x}",  # an indented CI log
])
def test_the_margin_nests_with_the_other_layers(render):
    tbs = _tracebacks([render(x) for x in PLAIN])
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch.OutOfMemoryError" and tbs[0].rank == "TP0"


def test_the_margin_is_peeled_from_the_message_inside_a_docker_envelope():
    recs = [{"log": "    " + x + "\n", "stream": "stderr", "time": f"2025-06-01T12:00:0{i}.123456789Z"}
            for i, x in enumerate(PLAIN)]
    tbs = _tracebacks([json.dumps(r) for r in recs])
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch.OutOfMemoryError"


def test_a_plan_with_a_margin_compares_and_pickles():
    # watch re-plans while the first lines arrive and compares plans; a split
    # file ships its plan to worker processes.
    layer = detect_indent(["    a", "    b"])
    assert layer == IndentLayer("    ") and pickle.loads(pickle.dumps(layer)) == layer
