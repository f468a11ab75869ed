"""Compiled ``re`` programs from the start-up cache (``forensics.re_cache``)
build the very pattern objects ``re`` builds, and a damaged cache is a miss."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forensics import re_cache
from cache_entries import DAMAGES, damage

ROOT = Path(__file__).resolve().parents[2]
_RUN = ("import re, forensics, forensics.re_cache as c; from re import _compiler; "
        "import forensics.diagnosis.phase_infer, forensics.diagnosis.evidence, forensics.diagnosis.remedies; "
        "print(c._new, getattr(_compiler.compile, '_forensics', False))")


def _run(cache: Path) -> str:
    env = {**os.environ, "FORENSICS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), "FORENSICS_RE_CACHE": "on"}
    return subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, check=True,
                          timeout=120).stdout.split()


def test_second_start_reads_the_table(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    new, on = _run(cache)
    assert on == "True" and int(new) > 50  # recorded
    assert list(cache.glob("re-*.json"))
    assert _run(cache) == ["0", "True"]  # every pattern from the table


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_table_is_a_miss(tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    _run(cache)
    (entry,) = cache.glob("re-*.json")
    damage(entry, how)
    new, on = _run(cache)
    assert int(new) > 50 and on == "True"  # compiled by re again


def test_recorded_programs_build_the_same_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry the package's own imports record, rebuilt from the table,
    equals ``re``'s own compile (same pattern, flags, program, groups)."""
    cache = tmp_path / "cache"
    _run(cache)
    import marshal
    from array import array
    from re import _compiler

    from forensics import cache as fcache

    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(cache))
    table = marshal.loads(fcache.read_entry(re_cache.KIND, re_cache._key()))
    assert len(table) > 50
    for (p, flags), (final, code, groups, groupindex, indexgroup) in table.items():
        built = _compiler._sre.compile(p, final, array("I", code).tolist(), groups, groupindex, indexgroup)
        parsed = _compiler._parser.parse(p, flags)
        want = re._compiler.compile(p, flags) if not getattr(_compiler.compile, "_forensics", False) else None
        want = want or _compiler._sre.compile(p, flags | parsed.state.flags, _compiler._code(parsed, flags),
                                              parsed.state.groups - 1, parsed.state.groupdict,
                                              _index_groups(parsed))
        assert built == want and built.groupindex == want.groupindex and built.groups == want.groups, p
        assert built.pattern == p and built.flags == want.flags


def _index_groups(parsed):  # type: ignore[no-untyped-def]
    out = [None] * parsed.state.groups
    for k, i in parsed.state.groupdict.items():
        out[i] = k
    return tuple(out)


def test_a_program_importing_forensics_keeps_its_own_re(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FORENSICS_RE_CACHE"}
    env.update(FORENSICS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out == ["0", "False"]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*re*"))


def test_the_forensics_command_uses_the_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FORENSICS_RE_CACHE"}
    env.update(FORENSICS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    code = "import sys; sys.argv[0] = '/usr/bin/forensics'; " + _RUN
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out[1] == "True"


_WHOSE = ("import io, re, tokenize, forensics, forensics.re_cache as c; "
          "list(tokenize.generate_tokens(io.StringIO('x = 1\\n').readline)); "
          "exec(\"import re; re.compile('zz-theirs-[0-9]+')\", {'__name__': 'somebody.else'}); "
          "exec(\"import re; re.compile('zz-ours-[0-9]+')\", {'__name__': 'forensics.somewhere'}); "
          "keys = [p for p, _f in c._table]; "
          "print(tokenize.PseudoToken in keys, 'zz-theirs-[0-9]+' in keys, 'zz-ours-[0-9]+' in keys)")


def test_only_our_patterns_are_recorded(tmp_path: Path) -> None:
    """tokenize's pattern differs in every process (a set joined in hash order) and other
    programs' patterns are not ours: neither is recorded, to be read back at every start."""
    env = {**os.environ, "FORENSICS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT),
           "FORENSICS_RE_CACHE": "on"}
    out = subprocess.run([sys.executable, "-c", _WHOSE], env=env, capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out == ["False", "False", "True"]
