"""Lark parsers for the two grammars under ``grammar/``.

Both are LALR with the Transformer inlined (``transformer=``), so no parse
tree is built and thrown away. Only lines the router picked and whole
traceback blocks get here. A traceback block is parsed once per shape (its
sequence of line types): the reductions Lark makes are recorded and replayed
on the lines of every block of that shape.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

from lark import Lark, Token, Transformer
from lark import __version__ as lark_version
from lark.exceptions import LarkError
from lark.lexer import Lexer

from forensics.cache import cache_dir
from forensics.events.types import ExceptionRecord, Frame
from forensics.ingest.values import bounded_int, pid_value
from forensics.events.textmemo import remember


def _grammar(name: str) -> str:
    return resources.files("forensics.events").joinpath("grammar", name).read_text()


# ---------------------------------------------------------------- messages
class MessageTransformer(Transformer):
    """Each method returns (kind, fields)."""

    def cuda_graph_registration(self, items: list[Any]) -> tuple[str, dict]:
        return "cuda_graph_registration", {"count": bounded_int(str(items[1])), "verb": str(items[0]).strip()}

    def package_walk_warning(self, items: list[Any]) -> tuple[str, dict]:
        return "package_walk_warning", {"package": str(items[0])}

    def unit_message(self, items: list[Any]) -> tuple[str, dict]:
        unit = str(items[0])
        event, fields = items[1]
        return "unit_lifecycle", {"unit": unit, "event": event, **fields}

    def legacy_unit_message(self, items: list[Any]) -> tuple[str, dict]:
        state = str(items[1])
        return "unit_lifecycle", {"unit": str(items[0]), "event": "failed" if state == "failed" else f"entered-{state}"}

    def job_message(self, items: list[Any]) -> tuple[str, dict]:
        verb = str(items[0]).strip().lower().replace(" ", "-")
        rest = str(items[1]).rstrip(".").rstrip()
        unit, _, description = rest.partition(" - ")
        return "unit_lifecycle", {"unit": unit, "event": verb, "description": description or None}

    def process_exited(self, items: list[Any]) -> tuple[str, dict]:
        status = str(items[2])
        code, _, name = status.partition("/")
        return "process-exited", {"process": str(items[0]).lower(), "code": str(items[1]),
                                  "status": bounded_int(code, 2 ** 31), "status_name": name or None}

    def failed_result(self, items: list[Any]) -> tuple[str, dict]:
        return "failed", {"result": str(items[0])}

    def restart_scheduled(self, items: list[Any]) -> tuple[str, dict]:
        return "restart-scheduled", {"restart_counter": bounded_int(str(items[0]))}

    def operation_timeout(self, items: list[Any]) -> tuple[str, dict]:
        return "operation-timeout", {"operation": str(items[0]).split(" ", 1)[0].lower()}

    def killing(self, items: list[Any]) -> tuple[str, dict]:
        return "killing", {"killed_pid": pid_value(str(items[0]))}


# Unit events whose message carries no field: grammar rule -> event. Lark looks
# the rules up as methods of the transformer, so each becomes one.
_BARE_UNIT_EVENTS = {
    "oom_killed": "oom-killed",
    "deactivated": "deactivated",
    "start_limit": "start-limit-hit",
    "watchdog_timeout": "watchdog-timeout",
    "consumed": "consumed",
    "unit_other": "other",
}


def _bare_event(event: str) -> Any:
    def rule(self: MessageTransformer, items: list[Any]) -> tuple[str, dict]:
        return event, {}
    return rule


for _rule, _event in _BARE_UNIT_EVENTS.items():
    setattr(MessageTransformer, _rule, _bare_event(_event))


def lark_cache(name: str) -> str | bool:
    """Where Lark keeps the built LALR tables of grammar ``name`` (``cache=``):
    building them costs every process ~30 ms, loading them ~4 ms. Lark checks
    the file against the grammar, its options and versions, and rebuilds it
    when they changed or it cannot be read. Lark loads it with pickle, so it
    lives in the user's own cache directory (``forensics.cache``), never a
    shared temporary directory; False (no cache) when caching is off or that
    directory cannot be made or others may write it."""
    folder = cache_dir(create=True)
    if folder is None:
        return False
    return str(folder / f"lark-{name}-{lark_version}.cache")


@lru_cache(maxsize=1)
def message_parser() -> Lark:
    return Lark(_grammar("message.lark"), parser="lalr", lexer="contextual",
                transformer=MessageTransformer(), maybe_placeholders=False, cache=lark_cache("message"))


_MESSAGE_MEMO: dict[str, tuple[str, dict] | None] = {}
_MEMO_SIZE = 4096


def parse_message(text: str) -> tuple[str, dict] | None:
    """(kind, fields) for a structured message, or None when the grammar
    does not know it (the caller keeps it as a plain message). Memoised by
    text: systemd prints the same few lines every lifetime, and an LALR parse
    costs far more than a dict lookup (the fields are copied: callers add to them)."""
    try:
        got = _MESSAGE_MEMO[text]
    except KeyError:
        try:
            got = message_parser().parse(text)  # type: ignore[assignment]
        except LarkError:
            got = None
        remember(_MESSAGE_MEMO, text, got, _MEMO_SIZE)
    return None if got is None else (got[0], dict(got[1]))


# ---------------------------------------------------------------- tracebacks
_FILE = re.compile(r'^\s*File "(?P<file>[^"]*)"(?:, line (?P<line>\d+)(?:, in (?P<func>.+))?)?')
_FILE_PARTIAL = re.compile(r'^\s*File "(?P<file>.*)$')
_FAULTHANDLER_FILE = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+) in (?P<func>.+)$')
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:\[[^\]]*\])?)(?::\s?(?P<msg>.*))?$")


class _LineLexer(Lexer):
    """Feeds pre-classified lines to the LALR parser as tokens."""

    def __init__(self, lexer_conf: Any) -> None:  # noqa: D107 - Lark API
        pass

    def lex(self, data: Iterable[tuple[str, str, int]], *args: Any) -> Iterable[Token]:  # type: ignore[override]
        for ttype, text, line in data:
            yield Token(ttype, text, line=line)


class TracebackTransformer(Transformer):
    def header(self, items: list[Token]) -> tuple[str, Any]:
        return "header", items[0].line

    def frame(self, items: list[Token]) -> tuple[str, Any]:
        file_tok = items[0]
        source = None
        for tok in items[1:]:
            if tok.type == "SOURCE":
                source = tok.value.strip()
        return "frame", _memo_frame(str(file_tok.value), source)

    def orphan_source(self, items: list[Token]) -> tuple[str, Any]:
        return "orphan_source", items[0].value.strip()

    def exception(self, items: list[Token]) -> tuple[str, Any]:
        first = items[0]
        m = _EXC.match(first.value.strip())
        exc_type = m.group("type") if m else None
        msg = (m.group("msg") or "") if m else first.value.strip()
        cont = [t.value.rstrip() for t in items[1:]]
        if cont:
            msg = "\n".join([msg, *cont]) if msg else "\n".join(cont)
        return "exception", (exc_type, msg, first.line)

    def separator(self, items: list[Token]) -> tuple[str, Any]:
        return "separator", "cause" if items[0].type == "CAUSE" else "context"

    def repeat(self, items: list[Token]) -> tuple[str, Any]:
        return "repeat", items[0].value.strip()

    def group_head(self, items: list[Token]) -> tuple[str, Any]:
        return "group_head", None

    def group_sep(self, items: list[Token]) -> tuple[str, Any]:
        return "group_sep", None

    def stray(self, items: list[Token]) -> tuple[str, Any]:
        return "stray", items[0].value

    def start(self, items: list[tuple[str, Any]]) -> dict[str, Any]:
        chain: list[ExceptionRecord] = []
        frames: list[Frame] = []
        relation: str | None = None
        in_group = False
        group_members = False
        has_header = False
        orphan: list[str] = []
        for kind, value in items:
            if kind == "header":
                has_header = True
            elif kind == "frame":
                frames.append(value)
            elif kind == "orphan_source":
                orphan.append(value)
            elif kind == "separator":
                relation = value
            elif kind == "group_head":
                in_group = True
                has_header = True
            elif kind == "group_sep":
                group_members = in_group
            elif kind == "exception":
                exc_type, msg, line = value
                rel = "group-member" if group_members else relation
                chain.append(ExceptionRecord(exc_type, msg, tuple(frames), rel, line))
                frames = []
                relation = None
        return {"chain": chain, "dangling_frames": frames, "has_header": has_header, "orphan_source": orphan}


_FRAME_MEMO: dict[tuple[str, str | None], Frame] = {}


def _memo_frame(text: str, source: str | None) -> Frame:
    """``_frame``, remembered (bounded): every rank and lifetime prints the
    same frames, and a Frame is immutable."""
    key = (text, source)
    got = _FRAME_MEMO.get(key)
    if got is None:
        got = _frame(text, source)
        if len(text) <= 2000:
            remember(_FRAME_MEMO, key, got, 4096)
    return got


def _frame(text: str, source: str | None) -> Frame:
    # faulthandler's "File "x", line 12 in load_weights" (no comma before "in"):
    # read by _FILE it would keep the line and lose the function.
    fm = _FAULTHANDLER_FILE.match(text)
    if fm:
        return Frame(fm.group("file"), bounded_int(fm.group("line"), max_digits=12) or 0, fm.group("func").strip(),
                     source)
    m = _FILE.match(text)
    if m and m.group("line"):
        func = m.group("func")
        return Frame(m.group("file"), bounded_int(m.group("line"), max_digits=12) or 0, func.strip() if func else None,
                     source)
    pm = _FILE_PARTIAL.match(text)
    path = pm.group("file") if pm else text.strip()
    if m and not m.group("line"):
        path = m.group("file")
    return Frame(path.rstrip('",'), None, None, source, partial=True)


@lru_cache(maxsize=1)
def traceback_parser() -> Lark:
    """The grammar with ``TracebackTransformer`` inlined: the reference
    ``parse_traceback`` answers as (it parses by shape, below)."""
    return Lark(_grammar("traceback.lark"), parser="lalr", lexer=_LineLexer,
                transformer=TracebackTransformer(), cache=lark_cache("traceback"))


# ---------------------------------------------------------------- traceback shapes
# The grammar's terminals are the line types: which rule reduces which lines
# depends on the sequence of types alone, never on the texts. A crash loop
# prints hundreds of distinct traceback texts in few shapes (1,535 tracebacks
# of a 1,000-lifetime crash loop: 1,073 texts, 478 shapes), and the LALR
# machine was most of a traceback's cost. So the reductions of a shape are
# taken once from Lark (the grammar stays the only definition of a shape)
# and the transformer's rule methods are then called on each block's own lines,
# in the order Lark called them.
class _PlanTransformer(Transformer):
    """Records the reductions instead of doing them: each item rule gives
    (rule, its line indices), ``start`` the list of them. Token lines are the
    indices ``parse_traceback`` numbers the lines with."""

    def start(self, items: list[tuple[str, tuple[int, ...]]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return tuple(items)


def _recorder(rule: str) -> Any:
    def record(self: Any, children: list[Token]) -> tuple[str, tuple[int, ...]]:
        return rule, tuple(t.line for t in children)  # type: ignore[misc]
    return record


# The item rules: those TracebackTransformer has a method for. Lark calls a
# rule's method by name (a rule without one builds a Tree): a recorder for each.
_RULE_NAMES = [n for n in vars(TracebackTransformer) if not n.startswith("_") and n != "start"]
_RULE_IDS = {name: i for i, name in enumerate(_RULE_NAMES)}
for _rule in _RULE_NAMES:
    setattr(_PlanTransformer, _rule, _recorder(_rule))


class _Line:
    """The part of a lark Token the rule methods read (type, value, line)."""

    __slots__ = ("type", "value", "line")

    def __init__(self, type_: str, value: str, line: int) -> None:
        self.type, self.value, self.line = type_, value, line


@lru_cache(maxsize=1)
def traceback_shape_parser() -> Lark:
    return Lark(_grammar("traceback.lark"), parser="lalr", lexer=_LineLexer,
                transformer=_PlanTransformer(), cache=lark_cache("traceback-plan"))


_PLAN_MEMO: dict[tuple[str, ...], Any] = {}
_RULES = TracebackTransformer()


def traceback_plan(types: tuple[str, ...]) -> bytes | tuple[tuple[str, tuple[int, ...]], ...] | None:
    """The reductions Lark makes of a block of these line types, in order
    (None: the grammar rejects the sequence). Memoised, bounded, packed:
    a crash loop's shapes keep coming (10,000 lifetimes fill the memo), and
    as tuples they cost ~3 KB each."""
    got = _PLAN_MEMO.get(types, _MISS)
    if got is _MISS:
        try:
            got = _packed(traceback_shape_parser().parse([(t, "", i) for i, t in enumerate(types)]))  # type: ignore[arg-type]
        except LarkError:
            got = None
        if len(types) <= 400:
            remember(_PLAN_MEMO, types, got, 1024)
    return got


def _packed(plan: tuple[tuple[str, tuple[int, ...]], ...]) -> bytes | tuple[tuple[str, tuple[int, ...]], ...]:
    """A plan as bytes (rule id, number of lines) per item, when its items
    take the lines in order, each a run of at most 255 (as every shape of
    traceback.lark does); else the plan as it is."""
    out = bytearray()
    pos = 0
    for rule, idxs in plan:
        n = len(idxs)
        if not 0 < n < 256 or idxs != tuple(range(pos, pos + n)):
            return plan
        out += bytes((_RULE_IDS[rule], n))
        pos += n
    return bytes(out)


def _apply_plan(plan: bytes | tuple[tuple[str, tuple[int, ...]], ...], key: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """What the Lark parser with ``TracebackTransformer`` inlined gives for
    ``key`` (its lines numbered by position), from the plan of its shape."""
    rules = _RULES
    items = []
    if isinstance(plan, bytes):
        pos = 0
        for k in range(0, len(plan), 2):
            n = plan[k + 1]
            items.append(getattr(rules, _RULE_NAMES[plan[k]])(
                [_Line(key[i][0], key[i][1], i) for i in range(pos, pos + n)]))
            pos += n
    else:
        for rule, idxs in plan:
            items.append(getattr(rules, rule)([_Line(key[i][0], key[i][1], i) for i in idxs]))
    return rules.start(items)


def parse_traceback(tokens: list[tuple[str, str, int]]) -> dict[str, Any] | None:
    """The parse of a traceback's classified lines, memoised by their types
    and texts (every rank of a crash loop prints the same traceback, in every
    lifetime): the parse is made with positions for line numbers, and an
    exception's input line is looked up from its position."""
    key = tuple((t, text) for t, text, _line in tokens)
    got = _TB_MEMO.get(key, _MISS)
    if got is _MISS:
        plan = traceback_plan(tuple(t for t, _text in key))
        got = None if plan is None else _apply_plan(plan, key)
        if len(key) <= 400 and sum(len(text) for _t, text in key) <= 20000:
            remember(_TB_MEMO, key, got, 256)
    if got is None:
        return None
    chain = [ExceptionRecord(e.exc_type, e.exc_message, e.frames, e.relation, tokens[e.line][2])  # type: ignore[index]
             for e in got["chain"]]
    return {"chain": chain, "dangling_frames": list(got["dangling_frames"]), "has_header": got["has_header"],
            "orphan_source": list(got["orphan_source"])}


_TB_MEMO: dict[tuple[tuple[str, str], ...], Any] = {}
_MISS = object()
