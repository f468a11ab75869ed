"""DataFrames of events and incidents: documented columns and dtypes."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import forensics
from forensics.errors import InputError
from forensics.report import frames
from forensics.report.frames import EVENT_COLUMNS, INCIDENT_COLUMNS, events_frame, incidents_frame

from conftest import CORPORA

SEED1 = CORPORA / "seeds" / "seed1.short.log"


def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    return {c: str(t) for c, t in df.dtypes.items()}


def test_read_events_columns_and_dtypes():
    df = forensics.read_events(SEED1)
    assert list(df.columns) == list(EVENT_COLUMNS)
    assert _dtypes(df) == EVENT_COLUMNS
    assert len(df) == len(list(forensics.parse(SEED1)))
    # Every column is documented in the module docstring.
    for name in list(EVENT_COLUMNS) + list(INCIDENT_COLUMNS):
        assert f"\n{name} " in frames.__doc__, name


def test_read_events_values():
    df = forensics.read_events(SEED1)
    assert (df["source"] == str(SEED1)).all()
    assert df["ts"].notna().all() and str(df["ts"].dt.tz) == "UTC"
    assert df["line"].is_monotonic_increasing and (df["end_line"] >= df["line"]).all()
    reg = df[df["kind"] == "cuda_graph_registration"]
    assert list(reg["count"]) == [336]
    walk = df[df["kind"] == "package_walk_warning"]
    assert len(walk) == 16 and set(walk["package"]) == {"cutlass.cute.experimental"}
    tb = df[df["kind"] == "traceback"]
    assert (tb["exc_type"] == "ImportError").any()
    assert tb["truncated"].notna().all() and not tb["truncated"].any()
    assert (tb["end_line"] > tb["line"]).any()
    units = df[df["kind"] == "unit_lifecycle"]
    assert "sglang-k26-ddtree.service" in set(units["unit"]) and "started" in set(units["unit_event"])
    markers = df[df["kind"] == "phase_marker"]
    assert markers["phase"].notna().all() and markers["marker"].notna().all()
    assert "warmup" in set(markers["phase"].astype(str)) or len(markers) > 0
    other = df[df["kind"] != "traceback"]
    assert other["truncated"].isna().all() and other["exc_type"].isna().all()


def test_read_events_empty_and_text_inputs_keep_the_schema():
    empty = forensics.read_events("")
    assert len(empty) == 0 and _dtypes(empty) == EVENT_COLUMNS
    text = "INFO 05-30 14:38:02 [api_server.py:1] vLLM API server version 0.9.1\nplain line\n"
    df = forensics.read_events(text)
    assert _dtypes(df) == EVENT_COLUMNS and len(df) == 2
    assert list(df["line"]) == [1, 2]


def test_events_frame_from_parse_dicts():
    evs = list(forensics.parse(SEED1))
    a = events_frame(evs)
    b = events_frame([{**e.to_dict(), "source": e.source} for e in evs])
    assert _dtypes(b) == EVENT_COLUMNS
    pd.testing.assert_frame_equal(a, b)


def test_incidents_frame_from_classify_results():
    res = forensics.classify(SEED1)
    df = incidents_frame(res)
    assert _dtypes(df) == INCIDENT_COLUMNS and len(df) == len(res["incidents"])
    row = df.iloc[0]
    assert row["root_cause"] == res["root_cause"] and bool(row["main"])
    assert row["first_lead_s"] == pytest.approx(103.0)
    both = forensics.classify([SEED1, CORPORA / "seeds" / "seed2.full.log"])
    df2 = incidents_frame(both)
    assert len(df2) == 2 and list(df2["source"]) == sorted(df2["source"])
    assert len(incidents_frame([])) == 0 and _dtypes(incidents_frame([])) == INCIDENT_COLUMNS


def test_error_row():
    df = incidents_frame([{"source": "x.log", "error": "cannot read x.log: Permission denied"}])
    assert len(df) == 1 and df["error"].iloc[0].startswith("cannot read")
    assert df["incident"].isna().all() and df["verdict"].isna().all()
    assert _dtypes(df) == INCIDENT_COLUMNS


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_table_round_trip(tmp_path, suffix):
    df = incidents_frame([forensics.classify(SEED1), {"source": "gone.log", "error": "cannot read gone.log"}])
    path = tmp_path / f"t{suffix}"
    frames.write_table(df, path)
    back = frames.read_table(path)
    pd.testing.assert_frame_equal(df, back)
    if suffix == ".jsonl":
        assert json.loads(path.read_text().splitlines()[-1])["source"] == "gone.log"


def test_unknown_table_suffix():
    with pytest.raises(InputError):
        frames.table_format("x.xlsx")
    with pytest.raises(InputError):
        frames.read_table("x")
