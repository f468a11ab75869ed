"""Which envelope a source is in, from its first lines."""
from __future__ import annotations

from forensics.envelope.containers import DOCKER, JSONL_MESSAGE_KEYS
from forensics.envelope.journald import SHORT_PATTERNS, VERBOSE_HEAD
from forensics.envelope.record import COLOURED, MARKER, SGR


def detect_format(sample: list[str]) -> str:
    """Pick the envelope format from the first lines of a source. Lines coloured
    from their first byte (ccze, a terminal capture) are judged without their
    colour codes; the format is then named with ``COLOURED`` after it,
    and its reader strips them first (``strip_sgr``)."""
    if not any(ln[:2] == "\x1b[" for ln in sample):
        return _detect(sample)
    fmt = _detect([SGR.sub("", ln) for ln in sample])
    return fmt if fmt == "plain" else fmt + COLOURED


def _detect(sample: list[str]) -> str:
    lines = [ln for ln in sample if ln.strip() and not MARKER.match(ln)][:60]
    if not lines:
        return "plain"
    first = lines[0].lstrip("\ufeff")
    if first.startswith("\x1e{") or first.startswith("\x1e"):
        return "json-seq"
    if first.startswith("data: {"):
        return "json-sse"
    if first.startswith("{") and ('"MESSAGE"' in first or '"__REALTIME_TIMESTAMP"' in first or '"__CURSOR"' in first):
        return "json"
    if first.startswith("{") and any(f'"{k}"' in first for k in JSONL_MESSAGE_KEYS):
        return "jsonl"
    if first.startswith("__CURSOR=") or first.startswith("__REALTIME_TIMESTAMP="):
        return "export"
    if VERBOSE_HEAD.match(first):
        return "verbose"
    scores: dict[str, int] = {}
    for name, pat in SHORT_PATTERNS.items():
        scores[name] = sum(1 for ln in lines if pat.match(ln))
    docker = sum(1 for ln in lines if DOCKER.match(ln))
    best = max(scores, key=lambda k: scores[k])
    n = len(lines)
    if scores[best] >= max(1, n * 0.3):
        # A docker --timestamps line can also look like short-iso with a
        # "host ident:" shape by accident; journald needs the ident column.
        if best == "short-iso" and docker > scores[best] * 1.5:
            return "docker"
        return best
    if docker >= max(1, n * 0.3):
        return "docker"
    return "plain"
