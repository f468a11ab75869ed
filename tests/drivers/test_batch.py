"""forensics batch / forensics report: the incident table over many logs."""
from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter

import pandas as pd
import pytest

import forensics
from forensics.report.frames import INCIDENT_COLUMNS, read_table

from conftest import CORPORA, REPO, run_cli

SEEDS = CORPORA / "seeds"


def _in_process(capsys, *args: str) -> tuple[int, str, str]:
    """Run forensics.cli.main in this process (needed to reach an inproc dask cluster)."""
    from forensics.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _assert_schema(df: pd.DataFrame) -> None:
    assert list(df.columns) == list(INCIDENT_COLUMNS)
    assert {c: str(t) for c, t in df.dtypes.items()} == INCIDENT_COLUMNS


@pytest.fixture(scope="module")
def seeds_parquet(tmp_path_factory):
    out = tmp_path_factory.mktemp("batch") / "seeds.parquet"
    r = run_cli("batch", "corpora/seeds", "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    return out, r


def test_batch_parquet_schema_and_rows_match_classify(seeds_parquet):
    out, r = seeds_parquet
    df = pd.read_parquet(out)
    _assert_schema(df)
    # One row per incident that `forensics classify --format json` reports, file by file.
    c = run_cli("classify", "--format", "json", "corpora/seeds")
    assert c.returncode in (0, 1), c.stderr
    results = [json.loads(ln) for ln in c.stdout.decode().splitlines()]  # one object per input, one per line
    expected = Counter({res["source"]: len(res["incidents"]) for res in results})
    assert len(df) == sum(expected.values())
    assert Counter(df["source"]) == +expected
    # Same answers as classify, and classify's top-level incident is the `main` row.
    for res in results:
        rows = df[df["source"] == res["source"]]
        main = rows[rows["main"].fillna(False)]
        assert len(main) == 1
        assert main["incident"].iloc[0] == res["incident"]
        assert (None if pd.isna(main["root_cause"].iloc[0]) else main["root_cause"].iloc[0]) == res["root_cause"]
        assert main["verdict"].iloc[0] == res["verdict"]
    # Stable order: sorted by source, then incident.
    keys = list(zip(df["source"], df["incident"]))
    assert keys == sorted(keys)
    assert df["error"].isna().all()


def test_batch_values(seeds_parquet):
    df = pd.read_parquet(seeds_parquet[0])
    row = df[df["source"] == "corpora/seeds/seed1.short.log"].iloc[0]
    assert row["verdict"] == "failed" and row["root_cause"] == "env.module-missing"
    assert row["phase"] == "warmup" and row["decided_by"] == "signature"
    assert str(row["start_ts"].tz) == "UTC" and row["end_ts"] > row["start_ts"]
    assert row["duration_s"] == pytest.approx((row["end_ts"] - row["start_ts"]).total_seconds())
    assert row["early_warning_count"] >= 1 and row["first_lead_s"] == pytest.approx(103.0)
    assert "Vendored FlashAttention CUTE" in row["evidence_text"] and row["evidence_line"] > 0
    assert json.loads(row["early_warnings"])[0]["lead_seconds"] == pytest.approx(103.0)


def test_one_line_summary_on_stderr_no_progress_off_terminal(seeds_parquet):
    _, r = seeds_parquet
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1, r.stderr  # no progress bar when stderr is not a terminal
    assert "8 files, 8 incidents, 8 failures, 0 unreadable" in lines[0]
    assert r.stdout == b""


def test_dask_engine_same_table_as_processes(tmp_path, capsys, seeds_parquet):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        out = tmp_path / "dask.parquet"
        rc, _, err = _in_process(capsys, "batch", str(SEEDS), "--out", str(out), "--engine", "dask",
                                 "--scheduler", cluster.scheduler_address)
    assert rc == 0, err
    procs = tmp_path / "procs.parquet"
    rc, _, err = _in_process(capsys, "batch", str(SEEDS), "--out", str(procs), "--jobs", "2")
    assert rc == 0, err
    a, b = pd.read_parquet(procs), pd.read_parquet(out)
    _assert_schema(b)
    assert len(a) == 8
    pd.testing.assert_frame_equal(a, b)


def test_unreadable_file_is_a_row_and_the_run_goes_on(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SEEDS / "seed2.full.log", logs / "a.log")
    (logs / "b.log").symlink_to(tmp_path / "gone.log")  # dangling: cannot be opened
    with gzip.open(logs / "c.log.gz", "wb") as f:  # .gz read transparently
        f.write((SEEDS / "seed1.short.log").read_bytes())
    out = tmp_path / "t.parquet"
    r = run_cli("batch", str(logs), "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "3 files, 2 incidents, 2 failures, 1 unreadable" in r.stderr.decode()
    df = pd.read_parquet(out)
    _assert_schema(df)
    errs = df[df["error"].notna()]
    assert sorted(errs["source"]) == [str(logs / "b.log")]
    assert errs["incident"].isna().all() and errs["verdict"].isna().all()
    ok = df[df["error"].isna()].set_index("source")
    assert ok.loc[str(logs / "c.log.gz"), "root_cause"] == "env.module-missing"
    assert ok.loc[str(logs / "a.log"), "root_cause"] == "toolchain.compiler-missing"


def test_missing_path_or_empty_directory_is_exit_2_before_any_work(tmp_path):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "t.jsonl"
    for bad, why in ((tmp_path / "missing.log", "No such file"), (tmp_path / "empty", "no log files")):
        r = run_cli("batch", str(SEEDS), str(bad), "--out", str(out))
        err = r.stderr.decode().strip()
        assert r.returncode == 2 and len(err.splitlines()) == 1 and why in err, err
        assert not out.exists()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_csv_and_jsonl_outputs(tmp_path, suffix, seeds_parquet):
    out = tmp_path / f"t{suffix}"
    r = run_cli("batch", "corpora/seeds", "--out", str(out), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    if suffix == ".csv":
        raw = pd.read_csv(out)
    else:
        raw = pd.read_json(out, lines=True)
        first = json.loads(out.read_text().splitlines()[0])
        assert first["source"] == "corpora/seeds/seed1.export-input" and first["start_ts"].endswith("+00:00")
    assert list(raw.columns) == list(INCIDENT_COLUMNS) and len(raw) == 8
    back = read_table(out)
    _assert_schema(back)
    pd.testing.assert_frame_equal(back, read_table(seeds_parquet[0]))


def test_unknown_suffix_is_a_usage_error(tmp_path):
    r = run_cli("batch", "corpora/seeds", "--out", str(tmp_path / "t.xlsx"))
    assert r.returncode == 2
    err = r.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "unknown table format" in err[0]
    assert not (tmp_path / "t.xlsx").exists()


def test_summary_and_report(seeds_parquet, tmp_path):
    r = run_cli("batch", "corpora/seeds", "--out", str(tmp_path / "t.jsonl"), "--summary", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode()
    for heading in ("failures by root cause:", "failures by phase:", "most frequent signatures",
                    "early warnings by median lead time"):
        assert heading in text
    assert "env.module-missing" in text and "warmup" in text
    assert "sglang.vendored-flash-attn-cute-missing" in text
    assert "cute-dsl.package-walk-error" in text
    rep = run_cli("report", str(seeds_parquet[0]))
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout.decode().splitlines()[0] == "8 files, 8 incidents, 8 failures, 0 unreadable"
    assert "cute-dsl.package-walk-error" in rep.stdout.decode()
    assert run_cli("report", str(tmp_path / "t.jsonl")).stdout == rep.stdout
    bad = run_cli("report", str(tmp_path / "nope.parquet"))
    assert bad.returncode == 2 and len(bad.stderr.decode().strip().splitlines()) == 1


def test_python_api_batch(tmp_path):
    df = forensics.batch(SEEDS / "seed1.short.log", jobs=1)
    _assert_schema(df)
    assert len(df) == 1 and df["root_cause"].iloc[0] == "env.module-missing"
    # Importing the batch engine (forensics.drivers.batch) must not break forensics.batch (the function).
    import forensics.drivers.batch as batch_module  # noqa: F401

    again = forensics.batch([str(SEEDS / "seed2.full.log"), str(SEEDS / "seed2.tail30.log")], jobs=2)
    assert list(again["source"]) == sorted(again["source"]) and len(again) == 2
    assert again.attrs["files"] == 2


def test_usage_errors():
    from forensics.drivers.batch import run_batch
    from forensics.errors import ForensicsError

    with pytest.raises(ForensicsError):
        run_batch([str(SEEDS)], engine="spark")
    with pytest.raises(ForensicsError):
        run_batch(["-"])
    r = run_cli("batch", "corpora/seeds")
    assert r.returncode == 2  # --out is required
    assert REPO.is_dir()


def test_an_empty_log_keeps_its_row_so_report_counts_every_file(tmp_path):
    """A directory of service logs often holds an empty one (a stderr file nothing was written to). batch
    counted it ('2 files') but wrote no row for it, so `forensics report` on the same table said '1 files':
    the file was lost from the table. Its row has no incident and no verdict, and is no incident in the counts."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SEEDS / "seed1.short.log", logs / "sglang.out.log")
    (logs / "sglang.err.log").write_bytes(b"")
    out = tmp_path / "t.jsonl"
    r = run_cli("batch", str(logs), "--out", str(out), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert "2 files, 1 incidents, 1 failures, 0 unreadable" in r.stderr.decode()
    df = read_table(str(out))
    _assert_schema(df)
    empty = df[df["source"] == str(logs / "sglang.err.log")]
    assert len(empty) == 1 and empty["incident"].isna().all() and empty["verdict"].isna().all()
    assert empty["error"].isna().all() and int(empty["lines"].iloc[0]) == 0
    rep = run_cli("report", str(out))
    assert rep.returncode == 0, rep.stderr
    text = rep.stdout.decode()
    assert text.splitlines()[0] == "2 files, 1 incidents, 1 failures, 0 unreadable"
    assert "no-failure" not in text  # the empty log is not counted as a verdict
