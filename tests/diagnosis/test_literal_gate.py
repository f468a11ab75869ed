"""The literal gate of the RE2 signature matcher (diagnosis/literal_gate.py) and
the context rules' one-pass set (early_warnings/context.py) only ever skip
texts where the full search finds nothing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.diagnosis import matcher as M
from forensics.diagnosis.early_warnings import context
from forensics.diagnosis.literal_gate import gate_literals
from forensics.diagnosis.signatures import signature_set

ROOT = Path(__file__).resolve().parents[2]


def _corpus_lines() -> list[str]:
    lines: list[str] = []
    for p in sorted((ROOT / "corpora").rglob("*.log"))[::3]:
        lines += p.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


def _fields():
    sset = signature_set()
    if sset.engine != "re2":
        pytest.skip("the gate is RE2's")
    return [(f, m) for f, m in sset._fields]


_WHOLE: dict[int, object] = {}


def _ungated(m: M.RE2Field, text: str) -> list[int]:
    """What the field's whole RE2 set finds (the engine without the gate)."""
    match = _WHOLE.get(id(m))
    if match is None:
        match = _WHOLE[id(m)] = M._compiled_set(m._gate.patterns)._set.Match
    return [m.ids[i] for i in match(M._encodable(text).encode("utf-8"))]


def test_gate_literals_of_sequences_groups_and_alternatives():
    assert gate_literals(r"^(?:Segmentation fault|Aborted)(?: +\(core)?") == ["segmentation fault", "aborted"]
    assert gate_literals(r"s6-(?:supervise|rc)\S*: x") == ["s6-"]  # (rc is shorter than GATE_MIN)
    assert gate_literals(r"CUDA error: (?:out of memory|illegal)") == ["cuda error: "]
    assert gate_literals(r"\d+") is None
    assert gate_literals(r"(?:ab)?cd") is None  # nothing required is long enough
    assert gate_literals("caf\u00e9 failed") is None or all(x.isascii() for x in gate_literals("caf\u00e9 failed"))


def test_the_shipped_sets_are_gated():
    assert all(m._gate is not None for _f, m in _fields())


def test_the_gate_never_turns_away_a_corpus_line_a_pattern_matches():
    fields = _fields()
    for text in _corpus_lines() + [_fold_odd(t) for t in _corpus_lines()[::5]]:
        value = M.prepare(text)
        for _f, m in fields:
            assert sorted(m.scan(value)) == sorted(_ungated(m, value)), value[:200]


def _pattern_words() -> list[str]:
    words: set[str] = set()
    sset = signature_set()
    for sig in sset.signatures:
        for c in sig.conditions:
            for _f, p in list(c.patterns) + list(c.unless):
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_ .:-]{2,}", p.pattern))
    return sorted(words)


WORDS = _pattern_words()


def _fold_odd(text: str) -> str:
    """Letters swapped for what RE2's case folding relates to them outside ASCII."""
    return text.replace("s", "\u017f").replace("K", "\u212a").replace("k", "\u212a")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), max_size=8),
       st.sampled_from([str, str.upper, str.lower, str.title, _fold_odd]),
       st.sampled_from(["", "\u00e9", "\ud800", "\u0130", "\u2588"]))
def test_the_gate_never_turns_away_a_mix_of_pattern_words(parts, case, odd):
    text = M.prepare(case(odd.join(parts)))
    for _f, m in _fields():
        assert sorted(m.scan(text)) == sorted(_ungated(m, text)), text[:200]


def test_only_the_known_characters_fold_onto_ascii_letters():
    import re2

    from forensics.diagnosis.literal_gate import FOLDS_ONTO_ASCII

    rx = re2.compile("(?i)[a-z]")
    folding = [chr(u) for u in range(0x80, 0x110000) if not 0xD800 <= u < 0xE000 and rx.search(chr(u))]
    assert folding == ["\u017f", "\u212a"]
    for c in folding:
        assert c.lower().translate(FOLDS_ONTO_ASCII).isascii()


def _plain_context_tokens(text: str) -> frozenset[str]:
    """context_tokens as it was: every rule's regex run with ``re``."""
    head = text[:20000]
    out: set[str] = set()
    for token, hints, rx, exceeds in context._rules():
        if hints and not any(h in head for h in hints):
            continue
        if exceeds:
            if any(float(m.group(1)) > float(m.group(2)) for m in rx.finditer(head)):
                out.add(token)
            continue
        for m in rx.finditer(head):
            value = m.group(1) if rx.groups else None
            if value is not None and value.lower() in ("none", "null", "auto"):
                continue
            out.add(token.format(value.lower()) if value is not None else token)
    return frozenset(out)


def test_context_tokens_are_what_each_rule_finds():
    odd = ["Qwen2VLForConditionalGeneration", "\u00c4ForConditionalGeneration on B200", "vision tower \u017f",
           "model \u00c4VLModel", "attention_backend='fa3' H100\x0b", "enable_multimodal=True"]
    for text in _corpus_lines() + odd:
        assert context.context_tokens(text) == _plain_context_tokens(text), text[:200]
