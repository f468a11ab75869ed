"""Writing to whatever stdout / stderr the user gave us.

Every string is made encodable before it leaves: a file name that is not
UTF-8 (held as surrogate escapes, ``os.fsdecode``) goes out as its original
bytes, a lone surrogate from anywhere else as U+FFFD (or ``\\uXXXX`` on a
non-UTF-8 stream), never as ``UnicodeEncodeError``. A stdout that is closed,
full (``/dev/full``) or a broken pipe ends the run with one line, not a
traceback, and Python's final flush at exit cannot raise again.
"""
from __future__ import annotations

import codecs
import io
import os
import re
import sys

ERRORS = "forensics-output"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(text: str) -> str:
    """JSON text with lone surrogates written as ``\\uXXXX`` escapes: valid
    UTF-8, and a file name that is not UTF-8 reads back (``json.loads`` then
    ``os.fsencode``) as its original bytes."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _encode_error(exc: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    utf8 = codecs.lookup(exc.encoding).name == "utf-8"
    out = bytearray()
    for ch in exc.object[exc.start:exc.end]:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
            out.append(o - 0xDC00)
        elif utf8:
            out += "\ufffd".encode("utf-8")
        else:
            out += ch.encode("ascii", "backslashreplace")
    return bytes(out), exc.end


codecs.register_error(ERRORS, _encode_error)


def prepare_std_streams() -> None:
    """Make stdout/stderr safe to write: missing (fd closed at start) ones
    become devnull; the rest get the encodable-everything error handler."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8", errors=ERRORS))
            continue
        if isinstance(stream, io.TextIOWrapper):
            try:
                stream.reconfigure(errors=ERRORS)
            except (ValueError, OSError):  # pragma: no cover - a detached stream
                pass


def silence_stdout() -> None:
    """Point fd 1 (and sys.stdout) at devnull, so the flush at exit of what
    could not be written cannot raise a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except Exception:
        pass
    try:
        sys.stdout = open(os.devnull, "w", encoding="utf-8", errors=ERRORS)
    except Exception:  # pragma: no cover
        pass
