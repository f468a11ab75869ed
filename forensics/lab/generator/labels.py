"""Labels: what survives the rendering and the cut, and the labels.csv table."""

from __future__ import annotations

import json

from .render import ANSI_RE


def decoded_lines(data: bytes, renderer: str) -> list[str]:
    text = data.decode("utf-8", "replace")
    out = []
    for ln in text.split("\n"):
        if renderer == "json" and ln.startswith("{"):
            try:
                o = json.loads(ln)
                m = o.get("MESSAGE")
                if isinstance(m, list):
                    m = bytes(m).decode("utf-8", "replace")
                ln = m or ""
            except ValueError:
                pass
        out.append(ANSI_RE.sub("", ln))
    return out


def survives(sub: str, data: bytes, renderer: str) -> bool:
    if not sub:
        return False
    return any(sub in ln for ln in decoded_lines(data, renderer))
