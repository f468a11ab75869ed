"""Wrappers people add when they copy logs, peeled off each message: docker
compose service columns, box-drawing borders, ``host >> `` markers, markdown
quotes, CI and cloud-console timestamps, the indentation of a pasted block.
Detected per source from a sample."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

_BORDERS = "│┃║|"


class _BoxMatch:
    __slots__ = ("_msg",)

    def __init__(self, msg: str) -> None:
        self._msg = msg

    def group(self, name: str) -> str:
        return self._msg


class _BoxPattern:
    r"""``^\s*[│┃║|](?:\s*\d+\s*[│┃║|])?\s?(?P<msg>.*?)\s*(?:[│┃║|]\s*)?$`` in
    linear time. As one regex the lazy message and the trailing ``\s*``
    backtrack into each other: ``'| ' + 40,000 spaces + 'x'`` took minutes.
    The head is matched by a regex, the tail (spaces, one border, spaces)
    is stripped with ``str`` methods: the same message, in one pass."""

    _HEAD = re.compile(r"\s*[│┃║|](?:\s*\d+\s*[│┃║|])?\s?")
    pattern = _HEAD.pattern

    def match(self, text: str) -> _BoxMatch | None:
        m = self._HEAD.match(text)
        if m is None:
            return None
        msg = text[m.end():].rstrip()
        if msg and msg[-1] in _BORDERS:
            msg = msg[:-1].rstrip()
        if "\n" in msg:  # the message is one line (the spaces around it may span lines)
            return None
        return _BoxMatch(msg)


_WRAPPERS: dict[str, re.Pattern[str]] = {
    # docker compose: "sglang-1  | msg", "backend-vllm-openai-1  | msg"
    "compose": re.compile(r"^(?P<svc>[A-Za-z0-9][\w.\-]*)\s+\| ?(?P<msg>.*)$"),
    # web console / TUI borders: "│ msg   │", "| 12 | msg |"
    "box": _BoxPattern(),  # type: ignore[dict-item]
    "host-marker": re.compile(r"^(?:\d{4}-\d\d-\d\d[ T][\d:.,]+ )?(?P<host>[\w.\-]+) >> (?P<msg>.*)$"),
    "quote": re.compile(r"^> ?(?P<msg>.*)$"),
    "ci-timestamp": re.compile(r"^(?:\[)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z(?:\])? (?P<msg>.*)$"),
    "cloud-severity": re.compile(r"^(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL) \d{4}-\d\d-\d\dT[\d:.]+Z (?:\[[^\]]*\] )?(?P<msg>.*)$"),
}


# Margin characters of a pasted block (a markdown code block, a list item, an
# e-mail, a YAML literal): what textwrap.dedent calls whitespace.
_MARGIN_CHARS = " \t"
# One space is a padded column, not a margin: a right-aligned level (TGI's
# "  INFO" / " WARN" after its timestamp), a percentage (" 50%"). A paste
# indents by a tab or by two spaces or more.
_MIN_SPACES = 2
# Lines Python itself prints indented: at a block's left margin they show that
# the margin is Python's own (a log that starts inside a traceback, or an
# exception group, which Python indents by two), not a paste's. In a pasted
# block they sit deeper than its margin, under the header and exception lines.
_INDENTED_BY_PYTHON = ('File "', "+ Exception Group Traceback", "| ", "+-")


@dataclass(frozen=True)
class _Peeled:
    msg: str

    def group(self, name: str) -> str:
        return self.msg


@dataclass(frozen=True)
class IndentLayer:
    """The margin every line of a pasted block shares, peeled like a wrapper
    (a plan compares and pickles it: frozen, compared by its margin)."""

    margin: str

    @property
    def pattern(self) -> str:
        return f"^{re.escape(self.margin)}(?P<msg>.*)$"

    def match(self, text: str) -> _Peeled | None:
        if "\n" in text:
            return None
        if text.startswith(self.margin):
            return _Peeled(text[len(self.margin):])
        if not text.strip():
            return _Peeled("")  # a blank line of the block (editors trim its margin)
        return None


def detect_indent(msgs: list[str]) -> IndentLayer | None:
    """The margin of a pasted block: the whitespace every non-blank sampled
    message starts with (as textwrap.dedent finds it), unless the lines at
    that margin are ones Python indents itself. A plain log has none: its
    headers, ``Traceback ...`` and exception lines start at column 0."""
    lines = [m for m in msgs if m.strip()]
    if len(lines) < 2:
        return None
    margins = [m[:len(m) - len(m.lstrip(_MARGIN_CHARS))] for m in lines]
    margin = os.path.commonprefix(margins)
    if not margin or ("\t" not in margin and len(margin) < _MIN_SPACES):
        return None
    if any(m[len(margin):].startswith(_INDENTED_BY_PYTHON) for m in lines):
        return None
    return IndentLayer(margin)


def detect_wrappers(messages: list[str]) -> list[re.Pattern[str]]:
    """Wrapper layers present on most sampled messages, outermost first."""
    active: list[re.Pattern[str]] = []
    msgs = [m for m in messages if m.strip()][:60]
    for _ in range(3):
        if not msgs:
            break
        best, best_hits = None, 0
        # A pasted block's margin is a candidate like the named layers (checked
        # last: a border pattern that allows leading spaces wins a tie).
        indent = detect_indent(msgs)
        candidates = [*_WRAPPERS.values(), *([indent] if indent is not None else [])]
        for pat in candidates:
            # The same layer may come twice: a web console's "  |   | " nests two borders.
            hits = sum(1 for m in msgs if pat.match(m))  # type: ignore[union-attr]
            if hits > best_hits:
                best, best_hits = pat, hits
        if best is None or best_hits < max(2, len(msgs) * 0.5):
            break
        active.append(best)  # type: ignore[arg-type]
        msgs = [(mm.group("msg") if (mm := best.match(m)) else m) for m in msgs]  # type: ignore[union-attr]
    return active


def unwrap(text: str, wrappers: list[re.Pattern[str]]) -> str:
    for pat in wrappers:
        m = pat.match(text)
        if m:
            text = m.group("msg")
    return text
