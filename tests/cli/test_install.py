"""A light core install, extras that say their name, the man page, completion."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib

from conftest import CORPORA, REPO

EXAMPLE = REPO / "examples" / "sglang-b300-flash-attn-cute.log"
CORE = {"click", "lark", "re2", "regex", "yaml", "zstandard", "mypy_extensions"}  # import names of the core dependencies


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _run(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=300)


def test_core_dependencies_are_the_small_set():
    deps = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in _project()["dependencies"]}
    assert deps == {"click", "google-re2", "lark", "regex", "pyyaml", "zstandard", "mypy_extensions"}
    extras = _project()["optional-dependencies"]
    for extra, wants in (("batch", ("pandas", "pyarrow", "dask")), ("train", ("scikit-learn", "skops")),
                         ("notebooks", ("nbclient", "ipykernel")), ("test", ("pytest", "jsonschema")),
                         ("archives", ("py7zr",))):
        assert all(any(d.startswith(w) for d in extras[extra]) for w in wants), extra
    assert "forensics[batch,train,notebooks,archives,html]" in extras["test"]
    assert any(d.startswith("matplotlib") for d in extras["html"])


def test_classify_watch_parse_import_only_the_core():
    """What the core install must be enough for: third-party modules imported are core ones."""
    code = (
        "import sys, io\n"
        "before = {m.split('.')[0] for m in sys.modules}  # what site hooks loaded, not us\n"
        "from forensics.cli.main import main\n"
        "for argv in (['classify', sys.argv[1]], ['parse', sys.argv[1]], ['signatures', 'list']):\n"
        "    try:\n"
        "        sys.stdout = io.StringIO(); main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "sys.stdout = sys.__stdout__\n"
        "import forensics.drivers.watch\n"
        "names = {m.split('.')[0] for m in sys.modules} - before - {'cython_runtime'}\n"
        "print(' '.join(sorted(n for n in names - set(sys.stdlib_module_names) if not n.startswith('_'))))\n")
    proc = _run(code, str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr.decode()
    third_party = set(proc.stdout.decode().split()) - {"forensics", "forensics__mypyc"}  # the compiled core's library
    assert third_party <= CORE, third_party - CORE


def test_a_missing_extra_is_named_in_one_line(tmp_path):
    block = "import sys\nfor m in sys.argv[2].split(','): sys.modules[m] = None\nfrom forensics.cli.main import main\n"
    cases = [
        ("pandas", ["batch", str(CORPORA / "seeds"), "--out", str(tmp_path / "t.parquet")], "forensics[batch]"),
        ("pandas", ["report", str(tmp_path / "t.parquet")], "forensics[batch]"),
        ("sklearn,skops", ["train", "--out", str(tmp_path / "m.skops")], "forensics[train]"),
        ("matplotlib", ["classify", "--format", "html", str(EXAMPLE)], "forensics[html]"),
        ("matplotlib", ["report", str(tmp_path / "t.parquet"), "--html", str(tmp_path / "r.html")],
         "forensics[html]"),
    ]
    for missing, argv, extra in cases:
        proc = _run(block + f"main({argv!r})", "-", missing)
        err = proc.stderr.decode().strip()
        assert proc.returncode == 2 and len(err.splitlines()) == 1, err
        assert f"pip install '{extra}'" in err and "is not installed" in err, err
    proc = _run(block + "import forensics\nforensics.read_events(sys.argv[1])", str(EXAMPLE), "pandas")
    assert "MissingExtra" in proc.stderr.decode() and "forensics[batch]" in proc.stderr.decode()
    # ... and classify still works without them
    proc = _run(block + "main(['classify', sys.argv[1]])", str(EXAMPLE), "pandas,sklearn,skops,numpy,pyarrow,dask")
    assert proc.returncode == 1 and b"env.module-missing" in proc.stdout, proc.stderr


def test_the_shipped_man_page_is_the_current_help():
    # In a fresh interpreter: click caches each command's help option on first use.
    fresh = subprocess.run([sys.executable, "-m", "forensics.cli.manpage"], capture_output=True, cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"})
    shipped = (REPO / "forensics" / "man" / "forensics.1").read_text()
    assert shipped == fresh.stdout.decode(), "regenerate it: python -m forensics.cli.manpage > forensics/man/forensics.1"
    for cmd in ("CLASSIFY", "WATCH", "PARSE", "BATCH", "SIGNATURES LIST"):
        assert f".SH FORENSICS {cmd}" in shipped
    wheel = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["shared-data"]["forensics/man/forensics.1"] == "share/man/man1/forensics.1"
    assert (REPO / "forensics" / "report" / "schema" / "forensics.schema.json").is_file()  # inside the package


def test_shell_completion_as_documented():
    env = {**os.environ, "PYTHONPATH": str(REPO), "_FORENSICS_COMPLETE": "bash_source"}
    script = subprocess.run([sys.executable, "-m", "forensics"], capture_output=True, env=env, cwd=REPO)
    assert script.returncode == 0 and b"complete -o nosort -F _forensics_completion forensics" in script.stdout
    env.update(_FORENSICS_COMPLETE="bash_complete", COMP_WORDS="forensics cla", COMP_CWORD="1")
    words = subprocess.run([sys.executable, "-m", "forensics"], capture_output=True, env=env, cwd=REPO)
    assert b"classify" in words.stdout
    assert "_FORENSICS_COMPLETE=bash_source forensics" in (REPO / "README.md").read_text()


def test_ci_fails_without_shared(tmp_path):
    repo = tmp_path / "checkout"
    (repo / ".ci").mkdir(parents=True)
    (repo / ".ci" / "run").write_text((REPO / ".ci" / "run").read_text())
    proc = subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, timeout=60,
                          env={"PATH": os.environ["PATH"], "CI": "true"})
    assert proc.returncode == 1 and b"../shared/corpora-real is missing" in proc.stderr, proc.stderr


def test_the_installed_command_runs_from_any_directory(tmp_path):
    # What users and CI type: the console script, away from the checkout (no PYTHONPATH, no cwd
    # on the path). An editable install once left a bare forensics/ folder in site-packages (the
    # signatures copied there) that made it fail with "No module named 'forensics.cli'".
    import shutil

    exe = shutil.which("forensics")
    if exe is None:
        import pytest
        pytest.skip("forensics is not installed (pip install -e '.[test]' installs it)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([exe, "classify", str(EXAMPLE)], capture_output=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 1 and b"env.module-missing" in proc.stdout, proc.stderr.decode()[-2000:]
