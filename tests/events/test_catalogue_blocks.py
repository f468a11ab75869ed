"""Catalogue package files are read one gzip member at a time: the same
entries as reading the whole file, ordinary gzip readers still work, and a
file rewritten behind the index's back is read whole instead of wrongly."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from forensics.events import catalogue as cat
from forensics.events.catalogue_blocks import BLOCK_LINES, block_info, blocked_lines, gzip_blocks
from forensics.events.catalogue_index import INDEX_FILE
from forensics.lab import catalogue_mine



def _whole(path: Path) -> list[bytes]:
    return [ln for ln in gzip.decompress(path.read_bytes()).split(b"\n") if ln.strip()]


def test_shipped_packages_are_blocked_and_agree_with_a_whole_read():
    idx = cat._index()
    for name in ("sglang", "vllm", "glibc"):
        pf = idx.files[name]
        lines = pf.lines()
        assert not isinstance(lines, list), name  # the index knows its members
        whole = _whole(pf.path)
        assert len(lines) == len(whole) > 0
        for i in (0, len(whole) // 2, len(whole) - 1, min(BLOCK_LINES, len(whole) - 1)):
            assert lines[i] == whole[i], (name, i)


def _package(tmp_path: Path, n: int) -> tuple[Path, list[bytes]]:
    lines = [json.dumps({"n": i, "template": f"message number {i}"}).encode() for i in range(n)]
    data, starts = gzip_blocks(lines)
    path = tmp_path / "pkg.jsonl.gz"
    path.write_bytes(data)
    return path, lines


def test_members_read_back_and_the_file_stays_one_gzip_stream(tmp_path):
    path, lines = _package(tmp_path, 3 * BLOCK_LINES + 5)
    assert _whole(path) == lines
    info = block_info(path, len(lines))
    assert len(info["starts"]) == 4
    got = blocked_lines(path, info)
    assert got is not None and len(got) == len(lines)
    assert [got[i] for i in range(len(lines))] == lines
    with pytest.raises(IndexError):
        got[len(lines)]


def test_a_rewritten_file_is_not_read_through_a_stale_index(tmp_path):
    path, lines = _package(tmp_path, 2 * BLOCK_LINES)
    info = block_info(path, len(lines))
    path.write_bytes(gzip.compress(b"".join(ln + b"\n" for ln in lines[::-1])))  # one stream, other bytes
    assert blocked_lines(path, info) is None
    assert blocked_lines(path, {"size": "x"}) is None


def test_the_miner_writes_blocked_files_and_their_offsets(tmp_path):
    es = [{"template": f"message number {i}", "kind": "log", "releases": ["1"]} for i in range(BLOCK_LINES + 1)]
    catalogue_mine.write_entries(tmp_path, "pkg", es)
    catalogue_mine.write_index(tmp_path, {"pkg": es}, {"pkg": ["1"]})
    head = gzip.decompress((tmp_path / INDEX_FILE).read_bytes()).split(b"\n", 1)[0]
    info = json.loads(head)["blocks"]["pkg"]
    got = blocked_lines(tmp_path / "pkg.jsonl.gz", info)
    assert got is not None and [json.loads(got[i]) for i in range(len(es))] == es
