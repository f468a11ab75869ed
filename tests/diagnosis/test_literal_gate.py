"""The literal gate of the RE2 signature matcher (matcher._literal_gate) and
the context rules' one-pass set (early_warnings/context.py) only ever skip
texts where the full search finds nothing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from forensics.diagnosis import matcher as M
from forensics.diagnosis.early_warnings import context
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


def _ungated(m: M.RE2Field, text: str) -> list[int]:
    gate, m._gate = m._gate, None
    try:
        return list(m.scan(text))
    finally:
        m._gate = gate


def test_gate_literals_of_sequences_groups_and_alternatives():
    assert M.gate_literals(r"^(?:Segmentation fault|Aborted)(?: +\(core)?") == ["segmentation fault", "aborted"]
    assert M.gate_literals(r"s6-(?:supervise|rc)\S*: x") == ["s6-"]  # (rc is shorter than GATE_MIN)
    assert M.gate_literals(r"CUDA error: (?:out of memory|illegal)") == ["cuda error: "]
    assert M.gate_literals(r"\d+") is None
    assert M.gate_literals(r"(?:ab)?cd") is None  # nothing required is long enough
    assert M.gate_literals("caf\u00e9 failed") is None or all(x.isascii() for x in M.gate_literals("caf\u00e9 failed"))


def test_the_shipped_sets_are_gated():
    assert all(m._gate is not None for _f, m in _fields())


def test_the_gate_never_turns_away_a_corpus_line_a_pattern_matches():
    fields = _fields()
    for text in _corpus_lines():
        value = M.prepare(text)
        for _f, m in fields:
            assert list(m.scan(value)) == _ungated(m, value), value[:200]


def _pattern_words() -> list[str]:
    words: set[str] = set()
    sset = signature_set()
    for sig in sset.signatures:
        for c in sig.conditions:
            for _f, p in list(c.patterns) + list(c.unless):
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_ .:-]{2,}", p.pattern))
    return sorted(words)


WORDS = _pattern_words()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), max_size=8),
       st.sampled_from([str, str.upper, str.lower, str.title]))
def test_the_gate_never_turns_away_a_mix_of_pattern_words(parts, case):
    text = M.prepare(case(" ".join(parts)))
    for _f, m in _fields():
        assert list(m.scan(text)) == _ungated(m, text), text[:200]


def _plain_context_tokens(text: str) -> frozenset[str]:
    """context_tokens as it was: every rule's regex run with ``re``."""
    head = text[:20000]
    out: set[str] = set()
    for token, hints, rx in context._rules():
        if hints and not any(h in head for h in hints):
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
