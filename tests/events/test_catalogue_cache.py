"""The catalogue's lookup index read back from the start-up cache
(``catalogue_cache``) holds the very tables the packed file unpacks to, in
another key order too; a damaged entry is a miss with the same tables."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from forensics.events import catalogue_cache
from forensics.events.catalogue_index import INDEX_FILE, CatalogueIndex
from forensics.events.catalogue_packed import SEP, crc_order

REPO = Path(__file__).resolve().parents[2]
CAT_DIR = REPO / "signatures" / "catalogue"


def _tables(idx: CatalogueIndex) -> tuple:
    return (list(idx._templates), dict(idx._ids.items()), idx.names, idx.starts, idx.releases,
            {p: f.blocks for p, f in idx.files.items()})


@pytest.fixture(scope="module")
def plain() -> tuple:
    """The shipped index unpacked with no cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("FORENSICS_CACHE_DIR", "off")
    try:
        return _tables(CatalogueIndex(CAT_DIR))
    finally:
        mp.undo()


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob(f"{catalogue_cache.KIND}-*.json")
    return entry


def test_the_cached_index_is_the_unpacked_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain) -> None:
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path))
    assert _tables(CatalogueIndex(CAT_DIR)) == plain  # a miss: unpacked, then written
    key = catalogue_cache.key_of((CAT_DIR / INDEX_FILE).read_bytes())
    assert catalogue_cache.read(key) is not None
    idx = CatalogueIndex(CAT_DIR)  # a hit
    assert _tables(idx) == plain
    assert all(idx.ids(k) == [int(x) for x in v.split(",")] for k, v in list(plain[1].items())[::997])
    assert idx._ids.get("no such key word at all") is None


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign"])
def test_a_damaged_entry_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain, damage: str) -> None:
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path))
    CatalogueIndex(CAT_DIR)
    entry = _entry(tmp_path)
    raw = entry.read_bytes()
    if damage == "flip":
        entry.write_bytes(raw[:-20] + bytes([raw[-20] ^ 1]) + raw[-19:])
    elif damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    else:
        entry.chmod(0o666)  # writable by others: not read
    assert catalogue_cache.read(catalogue_cache.key_of((CAT_DIR / INDEX_FILE).read_bytes())) is None
    assert _tables(CatalogueIndex(CAT_DIR)) == plain


def test_an_index_in_another_key_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys not in CRC order (a key table with its own order array) come back the same."""
    keys = ["zeta", "alpha", "cuda", "nccl", "out of memory"]
    assert [keys[i] for i in crc_order(keys)] != keys
    head = json.dumps({"packages": [["pkg", 2, ["1.0"]]], "blocks": {}}).encode()
    templates = SEP.join([b"CUDA error: {msg}", b"NCCL WARN {x}"])
    body = b"\n".join([head, templates, SEP.join(k.encode() for k in keys), SEP.join([b"0", b"1", b"0,1", b"1", b"0"])])
    cat_dir = tmp_path / "cat"
    cat_dir.mkdir()
    (cat_dir / INDEX_FILE).write_bytes(gzip.compress(body))
    monkeypatch.setenv("FORENSICS_CACHE_DIR", "off")
    want = (list(CatalogueIndex(cat_dir)._templates), dict(CatalogueIndex(cat_dir)._ids.items()))
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path / "cache"))
    CatalogueIndex(cat_dir)
    idx = CatalogueIndex(cat_dir)
    assert idx._ids._order is not None
    assert (list(idx._templates), dict(idx._ids.items())) == want
    assert [idx._ids.get(k) for k in keys] == ["0", "1", "0,1", "1", "0"]


def test_the_cached_function_table_is_the_unpacked_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = json.loads(gzip.decompress((CAT_DIR / "functions.json.gz").read_bytes()))
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path))
    first = CatalogueIndex(CAT_DIR).functions  # a miss: packed, then written
    (entry,) = tmp_path.glob(f"{catalogue_cache.FUNCTIONS_KIND}-*.json")
    table = CatalogueIndex(CAT_DIR).functions  # a hit
    assert table.parts() is not None and table is not first
    assert list(table) == list(want) and len(table) == len(want) > 5000
    assert all(table[m] == f for m, f in want.items())
    assert table.get("no.such.module") is None
    entry.write_bytes(entry.read_bytes()[:-3])  # damaged: a miss, packed again
    assert dict(CatalogueIndex(CAT_DIR).functions.items()) == want


def test_a_function_table_parsed_whole_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cat_dir = tmp_path / "cat"
    cat_dir.mkdir()
    (cat_dir / "functions.json.gz").write_bytes(gzip.compress(b'{"b": {"f": "serving"}, "a": {"g": "launch"}}'))
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        table = CatalogueIndex(cat_dir).functions
        assert table.parts() is None and dict(table.items()) == {"b": {"f": "serving"}, "a": {"g": "launch"}}
    assert not list((tmp_path / "cache").glob(f"{catalogue_cache.FUNCTIONS_KIND}-*.json"))
