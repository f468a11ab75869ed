"""Guarded patterns (diagnosis/guarded.py) give what the plain regex gives:
the needle test only ever skips texts the pattern cannot match."""
from __future__ import annotations

import importlib
import re

from forensics.diagnosis.guarded import Guarded

ew = importlib.import_module("forensics.diagnosis.early_warnings.subjects")  # the module (the package exports its function)

LINES = [
    "WARNING 04-12 10:01:02 [cuda.py:88] Using FlashInfer backend; sm_90a capability 9.0 on GPU #3",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device (compute_75)",
    "ImportError: libcudart.so.12: cannot open shared object file; pip install flash-attn==2.6.3",
    "NCCL WARN Connect to 10.0.1.17:29500 failed; NCCL_SOCKET_IFNAME unset, tp_size=4 world 8",
    "ModuleNotFoundError: No module named 'vllm._C'",
    "Qwen2ForCausalLM model type qwen2 quantization awq, KV cache 12.5 GiB, 123456789 bytes",
    "torch::autograd::Engine ld returned 1 exit status; nvcc fatal",
    "ſm_90 capability on the device: \u212aV cache",  # re.I folds U+017F onto s, U+212A onto k
    "plain words only, nothing technical at all",
    "",
]


def test_guarded_patterns_match_exactly_what_the_plain_regex_matches():
    guarded = [v for v in vars(ew).values() if isinstance(v, Guarded)]
    assert len(guarded) >= 15
    for g in guarded:
        plain = re.compile(*g._args)
        for text in LINES:
            assert [m.span() for m in g.finditer(text)] == [m.span() for m in plain.finditer(text)], (g._args, text)
            assert bool(g.search(text)) == bool(plain.search(text))


def test_the_needle_test_skips_and_never_skips_non_ascii():
    g = Guarded(r"(?i)\bsm_?(\d+)", ("sm",), fold=True)
    assert g.cannot_match("nothing here")
    assert not g.cannot_match("SM_90 here")
    assert not g.cannot_match("ſm_90")  # scanned: the regex matches it
    assert [m.group(1) for m in g.finditer("ſm_90")] == ["90"]


def test_subjects_memo_returns_the_computed_subjects():
    text = LINES[0]
    assert ew.subjects(text) == ew._subjects(text) and ew.subjects(text) is ew.subjects(text)


def _ascii_sets():
    from forensics.diagnosis.guarded import AsciiSet

    mods = [ew, importlib.import_module("forensics.diagnosis.phase_infer"),
            importlib.import_module("forensics.diagnosis.early_warnings.scoring"),
            importlib.import_module("forensics.diagnosis.early_warnings.resources")]
    sets = [v for m in mods for v in vars(m).values() if isinstance(v, AsciiSet)]
    return sets


def _corpus_texts() -> list[str]:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "corpora"
    lines: list[str] = []
    for p in sorted(root.rglob("*.log"))[::7]:
        lines += p.read_text(encoding="utf-8", errors="replace").splitlines()
    # multi-line texts (frame names, joined evidence), the whitespace RE2 and re disagree on, non-ASCII
    blobs = ["\n".join(lines[i:i + 25]) for i in range(0, len(lines), 40)]
    odd = ["capture_model /x.py\nfoo \x0b/y", "\x1ccapture x\n", "warm_up bar\n", "ſtep x\n", "x\nstep /a.py",
           "sample\tfoo.py", "CapTure_x y", "step\x0b/a.py", "\u212aV cache memory", "nvcc\x1f", *LINES]
    return lines + blobs + odd


def test_ascii_sets_find_what_each_regex_finds():
    sets = _ascii_sets()
    assert len(sets) >= 6
    texts = _corpus_texts()
    assert len(texts) > 1000
    texts = list(dict.fromkeys(texts))  # which() is a function of the text: a repeated line (~30%) adds nothing
    for st in sets:
        st.which("")
        for text in texts:
            assert st.which(text) == [i for i, rx in enumerate(st._rxs) if rx.search(text)], text[:200]


def test_the_gate_only_rules_out_patterns_that_cannot_match():
    gate = ew._GATE
    guarded = [v for v in vars(ew).values() if isinstance(v, Guarded)]
    plain = {id(g): re.compile(*g._args) for g in guarded}
    gate.open("warm up the gate")
    assert sum(g._gate is gate for g in guarded) >= 15 or gate._match is False
    for text in _corpus_texts():
        gate.open(text)
        for g in guarded:
            assert [m.span() for m in g.finditer(text)] == [m.span() for m in plain[id(g)].finditer(text)], \
                (g._args[0][:60], text[:200])


def test_strip_lookarounds_keeps_classes_and_escapes():
    from forensics.diagnosis.guarded import strip_lookarounds

    assert strip_lookarounds(r"(?<![\w./-])(a(?=b))\((?!x[)(])c[](?=]") == r"(a)\(c[](?=]"
    assert strip_lookarounds(r"[^]a](?<=q)") == r"[^]a]"


def test_ascii_regex_finds_the_groups_re_finds():
    from forensics.diagnosis.early_warnings import candidates

    rx = candidates._FACT_RE2
    texts = _corpus_texts() + ["server_args=ServerArgs(tp_size=4, mem_fraction_static=0.88, dp_size=2)",
                               "Free memory on device (12.5/79.1 GiB) nGpus 8 \u212a", "total memory: 80 GiB\x0b"]
    assert sum(bool(rx.groups_all(t)) for t in texts) >= 3
    for text in texts:
        assert rx.groups_all(text) == tuple(m.groups() for m in candidates.FACT_RE.finditer(text)), text[:200]


def test_ascii_regex_finds_the_groups_re_finds_in_long_lines_outside_ascii():
    """A request dump of hundreds of KB with text outside ASCII: RE2 reads an
    ASCII copy and the groups are cut from the line itself."""
    from forensics.diagnosis.early_warnings import candidates
    from forensics.events.longtext import LONG_TEXT

    rx = candidates._FACT_RE2
    facts = ["tp_size=4, mem_fraction_static=0.88", "total memory — 80 GiB", "Free memory on device (1.5/79.1 GiB)",
             "CUDA_VISIBLE_DEVICES='0,1'", "nGpus 8", "TOTAL CAPACITY OF 12 GB"]
    pads = ["obj=GenerateReqInput(text='こんにちは—█', rid=r1), ", "Жé² " , "plain ascii, "]
    odd = ["", "\u212a", "\u017f", "\xa0", "\u0663", "\x0b"]  # each sends the line back to re
    n = 0
    for pad in pads:
        for fact in facts:
            for extra in odd:
                text = pad * (LONG_TEXT // len(pad) + 1) + fact + extra + pad + fact.upper()
                got = rx.groups_all(text)
                assert got == tuple(m.groups() for m in candidates.FACT_RE.finditer(text)), (pad, fact, extra)
                n += bool(got)
    assert n >= 30
