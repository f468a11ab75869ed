"""The catalogue's packed tables (catalogue_packed) answer every lookup as the
plain Python structures they replace would: the shipped index against a dict
of its key words and a list of its templates, the function table against
``json.loads`` of its file; an index in another key order, a table this
cannot vouch for, and a hand-made catalogue without an index still agree."""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from forensics.events import catalogue as cat
from forensics.events.catalogue_index import INDEX_FILE, CatalogueIndex
from forensics.events.catalogue_packed import SEP, FunctionTable, KeyTable, PackedStrings, crc_order, gunzip
from forensics.lab import catalogue_mine

REPO = Path(__file__).resolve().parents[2]
CAT_DIR = REPO / "signatures" / "catalogue"


@pytest.fixture(scope="module")
def shipped() -> tuple[list[bytes], dict[str, str]]:
    """The shipped index read the plain way: its templates, and key word -> entry numbers."""
    _head, templates, keys, ids = gzip.decompress((CAT_DIR / INDEX_FILE).read_bytes()).split(b"\n")[:4]
    return templates.split(SEP), dict(zip(keys.decode("utf-8").split("\x1f"), ids.decode("ascii").split("\x1f")))


def test_the_packed_index_holds_every_template_and_key_word(shipped):
    templates, plain = shipped
    idx = cat._index()
    assert idx.size == len(templates) > 70_000
    assert list(idx._templates) == templates
    table = idx._ids
    assert table is not None and len(table) == len(plain) > 60_000
    assert all(table.get(k) == v for k, v in plain.items())
    assert dict(table.items()) == plain
    for i in (0, 1, len(plain) // 2, len(plain) - 1):
        k = list(plain)[i]
        assert idx.ids(k) == [int(x) for x in plain[k].split(",")]


@pytest.mark.parametrize("word", ["", "nope", "cuda", "error", "x" * 300, "\udcff", "é", "call supported\x1f"])
def test_a_word_not_in_the_index_is_not_found(shipped, word):
    plain = shipped[1]
    assert cat._index()._ids.get(word) == plain.get(word)
    assert (word in cat._index()._ids) == (word in plain)


def test_the_shipped_index_loads_without_sorting():
    assert cat._index()._ids._order is None  # the miner wrote the key words in CRC order


def test_key_words_in_any_order_give_the_same_answers(shipped):
    plain = shipped[1]
    words = list(plain)[:5000] + ["a b", "a\x1fb"]
    values = [plain.get(w, "7") for w in words]
    random.Random(3).shuffle(words)
    shuffled = KeyTable.of(words, [plain.get(w, "7") for w in words])
    assert shuffled._order is not None
    assert all(shuffled.get(w) == v for w, v in zip(words, [plain.get(w, "7") for w in words]))
    ordered = [words[i] for i in crc_order(words)]
    assert KeyTable.of(ordered, [plain.get(w, "7") for w in ordered])._order is None
    assert sorted(values) == sorted(shuffled.get(w) for w in words)


def test_packed_strings_are_the_split_items():
    items = [b"", b"one", b"two\x1fthree", b"", b"\xe2\x82\xac", b""]
    packed = PackedStrings.of(items)
    assert list(packed) == items and len(packed) == len(items)
    assert packed[-1] == b"" and packed[1:3] == items[1:3]
    with pytest.raises(IndexError):
        packed[len(items)]
    blob = SEP.join([b"x" * n for n in range(0, 70_000, 7)])  # runs longer than one split chunk
    assert list(PackedStrings.split(blob)) == blob.split(SEP)
    assert list(PackedStrings.split(b"")) == [b""]


def test_the_function_table_is_its_json(tmp_path):
    whole = json.loads(gunzip((CAT_DIR / "functions.json.gz").read_bytes()))
    table = cat._index().functions
    assert isinstance(table, FunctionTable) and table._whole is None  # read in place, not parsed whole
    assert len(table) == len(whole) > 5000 and list(table) == list(whole)
    assert all(table[m] == fs for m, fs in whole.items())
    assert table.get("no.such.module") is None and "argparse" in table


@pytest.mark.parametrize("text", [
    '{"b":{"f":"launch"},"a":{"g":"ready"}}',  # modules out of order
    '{"a":{"f":"launch"}, "b":{"g":"ready"}}',  # a space
    '{"a\\u00e9":{"f":"launch"}}',  # an escape
    '{"a":{"f":"x{"},"b":{}}',  # a brace inside a string
    '{"a":{"f":"launch"},"a":{"f":"ready"}}',  # a module twice: the last one wins
    '{}',
])
def test_a_table_it_cannot_vouch_for_still_answers_as_json(text):
    table = FunctionTable(text.encode("utf-8"))
    assert dict(table.items()) == json.loads(text)
    for m in ("a", "b", "aé", "zz"):
        assert table.get(m) == json.loads(text).get(m)


def test_a_plain_table_is_read_in_place():
    text = '{"a":{"f":"launch"},"b.c":{},"d":{"g":"ready","h":"serving"},"é":{"x":"ready"},"€":{}}'
    table = FunctionTable(text.encode("utf-8"))
    assert table._whole is None and dict(table.items()) == json.loads(text)
    assert table["d"]["h"] == "serving" and table.get("c") is None and table["é"] == {"x": "ready"}
    assert table.get("\udcff") is None


def test_a_catalogue_without_an_index_builds_the_same_tables(tmp_path):
    es = [{"template": f"worker {i} failed to bind port {{}} on device", "kind": "log", "releases": ["1"]}
          for i in range(300)] + [{"template": "the quick\nbrown fox jumps", "kind": "raise", "releases": ["2"]}]
    catalogue_mine.write_entries(tmp_path, "pkg", es)
    catalogue_mine.write_index(tmp_path, {"pkg": es}, {"pkg": ["1", "2"]})
    with_index = CatalogueIndex(tmp_path)
    (tmp_path / INDEX_FILE).unlink()
    without = CatalogueIndex(tmp_path)
    assert with_index.size == without.size == len(es)
    assert [with_index.template(i) for i in range(len(es))] == [without.template(i) for i in range(len(es))]
    assert dict(with_index._ids.items()) == dict(without._ids.items())
    assert with_index._ids._order is None


def test_every_module_is_found_whatever_the_run_length(monkeypatch):
    import forensics.events.catalogue_packed as packed

    mods = {f"pkg.mod{i:03d}": {f"fn{j}": "launch" for j in range(i % 4)} for i in range(200)}
    text = json.dumps(mods, separators=(",", ":")).encode()
    for run in (1, 50, 1 << 20):
        monkeypatch.setattr(packed, "RUN_CHARS", run)
        table = FunctionTable(text)
        assert table._whole is None and len(table._runs) >= (1 if run > 1000 else 100)
        assert dict(table.items()) == mods


# mtime=0: the same bytes in every process (pytest-xdist's workers must collect the same test ids).
@pytest.mark.parametrize("data", [
    gzip.compress(b"abc", mtime=0) + gzip.compress(b"abc", mtime=0),  # two members: the trailer is the second's
    gzip.compress(b"x" * 100, mtime=0) + gzip.compress(b"y" * 100, mtime=0),
    gzip.compress(b"", mtime=0),
    gzip.compress(b"q" * 300_000, mtime=0),
], ids=["two-members", "two-members-100", "empty", "large"])
def test_gunzip_is_gzip_decompress(data):
    assert gunzip(data) == gzip.decompress(data)
