"""A text report diagnoses in full only the lifetimes it shows (issue 14):
its text must be the very text of the full diagnosis, on every corpus log,
every real set and crash loops of every length around the listed count."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from forensics.diagnosis.signatures import signature_set
from forensics.ingest.sources import Source
from forensics.pipeline import diagnose_source, load_classifier
from forensics.report.shown import LISTED, ShownLifetimes
from forensics.report.text import render_text

from conftest import REPO, run_cli

sys.path.insert(0, str(REPO / "bench"))
import answers  # noqa: E402  (bench/answers.py: every corpus log, real set and seed)
import crashloop  # noqa: E402  (bench/crashloop.py: the seeded crash-loop journal)


@pytest.fixture(scope="module")
def stages():
    return signature_set(), load_classifier(True)


def _texts(path: Path, stages) -> tuple[str, str]:
    sset, clf = stages
    full = diagnose_source(Source(str(path), path), sset=sset, classifier=clf, spool=True)
    shown = diagnose_source(Source(str(path), path), sset=sset, classifier=clf, shown_only=True)
    assert isinstance(shown["incidents"], ShownLifetimes)
    return render_text(full), render_text(shown)


def test_same_text_on_every_corpus_log_real_set_and_seed(stages):
    logs = list(answers.corpus_logs())
    assert len(logs) > 900
    differ = [key for key, path in logs if (lambda t: t[0] != t[1])(_texts(path, stages))]
    assert not differ, differ[:20]


@pytest.mark.parametrize("lifetimes,seed", [(1, 3), (LISTED - 1, 5), (LISTED, 7), (LISTED + 1, 11),
                                            (LISTED + 2, 13), (40, 17), (300, 11)])
def test_same_text_on_crash_loops(tmp_path, stages, lifetimes, seed):
    log = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=lifetimes, seed=seed)
    log.write_bytes(buf.getvalue())
    full, shown = _texts(log, stages)
    assert full == shown
    assert "FAILED" in full or "READY" in full or "NO-FAILURE" in full


def test_the_cli_text_report_counts_every_lifetime_and_json_lists_each_in_full(tmp_path):
    import json

    log = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=30, seed=11)
    log.write_bytes(buf.getvalue())
    doc = json.loads(run_cli("classify", "--format", "json", str(log)).stdout)
    n = len(doc["incidents"])
    assert n >= 30 and all(i["verdict"] and "evidence" in i for i in doc["incidents"])
    text = run_cli("classify", str(log)).stdout.decode()
    assert f"incident {doc['incident'] + 1} of {n} process lifetimes" in text
    assert f"… {n - LISTED} more" in text


def test_a_lifetime_the_report_did_not_keep_is_refused_not_invented(tmp_path, stages):
    log = tmp_path / "loop.log"
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=LISTED + 6, seed=11)
    log.write_bytes(buf.getvalue())
    sset, clf = stages
    incs = diagnose_source(Source(str(log), log), sset=sset, classifier=clf, shown_only=True)["incidents"]
    assert len(incs) >= LISTED + 6 and len(incs[:LISTED]) == LISTED
    with pytest.raises(IndexError):
        incs[LISTED]  # neither listed nor the top-level one (the loop's last lifetime is)
    with pytest.raises(TypeError):
        list(incs)


def _loop_bytes(lifetimes: int, seed: int) -> bytes:
    buf = io.BytesIO()
    crashloop.generate(buf, lifetimes=lifetimes, seed=seed)
    return buf.getvalue()


@pytest.mark.parametrize("seed", [3, 11, 17])
def test_a_last_lifetime_that_failed_without_an_exit_is_the_top_level(tmp_path, stages, seed):
    # systemd's exit lines cut off the end: only the lifetime's own lines say
    # it failed, so the waiting hook must match them (diagnosis.deferred).
    data = _loop_bytes(LISTED + 3, seed)
    cut = data.rfind(b"Main process exited")
    log = tmp_path / "loop.log"
    log.write_bytes(data[: data.rfind(b"\n", 0, cut) + 1])
    full, shown = _texts(log, stages)
    assert full == shown
    first = full.splitlines()[0]
    if "FAILED" in first:
        n = full.split(" process lifetimes")[0].rsplit(" of ", 1)[1]
        assert f"incident {n} of {n} process lifetimes" in full


@pytest.mark.parametrize("lifetimes,seed", [(40, 17), (60, 5)])
def test_same_text_when_waiting_lifetimes_catch_up_every_few_events(tmp_path, stages, monkeypatch, lifetimes, seed):
    from forensics.diagnosis import deferred

    monkeypatch.setattr(deferred, "MAX_PENDING", 3)
    log = tmp_path / "loop.log"
    log.write_bytes(_loop_bytes(lifetimes, seed))
    full, shown = _texts(log, stages)
    assert full == shown
