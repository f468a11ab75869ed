"""Goodlog: every signature over the project's healthy logs, with a named list of
known false positives (corpora/goodlog-known.yaml). Replaces the pytest that
skipped without ../shared and let up to 5 hits pass."""
from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from forensics.lab import goodlog

from conftest import REAL, REPO, SHARED, run_python

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB"
READY = "[2025-06-01 12:00:45] The server is fired up and ready to roll!"


def test_goodlog_over_the_repository():
    """The run CI makes: no unknown hit, no stale entry (../shared included when laid beside the checkout)."""
    p = run_python("-m", "forensics.lab.goodlog", timeout=300)
    out = p.stdout.decode()
    assert p.returncode == 0, out[-3000:] + p.stderr.decode()[-1000:]
    summary = out.strip().splitlines()[-1]
    assert "0 unknown, 0 stale" in summary and " 0 healthy logs" not in summary, summary
    if REAL.is_dir():
        assert "0 real)" not in summary, summary
    else:
        assert "corpora-real missing" in out


def test_the_project_healthy_logs_come_from_the_labels():
    names = [lg.name for lg in goodlog.project_logs(REPO)]
    assert "corpora/gpu-early-warning/healthy-vllm-01.log" in names  # labels.csv: verdict ready, no root cause
    assert any(n.startswith("corpora/gpu-pairs/") and n.endswith("-good.log") for n in names)  # pairs.csv good column
    assert not any(n.endswith("-bad.log") or "/seeds/" in n or "/cpu/" in n for n in names)
    assert sum(n.startswith("corpora/generated/") for n in names) >= 100


def _checkout(tmp_path: Path, log: str, known: str) -> Path:
    root = tmp_path / "checkout"
    (root / "corpora" / "mine").mkdir(parents=True)
    (root / "corpora" / "mine" / "labels.csv").write_text(
        "id,root_cause,phase,verdict\nh1,,serving,ready\nf1,gpu.out-of-memory,warmup,failed\n")
    (root / "corpora" / "mine" / "h1.log").write_text(log)
    (root / "corpora" / "mine" / "f1.log").write_text(OOM + "\n")  # a failed log is never scanned
    (root / "corpora" / "goodlog-known.yaml").write_text(textwrap.dedent(known))
    return root


def _run(root: Path) -> tuple[int, list[str]]:
    out = io.StringIO()
    rc = goodlog.run(root, root.parent / "no-shared", root / "corpora" / "goodlog-known.yaml", out=out)
    return rc, out.getvalue().splitlines()


def test_an_unknown_hit_fails_with_one_line(tmp_path):
    root = _checkout(tmp_path, f"{READY}\n{OOM}\n", "known: []\n")
    rc, lines = _run(root)
    assert rc == 1
    hits = [ln for ln in lines if "UNKNOWN HIT" in ln]
    assert len(hits) == 1 and "corpora/mine/h1.log:2" in hits[0] and "out-of-memory" in hits[0], lines
    assert "corpora-real missing" in lines[0]  # the one line about ../shared


def test_a_known_hit_passes_and_a_stale_entry_fails(tmp_path):
    known = """\
        known:
          - signature: {sig}
            file: corpora/mine/*.log
            text: "CUDA out of memory"
            why: the test says so
          - signature: {sig}
            file: corpora/mine/h1.log
            line: 7
            why: nothing is on line 7
          - signature: {sig}
            file: ../shared/corpora-real/healthy/001.log
            why: not judged without ../shared
        """
    sigs = goodlog.load_signatures()
    sig = next(s.id for s, _ in sigs.match_event(next(iter(goodlog.parse(OOM + "\n")))) if s.kind == "failure")
    root = _checkout(tmp_path, f"{READY}\n{OOM}\n", known.format(sig=sig))
    rc, lines = _run(root)
    assert rc == 1
    stale = [ln for ln in lines if "STALE" in ln]
    assert len(stale) == 1 and "entry 2 " in stale[0] and "line 7" in stale[0], lines
    assert not any("UNKNOWN HIT" in ln for ln in lines)
    assert "1 known false-positive hits (3 entries), 0 unknown, 1 stale" in lines[-1]


@pytest.mark.parametrize("known,needle", [
    ("known:\n  - {signature: no.such-signature, file: '*', why: w}\n", "no signature has id"),
    ("known:\n  - {signature: sglang.received-sigquit, file: '*'}\n", "'why' is required"),
    ("known:\n  - {signature: sglang.received-sigquit, file: '*', why: w, lines: 3}\n", "unknown field 'lines'"),
    ("known: [unclosed\n", "invalid YAML"),
    ("- just a list\n", "a list under 'known'"),
])
def test_a_broken_known_list_is_one_line_and_exit_2(tmp_path, known, needle):
    root = _checkout(tmp_path, f"{READY}\n", known)
    p = run_python("-m", "forensics.lab.goodlog", "--root", str(root))
    err = p.stderr.decode().strip()
    assert p.returncode == 2 and len(err.splitlines()) == 1 and needle in err and "Traceback" not in err, err


def test_a_listed_healthy_log_that_is_missing_is_exit_2(tmp_path):
    root = _checkout(tmp_path, f"{READY}\n", "known: []\n")
    (root / "corpora" / "mine" / "h1.log").unlink()
    p = run_python("-m", "forensics.lab.goodlog", "--root", str(root))
    assert p.returncode == 2 and b"h1.log: listed as a healthy log but missing" in p.stderr


def test_shared_defaults_to_beside_the_checkout():
    assert SHARED == REPO.parent / "shared"
    p = run_python("-m", "forensics.lab.goodlog", "--help")
    assert p.returncode == 0 and b"--shared" in p.stdout
