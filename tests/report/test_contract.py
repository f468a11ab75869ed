"""The JSON contract: one shape whatever the number of inputs, every key
present, and the shipped JSON Schema validating every output of classify
(every corpus, shipped and real), watch --format json and batch --out x.jsonl.
The README's contract is checked against the schema."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import CORPORA, REAL, REPO, needs_real, run_cli
from forensics.report.contract import SCHEMA_PATH, SCHEMA_VERSION, schema

SEEDS = CORPORA / "seeds"


def validator(definition: str | None = None) -> jsonschema.Draft202012Validator:
    root = schema()
    jsonschema.Draft202012Validator.check_schema(root)
    target = root if definition is None else {"$ref": f"#/$defs/{definition}", "$defs": root["$defs"]}
    return jsonschema.Draft202012Validator(target)


def assert_valid(doc: dict, definition: str | None = None) -> None:
    errors = sorted(validator(definition).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [(list(e.path), e.message[:200]) for e in errors[:5]]


def _classify_all(dirs: list[Path]) -> list[dict]:
    from forensics.pipeline import diagnose_source, load_classifier
    from forensics.diagnosis.signatures import signature_set
    from forensics.ingest.sources import expand_paths

    sset, clf = signature_set(), load_classifier(True)
    out = []
    for d in dirs:
        for src in expand_paths([str(d)]):
            # Through JSON, as printed: datetimes and tuples become what a consumer sees.
            out.append(json.loads(json.dumps(diagnose_source(src, sset=sset, classifier=clf), default=str)))
    return out


def test_the_schema_is_shipped_and_rejects_what_breaks_the_contract():
    assert SCHEMA_PATH.is_file() and SCHEMA_PATH.parent.name == "schema"
    (res,) = _classify_all([SEEDS / "seed1.short.log"])
    assert_valid(res)
    v = validator()
    for broken in (
        {k: v for k, v in res.items() if k != "classifier"},  # a key left out
        {**res, "schema_version": 2},
        {**res, "verdict": "exploded"},
        {**res, "evidence": [{"line": 3, "text": "x"}]},  # evidence without its role
        {**res, "stats": {**res["stats"], "lines": -1}},
    ):
        assert not v.is_valid(broken)


def test_every_shipped_corpus_validates():
    from forensics.ingest.sources import is_log_name

    # (corpora/public holds only its README in the repository: its logs are laid beside it)
    dirs = sorted(p for p in CORPORA.iterdir() if p.is_dir() and p.name != "reproduce"
                  and any(f.is_file() and is_log_name(f.name) for f in p.rglob("*")))
    results = _classify_all(dirs)
    assert len(results) > 900
    v = validator()
    bad = [(r["source"], e.message[:160]) for r in results for e in v.iter_errors(r)]
    assert not bad, bad[:10]
    assert {r["schema_version"] for r in results} == {SCHEMA_VERSION}
    # every key always present: the same top-level keys for every input, failed or not
    assert len({tuple(sorted(r)) for r in results}) == 1


@needs_real
def test_every_real_corpus_validates():
    results = _classify_all(sorted(p for p in REAL.iterdir() if p.is_dir()))
    assert len(results) >= 90
    v = validator()
    bad = [(r["source"], e.message[:160]) for r in results for e in v.iter_errors(r)]
    assert not bad, bad[:10]


def test_json_is_one_object_per_input_one_per_line(tmp_path):
    (tmp_path / "empty").write_text("")
    for args, n in (([str(SEEDS / "seed1.short.log")], 1),
                    ([str(SEEDS / "seed1.short.log"), str(SEEDS / "seed2.full.log")], 2),
                    ([str(tmp_path / "empty")], 1)):
        for fmt in ("json", "ndjson"):
            proc = run_cli("classify", "--format", fmt, *args)
            lines = proc.stdout.decode().splitlines()
            assert len(lines) == n, (args, fmt, proc.stderr)
            for ln in lines:
                assert_valid(json.loads(ln))
    empty = json.loads(run_cli("classify", "--format", "json", str(tmp_path / "empty")).stdout)
    assert empty["verdict"] == "no-failure" and empty["incident"] is None and empty["classifier"] is None


def _watch(path: Path, *args: str) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "forensics", "watch", "--format", "json", "--stall-timeout", "5",
                           *args], stdin=path.open("rb"), capture_output=True, timeout=120, cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    return [json.loads(ln) for ln in proc.stdout.decode().splitlines()]


def test_watch_json_events_validate():
    # (the seeds' package-walk warning is also printed by healthy start-ups, so
    # watch no longer announces it live; a GPU capture supplies a live one)
    logs = sorted(SEEDS.glob("*.log")) + [CORPORA / "journald" / "fixture.json.log",
                                          CORPORA / "journald" / "fixture.short.log",
                                          CORPORA / "gpu-early-warning" / "gpu-ew-nccl-comm-id.log"]
    seen: set[str] = set()
    for log in logs:
        for extra in ((), ("--until", "failure")):
            events = _watch(log, *extra)
            assert events, log
            for ev in events:
                assert_valid(ev, "watch_event")
                seen.add(ev["event"])
    assert {"phase", "early_warning", "failure"} <= seen, seen
    # a failure_update (the watch helper's) has the shape of failure
    fail = next(ev for ev in _watch(SEEDS / "seed1.short.log") if ev["event"] == "failure")
    assert_valid({**fail, "event": "failure_update"}, "watch_event")
    assert not validator("watch_event").is_valid({"event": "failure_update", "elapsed_s": 1.0})


def test_batch_jsonl_rows_validate(tmp_path):
    from forensics.report.frames import INCIDENT_COLUMNS

    out = tmp_path / "t.jsonl"
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "gone.log").symlink_to(tmp_path / "nothing")  # an error row too
    proc = run_cli("batch", str(SEEDS), str(CORPORA / "journald"), str(CORPORA / "cpu"), str(logs),
                   "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert len(rows) > 80 and any(r["error"] for r in rows)
    for r in rows:
        assert_valid(r, "incident_row")
    # the schema names exactly the table's columns
    assert set(schema()["$defs"]["incident_row"]["required"]) == set(INCIDENT_COLUMNS)


def test_every_diff_document_of_the_gpu_pairs_matches_the_schema():
    import csv

    import forensics

    v = validator("diff")
    rows = list(csv.DictReader((REPO / "corpora" / "gpu-pairs" / "pairs.csv").open()))
    assert len(rows) >= 20
    for row in rows:
        good, bad = (REPO / "corpora" / "gpu-pairs" / row[k] for k in ("good", "bad"))
        doc = forensics.diff(good, bad)
        errors = [e.message for e in v.iter_errors(doc)]
        assert not errors, (row["id"], errors[:3])
        assert doc["schema_version"] == SCHEMA_VERSION
    # and the schema is not a blank cheque
    broken = {**doc, "exit": 7}
    broken.pop("new_in_bad")
    assert len(list(v.iter_errors(broken))) == 2


def _readme_contract() -> dict:
    text = (REPO / "README.md").read_text()
    m = re.search(r"### `classify --format json` \(contract\).*?```json\n(.*?)```", text, re.S)
    assert m, "README lost its contract section"
    return json.loads(m.group(1))


def test_readme_contract_matches_the_schema():
    doc = _readme_contract()
    defs = schema()["$defs"]
    top = set(defs["result"]["required"]) | set(defs["diagnosis"]["required"])
    assert set(doc) == top, (set(doc) ^ top)
    for key, d in (("evidence", "evidence"), ("early_warnings", "early_warning")):
        for item in doc[key]:
            assert set(item) == set(defs[d]["required"]), (key, set(item) ^ set(defs[d]["required"]))
    assert set(doc["stats"]) <= set(defs["stats"]["properties"])
    assert set(doc["versions"]) == set(defs["versions"]["required"])
    assert set(doc["classifier"] or {}) <= set(defs["classifier"]["properties"])
    inc_keys = set(doc["incidents"][0]) - {"..."}
    assert inc_keys <= set(defs["incident"]["properties"]) | set(defs["diagnosis"]["properties"])
    assert doc["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize("path", sorted(SEEDS.glob("*.log"))[:1])
def test_the_readme_example_is_what_classify_prints(path):
    """Shape, not values: every key of the README's object is in a real output."""
    doc = _readme_contract()
    (res,) = _classify_all([REPO / "examples" / "sglang-b300-flash-attn-cute.log"])
    assert set(doc) == set(res)
    assert res["root_cause"] == doc["root_cause"] and res["signature"] == doc["signature"]
