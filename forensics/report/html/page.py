"""The shell of every page: one self-contained HTML file.

Styles and scripts are inlined from ``static/``; nothing is fetched. A
Content-Security-Policy in the page forbids every network request (no
``connect-src``, ``img-src`` or ``font-src`` beyond ``data:``), so a page that
someone opens from a mail attachment cannot call out even if a log line tried
to smuggle markup in (every text from a log is escaped; data for scripts sits
in ``<script type="application/json">`` with ``</`` escaped)."""
from __future__ import annotations

import base64
import gzip
import html
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_STATIC = Path(__file__).with_name("static")
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "font-src data:; base-uri 'none'; form-action 'none'")


@lru_cache(maxsize=None)
def static(name: str) -> str:
    """A stylesheet or script shipped beside this module."""
    return (_STATIC / name).read_text(encoding="utf-8")


def esc(text: Any) -> str:
    """Text for HTML (``None`` is empty)."""
    return "" if text is None else html.escape(str(text), quote=True)


def json_script(element_id: str, value: Any) -> str:
    """Data for the page's scripts, inert (``type="application/json"``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = text.replace("</", "<\\/").replace("<!--", "<\\!--")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def packed_script(element_id: str, value: Any) -> str:
    """Bulky data, gzip-compressed and base64-encoded (a batch's incident
    table: about a tenth of the plain JSON); the page unpacks it with the
    browser's ``DecompressionStream``."""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8", "replace")
    packed = base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")
    return f'<script type="application/octet-stream" id="{element_id}" data-encoding="gzip+base64">{packed}</script>'


def document(title: str, body: str, script: str, kind: str) -> str:
    """The whole page: head (charset, viewport, policy, styles), body, then the script."""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en" data-page="{esc(kind)}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="generator" content="forensics">'
        f"<title>{esc(title)}</title><style>{static('page.css')}</style></head>"
        f"<body>{body}<script>{static('common.js')}\n{script}</script></body></html>\n"
    )
