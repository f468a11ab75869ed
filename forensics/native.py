"""The compiled per-line core: which modules mypyc compiles, and whether the
compiled ones run.

The modules below are ordinary typed Python, the one source of truth. The
wheel's build (``hatch_build.py``, run by ``pip install .``) compiles them
with mypyc into C extensions placed beside their ``.py`` files; where no
compiler is found the build leaves them out and the same modules run as
Python, with the same answers (``tests/pipeline/test_native_core.py``).
``python -m forensics.compile`` compiles them in place (a checkout, an
editable install) and says which path runs.

The compiled modules call each other directly (one shared library), so they
run all together or not at all. They do not run when:

- ``FORENSICS_PURE_PYTHON=1`` is set (the fallback, forced);
- a module's source differs from the source it was compiled from (the build
  records a digest of each in ``_compiled.txt``): an edited checkout never
  runs a stale extension.

This module imports only the standard library: the build hook runs it
before the package's dependencies are installed.
"""
from __future__ import annotations

import hashlib
import os
import sys
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from pathlib import Path
from typing import Sequence

# The per-line path of classify and parse (profile: bench/profile_classify.py):
# reading and envelopes, prefixes, the router and phase markers, traceback
# assembly; then what every event meets in classify: the lifetime bookkeeping,
# and the early-warning candidates.
COMPILED_MODULES = (
    "forensics.envelope.journald",
    "forensics.events.prefixes",
    "forensics.events.parser",
    "forensics.events.tracebacks",
    "forensics.events.phases",
    "forensics.events.ndjson",
    "forensics.incidents.lifetimes",
    "forensics.incidents.outcome",
    "forensics.diagnosis.early_warnings.candidates",
    "forensics.diagnosis.memo",
)
GROUP = "forensics"  # the shared library: forensics__mypyc.<abi>.so beside the package
STAMP = "_compiled.txt"  # "<module> <blake2b of its source>" per line, written by the build
PURE_ENV = "FORENSICS_PURE_PYTHON"

PACKAGE_DIR = Path(__file__).resolve().parent


def source_path(module: str, package_dir: Path | None = None) -> Path:
    return (package_dir or PACKAGE_DIR).joinpath(*module.split(".")[1:]).with_suffix(".py")


def source_digest(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()


def stamp_text(package_dir: Path | None = None) -> str:
    """What the build records: each compiled module's source digest."""
    return "".join(f"{m} {source_digest(source_path(m, package_dir))}\n" for m in COMPILED_MODULES)


def pure_forced() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _stamp_matches() -> bool:
    try:
        recorded = (PACKAGE_DIR / STAMP).read_text()
        return recorded == stamp_text()
    except OSError:
        return False  # no build here (or no sources to compare): nothing compiled to run


def _why_pure() -> str | None:
    """None when the compiled modules may run, else why not."""
    if pure_forced():
        return f"{PURE_ENV}=1"
    if not (PACKAGE_DIR / STAMP).exists():
        return "not compiled (no C compiler at install, or an editable install not built in place)"
    if not _stamp_matches():
        return "sources changed since they were compiled (rebuild: python -m forensics.compile)"
    return None


class _SourceOnly:
    """A meta path finder that loads the compiled modules from their ``.py``
    files (the path finder would take the extension beside them)."""

    @staticmethod
    def find_spec(fullname: str, path: Sequence[str] | None = None, target: object = None) -> ModuleSpec | None:
        if fullname not in COMPILED_MODULES or not path:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(fullname)
            if spec is not None:
                return spec
        return None


WHY_PURE: str | None = None


def install() -> None:
    """Decide once, at package import, before any compiled module loads."""
    global WHY_PURE
    WHY_PURE = _why_pure()
    if WHY_PURE is not None and not any(f is _SourceOnly for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceOnly)  # type: ignore[arg-type]


def running() -> dict[str, str]:
    """Each compiled module -> "compiled" or "python", as imported now."""
    import importlib

    out = {}
    for name in COMPILED_MODULES:
        mod = importlib.import_module(name)
        out[name] = "python" if str(getattr(mod, "__file__", "")).endswith(".py") else "compiled"
    return out


def core() -> str:
    """"compiled" or "python": the path the per-line core takes in this process."""
    kinds = set(running().values())
    return kinds.pop() if len(kinds) == 1 else "mixed"


# ------------------------------------------------------------------ building
def build_extensions(package_dir: Path, build_temp: Path, build_lib: Path, cache_dir: Path | None = None) -> list[Path]:
    """Compile COMPILED_MODULES with mypyc; the extension files written under
    ``build_lib`` (their paths). Raises when mypyc or a C compiler is missing."""
    from mypyc.build import mypycify  # the build requirement (mypy)
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext

    root = package_dir.parent
    paths = [str(source_path(m, package_dir).relative_to(root)) for m in COMPILED_MODULES]
    cwd = os.getcwd()
    os.chdir(root)  # mypyc names modules by their path from here
    try:
        # Third-party modules without stubs are Any to mypyc (the build environment may lack them).
        args = ["--ignore-missing-imports", "--follow-imports=silent", f"--cache-dir={cache_dir or build_temp / 'mypy-cache'}", *paths]
        exts = mypycify(args, opt_level="3", group_name=GROUP, target_dir=str(build_temp / "mypyc"))
        dist = Distribution({"name": "forensics", "ext_modules": exts})
        cmd = build_ext(dist)
        cmd.build_temp = str(build_temp / "obj")
        cmd.build_lib = str(build_lib)
        cmd.ensure_finalized()
        cmd.run()
        return [Path(p) for p in cmd.get_outputs()]
    finally:
        os.chdir(cwd)


def build_in_place(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """Compile beside the sources (a checkout or an editable install)."""
    import shutil
    import sysconfig
    import tempfile

    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    root = package_dir.parent
    with tempfile.TemporaryDirectory(prefix="forensics-build-") as tmp:
        # mypy's cache kept under build/ (git-ignored): a rebuild checks only what changed.
        outputs = build_extensions(package_dir, Path(tmp) / "temp", Path(tmp) / "lib", root / "build" / "mypy-cache")
        # Extensions of modules no longer compiled would shadow their sources
        # (and need a shared library that no longer has them): removed first.
        for stray in package_dir.rglob("*" + suffix):
            stray.unlink()
        placed = []
        for out in outputs:
            dest = root / out.relative_to(Path(tmp) / "lib")
            # A new file renamed over the old: a running process keeps the
            # library it mapped (rewriting it in place crashes that process).
            part = dest.with_name(dest.name + ".part")
            shutil.copyfile(out, part)
            os.replace(part, dest)
            placed.append(dest)
    from forensics.atomic import atomic_write_text

    atomic_write_text(package_dir / STAMP, stamp_text(package_dir))
    assert all(str(p).endswith(suffix) for p in placed)
    return placed


def clean_in_place(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """Remove what ``build_in_place`` wrote."""
    import sysconfig

    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    root = package_dir.parent
    gone = list(package_dir.rglob("*" + suffix))  # every extension here is one the build put
    gone += list(root.glob(f"{GROUP}__mypyc.*.so"))
    stamp = package_dir / STAMP
    if stamp.exists():
        gone.append(stamp)
    for p in gone:
        p.unlink()
    return gone
