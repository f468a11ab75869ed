"""Would Cython beat mypyc on the per-line reader? (issue 29, item 1; a measurement)

    pip install cython                      # a build requirement only; not needed to run forensics
    python bench/cython_reader.py           # the crash loop (bench's default, 1,000 lifetimes)
    python bench/cython_reader.py --file X.log
    FORENSICS_PURE_PYTHON=1 python bench/cython_reader.py   # the module's row as pure Python

Builds under ``bench/out/cython`` (git-ignored): ``forensics/envelope/journald.py``
compiled by Cython as it is (the same source mypyc compiles), and
``bench/cython_reader/iso_fast.pyx``, the short-iso fast path typed for Cython.
Then times, in one process over the log's lines held in memory (best of 5,
CPU us a line), journald's short-iso reader as this process imports it
(mypyc-compiled or pure), both Cython builds, one precompiled regex with its
groups (the cheapest Python reader there is) and a bare generator, and checks
that each reader gives the module's records field for field.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import OUT, ROOT

sys.path.insert(0, str(ROOT))
BUILD = OUT / "cython"
SETUP = """from setuptools import setup
from Cython.Build import cythonize
setup(ext_modules=cythonize(["journald_cy.py", "iso_fast.pyx"], compiler_directives={"language_level": 3}, quiet=True))
"""


def build() -> None:
    BUILD.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "forensics" / "envelope" / "journald.py", BUILD / "journald_cy.py")
    shutil.copy(Path(__file__).resolve().parent / "cython_reader" / "iso_fast.pyx", BUILD / "iso_fast.pyx")
    (BUILD / "setup.py").write_text(SETUP)
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=BUILD, check=True,
                   stdout=subprocess.DEVNULL)
    sys.path.insert(0, str(BUILD))


def _key(r):  # type: ignore[no-untyped-def]
    return (r.line, r.text, r.ts, r.host, r.ident, r.pid, r.cont, r.marker)


def _best(fn) -> tuple[float, list]:  # type: ignore[no-untyped-def]
    best, out = float("inf"), []
    for _ in range(5):
        t0 = time.process_time()
        out = list(fn())
        best = min(best, time.process_time() - t0)
    return best, out


def measure(path: Path) -> None:
    import iso_fast  # type: ignore[import-not-found]
    import journald_cy  # type: ignore[import-not-found]

    from forensics import native
    from forensics.envelope import journald
    from forensics.envelope.clock import Clock

    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = list(enumerate(f.read().splitlines(), 1))
    rx = journald.ASCII_PATTERNS["short-iso"].match

    def one_regex():  # type: ignore[no-untyped-def]
        for _n, text in lines:
            m = rx(text)
            if m is not None:
                yield m.group("ts", "host", "ident", "pid", "msg")

    rows = [(f"journald ({native.core()})", lambda: journald._short_records(lines, "short-iso", Clock()), True),
            ("Cython, the same source", lambda: journald_cy._short_records(lines, "short-iso", Clock()), True),
            ("Cython, typed fast path", lambda: iso_fast.short_iso_records(lines, Clock()), True),
            ("one regex + groups", one_regex, False),
            ("a generator over the lines", lambda: (t for _n, t in lines), False)]
    ref = [_key(r) for r in _best(rows[0][1])[1]]
    print(f"{path.name}: {len(lines):,} lines, short-iso reader, CPU us a line (best of 5)")
    for name, fn, records in rows:
        t, out = _best(fn)
        same = "" if not records else ("same records" if [_key(r) for r in out] == ref else "RECORDS DIFFER")
        print(f"  {name:<28} {t / len(lines) * 1e6:6.2f}  {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default=None)
    a = ap.parse_args()
    try:
        import Cython  # noqa: F401
    except ImportError:
        sys.exit("needs Cython: pip install cython (or PYTHONPATH=DIR where it is installed)")
    if a.file:
        path = Path(a.file)
    else:
        import run

        path = run.ensure_crashloop(1000)[0]
    os.environ.setdefault("PYTHONHASHSEED", "0")
    build()
    measure(path)


if __name__ == "__main__":
    main()
