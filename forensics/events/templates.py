"""Catalogue templates: the literal text a program prints with ``{}``/``{name}``
placeholders, the regex that finds one in a log line, and the words that index
it (a line must contain a template's rarest word to be tried against it)."""
from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def split_template(template: str) -> list[tuple[str, str | None]]:
    """[(literal, placeholder-name-or-None)]: ``{{``/``}}`` are literal braces,
    ``{x}`` a placeholder named x (empty name allowed)."""
    out: list[tuple[str, str | None]] = []
    lit: list[str] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(template):
        lit.append(template[pos:m.start()])
        tok = m.group(0)
        if tok == "{{":
            lit.append("{")
        elif tok == "}}":
            lit.append("}")
        else:
            out.append(("".join(lit), m.group(1)))
            lit = []
        pos = m.end()
    lit.append(template[pos:])
    out.append(("".join(lit), None))
    return out


def template_regex(template: str) -> str:
    """A regex that finds the template's first line in a line of a log.

    Placeholders match lazily anything on the line; runs of whitespace in the
    literal text match any whitespace (log shippers re-wrap and re-indent).

    Its cost stays near linear in the line (issue 27): placeholders with
    nothing or only spaces between them are one wildcard (``.*?.*?`` matches
    what ``.*?`` does, and each more is one more power of the line's length
    when the line fails: torch_npu's ``{__func__}:{__FILE__}:{__LINE__}{ERROR}
    {error_msg}{is}{time_msg}, error code is {error_code}{ACL}`` took minutes on
    one 1.6 kB line), and each wildcard with the literal after it is an atomic
    group: it takes the literal's first occurrence and never comes back to try
    a later one, which could only end later and so match no more."""
    first = template.split("\n", 1)[0] if "\n" in template else template
    parts: list[str] = []
    for lit, ph in split_template(first):
        if lit.strip():
            rx = r"\s+".join(re.escape(w) for w in lit.split())
            parts.append((r"\s*" if lit[:1].isspace() else "") + rx + (r"\s*" if lit[-1:].isspace() else ""))
        elif lit and not (parts and parts[-1] == _WILD):  # spaces alone, not after a wildcard
            parts.append(r"\s*")
        if ph is not None:
            if parts and parts[-1] == r"\s*":  # a wildcard matches the spaces too
                parts.pop()
            if not (parts and parts[-1] == _WILD):
                parts.append(_WILD)
    # search() is unanchored: wildcards and optional space at either end add nothing
    while parts and parts[0] in (_WILD, r"\s*"):
        parts.pop(0)
    while parts and parts[-1] in (_WILD, r"\s*"):
        parts.pop()
    out: list[str] = []
    for i, part in enumerate(parts):
        if part != _WILD:
            out.append(f"(?>.*?{part})" if i and parts[i - 1] == _WILD else part)
    return "".join(out)


_WILD = r".*?"


# Whole words of 4+ characters starting with a letter: a word that is part of
# a longer run of word characters (x1_abcd, 12abcd) is never one.
_WORD = re.compile(r"\b[A-Za-z_]\w{3,}")


def _segment_words(lit: str, open_left: bool, open_right: bool) -> list[str]:
    """The whole words of a literal segment. A word touching a placeholder
    (``sm_{arch}``) is only part of the printed word, so it is left out."""
    ms = list(_WORD.finditer(lit))
    if ms and open_left and ms[0].start() == 0:
        ms = ms[1:]
    if ms and open_right and ms[-1].end() == len(lit):
        ms = ms[:-1]
    return [m.group().lower() for m in ms]


def literal_keys(template: str) -> list[str]:
    """The words of the template's first line, and each pair of words adjacent
    within one literal segment ("w1 w2"): a pair is far rarer than a word, and
    it appears as a pair in any line the template matches."""
    first = template.split("\n", 1)[0]
    segs = split_template(first)
    keys: list[str] = []
    for i, (lit, _ph) in enumerate(segs):
        ws = _segment_words(lit, open_left=i > 0, open_right=segs[i][1] is not None)
        keys.extend(ws)
        keys.extend(f"{a} {b}" for a, b in zip(ws, ws[1:]))
    return keys


def line_keys(message: str) -> list[str]:
    ws = _WORD.findall(message.lower())
    return ws + [f"{a} {b}" for a, b in zip(ws, ws[1:])]


def literal_size(template: str) -> int:
    first = template.split("\n", 1)[0]
    return sum(len(lit.strip()) for lit, _ in split_template(first))



# Too short or too generic to say which message it is: never used as a key.
_MIN_LITERAL = 10


def index_keys(templates: list[str]) -> list[str | None]:
    """For each template its rarest literal word (over all templates): the one
    word of a line that must be present for the template to match. The miner
    stores these in the lookup index so loading costs no template parsing."""
    words_of: list[list[str]] = []
    freq: dict[str, int] = {}
    for t in templates:
        ws = sorted(set(literal_keys(t))) if literal_size(t) >= _MIN_LITERAL else []
        words_of.append(ws)
        for w in ws:
            freq[w] = freq.get(w, 0) + 1
    return [min(ws, key=lambda w: (freq[w], -len(w), w)) if ws else None for ws in words_of]
