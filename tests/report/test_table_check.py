"""Tables read back (``report``, ``read_table``): ours pass whatever they hold,
a table forensics batch could not have written is refused with one line
naming the column (issue 32)."""
from __future__ import annotations

import csv
import json
import math

import pandas as pd
import pytest

import forensics
from forensics.errors import InputError
from forensics.report import frames
from forensics.report.frames import incidents_frame, read_table, write_table

from conftest import CORPORA, run_cli
from helpers import one_line_error

SEED1 = CORPORA / "seeds" / "seed1.short.log"


@pytest.fixture(scope="module")
def ours() -> pd.DataFrame:
    return incidents_frame([forensics.classify(SEED1), {"source": "gone.log", "error": "cannot read gone.log"},
                            forensics.classify_text("2300-01-01T00:00:00Z h python3[1]: RuntimeError: far\n",
                                                    name="far.log")])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_our_tables_pass(tmp_path, ours, suffix):
    p = tmp_path / f"t{suffix}"
    write_table(ours, p)
    pd.testing.assert_frame_equal(read_table(p), ours)


def _csv_with(tmp_path, ours, column: str, value: str, row: int = 0):
    p = tmp_path / "t.csv"
    write_table(ours, p)
    rows = list(csv.reader(p.open(newline="", encoding="utf-8")))
    rows[row + 1][rows[0].index(column)] = value
    with p.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return p


@pytest.mark.parametrize("column,value,why", [
    ("confidence", "Infinity", "is not a finite number"),
    ("duration_s", "-inf", "is not a finite number"),
    ("first_lead_s", "soon", "is not a number"),
    ("incident", "1.5", "is not an integer"),
    ("lines", "1e30", "is out of range"),
    ("main", "maybe", "is not True or False"),
    ("start_ts", "yesterday", "is not an ISO 8601 time"),
    ("verdict", "exploded", "is not one of failed"),
    ("early_warnings", '{"lead_seconds": 3}', "is not a JSON list"),
    ("early_warnings", "[1, 2]", "an entry that is not an object"),
    ("early_warnings", '[{"lead_seconds": "soon"}]', "lead_seconds ('soon')"),
    ("early_warnings", "[{", "is not JSON"),
    ("source_bytes", "zz", "is not hex bytes"),
])
def test_a_foreign_csv_value_names_its_column(tmp_path, ours, column, value, why):
    p = _csv_with(tmp_path, ours, column, value)
    with pytest.raises(InputError) as e:
        read_table(p)
    msg = str(e.value)
    assert f"column {column!r}, row 1" in msg and why in msg, msg
    one_line_error(run_cli("report", str(p)), f"column {column!r}")


def test_a_table_a_spreadsheet_saved_back_with_a_byte_order_mark(tmp_path, ours):
    for suffix in (".csv", ".jsonl"):
        p = tmp_path / f"t{suffix}"
        write_table(ours, p)
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
        pd.testing.assert_frame_equal(read_table(p), ours)


def test_a_root_cause_or_phase_newer_than_ours_is_kept(tmp_path, ours):
    p = _csv_with(tmp_path, ours, "root_cause", "gpu.some-label-of-tomorrow")
    assert read_table(p)["root_cause"].iloc[0] == "gpu.some-label-of-tomorrow"


def test_foreign_parquet_and_jsonl(tmp_path, ours):
    typed = ours.copy()
    typed["confidence"] = [math.inf, 0.5, None]
    p = tmp_path / "inf.parquet"
    typed.to_parquet(p)
    with pytest.raises(InputError, match="column 'confidence', row 1: inf is not a finite number"):
        read_table(p)
    texty = ours.astype({"duration_s": "string"}).copy()
    texty.loc[2, "duration_s"] = "long"
    p = tmp_path / "text.parquet"
    texty.to_parquet(p)
    with pytest.raises(InputError, match="column 'duration_s', row 3: 'long' is not a number"):
        read_table(p)
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps({"source": "a", "verdict": "failed", "root_cause": None, "error": None,
                             "early_warnings": "not a list"}) + "\n")
    with pytest.raises(InputError, match="column 'early_warnings', row 1"):
        read_table(p)
    p.write_text('{"source": "a"}\n[1]\n')
    with pytest.raises(InputError, match="line 2 is not a JSON object"):
        read_table(p)


def test_a_table_that_is_not_ours_at_all(tmp_path):
    p = tmp_path / "other.csv"
    p.write_text("name,score\nx,1\n")
    one_line_error(run_cli("report", str(p)), "no 'source', 'verdict', 'root_cause', 'error' columns")
    p.write_text("source,verdict,root_cause,error\na.log,failed,,\nb.log,failed\n")
    one_line_error(run_cli("report", str(p)), "row 2 has 2 fields, the header 4")
    p.write_text('source,verdict,root_cause,error\n"a.log,failed,,\n')
    one_line_error(run_cli("report", str(p)), "not a csv table")
    p.write_bytes(b"source,verdict,root_cause,error\n\xff\xfe,failed,,\n")
    one_line_error(run_cli("report", str(p)), "not UTF-8")
    p.write_text("source,verdict,root_cause,error\na.log,failed,,\n")  # the four columns are enough
    assert run_cli("report", str(p)).returncode == 0
    assert frames.read_table(p)["verdict"].tolist() == ["failed"]
