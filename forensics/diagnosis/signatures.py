"""Rule signatures: YAML data in ``signatures/``, validated on load, matched against events in one
pass per value over all patterns (RE2's set matcher; ``forensics/diagnosis/matcher.py``): linear
time, no timer, so no rule can hang the tool and no answer depends on machine load."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import regex

from forensics.errors import SignatureError
from forensics.events import types as kinds
from forensics.events.types import Event
from forensics.diagnosis import matcher as M
from forensics.diagnosis import literal_gate, sigcache
from forensics.diagnosis.sigcache import LazyPattern
from forensics.diagnosis.taxonomy import LABEL_SET, PHASES
from forensics.diagnosis.views import LINE_FIELDS, View, event_views, line_value  # (View: re-exported)
from forensics.events.textmemo import remember


def _yaml() -> Any:
    """PyYAML and its fastest safe loader, imported only to parse a signature file
    (the parsed set is cached; importing PyYAML costs a process ~10 ms)."""
    import yaml
    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# A signature file is input too: bounded before it is built into objects.
# Anchors and aliases are refused (a few lines of aliases name billions of
# nodes), nesting is capped (libyaml's composer recurses in C: 50,000 open
# brackets crashed the interpreter), and so are the size and node count.
MAX_SIGNATURE_FILE_BYTES = 4 << 20
MAX_YAML_DEPTH = 32
MAX_YAML_EVENTS = 500_000
KINDS = ("failure", "precursor", "wrapper")
STATUSES = ("experimental", "test", "stable", "deprecated")
FIELDS = ("text", "exc_type", "exc_message", "frame_file", "frame_function", "level", "logger", "event_kind")
REQUIRED = ("id", "title", "root_cause", "kind", "match", "remediation")
_ID = regex.compile(r"^[a-z0-9][a-z0-9_\-]*(?:\.[a-z0-9][a-z0-9_\-]*)+$")


@dataclass(frozen=True)
class Condition:
    patterns: tuple[tuple[str, Any], ...]  # (field, compiled regex): all must be found
    text_literals: tuple[str, ...] | None = None  # one must occur (lower-cased) for `text` to match
    unless: tuple[tuple[str, Any], ...] = ()  # (field, compiled regex): none may be found

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for f, _ in self.patterns)


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    root_cause: str
    kind: str
    conditions: tuple[Condition, ...]
    remediation: str
    path: str
    status: str = "stable"
    priority: int = 50
    predicts: tuple[str, ...] = ()
    phase: str | None = None
    summary: str | None = None
    references: tuple[str, ...] = ()
    false_positives: tuple[str, ...] = ()
    examples_match: tuple[str, ...] = ()
    examples_no_match: tuple[str, ...] = ()
    strength: str = "strong"
    live_when: tuple[str, ...] = ()  # precursors: the contexts (context.yaml) watch warns in
    quiet_when: tuple[str, ...] = ()  # precursors: the only contexts healthy runs print it in (else news)
    # failures: the line fails the deployment's service while its processes stay up and answer (a
    # PD deployment's KV transfer on a request): not cleared as one request's error it went on after
    ends_service: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "root_cause": self.root_cause, "kind": self.kind,
                "status": self.status, "priority": self.priority, "predicts": list(self.predicts),
                "phase": self.phase, "strength": self.strength, "remediation": self.remediation,
                "references": list(self.references), "file": self.path}


@dataclass
class MatchWarning:
    signature: str
    message: str


_SCALAR_FIELDS = ("text", "exc_type", "exc_message", "level", "logger", "event_kind")


LINE_MEMO = 2048  # plain-line answers kept (and as many traceback field values)
LINE_MEMO_LEN = 400  # longer lines are matched every time


class SignatureSet:
    """Every signature, and per field one engine holding all its patterns.
    A view is matched by scanning each of its fields once; a condition holds
    when all its patterns were found and none of its ``unless`` ones."""

    def __init__(self, signatures: list[Signature], digest: str, engine: str | None = None) -> None:
        self.signatures = signatures
        self.digest = digest
        self.by_id = {s.id: s for s in signatures}
        self.engine = engine or M.engine_name()
        self.warnings: list[MatchWarning] = []  # nothing is skipped any more (no timeouts); kept for callers
        self._index = {id(s): i for i, s in enumerate(signatures)}
        # plain line text -> indexes of the signatures it matches: a crash loop
        # prints the same start-up lines every lifetime (bounded, cleared when full)
        self._line_memo: dict[str, tuple[int, ...]] = {}
        self._value_memo: dict[tuple[str, str], tuple[int, ...]] = {}  # (field, value) -> pattern ids found
        by_field: dict[str, dict[str, int]] = {}  # field -> pattern text -> pattern id
        conds: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []  # (signature index, need, unless)

        def pid(field: str, pattern: str) -> int:
            ids = by_field.setdefault(field, {})
            if pattern not in ids:
                ids[pattern] = sum(len(v) for v in by_field.values())
            return ids[pattern]

        for si, sig in enumerate(signatures):
            for c in sig.conditions:
                need = tuple(sorted({pid(f, p.pattern) for f, p in c.patterns}))
                unless = tuple(sorted({pid(f, p.pattern) for f, p in c.unless}))
                conds.append((si, need, unless))
        try:
            self._fields = [(f, M.field_matcher(self.engine, list(ids), list(ids.values())))
                            for f, ids in by_field.items()]
        except M.PatternError as e:
            raise SignatureError(f"signatures: {e}") from None
        self._text = next((m for f, m in self._fields if f == "text"), None)
        self._only_text = all(f in ("text", "exc_type", "exc_message") for f, _ in self._fields)
        # A plain line's one view holds its text, level, logger and kind (no exception, no
        # frames): only those fields can match it, and its answer is a function of them.
        self._line_fields = [(f, m) for f, m in self._fields if f in LINE_FIELDS]
        self._line_key = tuple(f for f, _ in self._line_fields if f != "text")
        # pattern id -> the conditions that need it (a condition is looked at only once one of its patterns is found)
        self._conds_of: dict[int, list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = {}
        for cond in conds:
            for p in cond[1]:
                self._conds_of.setdefault(p, []).append(cond)

    def __len__(self) -> int:
        return len(self.signatures)

    def _found(self, view: View) -> set[int]:
        found: set[int] = set()
        for fname, fm in self._fields:
            value = getattr(view, fname)
            if value is None:
                continue
            if isinstance(value, tuple):
                for v in value:
                    found.update(self._scan(fname, fm, v))
            else:
                found.update(self._scan(fname, fm, value))
        return found

    def _scan(self, fname: str, fm: Any, value: str) -> Sequence[int]:
        """``fm.scan`` of one value, remembered per field (the ranks and
        lifetimes of a crash loop print the same frames and exceptions)."""
        key = (fname, value)
        got = self._value_memo.get(key)
        if got is None:
            got = tuple(fm.scan(M.prepare(value)))
            if len(value) <= LINE_MEMO_LEN:
                remember(self._value_memo, key, got, LINE_MEMO)
        return got

    def _sigs_of(self, found: Iterable[int]) -> set[int]:
        """Indexes of the signatures that ``found`` (pattern ids of one view) satisfies."""
        found = found if isinstance(found, (set, frozenset)) else set(found)
        out: set[int] = set()
        for p in found:
            for si, need, unless in self._conds_of.get(p, ()):
                if si in out:
                    continue
                if all(q in found for q in need) and not any(q in found for q in unless):
                    out.add(si)
        return out

    def match_views(self, views: list[View], candidates: Iterable[Signature] | None = None) -> list[tuple[Signature, int]]:
        """(signature, index of the first view it matched) for every signature
        that matches, in signature order (in ``candidates`` order when given)."""
        first: dict[int, int] = {}
        for i, view in enumerate(views):
            for si in self._sigs_of(self._found(view)):
                first.setdefault(si, i)
        if not first:
            return []
        if candidates is None:
            return [(self.signatures[si], first[si]) for si in sorted(first)]
        idx = self._index
        return [(sig, first[idx[id(sig)]]) for sig in candidates if idx.get(id(sig)) in first]

    def match_event(self, ev: Event) -> list[tuple[Signature, int]]:
        if ev.kind == kinds.TRACEBACK:
            return self.match_views(event_views(ev))
        # a plain line: ``match_views`` of its one view, without building it
        text = ev.text
        values = [line_value(ev, f) for f in self._line_key]
        key: Any = (text, *values) if values else text
        got = self._line_memo.get(key)
        if got is None:
            if self._only_text:
                found: Any = self._text.scan(M.prepare(text)) if self._text is not None else ()
            else:
                found = set()
                for fname, fm in self._line_fields:
                    value = text if fname == "text" else line_value(ev, fname)
                    if value is not None:
                        found.update(self._scan(fname, fm, value))
            got = tuple(sorted(self._sigs_of(found))) if found else ()
            if len(text) <= LINE_MEMO_LEN:
                remember(self._line_memo, key, got, LINE_MEMO)
        return [(self.signatures[si], 0) for si in got]


# ---------------------------------------------------------------- loading
def default_signature_dirs() -> list[Path]:
    env = os.environ.get("FORENSICS_SIGNATURES")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_signatures"
    if packaged.is_dir():
        return [packaged]
    return [here.parent / "signatures"]


def _fail(path: Path, where: str, msg: str) -> SignatureError:
    return SignatureError(f"{path}: {where}: {msg}")


def _compile(path: Path, where: str, pattern: Any, trusted: bool = False) -> Any:
    """The pattern (a ``LazyPattern``: its ``regex`` object on first use),
    once the matching engine has accepted it: a pattern that cannot run in
    linear time in the engine is refused here, at load, in one line.
    ``trusted``: from the cache, i.e. these very files loaded cleanly before."""
    if not isinstance(pattern, str) or not pattern:
        raise _fail(path, where, "must be a non-empty regex string")
    if trusted:
        return LazyPattern(pattern)
    try:
        compiled = M.compile_regex(pattern)
    except regex.error as e:
        raise _fail(path, where, f"regex does not compile: {e}") from None
    try:
        M.compile_check(pattern, M.engine_name())
    except M.PatternError as e:
        raise _fail(path, where, f"pattern {_short(pattern)}: {e}") from None
    return LazyPattern(pattern, compiled)


def _short(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")


def _str_list(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, where, "must be a list of strings")
    return tuple(value)


def _conditions(path: Path, match: Any, trusted: bool = False,
                literals: dict[str, list[str] | None] | None = None) -> list[Condition]:
    """The ``match`` field: one condition or a list of them, each a mapping of
    field: regex (all must be found) with an optional ``unless`` mapping."""
    if isinstance(match, dict):
        match = [match]
    if not isinstance(match, list) or not match:
        raise _fail(path, "field 'match'", "must be a non-empty list of conditions")
    conds = []
    for i, c in enumerate(match):
        if not isinstance(c, dict) or not c:
            raise _fail(path, f"field 'match[{i}]'", "must be a mapping of field: regex")
        pats, unless = [], []
        for fname, pat in c.items():
            if fname == "unless":
                # `unless: {field: regex}`: the condition fails when one of these is found
                # (what a negative look-ahead said; the engines run in linear time and have none)
                if not isinstance(pat, dict) or not pat:
                    raise _fail(path, f"field 'match[{i}].unless'", "must be a mapping of field: regex")
                for uf, up in pat.items():
                    if uf not in FIELDS:
                        raise _fail(path, f"field 'match[{i}].unless.{uf}'",
                                    f"unknown field (one of {', '.join(FIELDS)})")
                    unless.append((uf, _compile(path, f"field 'match[{i}].unless.{uf}'", up, trusted)))
                continue
            if fname not in FIELDS:
                raise _fail(path, f"field 'match[{i}].{fname}'", f"unknown field (one of {', '.join(FIELDS)})")
            pats.append((fname, _compile(path, f"field 'match[{i}].{fname}'", pat, trusted)))
        if not pats:
            raise _fail(path, f"field 'match[{i}]'", "needs at least one field besides 'unless'")
        text_pat = dict(pats).get("text")
        lits = _literals(text_pat.pattern, literals) if text_pat is not None else None
        conds.append(Condition(tuple(pats), tuple(lits) if lits else None, tuple(unless)))
    return conds


def _literals(pattern: str, memo: dict[str, list[str] | None] | None) -> list[str] | None:
    if memo is None:
        return M.required_literals(pattern)
    if pattern not in memo:
        memo[pattern] = M.required_literals(pattern)
    return memo[pattern]


def parse_signature(path: Path, raw: Any, index: int = 0, trusted: bool = False,
                    literals: dict[str, list[str] | None] | None = None) -> Signature:
    where0 = f"signature #{index + 1}" if index else "signature"
    if not isinstance(raw, dict):
        raise _fail(path, where0, "must be a mapping")
    for key in REQUIRED:
        if key not in raw:
            raise _fail(path, f"field '{key}'", "missing")
    sid = raw["id"]
    if not isinstance(sid, str) or not _ID.match(sid):
        raise _fail(path, "field 'id'", f"{sid!r} is not a dotted lowercase id")
    label = raw["root_cause"]
    if label not in LABEL_SET:
        raise _fail(path, "field 'root_cause'", f"unknown label {label!r} (see taxonomy.md)")
    kind = raw["kind"]
    if kind not in KINDS:
        raise _fail(path, "field 'kind'", f"{kind!r} is not one of {', '.join(KINDS)}")
    status = raw.get("status", "stable")
    if status not in STATUSES:
        raise _fail(path, "field 'status'", f"{status!r} is not one of {', '.join(STATUSES)}")
    predicts = _str_list(path, "field 'predicts'", raw.get("predicts"))
    for p in predicts:
        if p not in LABEL_SET:
            raise _fail(path, "field 'predicts'", f"unknown label {p!r}")
    if kind == "precursor" and not predicts:
        predicts = (label,)
    phase = raw.get("phase")
    if phase is not None and phase not in PHASES:
        raise _fail(path, "field 'phase'", f"unknown phase {phase!r}")
    prio = raw.get("priority", 50)
    if not isinstance(prio, int) or isinstance(prio, bool) or not 0 <= prio <= 100:
        raise _fail(path, "field 'priority'", "must be an integer 0-100")
    conds = _conditions(path, raw["match"], trusted, literals)
    ex = raw.get("examples") or {}
    if not isinstance(ex, dict):
        raise _fail(path, "field 'examples'", "must be a mapping with 'match' and 'no_match' lists")
    strength = raw.get("strength", "strong")
    if strength not in ("strong", "weak"):
        raise _fail(path, "field 'strength'", "must be 'strong' or 'weak'")
    if not isinstance(rem := raw["remediation"], str):
        raise _fail(path, "field 'remediation'", "must be a string")
    ends_service = raw.get("ends_service", False)
    if not isinstance(ends_service, bool) or (ends_service and kind != "failure"):
        raise _fail(path, "field 'ends_service'", "must be true or false, and true only on a failure")
    return Signature(
        id=sid, title=str(raw["title"]), root_cause=label, kind=kind, conditions=tuple(conds),
        remediation=rem.strip(), path=str(path), status=status, priority=prio, predicts=predicts, phase=phase,
        summary=(str(raw["summary"]).strip() if raw.get("summary") else None),
        references=_str_list(path, "field 'references'", raw.get("references")),
        false_positives=_str_list(path, "field 'false_positives'", raw.get("false_positives")),
        examples_match=_str_list(path, "field 'examples.match'", ex.get("match")),
        examples_no_match=_str_list(path, "field 'examples.no_match'", ex.get("no_match")),
        strength=strength, live_when=_str_list(path, "field 'live_when'", raw.get("live_when")),
        quiet_when=_str_list(path, "field 'quiet_when'", raw.get("quiet_when")), ends_service=ends_service)


def iter_signature_files(dirs: list[Path]) -> Iterator[Path]:
    for d in dirs:
        if d.is_file():
            yield d
            continue
        if not d.is_dir():
            raise SignatureError(f"{d}: signature directory not found")
        yield from sorted(p for p in d.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def _bounded_yaml(path: Path, data: bytes) -> Any:
    """``yaml.safe_load`` after a streaming check of the event stream (no
    objects built, no recursion): one-line ``SignatureError`` past a bound."""
    if len(data) > MAX_SIGNATURE_FILE_BYTES:
        raise SignatureError(f"{path}: file too large for a signature file ({len(data):,} bytes; "
                             f"at most {MAX_SIGNATURE_FILE_BYTES:,})")
    yaml, loader = _yaml()
    depth = 0
    for n, ev in enumerate(yaml.parse(data, Loader=loader)):
        if isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None) is not None:
            line = ev.start_mark.line + 1 if ev.start_mark is not None else "?"
            raise SignatureError(f"{path}: line {line}: YAML anchors and aliases (&name, *name) are not allowed "
                                 "in signature files")
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                line = ev.start_mark.line + 1 if ev.start_mark is not None else "?"
                raise SignatureError(f"{path}: line {line}: nests deeper than {MAX_YAML_DEPTH} levels")
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        if n > MAX_YAML_EVENTS:
            raise SignatureError(f"{path}: more than {MAX_YAML_EVENTS:,} YAML nodes")
    return yaml.load(data, Loader=loader)


def _read_all(files: list[Path]) -> tuple[list[bytes | OSError], Any]:
    """Every file's bytes (or the error reading it) and their digest."""
    h = hashlib.sha256()
    datas: list[bytes | OSError] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as e:
            datas.append(e)
            continue
        h.update(path.name.encode() + b"\0" + data)
        datas.append(data)
    return datas, h


