"""``--signatures`` that hold no signature: a usage error, never the shipped set in their place."""
from __future__ import annotations

import pytest

from conftest import CORPORA, run_cli

SEED1 = CORPORA / "seeds" / "seed1.short.log"


@pytest.mark.parametrize("given", ["json-rules-dir", "empty-yaml"])
@pytest.mark.parametrize("command", [["classify", "--no-classifier"], ["signatures", "test"]])
def test_signatures_that_hold_none_are_a_usage_error(tmp_path, given, command):
    """A folder of rules written as .json (no *.yaml in it), or an empty rule file, loads an empty set. classify
    then answered with the shipped set ('matched a rule' sglang.vendored-...: an empty set is falsy and is
    replaced) and `signatures test` said '0/0 examples pass', exit 0."""
    if given == "json-rules-dir":
        where = tmp_path / "rules"
        where.mkdir()
        (where / "mine.json").write_text('{"id": "my.rule", "match": [{"text": "No module named"}]}\n')
    else:
        where = tmp_path / "mine.yaml"
        where.write_text("")
    args = [*command, "--signatures", str(where)] + ([str(SEED1)] if command[0] == "classify" else [])
    p = run_cli(*args)
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], err)
    assert err.startswith(f"forensics: error: --signatures {where}: no signature") and err.count("\n") == 1, err


def test_the_pipeline_reads_an_empty_set_as_given_not_as_the_shipped_one():
    """An API caller that passes an empty SignatureSet asks for no rules: the seed is then not 'matched a
    rule' (before, `sset or signature_set()` swapped the shipped set in because an empty set is falsy)."""
    from forensics.diagnosis.signatures import SignatureSet
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    res = diagnose_source(Source(str(SEED1), SEED1), sset=SignatureSet([], "empty"), use_classifier=False)
    assert res["signature"] is None
