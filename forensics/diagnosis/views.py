"""What a signature condition looks at: a line, or one exception of a
traceback's chain (``View``), made from an event by ``event_views``."""
from __future__ import annotations

from forensics.events import types as kinds
from forensics.events.types import Event


class View:
    """What a condition looks at: one line, or one exception of a chain."""

    __slots__ = ("text", "exc_type", "exc_message", "frame_file", "frame_function", "level", "logger", "event_kind")

    def __init__(self, text: str, exc_type: str | None = None, exc_message: str | None = None,
                 frame_file: tuple[str, ...] = (), frame_function: tuple[str, ...] = (),
                 level: str | None = None, logger: str | None = None, event_kind: str = kinds.MESSAGE) -> None:
        self.text = text
        self.exc_type = exc_type
        self.exc_message = exc_message
        self.frame_file = frame_file
        self.frame_function = frame_function
        self.level = level
        self.logger = logger
        self.event_kind = event_kind


def event_views(ev: Event) -> list[View]:
    if ev.kind != kinds.TRACEBACK:
        return [View(ev.text, level=ev.level, logger=ev.logger, event_kind=ev.kind)]
    views: list[View] = []
    chain = ev.data.get("chain") or ()
    for exc in chain:
        files = tuple(f.file for f in exc.frames)
        funcs = tuple(f.function for f in exc.frames if f.function)
        views.append(View(exc.rendered, exc.exc_type, exc.exc_message, files, funcs, ev.level, ev.logger, kinds.TRACEBACK))
    if not chain:
        frames = ev.data.get("frames") or ()
        files = tuple(f.file for f in frames)
        funcs = tuple(f.function for f in frames if f.function)
        texts = list(ev.data.get("orphan_source") or []) or [ev.text]
        for t in texts:
            views.append(View(t, None, None, files, funcs, ev.level, ev.logger, kinds.TRACEBACK))
    carrier = ev.data.get("carrier")
    if carrier:
        views.append(View(carrier, level=ev.level, logger=ev.logger, event_kind=kinds.LOG))
    return views


LINE_FIELDS = ("text", "level", "logger", "event_kind")  # what a plain line's view holds (event_views)


def line_value(ev: Event, field: str) -> str | None:
    """The value of ``field`` in a plain line's view (``event_views``)."""
    return ev.kind if field == "event_kind" else getattr(ev, field)
