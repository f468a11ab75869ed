from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL = SHARED / "corpora-real"
CORPORA = REPO / "corpora"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def run_python(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python ARGS`` of this checkout in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, *args], input=input, capture_output=True,
                          timeout=timeout, env=env, cwd=REPO)


def run_cli(*args: str, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (what users run)."""
    return run_python("-m", "forensics", *args, input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session")
def reference_answers(tmp_path_factory, pytestconfig):
    """A callable giving the normal path's answers of every corpus log
    (``tests/reference_answers.py``): computed once per session in the
    background from the first test that asks, shared by every xdist worker."""
    import reference_answers as R

    where = tmp_path_factory.getbasetemp()
    # xdist's own mark of a worker, not PYTEST_XDIST_WORKER: a pytest started from a worker inherits
    # that variable, and its basetemp's parent is then pytest-of-<user>, shared by every session (an
    # earlier session's reference there would be read as this one's).
    if hasattr(pytestconfig, "workerinput"):
        where = where.parent  # the session's folder, above each worker's own
    R.start(where)
    return lambda: R.wait(where)


SHARED_MISSING = (f"needs ../shared/corpora-real (the real labelled logs, not in the repository): "
                  f"lay shared/ beside the checkout ({REAL} is absent)")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=SHARED_MISSING)

# Modules that quietly leave out their real-corpus cases when ../shared is absent
# (a parametrize list built from a glob): named in the one summary line.
_WITHOUT_REAL: set[str] = set()


def shared_logs(folder: str, pattern: str = "*.log") -> list[Path]:
    """The files of one folder of ../shared (e.g. "corpora-real/healthy"), sorted;
    [] when it is absent, and then the caller is named in the summary line."""
    where = SHARED / folder
    if not where.is_dir():
        _WITHOUT_REAL.add(Path(sys._getframe(1).f_code.co_filename).name)
        return []
    return sorted(where.glob(pattern))


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI a missing ../shared must fail the run, not skip tests quietly.
    if IN_CI and not REAL.is_dir():
        pytest.exit(f"CI: {SHARED_MISSING}", returncode=2)


def shared_missing_line(skipped: int, without: list[str]) -> str | None:
    """The one line a run without ../shared prints (None when nothing was left out)."""
    if not skipped and not without:
        return None
    also = f"; {', '.join(without)} ran without their real-corpus cases" if without else ""
    return (f"../shared/corpora-real missing: {skipped} real-corpus tests not run{also} "
            f"(lay shared/ beside the checkout; in CI this fails)")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SHARED_MISSING in str(r.longrepr)]
    line = shared_missing_line(len(skipped), sorted(_WITHOUT_REAL))
    if line:
        terminalreporter.write_line(line, yellow=True, bold=True)


# The suite's longest tests, seconds each (pytest --durations on the 2-core machine, compiled core).
# Under `-n 2 --dist worksteal` each worker is first handed one contiguous share of the collection
# (xdist splits it in order), then steals from the other's tail: in collection order the longest
# tests sat together in a few modules, so one worker could end alone on them. Here they are dealt
# out over the shares, longest first, each to the share with the least so far, at its front.
LONGEST = {
    "tests/diagnosis/test_matching_engine.py::test_both_engines_give_identical_answers_on_every_corpus_and_real_set":
        130,
    "tests/pipeline/test_shown_lifetimes.py::test_same_text_on_every_corpus_log_real_set_and_seed": 123,
    "tests/diagnosis/test_guarded.py::test_ascii_sets_find_what_each_regex_finds": 121,
    "tests/pipeline/test_native_core.py::test_compiled_and_pure_answers_are_identical": 100,
    "tests/report/test_contract.py::test_every_shipped_corpus_validates": 98,
    "tests/robustness/test_hash_seed.py::test_every_answer_is_the_same_under_two_hash_seeds": 80,
    "tests/report/test_html.py::test_batch_page_over_every_corpus_and_real_set_counts_equal_the_text_report": 77,
    "tests/diagnosis/test_deferred.py::test_same_hits_notes_and_boundaries_on_every_corpus_log": 67,
    "tests/diagnosis/test_classifier.py::test_retraining_reproduces_the_shipped_model": 67,
}
# Only waits for the session's reference answers (tests/reference_answers.py): run it when they are done.
RUN_LAST = ("tests/pipeline/test_answer_digests.py::test_every_answer_is_the_pinned_one",)


def _shares(n: int, workers: int) -> list[int]:
    """The sizes of xdist worksteal's first hand-out (each idle worker: what is left // workers left)."""
    sizes = []
    for i in range(workers):
        sizes.append((n - sum(sizes)) // (workers - i))
    return sizes


def pytest_collection_modifyitems(session, config, items) -> None:  # type: ignore[no-untyped-def]
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    long = sorted((it for it in items if it.nodeid in LONGEST), key=lambda it: -LONGEST[it.nodeid])
    last = [it for it in items if it.nodeid in RUN_LAST]
    rest = [it for it in items if it.nodeid not in LONGEST and it.nodeid not in RUN_LAST]
    sizes = _shares(len(items), workers)
    fronts: list[list] = [[] for _ in sizes]
    load = [0.0] * len(sizes)
    for it in long:
        j = min(range(len(sizes)), key=lambda k: (load[k], k))
        fronts[j].append(it)
        load[j] += LONGEST[it.nodeid]
    if any(len(f) > s for f, s in zip(fronts, sizes)) or len(last) > sizes[-1] - len(fronts[-1]):
        items[:] = long + rest + last  # too few items to deal out: longest first all the same
        return
    out: list = []
    for j, (front, size) in enumerate(zip(fronts, sizes)):
        take = size - len(front) - (len(last) if j == len(sizes) - 1 else 0)
        out += front + rest[:take]
        rest = rest[take:]
    items[:] = out + rest + last
