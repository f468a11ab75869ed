"""The Python API: paths, text, file objects and lines; the CLI's refusals; every function
documented with an example."""
from __future__ import annotations

import io
import os
import zipfile

import pytest

import forensics

from conftest import CORPORA, REPO


SEED1 = CORPORA / "seeds" / "seed1.short.log"


# ---------------------------------------------------------------- Python API
def test_api_paths_text_files_and_lines(tmp_path):
    ref = forensics.classify(str(SEED1))
    assert ref["verdict"] == "failed"
    assert forensics.classify(SEED1)["root_cause"] == ref["root_cause"]  # PathLike
    with pytest.raises(FileNotFoundError):
        forensics.classify("server.lgo")
    with pytest.raises(FileNotFoundError):
        forensics.classify(tmp_path / "server.lgo")
    with pytest.raises(FileNotFoundError):
        list(forensics.parse("server.lgo"))
    text = SEED1.read_text()
    assert forensics.classify_text(text)["root_cause"] == ref["root_cause"]
    assert forensics.classify_text(text, name="paste")["source"] == "paste"
    with open(SEED1, "rb") as fb, open(SEED1, encoding="utf-8") as ft:
        assert forensics.classify(fb)["root_cause"] == ref["root_cause"]
        assert forensics.classify(ft)["root_cause"] == ref["root_cause"]
    assert forensics.classify(io.StringIO(text))["root_cause"] == ref["root_cause"]
    lines = text.splitlines()
    res = forensics.classify(lines)  # an iterable of lines, without newlines
    assert res["root_cause"] == ref["root_cause"] and res["stats"]["lines"] == len(lines)
    assert forensics.classify(ln + "\n" for ln in lines)["stats"]["lines"] == len(lines)  # a generator
    assert len(list(forensics.parse(lines))) == len(list(forensics.parse(SEED1)))
    many = forensics.classify([SEED1, CORPORA / "seeds" / "seed2.full.log"])
    assert isinstance(many, list) and len(many) == 2
    assert isinstance(forensics.classify(CORPORA / "seeds"), list)
    with pytest.raises(TypeError):
        forensics.classify(42)  # type: ignore[arg-type]


def test_api_refuses_binary_with_the_cli_message(tmp_path):
    from forensics.errors import InputError

    p = tmp_path / "a.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    with pytest.raises(InputError, match="not a text log"):
        forensics.classify(p)


def test_api_reads_an_archive_as_a_directory(tmp_path):
    p = tmp_path / "a.zip"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("x.log", "hello\n")
        zf.writestr("y.log", "RuntimeError: boom\n")
    results = forensics.classify(p)  # one result per member, as for a directory
    assert [r["source"] for r in results] == [f"{p}:x.log", f"{p}:y.log"]
    assert forensics.classify(f"{p}:y.log")["verdict"] == "failed"  # a member by its name


def test_every_api_function_has_a_docstring_with_an_example():
    import doctest

    from forensics import api

    for name in ("classify", "classify_text", "parse", "read_events", "batch", "to_sources"):
        fn = getattr(api, name)
        assert fn.__doc__ and ">>> " in fn.__doc__, name
    cwd = os.getcwd()
    os.chdir(REPO)  # the examples use paths relative to the repository
    try:
        failed, tried = doctest.testmod(api, optionflags=doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL)
    finally:
        os.chdir(cwd)
    assert tried >= 10 and failed == 0
