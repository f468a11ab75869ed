"""The dataclasses' generated methods from the start-up cache
(``forensics.code_cache``) are the code ``exec`` compiles, a damaged cache is
a miss, and a library's host keeps its ``dataclasses`` untouched."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cache_entries import DAMAGES, damage

ROOT = Path(__file__).resolve().parents[2]
# The package's own dataclasses, then one defined here: its methods behave as written.
_RUN = ("import dataclasses, forensics, forensics.code_cache as c, forensics.pipeline, forensics.diagnosis.diagnose\n"
        "@dataclasses.dataclass(frozen=True, order=True)\n"
        "class P:\n"
        "    a: int\n"
        "    b: list = dataclasses.field(default_factory=list)\n"
        "p = P(1)\n"
        "assert p == P(1, []) and p < P(2) and repr(p) == 'P(a=1, b=[])'\n"
        "print(c._new, getattr(vars(dataclasses).get('exec'), '_forensics', False), repr(p), P.__init__.__annotations__)")


def _run(cache: Path, flag: str = "on") -> list[str]:
    env = {**os.environ, "FORENSICS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), "FORENSICS_RE_CACHE": flag}
    out = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    return out.split(" ", 2)


def test_second_start_reads_the_table(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    new, on, rest = _run(cache)
    assert on == "True" and int(new) > 50  # recorded
    assert list(cache.glob("dataclass-code-*.json"))
    assert _run(cache) == ["0", "True", rest]  # every method from the table, the same behaviour
    assert rest.startswith("P(a=1, b=[])")
    assert "'a': 'int'" not in rest  # annotations evaluated as without the cache (no inherited __future__ flag)


def test_library_host_keeps_its_dataclasses(tmp_path: Path) -> None:
    new, on, _ = _run(tmp_path / "cache", flag="off")
    assert (new, on) == ("0", "False")


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_table_is_a_miss(tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    _run(cache)
    (entry,) = cache.glob("dataclass-code-*.json")
    damage(entry, how)
    new, on, _ = _run(cache)
    assert int(new) > 50 and on == "True"  # compiled again


def test_cached_code_is_what_exec_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every recorded text's code equals a compile of the text with no flags
    inherited (what ``exec`` of a string does inside ``dataclasses``)."""
    import marshal

    from forensics import cache as fcache
    from forensics import code_cache

    cache = tmp_path / "cache"
    _run(cache)
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(cache))
    table = marshal.loads(fcache.read_entry(code_cache.KIND, code_cache._key()))
    assert len(table) > 50
    # exec of a string, called from code with no __future__ flags (as in dataclasses; this
    # module's own `annotations` flag would be inherited and compile other code)
    plain_exec = eval(compile("lambda text, ns: exec(text, {}, ns)", "<test>", "eval", dont_inherit=True))
    for text, code in table.items():
        assert code == compile(text, "<string>", "exec", dont_inherit=True)
        ns: dict = {}
        plain_exec(text, ns)
        made = next(c for c in code.co_consts if getattr(c, "co_name", None) == "__create_fn__")
        assert ns["__create_fn__"].__code__ == made
