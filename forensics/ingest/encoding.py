"""Which encoding a log is in, and turning it into UTF-8 as it streams.

Most logs are UTF-8 (or ASCII). The others people hand over come from
Windows: PowerShell's ``>`` and ``Out-File`` write UTF-16 LE with a byte-order
mark (older versions, and ``-Encoding Unicode``), ``-Encoding UTF32`` writes
UTF-32, and some tools write UTF-16 with no mark at all. The decoder is
chosen from the bytes, never from the name:

1. a byte-order mark decides (UTF-32 before UTF-16: ``FF FE 00 00`` starts
   with UTF-16 LE's mark); a UTF-8 mark is only dropped;
2. without a mark, text whose code units are mostly ASCII characters widened
   with NULs (one NUL beside each for UTF-16, three for UTF-32, on the side
   the byte order puts them) is read as that: the only UTF-16 a log can be
   told from binary without a mark (``\xff\x00`` pairs are binary);
3. anything else is UTF-8 with replacement, as before.

``StreamDecoder`` applies the choice to a stream fed in any chunking: the file
reader feeds its first 64 KiB sample at once, ``watch`` feeds what each read
returns and gets its lines as soon as the choice is made (at once for bytes
with no NUL and no mark, which is every UTF-8 log). Lines are cut afterwards,
on the UTF-8 text, so line numbers are those an editor shows.
"""
from __future__ import annotations

import codecs

# Byte-order marks, longest first where one is a prefix of another.
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Without a mark: decide on at least this many bytes when NULs are present
# (a live stream that sends fewer and stops is decided at its end).
DECIDE_BYTES = 256
# The share of code units that must be ASCII characters widened with NULs
# where that encoding puts them: a UTF-8 log with a run of NULs (a file
# zeroed by a crash) has NUL units, not widened characters, and is not
# mistaken for UTF-16.
WIDE_SHARE = 0.6
SAMPLE_BYTES = 16 << 10  # the part of the head the unit count looks at (a Python loop: kept short)


_ASCII_TEXT = frozenset(range(0x20, 0x7f)) | {0x09, 0x0a, 0x0d, 0x1b}


def _ascii_units(sample: bytes, width: int, low: int) -> float:
    """The share of ``width``-byte code units that are an ASCII text character:
    that byte (at ``low``) printable, every other byte NUL."""
    n = len(sample) // width
    if not n:
        return 0.0
    hits = 0
    for i in range(0, n * width, width):
        unit = sample[i:i + width]
        if unit[low] in _ASCII_TEXT and unit.count(0) == width - 1:
            hits += 1
    return hits / n


def sniff_encoding(head: bytes) -> tuple[str, int] | None:
    """``(codec, length of the byte-order mark)`` for a head that is not plain
    UTF-8 (``("utf-8", 3)``: UTF-8 with a mark to drop); ``None``: UTF-8."""
    for bom, codec in BOMS:
        if head.startswith(bom):
            return codec, len(bom)
    if b"\x00" not in head:
        return None
    sample = head[:SAMPLE_BYTES]
    # Without a mark, the text must be mostly ASCII characters, each widened
    # by NULs where that encoding puts them ("\xff\x00" pairs are not a log).
    for width, codec, low in ((4, "utf-32-le", 0), (4, "utf-32-be", 3), (2, "utf-16-le", 0), (2, "utf-16-be", 1)):
        if len(sample) >= 2 * width and _ascii_units(sample, width, low) >= WIDE_SHARE:
            return codec, 0
    return None


def encoding_name(codec: str, bom: int) -> str:
    """How the choice is named to people: ``UTF-16 LE with a byte-order mark``."""
    name = codec.upper().replace("-LE", " LE").replace("-BE", " BE")
    return f"{name} with a byte-order mark" if bom else f"{name} (no byte-order mark)"


class StreamDecoder:
    """Bytes in any chunking -> UTF-8 bytes (``feed``; ``finish`` at the end).
    ``encoding`` is ``None`` until the choice is made, then the codec
    (``"utf-8"`` for plain input: passed through untouched)."""

    __slots__ = ("held", "encoding", "bom", "_skip", "_dec")

    def __init__(self) -> None:
        self.held = b""
        self.encoding: str | None = None
        self.bom = 0
        self._skip = 0
        self._dec: codecs.IncrementalDecoder | None = None

    def _decide(self, final: bool) -> bool:
        held = self.held
        if len(held) < 4 and not final and any(bom.startswith(held) for bom, _ in BOMS):
            return False  # may still be a byte-order mark
        marked = any(held.startswith(bom) for bom, _ in BOMS)
        if not marked and b"\x00" in held and len(held) < DECIDE_BYTES and not final:
            return False  # NULs: maybe UTF-16 without a mark; wait for enough to tell
        found = sniff_encoding(held)
        codec, self.bom = found if found else ("utf-8", 0)
        self.encoding = codec
        self._skip = self.bom
        if codec != "utf-8":
            self._dec = codecs.getincrementaldecoder(codec)("replace")
        return True

    def feed(self, data: bytes, final: bool = False) -> bytes:
        if self.encoding is None:
            self.held += data
            if not self._decide(final):
                return b""
            data, self.held = self.held, b""
        if self._skip:
            cut = min(self._skip, len(data))
            data, self._skip = data[cut:], self._skip - cut
        if self._dec is None:
            return data
        return self._dec.decode(data, final).encode("utf-8")

    def finish(self) -> bytes:
        """What is still held at the end of the input (a cut character becomes U+FFFD)."""
        return self.feed(b"", final=True)

    @property
    def transcodes(self) -> bool:
        """Whether the output differs from the input beyond a dropped UTF-8 mark."""
        return self._dec is not None
