"""Wrappers people add when they copy logs, peeled off each message: docker
compose service columns, box-drawing borders, ``host >> `` markers, markdown
quotes, CI and cloud-console timestamps. Detected per source from a sample."""
from __future__ import annotations

import re

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


def detect_wrappers(messages: list[str]) -> list[re.Pattern[str]]:
    """Wrapper layers present on most sampled messages, outermost first."""
    active: list[re.Pattern[str]] = []
    msgs = [m for m in messages if m.strip()][:60]
    for _ in range(3):
        if not msgs:
            break
        best, best_hits = None, 0
        for name, pat in _WRAPPERS.items():
            # The same layer may come twice: a web console's "  |   | " nests two borders.
            hits = sum(1 for m in msgs if pat.match(m))
            if hits > best_hits:
                best, best_hits = pat, hits
        if best is None or best_hits < max(2, len(msgs) * 0.5):
            break
        active.append(best)
        msgs = [(mm.group("msg") if (mm := best.match(m)) else m) for m in msgs]
    return active


def unwrap(text: str, wrappers: list[re.Pattern[str]]) -> str:
    for pat in wrappers:
        m = pat.match(text)
        if m:
            text = m.group("msg")
    return text
