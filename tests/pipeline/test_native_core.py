"""The compiled per-line core and the pure-Python modules give the same
answers (issue 29): every log of ``corpora/*``, every real set and seed
(``bench/answers.py``'s walk), its full ``classify --format json`` answer and
its ``parse`` NDJSON, once through each path, in two processes (the compiled
one is the session's shared reference, ``tests/reference_answers.py``).

The compiled core is there after ``pip install .`` or ``python -m
forensics.compile build`` (``.ci/run`` builds it); without it the comparison
is skipped, except under CI, where a missing build is a failure."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import reference_answers as reference
from conftest import REPO

from forensics import native

CI = os.environ.get("CI") == "true"


def _run_pure_answers(tmp_path) -> tuple[dict[str, str], str]:
    out = tmp_path / "pure.json"
    env = {**os.environ, native.PURE_ENV: "1", "PYTHONHASHSEED": reference.HASH_SEED}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, str(REPO / "bench" / "answers.py"), "--events", "--out", str(out)],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=1200)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(out.read_text()), p.stderr


@pytest.mark.skipif(native.pure_forced(), reason="the suite's pure-Python pass (the compiled pass compares both)")
def test_compiled_and_pure_answers_are_identical(tmp_path, reference_answers):
    """The compiled side is the session's reference answers (computed in their
    own process, under the same hash seed): only the pure path runs here."""
    if not (native.PACKAGE_DIR / native.STAMP).exists():
        if CI:
            pytest.fail(".ci/run builds the compiled core (python -m forensics.compile build): it is missing")
        pytest.skip("the compiled core is not built here (python -m forensics.compile build)")
    pure, said_pure = _run_pure_answers(tmp_path)
    assert "per-line core: python" in said_pure, said_pure
    ref = reference_answers()
    # a stale or missing build would compare pure with pure
    assert ref["meta"]["core"] == "compiled", ref["meta"]
    full, events, _ = reference.split(ref)
    compiled = {**full, **{f"events:{k}": v for k, v in events.items()}}
    assert len(compiled) > 900 and set(compiled) == set(pure)
    assert any(k.startswith("events:") for k in compiled)
    differ = sorted(k for k in compiled if compiled[k] != pure[k])
    assert not differ, (f"{len(differ)} logs answer differently compiled and pure: {differ[:20]}"
                        + reference.explain(differ, {native.PURE_ENV: "1"}))


def test_the_fallback_is_forced_by_the_environment():
    env = {**os.environ, native.PURE_ENV: "1", "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "forensics.compile", "status"], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("per-line core: python (FORENSICS_PURE_PYTHON=1)"), p.stdout
    code = ("import forensics.events.parser as m, forensics.envelope.journald as j; "
            "print(m.__file__, j.__file__)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert p.returncode == 0 and all(f.endswith(".py") for f in p.stdout.split()), p.stdout + p.stderr


def test_a_stale_build_never_runs(tmp_path, monkeypatch):
    """An edited source (its digest no longer the one compiled) sends every
    compiled module back to Python: they call each other directly."""
    pkg = tmp_path / "forensics"
    for m in native.COMPILED_MODULES:
        src = native.source_path(m)
        dest = native.source_path(m, pkg)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
    (pkg / native.STAMP).write_text(native.stamp_text(pkg))
    assert (pkg / native.STAMP).read_text() == native.stamp_text(pkg)
    monkeypatch.setattr(native, "PACKAGE_DIR", pkg)
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    assert native._why_pure() is None
    edited = native.source_path(native.COMPILED_MODULES[1], pkg)
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert "sources changed" in (native._why_pure() or "")
    (pkg / native.STAMP).unlink()
    assert "not compiled" in (native._why_pure() or "")


def test_what_live_readers_fork_copies_with_its_state():
    """``forensics watch`` forks the parser and the lifetime builder at every
    pause (pipeline.fork_parser, copy.copy): a class mypyc made native could
    not be copied (a copy.copy of one called its __init__ without arguments),
    so these stay Python classes in the compiled core. Holds on either path."""
    import copy

    from forensics.envelope.record import Record
    from forensics.events.parser import EventParser
    from forensics.incidents.lifetimes import IncidentBuilder
    from forensics.pipeline import fork_parser

    p = EventParser("live.log")
    for n, text in enumerate(["Traceback (most recent call last):", '  File "x.py", line 1, in <module>'], 1):
        p.feed(Record(n, text, None, "h", "python3", 7))
    assert p.tb.open
    q = fork_parser(p)
    assert q.source == "live.log" and q.tb.open.keys() == p.tb.open.keys() and q.tb.open is not p.tb.open
    done = q.finish()
    assert [e.kind for e in done] == ["traceback"] and p.tb.open  # the fork closed its copy only
    b = IncidentBuilder("live.log")
    c = copy.copy(b)
    assert c.source == "live.log" and c.count == b.count
