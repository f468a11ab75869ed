"""The signature cache: a hit loads the same signatures without parsing or
checking; a broken, foreign or tampered cache is a miss (same signatures,
no error); files that do not load are never cached."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from forensics.diagnosis import matcher as M
from forensics import cache as fcache
from forensics.diagnosis import sigcache
from forensics.diagnosis.signatures import default_signature_dirs, load_signatures
from forensics.errors import SignatureError
from forensics.events.types import Event

LINES = ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
         "RuntimeError: CUDA error: an illegal memory access was encountered",
         "ModuleNotFoundError: No module named 'vllm._C'", "Load weight end. avail mem=3.2 GB"]


def _shape(sset):  # type: ignore[no-untyped-def]
    matches = [[s.id for s, _ in sset.match_event(Event("log", 1, t))] for t in LINES]
    return sset.digest, [s.to_dict() for s in sset.signatures], [s.conditions for s in sset.signatures], matches


@pytest.fixture
def cache(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    d = tmp_path / "cache"
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(d))
    return d


def _entry(d: Path) -> Path:
    (entry,) = d.glob("signatures-*.json")
    return entry


def test_hit_equals_a_fresh_load(cache, monkeypatch):
    fresh = _shape(load_signatures())
    assert _entry(cache).is_file()

    def refuse(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("a hit checks no pattern")
    monkeypatch.setattr(M, "compile_check", refuse)
    assert _shape(load_signatures()) == fresh
    sig = load_signatures().signatures[0]
    pat = sig.conditions[0].patterns[0][1]
    assert pat.search(pat.pattern) is not None or pat.pattern  # compiles on first use


@pytest.mark.parametrize("damage", ["truncate", "flip", "prefix", "garbage", "empty", "rehash-other-key",
                                    "fewer-docs", "group-writable", "directory"])
def test_broken_cache_is_a_miss(cache, damage, monkeypatch):
    fresh = _shape(load_signatures())
    entry = _entry(cache)
    raw = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        i = len(raw) - 100
        entry.write_bytes(raw[:i] + bytes([raw[i] ^ 1]) + raw[i + 1:])
    elif damage == "prefix":
        entry.write_bytes(b"x" + raw)
    elif damage == "garbage":
        entry.write_bytes(os.urandom(5000))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage in ("rehash-other-key", "fewer-docs"):
        import hashlib
        import json

        obj = json.loads(raw.partition(b"\n")[2].partition(b"\n")[2])
        if damage == "rehash-other-key":
            obj["key"] = "0" * 32
        else:
            obj["docs"] = obj["docs"][:-1]
        body = json.dumps(obj).encode()
        entry.write_bytes(fcache.PREFIX + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    elif damage == "group-writable":
        entry.chmod(0o664)
    elif damage == "directory":
        entry.unlink()
        entry.mkdir()
    calls = []
    real = M.compile_check
    monkeypatch.setattr(M, "compile_check", lambda *a: calls.append(a) or real(*a))
    assert _shape(load_signatures()) == fresh
    assert calls, "a miss parses and checks the files again"


def test_off_and_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv("FORENSICS_CACHE_DIR", "off")
    fresh = _shape(load_signatures())
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(blocker / "cache"))
    assert _shape(load_signatures()) == fresh


def test_a_bad_file_is_never_cached(cache, tmp_path):
    d = tmp_path / "sigs"
    d.mkdir()
    (d / "bad.yaml").write_text("id: x.bad\ntitle: t\nroot_cause: gpu.out-of-memory\nkind: failure\n"
                                "remediation: r\nmatch: {text: '(a+'}\n")
    for _ in range(2):
        with pytest.raises(SignatureError):
            load_signatures([d])
    assert not list(cache.glob("signatures-*.json"))
    assert default_signature_dirs()  # the shipped set still loads


def test_entries_are_bounded(cache, tmp_path):
    for i in range(fcache.MAX_ENTRIES + 3):
        d = tmp_path / f"set{i}"
        d.mkdir()
        (d / "one.yaml").write_text(f"id: x.s{i}\ntitle: t\nroot_cause: gpu.out-of-memory\nkind: failure\n"
                                    f"remediation: r\nmatch: {{text: 'zz{i}q'}}\n")
        load_signatures([d])
    assert len(list(cache.glob("signatures-*.json"))) == fcache.MAX_ENTRIES


@pytest.mark.parametrize("damage", [None, "flip", "truncate"])
def test_scorer_cache_gives_the_same_scores(cache, damage):
    from forensics.diagnosis.classifier.loader import SCORER_PATH
    from forensics.diagnosis.classifier.scorer import load_scorer

    fresh = load_scorer(SCORER_PATH)
    (entry,) = cache.glob("scorer-*.json")
    if damage == "flip":
        raw = entry.read_bytes()
        entry.write_bytes(raw[:-50] + bytes([raw[-50] ^ 4]) + raw[-49:])
    elif damage == "truncate":
        entry.write_bytes(entry.read_bytes()[:1000])
    again = load_scorer(SCORER_PATH)
    feats = {f: " ".join(LINES) + f" {f}" for f in fresh.fields}
    assert again.decision(feats) == fresh.decision(feats)
    assert (again.classes, again.meta, again.coef, again.intercept) == (fresh.classes, fresh.meta, fresh.coef,
                                                                        fresh.intercept)
