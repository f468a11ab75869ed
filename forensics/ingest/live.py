"""The one rule that turns bytes into text lines, for files and live streams.

Lines end at ``\\n`` only (a ``\\r`` stays in the text; the envelope's
``clean_message`` resolves progress-bar rewrites). Bytes are decoded as UTF-8
with replacement, so invalid input costs characters, never the line. A
physical line longer than ``MAX_LINE_BYTES`` is clipped: its first
``MAX_LINE_BYTES`` are kept and marked with ``CLIP_MARK``, the rest up to its
newline is dropped unbuffered. A last line without a newline is still a line
(``LineCutter.finish`` says whether it was cut short or clipped).

The file reader (``ingest.sources``) feeds it 1 MiB blocks, ``watch`` feeds it
what each ``os.read`` returns: both hand out the same lines.
"""
from __future__ import annotations

MAX_LINE_BYTES = 8 << 20  # longer physical lines are clipped (the rest is counted, not kept)
CLIP_MARK = b" [...clipped by forensics]"


def decode(raw: bytes | bytearray) -> str:
    """Bytes of whole lines -> text (invalid UTF-8 replaced)."""
    return raw.decode("utf-8", "replace")


class LineCutter:
    """Bytes in any chunking -> decoded text of whole lines. ``take`` returns
    the complete lines that arrived (each ending with ``\\n``; "" when none
    did) and holds the unfinished rest; ``finish`` returns that rest at the end
    of the input. The held rest never grows past ``MAX_LINE_BYTES`` (plus the
    mark): appending to a bytearray and searching only the new bytes keeps a
    monster line arriving in small reads linear."""

    __slots__ = ("held", "clipping")

    def __init__(self) -> None:
        self.held = bytearray()
        self.clipping = False  # inside a monster line whose middle is dropped

    def take(self, data: bytes) -> tuple[str, bool]:
        """(text of the lines completed by ``data``, whether a line was clipped now)."""
        raw, clipped = self.take_raw(data)
        return (decode(raw) if raw else ""), clipped

    def take_raw(self, data: bytes) -> tuple[bytes | bytearray, bool]:
        """``take`` before decoding: the bytes of the completed lines (decoding
        them in pieces cut after newlines gives the same text: a newline
        always ends an invalid sequence)."""
        if self.clipping:
            nl = data.find(b"\n")
            if nl < 0:
                return b"", False
            data = data[nl:]  # the newline ends the clipped line
            self.clipping = False
        held = self.held
        pos = len(held)  # the bytes before hold no newline
        held += data
        cut = held.rfind(b"\n", pos)
        raw: bytes | bytearray = b""
        if cut >= 0:
            raw = held[:cut + 1]
            del held[:cut + 1]
        if len(held) > MAX_LINE_BYTES:
            del held[MAX_LINE_BYTES:]
            held += CLIP_MARK
            self.clipping = True
            return raw, True
        return raw, False

    def finish(self) -> tuple[str | None, bool]:
        """(the unfinished last line or None, whether it ended without newline
        and unclipped, i.e. the input was cut in the middle of a line)."""
        raw, cut_short = self.finish_raw()
        return (decode(raw) if raw is not None else None), cut_short

    def finish_raw(self) -> tuple[bytearray | None, bool]:
        if not self.held:
            return None, False
        raw = self.held
        self.held = bytearray()
        return raw, not self.clipping
