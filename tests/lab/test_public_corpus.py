"""corpora/public: every row checked against its log (issue 26), the checker's own
behaviour on bad rows, and the blind-first ledger's shape."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from conftest import CORPORA, REAL, SHARED_MISSING
from forensics.lab.public_corpus import batch_dirs, check_batches, check_row, server_family

PUBLIC = CORPORA / "public"
SHARED = REAL.parent


def _row(**kw: str) -> dict[str, str]:
    base = {"id": "001", "verdict": "failed", "root_cause": "net.port-in-use", "phase": "launch",
            "early_warning_substring": "", "fatal_substring": "[Errno 98] Address already in use",
            "url": "https://github.com/o/r/issues/1", "note": "n", "server": "vllm-rocm", "release": "",
            "shape": "docker", "excerpt": "excerpt"}
    base.update(kw)
    return base


LOG = "INFO warming up\nWARNING port 8000 may be taken\nOSError: [Errno 98] Address already in use\n"


def test_a_good_row_passes():
    assert check_row(_row(early_warning_substring="may be taken"), LOG, "t") == []


@pytest.mark.parametrize("bad, needle", [
    ({"root_cause": "gpu.exploded"}, "not a taxonomy label"),
    ({"phase": "booting"}, "not a taxonomy phase"),
    ({"verdict": "fine"}, "verdict"),
    ({"fatal_substring": "Address in use"}, "fatal_substring not in the log"),
    ({"early_warning_substring": "[Errno 98]"}, "not before the fatal line"),
    ({"early_warning_substring": "never printed"}, "early_warning_substring not in the log"),
    ({"verdict": "ready", "root_cause": "", "fatal_substring": "x"}, "healthy log with a root_cause"),
    ({"server": "my-server"}, "server"),
    ({"shape": "fax"}, "shape"),
    ({"excerpt": "some"}, "excerpt"),
])
def test_each_kind_of_bad_row_is_named(bad, needle):
    problems = check_row(_row(**bad), LOG, "t")
    assert any(needle in p.what for p in problems), problems


def test_server_family_folds_accelerator_variants():
    assert server_family("vllm-rocm") == "vllm" == server_family("vllm")
    assert server_family("llm-d") == "llm-d" and server_family("tensorrt-llm") == "tensorrt-llm"
    assert server_family("other-gpustack") == "other-gpustack"


@pytest.mark.skipif(not batch_dirs(PUBLIC), reason="corpora/public has no batch yet")
def test_every_public_row_holds_against_its_log_and_no_url_is_kept_aside():
    if not SHARED.joinpath("excluded_sources.py").is_file():
        pytest.skip(SHARED_MISSING)
    problems = check_batches([PUBLIC], SHARED)
    assert problems == [], "\n".join(map(str, problems[:20]))


@pytest.mark.skipif(not batch_dirs(PUBLIC), reason="corpora/public has no batch yet")
def test_public_rows_are_checked_without_shared_too():
    # The url check needs ../shared; every other check runs on a bare clone.
    problems = [p for p in check_batches([PUBLIC], None)]
    assert problems == [], "\n".join(map(str, problems[:20]))


def test_no_public_log_is_a_copy_of_a_corpora_real_log():
    if not REAL.is_dir():
        pytest.skip(SHARED_MISSING)
    real = [p.read_bytes() for p in REAL.glob("*/*.log")]
    ours = [p.read_bytes() for d in batch_dirs(PUBLIC) for p in d.glob("*.log")]
    names = [p for d in batch_dirs(PUBLIC) for p in d.glob("*.log")]
    # the same log, or one cut from the other (an excerpt of the same paste)
    copies = [str(n) for n, b in zip(names, ours) if any(b == r or (len(b) > 200 and (b in r or r in b)) for r in real)]
    assert copies == []


def test_ledger_rows_are_well_formed_and_start_with_batch_0():
    text = (PUBLIC / "LEDGER.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if re.match(r"^\| 20\d\d-", line)]
    assert rows and "| 0:" in rows[0]
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 11, line
        assert re.fullmatch(r"[0-9a-f]{7,40}", cells[1]), line
    batches = [re.match(r"(\d+)", c.strip("|").split("|")[2].strip()).group(1) for c in rows[1:]]
    assert len(batches) == len(set(batches)), "a batch has two first-look rows"
    for b in batches:  # each batch row has its batch, with its first look kept beside it
        d = PUBLIC / f"batch-{int(b):02d}"
        assert (d / "labels.csv").is_file() and (d / "first-look.json").is_file(), d


def test_labels_csv_columns_are_the_documented_ones():
    for d in batch_dirs(PUBLIC):
        with open(d / "labels.csv", newline="", encoding="utf-8") as f:
            head = next(csv.reader(f))
        assert head == ["id", "verdict", "root_cause", "phase", "early_warning_substring", "fatal_substring",
                        "url", "note", "server", "release", "shape", "excerpt"], d
