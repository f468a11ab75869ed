"""The corpora: layout, provenance, determinism of the generator."""
from __future__ import annotations

import csv
import subprocess
import sys

from conftest import CORPORA, REPO, run_cli

COLUMNS = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note"]


def test_every_collection_has_labels_readme_and_provenance():
    for d in sorted(p for p in CORPORA.iterdir() if p.is_dir() and (p / "labels.csv").exists()):
        rows = list(csv.DictReader(open(d / "labels.csv", encoding="utf-8")))
        assert rows, d
        assert set(COLUMNS) <= set(rows[0]), d
        assert (d / "README.md").exists(), d
        for r in rows:
            assert r["provenance"] in ("reproduced", "generated"), (d, r["id"])
            log = d / f"{r['id']}.log"
            assert log.exists() or any(d.glob(f"{r['id']}.*")), (d, r["id"])
            if r.get("fatal_substring") and log.exists() and r["provenance"] == "reproduced":
                assert r["fatal_substring"] in log.read_text(errors="replace"), (d, r["id"])


def test_reproduced_labels_cover_twelve_labels_five_on_gpu():
    labels = set()
    gpu = set()
    for name in ("cpu", "gpu"):
        for r in csv.DictReader(open(CORPORA / name / "labels.csv", encoding="utf-8")):
            labels.add(r["root_cause"])
            if name == "gpu":
                gpu.add(r["root_cause"])
    assert len(labels) >= 12 and len(gpu) >= 5


def test_generated_corpus_is_big_enough_and_split():
    rows = list(csv.DictReader(open(CORPORA / "generated" / "labels.csv", encoding="utf-8")))
    from collections import Counter

    per = Counter(r["root_cause"] for r in rows if r["root_cause"])
    assert len(per) == 16 and min(per.values()) >= 40
    assert sum(1 for r in rows if not r["root_cause"]) >= 100
    assert {r["split"] for r in rows} == {"train", "test"}


def test_generator_is_deterministic_and_matches_the_committed_corpus(tmp_path):
    out = tmp_path / "gen"
    p = run_cli("corpus", "generate", "--seed", "7", "--count", "40", "--healthy", "110", "--out", str(out), timeout=300)
    assert p.returncode == 0, p.stderr
    committed = CORPORA / "generated"
    for f in sorted(committed.glob("*.log"))[::37] + [committed / "labels.csv"]:
        assert (out / f.name).read_bytes() == f.read_bytes(), f.name
