"""The catalogue on disk: its entries (one gzip'd JSON-lines file per package)
and the lookup index the miner writes (templates, key words -> entry numbers),
loaded lazily; entries are parsed one at a time, when a line matches them."""
from __future__ import annotations

import bisect
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from forensics.events.catalogue_blocks import blocked_lines
from forensics.events.catalogue_packed import FunctionTable, KeyTable, PackedStrings, gunzip
from forensics.events.templates import index_keys, line_keys, literal_keys, literal_size, split_template, template_regex
from forensics.events.textmemo import remember

@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One distinct message a program prints, with where and in which releases.

    ``kind`` says how it is printed: ``raise`` (an exception), ``assert``,
    ``log`` (a logger call), ``warn`` (``warnings.warn``), ``print`` (to
    stderr), ``check`` (a C++ ``TORCH_CHECK``-style check), ``native-log``
    (NCCL's ``WARN``/``INFO``, Rust ``tracing``), ``error-string`` (a runtime's
    error name and string, e.g. CUDA's; a Rust error enum's text), ``panic``
    (Rust ``panic!``/``expect``), ``binary-string`` (a sentence-like string
    literal of a shared library, e.g. libtorch_cuda's; level unknown),
    ``progress`` (a progress bar's description, e.g. tqdm's ``desc``). ``template`` is the literal text with
    ``{}``/``{name}`` placeholders (literal braces doubled); ``match`` (a
    property: a function of the template) is a regex that finds it in a line.
    """

    package: str  # where it is printed: the package, its module and function
    module: str | None
    function: str | None
    kind: str  # what is printed
    template: str
    level: str | None
    exc_type: str | None
    releases: tuple[str, ...]
    source: str | None
    phase: str | None
    label: str | None
    label_rule: str | None
    sites: int = 1
    advice: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "CatalogueEntry":
        return cls(
            package=d["package"], kind=d["kind"], template=d["template"], level=d.get("level"), exc_type=d.get("exc_type"),
            module=d.get("module"), function=d.get("function"),
            releases=tuple(d.get("releases") or ()), source=d.get("source"),
            phase=d.get("phase"), label=d.get("label"), label_rule=d.get("label_rule"),
            sites=int(d.get("sites") or 1), advice=d.get("advice"),
        )

    @property
    def id(self) -> str:
        """Stable id: the package and a hash of what makes the entry distinct."""
        return entry_id(self.package, self.kind, self.exc_type, self.level, self.template)

    @property
    def remediation(self) -> str | None:
        """What to do, in the program's own words (``advice``), or None."""
        return self.advice

    @property
    def match(self) -> str:
        """The regex that finds this message in a line (a function of the template)."""
        return template_regex(self.template)

    def to_dict(self) -> dict:
        d = {f: (list(getattr(self, f)) if f == "releases" else getattr(self, f))
             for f in self.__dataclass_fields__}
        d["id"] = self.id
        d["match"] = self.match
        return d

    def render(self, values: Iterable[str] | None = None) -> str:
        """The template with its placeholders filled (``values`` in order, else
        a plausible token), literal braces undoubled: what the program would print."""
        it = iter(values or ())
        out: list[str] = []
        for lit, ph in split_template(self.template):
            out.append(lit)
            if ph is not None:
                out.append(next(it, "X" if not ph else ph))
        return "".join(out)


def entry_id(package: str, kind: str, exc_type: str | None, level: str | None, template: str) -> str:
    h = hashlib.sha1(f"{package}\0{kind}\0{exc_type}\0{level}\0{template}".encode()).hexdigest()[:12]
    return f"{package}:{h}"


def catalogue_dir() -> Path:
    """``$FORENSICS_CATALOGUE``, else the catalogue shipped in the wheel, else
    the source tree's ``signatures/catalogue``."""
    env = os.environ.get("FORENSICS_CATALOGUE")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_signatures" / "catalogue"
    if packaged.is_dir():
        return packaged
    return here.parent / "signatures" / "catalogue"


INDEX_FILE = "lookup-index.gz"
INDEX_SEP = "\x1f"  # between fields of the index's lines
INDEX_NL = "\x1e"   # a newline inside a template
_SEP_B = INDEX_SEP.encode()


class PackageFile:
    """One package's entries, decompressed on first use and parsed one line at
    a time: a match needs only its own entry."""

    def __init__(self, path: Path, package: str) -> None:
        self.path = path
        self.package = package
        self._lines: Sequence[bytes] | None = None
        self._parsed: dict[int, CatalogueEntry] = {}
        self.blocks: object = None  # the index's member offsets of this file (catalogue_blocks)

    def lines(self) -> Sequence[bytes]:
        if self._lines is None:
            self._lines = blocked_lines(self.path, self.blocks) if self.blocks is not None else None
        if self._lines is None:
            with gzip.open(self.path, "rb") as fh:
                self._lines = [ln for ln in fh.read().split(b"\n") if ln.strip()]
        return self._lines

    def _line(self, i: int) -> bytes:
        try:
            return self.lines()[i]
        except ValueError:  # a member that does not match the index: read the file whole
            self.blocks = self._lines = None
            return self.lines()[i]

    def entry(self, i: int) -> CatalogueEntry:
        e = self._parsed.get(i)
        if e is None:
            d = json.loads(self._line(i))
            d.setdefault("package", self.package)
            e = remember(self._parsed, i, CatalogueEntry.from_dict(d), ENTRIES_MEMO)
        return e

    def all(self) -> list[CatalogueEntry]:
        return [self.entry(i) for i in range(len(self.lines()))]


class CatalogueIndex:
    """The lookup index (templates, key words, exception types; entries by
    number) and, separately and lazily, the function table; both packed
    (``catalogue_packed``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files: dict[str, PackageFile] = {}
        self.releases: dict[str, list[str]] = {}
        self.starts: list[int] = []  # first entry number of each package in self.names
        self.names: list[str] = []
        self._templates: Sequence[bytes] = ()
        self.by_word: dict[str, list[int]] = {}  # parsed entry numbers of recent key words
        self._ids: KeyTable | None = None
        self._functions: FunctionTable | None = None
        self._words: dict[int, TemplateWords] = {}
        self._rx: dict[int, re.Pattern[str] | None] = {}
        self._load()

    @property
    def size(self) -> int:
        return len(self._templates)

    def template(self, i: int) -> str:
        t = self._templates[i].decode("utf-8")
        return t.replace(INDEX_NL, "\n") if INDEX_NL in t else t

    def _load(self) -> None:
        if not self.directory.is_dir():
            return
        for f in sorted(self.directory.glob("*.jsonl.gz")):
            pkg = f.name[: -len(".jsonl.gz")]
            self.files[pkg] = PackageFile(f, pkg)
        ipath = self.directory / INDEX_FILE
        packs = self._read_index(ipath) if ipath.is_file() else self._build_index()
        n = 0
        for pkg, count, releases in packs:
            self.names.append(pkg)
            self.starts.append(n)
            self.releases[pkg] = list(releases)
            n += count

    def _read_index(self, ipath: Path) -> list:
        from forensics.events import catalogue_cache

        raw = ipath.read_bytes()
        key = catalogue_cache.key_of(raw)
        got = catalogue_cache.read(key)  # the tables as unpacked by an earlier run
        if got is not None:
            head, self._templates, self._ids = got
        else:
            # one C-speed decompress and a few splits: no object per template or key
            head, templates, keys, ids = gunzip(raw).split(b"\n")[:4]
            del raw
            self._templates = PackedStrings.split(templates)  # decoded when a candidate
            # key -> "i,j": the numbers are parsed when the key occurs in a line
            self._ids = KeyTable.split(keys, ids)
            catalogue_cache.write(key, head, self._templates, self._ids)
        header = json.loads(head)
        for pkg, info in (header.get("blocks") or {}).items():
            if pkg in self.files:
                self.files[pkg].blocks = info
        return header["packages"]

    def _build_index(self) -> list:
        """No index (a hand-made catalogue): the same tables from the entries."""
        pk = sorted(self.files)
        es = [e for p in pk for e in self.files[p].all()]
        by: dict[str, list[int]] = {}
        for i, k in enumerate(index_keys([e.template for e in es])):
            if k:
                by.setdefault(k, []).append(i)
        self._templates = PackedStrings.of([e.template.encode("utf-8") for e in es])
        self._ids = KeyTable.of(list(by), [",".join(map(str, v)) for v in by.values()])
        return [[p, len(self.files[p].lines()), sorted({r for e in self.files[p].all() for r in e.releases})]
                for p in pk]

    def ids(self, key: str) -> list[int] | None:
        got = self.by_word.get(key)
        if got is None:
            raw = self._ids.get(key) if self._ids is not None else None
            if raw is None:
                return None
            got = remember(self.by_word, key, [int(x) for x in raw.split(",")], WORDS_MEMO)
        return got

    @property
    def functions(self) -> FunctionTable:
        """module -> {function: phase}, over every function the mined sources define."""
        if self._functions is None:
            from forensics.events import catalogue_cache

            fpath = self.directory / "functions.json.gz"
            raw = fpath.read_bytes() if fpath.is_file() else None
            key = catalogue_cache.key_of(raw) if raw is not None else None
            table = catalogue_cache.read_functions(key) if key is not None else None
            if table is None:  # (not unpacked by an earlier run)
                table = FunctionTable(gunzip(raw) if raw is not None else b"{}")
                if key is not None:
                    catalogue_cache.write_functions(key, table)
            self._functions = table
        return self._functions

    def entry(self, i: int) -> CatalogueEntry:
        k = bisect.bisect_right(self.starts, i) - 1
        return self.files[self.names[k]].entry(i - self.starts[k])

    def words(self, i: int) -> TemplateWords:
        """What a line must contain for template ``i`` to match it, cheap to
        test: its literal size, its key words, and every whitespace-free run
        of its first line's literal text (its regex matches each of them
        verbatim: a line without one is spared compiling the regex)."""
        got = self._words.get(i)
        if got is None:
            t = self.template(i)
            first = t.split("\n", 1)[0]
            runs = tuple({w for lit, _ph in split_template(first) for w in lit.split()})
            got = remember(self._words, i, (literal_size(t), frozenset(literal_keys(t)), runs), RX_MEMO)
        return got

    def regex(self, i: int) -> re.Pattern[str] | None:
        """Template ``i``'s regex (``template_regex``), None when it does not compile."""
        got = self._rx.get(i, _MISSING)
        if got is _MISSING:
            try:
                got = re.compile(template_regex(self.template(i)))
            except re.error:
                got = None
            remember(self._rx, i, got, RX_MEMO)
        return got  # type: ignore[return-value]

    def candidates(self, message: str) -> tuple[set[int], set[str]]:
        out: set[int] = set()
        keys = line_keys(message)
        for w in keys:
            ids = self.ids(w)
            if ids:
                out.update(ids)
        return out, set(keys)


_MISSING = object()
TemplateWords = tuple[int, frozenset[str], tuple[str, ...]]  # (literal size, key words, literal runs)
# Templates' words and compiled regexes kept (each memo cleared when full): a
# long, varied log asks for ever more of the 75k templates, and each costs
# ~1.7 KB (the regex, its words). Most candidates fail the word and run tests
# and never compile their regex (crash loop: 520 of 5,723 lookups compile).
# 10,000 crash-loop lifetimes ask for 1,758 distinct ones, 47,769 times: 1,024
# kept recompile ~3,000 of them (~0.3 s, ~0.5% of the run) and hold 1.2 MB less
# than keeping them all (4,096 kept: up to ~7 MB on a longer log).
RX_MEMO = 1024
WORDS_MEMO = 4096  # key words' parsed entry numbers kept (cleared when full)
ENTRIES_MEMO = 1024  # parsed entries kept per package file (cleared when full)
