"""Message hygiene shared by every envelope: colour codes, progress-bar rewrites."""
from __future__ import annotations

import re

# Real CSI escapes, escapes whose ESC byte was lost ("[36m" before a prefix),
# and escaped spellings seen in syslog exports and JSON dumps.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[@-Z\\-_]"  # other 2-byte escapes
    r"|(?:#033|\\u001b|\\x1b|\\033|\\e)\[[0-9;]*[A-Za-z]"
    r"|(?<![\w\]])\[(?:\d{1,3}(?:;\d{1,3})*m(?=[\[(A-Za-z0-9 ]|$)|m(?=[\[( :]|$))"
)
# A bare "[m" (the reset) counts only before a bracket, a space, a colon or the end:
# before a letter it is text, "[model_runner.py:1054]", "[main]", "addr=[mac.lan]".
_LOST = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*m(?=[\[(A-Za-z0-9 ]|$)|m(?=[\[( :]|$))")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_message(text: str) -> str:
    """Strip colour codes, resolve ``\\r`` rewrites to the last state, drop NULs."""
    if text.isprintable() and "[0" not in text and "#0" not in text and "001b[" not in text:
        # The common case, decided by a few C-level scans: no control bytes, no
        # colour reset ("[0m", "[0;0m") left by a lost ESC byte, no syslog "#012"/"#033".
        return text
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:
            parts = [p for p in text.split("\r") if p.strip()]
            text = parts[-1] if parts else ""
    if "\x1b" in text or "033[" in text or "u001b[" in text or ("[" in text and _LOST.search(text) is not None):
        text = _ANSI.sub("", text)
    if "#011" in text:  # syslog escapes tabs as #011 (and newlines as #012: split by the envelope)
        text = text.replace("#011", "\t")
    if _has_ctrl(text):
        text = _CTRL.sub("", text)
    return text


def _has_ctrl(text: str) -> bool:
    for ch in ("\x00", "\x1b", "\x08", "\x07", "\x0c"):
        if ch in text:
            return True
    return False