def _load_doc(path: Path, data: bytes | OSError) -> Any:
    if isinstance(data, OSError):
        raise SignatureError(f"{path}: cannot read: {data.strerror}") from None
    try:
        return _bounded_yaml(path, data)
    except _yaml()[0].YAMLError as e:  # evaluated only when something was raised
        mark = getattr(e, "problem_mark", None)
        pos = f"line {mark.line + 1}" if mark is not None else "YAML"
        why = " ".join(str(getattr(e, "problem", None) or e).split())[:300]  # one line, whatever libyaml says
        raise SignatureError(f"{path}: {pos}: invalid YAML ({why})") from None


def load_signatures(dirs: list[Path] | None = None) -> SignatureSet:
    dirs = dirs or default_signature_dirs()
    files = list(iter_signature_files(dirs))
    datas, h = _read_all(files)
    clean = not any(isinstance(d, OSError) for d in datas)
    key = sigcache.cache_key(h.hexdigest(), M.engine_name()) if clean else None
    hit = sigcache.read(key, len(files)) if key is not None else None
    literals: dict[str, list[str] | None] = dict(hit["literals"]) if hit is not None else {}
    sigs: list[Signature] = []
    seen: dict[str, str] = {}
    docs: list[Any] = []
    for n, (path, data) in enumerate(zip(files, datas)):
        doc = hit["docs"][n] if hit is not None else _load_doc(path, data)
        docs.append(doc)
        if doc is None:
            continue
        raws = doc["signatures"] if isinstance(doc, dict) and "signatures" in doc else doc
        if isinstance(raws, dict):
            raws = [raws]
        if not isinstance(raws, list):
            raise SignatureError(f"{path}: top level must be a signature mapping or a list")
        for i, raw in enumerate(raws):
            sig = parse_signature(path, raw, i, hit is not None, literals)
            if sig.id in seen:
                raise SignatureError(f"{path}: field 'id': duplicate id {sig.id!r} (also in {seen[sig.id]})")
            seen[sig.id] = str(path)
            sigs.append(sig)
    sset = SignatureSet(sigs, h.hexdigest()[:16])
    if key is not None and hit is None:
        sigcache.write(key, docs, literals, literal_gate.KNOWN)  # (KNOWN: filled by the set's matchers)
    return sset


@lru_cache(maxsize=4)
def _cached(key: tuple[str, ...], engine: str) -> SignatureSet:
    return load_signatures([Path(k) for k in key])


def signature_set(dirs: list[Path] | None = None) -> SignatureSet:
    dirs = dirs or default_signature_dirs()
    return _cached(tuple(str(d) for d in dirs), M.engine_name())
