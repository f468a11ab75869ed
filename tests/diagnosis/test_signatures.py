"""Signatures are data: every file validates, every example holds (healthy logs stay quiet: tests/goodlog/test_goodlog.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.diagnosis.examples import run_examples
from forensics.diagnosis.signatures import (event_views, load_signatures, signature_set)
from forensics.errors import SignatureError

from conftest import REPO, run_cli

SIGS = load_signatures()


def test_shipped_set_covers_every_label():
    from forensics.diagnosis.taxonomy import FAILURE_LABELS

    failures = {s.root_cause for s in SIGS.signatures if s.kind == "failure"}
    assert set(FAILURE_LABELS) <= failures
    assert len(SIGS) >= 40
    assert sum(1 for s in SIGS.signatures if s.kind == "precursor") >= 10


@pytest.mark.parametrize("sig", SIGS.signatures, ids=lambda s: s.id)
def test_signature_examples(sig):
    assert sig.examples_match, "every signature documents what it matches"
    from forensics.diagnosis.signatures import SignatureSet

    total, failures = run_examples(SignatureSet([sig], "x"))
    assert not failures, failures


def test_cli_signatures_test_and_list():
    p = run_cli("signatures", "test")
    assert p.returncode == 0, p.stdout.decode()[-2000:]
    p = run_cli("signatures", "list", "--format", "json")
    assert p.returncode == 0 and b"sglang.vendored-flash-attn-cute-missing" in p.stdout


@pytest.mark.parametrize("content,needle", [
    ("id: a.b\ntitle: t\nroot_cause: env.nope\nkind: failure\nmatch: [{text: x}]\nremediation: r\n", "unknown label"),
    ("id: a.b\ntitle: t\nroot_cause: env.module-missing\nkind: failure\nmatch: [{text: '(unclosed'}]\nremediation: r\n", "does not compile"),
    ("id: a.b\ntitle: [unclosed\n", "invalid YAML"),
    ("id: a.b\ntitle: t\nroot_cause: env.module-missing\nkind: failure\nremediation: r\n", "'match'"),
])
def test_broken_signature_file_is_one_line_error(tmp_path, content, needle):
    (tmp_path / "bad.yaml").write_text(content)
    with pytest.raises(SignatureError) as e:
        load_signatures([tmp_path])
    assert "bad.yaml" in str(e.value) and needle in str(e.value)
    p = run_cli("classify", "--signatures", str(tmp_path), str(REPO / "examples" / "sglang-b300-flash-attn-cute.log"))
    assert p.returncode == 2
    err = p.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "bad.yaml" in err and "Traceback" not in err


def test_duplicate_ids_rejected(tmp_path):
    body = "id: a.b\ntitle: t\nroot_cause: env.module-missing\nkind: failure\nmatch: [{text: x}]\nremediation: r\n"
    (tmp_path / "one.yaml").write_text(body)
    (tmp_path / "two.yaml").write_text(body)
    with pytest.raises(SignatureError, match="duplicate id"):
        load_signatures([tmp_path])


def test_cross_matches_are_declared_by_priority():
    """Where one signature's match examples also fire another failure
    signature of a different label, the example's own signature must win."""
    from forensics import parse

    fails = [s for s in SIGS.signatures if s.kind == "failure"]
    problems = []
    for sig in fails:
        for ex in sig.examples_match:
            evs = list(parse(ex + "\n"))
            hits = {s.id: s for e in evs for s, _ in SIGS.match_views(event_views(e), fails)}
            rivals = [s for s in hits.values() if s.root_cause != sig.root_cause and s.priority > sig.priority]
            if rivals:
                problems.append((sig.id, [r.id for r in rivals]))
    assert not problems, problems
