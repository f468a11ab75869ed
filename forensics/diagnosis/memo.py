"""A crash loop's lifetimes diagnosed once per shape (issue 29, item 2).

A crash-looping service prints the same start-up and the same failure
hundreds of times; each lifetime differs from the last in where it sits (its
lines and times), its index, and little else. ``LifetimeMemo`` diagnoses a
shape in full and replays the stored answer for the next lifetimes of that
shape, with their own index, lines and times put in. Used where nobody keeps
the incidents (``diagnose_events`` without ``keep_incidents``: ``classify
--format json``, the API, batch).

The shape is the whole incident, walked generically (every attribute of the
incident and of everything it holds), so fields added later are in it by
construction. Two kinds of values are written relative to the lifetime:
integers under a name that says they are a log line (``line``, ``*_line``,
the first item of the pairs named in ``_LINE_FIRST``), from ``start_line``
on, as offsets from it; every ``datetime`` as its class (which distinct time
of the lifetime it is), with the classes' order, so equality and order
between times are in the shape and their distances are not. The diagnosis
reads a distance in a few places only (``KNOWN_TIME_READS`` in
``tests/diagnosis/test_lifetime_memo.py`` fails on a new one): the distances
it writes (lead, time to failure, duration), re-derived on replay, and the
stall test of ``verdicts.healthy_verdict``, whose outcome is in the shape.
Everything else is in the shape as it is: what the walk does not know to
relativise makes two lifetimes differ (a miss, never a wrong answer). A
subclass of a container or a scalar (a ``Counter``, a named tuple, a Lark
``Token``) is written with its contents and its own attributes; an object
the walk cannot write (a subclass of a time, a compiled pattern) makes the
lifetime unmemoisable. Objects met twice are references, so which events are
the same object (the diagnosis asks ``is``) is part of the shape.

Replay moves, in a copy of the stored answer, the integers under a line
name by the line offset, maps each ``*_ts`` time to the new lifetime's time
of the same class, and re-derives every number under a time name (``*_s``,
``*seconds``) from the pairs of time classes that gave it (a lead ends at
its line's time where one event holds that line; a time to failure or a
duration starts at the start); when those pairs disagree now, the lifetime
is diagnosed in full. The first replay of each shape is checked against a
full diagnosis (and the incident's shape after it: the diagnosis changed
nothing the walk sees); a shape that fails is diagnosed in full from then on.

Bounded: ``SHAPES`` shapes and ``SEEN`` cheap pre-keys (a shape is walked
only for a pre-key seen before), least recently used out.
``FORENSICS_NO_MEMO=1`` turns the memo off (for comparisons).
"""
from __future__ import annotations

import marshal
import os
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from mypy_extensions import mypyc_attr

from forensics.events.types import Event
from forensics.incidents import verdicts

SHAPES = 64  # full shapes kept (each holds one lifetime's retained events: ~10-30 KB)
SEEN = 4096  # cheap pre-keys remembered (a shape is built only for a pre-key seen before)
# (line, ...) pairs whose first item is a log line, by the name that holds them.
_LINE_FIRST = frozenset({"transitions", "markers", "progress_by_proc", "kernel_archs", "first_error"})
_SCALARS = (str, int, float, bool, type(None), bytes)
_SLOTS: dict[type, list[str]] = {}  # a class's slot names, its bases' included


def enabled() -> bool:
    return os.environ.get("FORENSICS_NO_MEMO", "") in ("", "0")


def _line_name(name: Any) -> bool:
    return type(name) is str and (name == "line" or name.endswith("_line"))


class Unwalkable(Exception):
    """The incident holds an object the walk cannot write down."""


class _Walk:
    """The shape of one incident as a flat tuple (see the module docstring)."""

    __slots__ = ("line0", "line_time", "offset", "out", "refs", "times", "ts0")

    def __init__(self, line0: int, ts0: datetime | None) -> None:
        self.out: list[Any] = []
        self.line0 = line0
        self.ts0 = ts0.replace(tzinfo=None) if ts0 is not None else None
        self.offset = ts0.utcoffset() if ts0 is not None else None
        self.refs: dict[int, int] = {}
        self.times: dict[timedelta, int] = {}  # distance from the start -> its class (in order met)
        self.line_time: dict[int, int] = {}  # an event's line -> the class of its time (-1: two differ)

    def value(self, v: Any, name: Any = None) -> None:
        out = self.out
        t = type(v)
        if t is str:
            out.append(v)
        elif t is int and _line_name(name):
            self._line(v)
        elif t in _SCALARS:
            out.append(t)
            out.append(v)
        elif t is datetime:
            self._time(v)
        elif t is tuple or t is list:
            out.append(t)
            out.append(len(v))
            if name in _LINE_FIRST:
                self._line_first(v, name)
            else:
                for x in v:
                    self.value(x, name if _line_name(name) else None)
        elif t is _Mark:
            out.append(v)
        else:
            self._object(v, t, name)

    def _line(self, v: int) -> None:
        """A log line: from the lifetime's start when in it or after (lines
        before it -- carried warnings, 0 for none -- stay as they are)."""
        if v >= self.line0:
            self.out.append(_LINE)
            self.out.append(v - self.line0)
        else:
            self.out.append(int)
            self.out.append(v)

    def _line_first(self, v: Any, name: str) -> None:
        """A (line, ...) pair, or a sequence of them."""
        if v and type(v[0]) is int:
            self._line(v[0])
            for x in v[1:]:
                self.value(x)
        else:
            for x in v:
                self.value(x, name)

    def _time(self, v: datetime) -> int:
        """A time as its class: which distinct time of the lifetime it is (the
        classes' order is added at the end); its distance from the start is
        left out. Returns the class (-1 when written as it is)."""
        out = self.out
        out.append(datetime)
        if self.ts0 is None:
            out.append(v)
            return -1
        if v.utcoffset() != self.offset:
            raise Unwalkable("times in more than one zone")
        k = self.times.setdefault(v.replace(tzinfo=None) - self.ts0, len(self.times))
        out.append(k)
        out.append(v.tzinfo)
        out.append(v.fold)
        return k

    def _object(self, v: Any, t: type, name: Any) -> None:
        out = self.out
        ref = self.refs.get(id(v))
        if ref is not None:
            out.append(_REF)
            out.append(ref)
            return
        self.refs[id(v)] = len(self.refs)
        out.append(t)
        if t is Event:
            self._event(v)
        elif t is timedelta:
            out.append(v)
        elif getattr(t, "__name__", "") == "Signature":
            out.append(id(v))  # one signature set per memo: the same object is the same signature
        elif isinstance(v, (dict, list, tuple, deque, set, frozenset, str, bytes, int, float)):
            self._contents(v, name)
            if hasattr(v, "__dict__"):  # a subclass's own attributes too (a Counter's none, a Token's position)
                self._fields(v, t)
        elif isinstance(v, (datetime, timedelta)):
            raise Unwalkable(t.__name__)  # a subclass of a time: not written as one
        elif hasattr(v, "__dict__") or hasattr(t, "__slots__"):
            self._fields(v, t)
        else:
            raise Unwalkable(t.__name__)

    def _contents(self, v: Any, name: Any) -> None:
        """What a container (or a subclass of one, or of a scalar) holds."""
        out = self.out
        if isinstance(v, dict):
            self._dict(v, name)
        elif isinstance(v, deque):
            out.append(v.maxlen)
            out.append(len(v))
            for x in v:
                self.value(x, name)
        elif isinstance(v, (set, frozenset)):
            out.append(len(v))
            for x in sorted(v, key=repr):
                self.value(x, name)
        elif isinstance(v, (list, tuple)):
            out.append(len(v))
            for x in v:
                self.value(x, name if _line_name(name) else None)
        elif isinstance(v, (str, bytes)):
            out.append(v[:])  # the plain value
        else:
            out.append(int(v) if isinstance(v, int) else float(v))

    def _event(self, ev: Event) -> None:
        """An event, written out inline (most of a shape is events)."""
        out = self.out
        pid, line, end = ev.pid, ev.line, ev.end_line
        out += (ev.kind, ev.text, ev.host, ev.ident, type(pid), pid, ev.rank, ev.level, ev.logger, ev.source)
        self._line(line)
        if end is None:
            out.append(None)
        else:
            self._line(end)
        ts = ev.ts
        if type(ts) is datetime:
            k = self._time(ts)
            if self.line_time.setdefault(line, k) != k:
                self.line_time[line] = -1
        else:
            self.value(ts)
        data = ev.data
        if data:
            self.value(data)
        else:
            out.append(type(data))

    def _dict(self, v: dict, name: Any) -> None:
        out = self.out
        out.append(len(v))
        first = name in _LINE_FIRST
        for k, x in v.items():
            self.value(k)
            if first and type(x) is tuple:
                self.value(x, name)
            elif first and type(x) is int:
                self._line(x)
            else:
                self.value(x, k)

    def _fields(self, v: Any, t: type) -> None:
        slots = _SLOTS.get(t)
        if slots is None:
            slots = _SLOTS[t] = [s for cls in t.__mro__ for s in _slot_names(cls) if s not in ("__dict__", "__weakref__")]
        named = hasattr(v, "__dict__")  # a slots class's names follow from its class, written before
        names = [*vars(v), *slots] if named else slots
        out = self.out
        for n in names:
            x = getattr(v, n, _ABSENT)
            if named:
                out.append(n)
            tx = type(x)
            if tx is str or x is None:  # most fields: no call
                out.append(x)
            elif (tx is int and not _line_name(n)) or tx is bool:
                out.append(tx)
                out.append(x)
            else:
                self.value(x, n)
        out.append(len(names))


def _slot_names(cls: type) -> tuple[str, ...]:
    slots = getattr(cls, "__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


class _Mark:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_LINE, _REF, _ABSENT = _Mark("line"), _Mark("ref"), _Mark("absent")


def shape(inc: Any) -> tuple[tuple, _Walk]:
    """The incident's shape (the memo's key) and the walk that wrote it (its
    time classes and the time class of each event's line)."""
    walk = _Walk(inc.start_line, inc.start_ts)
    walk.refs[id(inc)] = 0
    for name, v in vars(inc).items():
        if name != "index":  # which lifetime it is: replay puts it in
            walk.out.append(name)
            walk.value(v, name)
    # The times enter as classes: their order is part of the shape, and so is the one
    # decision that reads a distance between two of them (verdicts.healthy_verdict's stall).
    walk.out.append(tuple(walk.times[d] for d in sorted(walk.times)))
    walk.out.append(_stalled(inc))
    return tuple(walk.out), walk


def _stalled(inc: Any) -> bool | None:
    if not (inc.end_ts and inc.last_progress_ts):
        return None
    return (inc.end_ts - inc.last_progress_ts).total_seconds() > verdicts.STALL_SECONDS


def _pre_key(inc: Any) -> tuple:
    """A cheap function of what ``shape`` writes: equal shapes have equal
    pre-keys, so a shape is built only once its pre-key has come before."""
    return (inc.end_line - inc.start_line, inc.events, inc.process_events, len(inc.failure_hits),
            len(inc.precursor_hits), len(inc.wrapper_hits), len(inc.tracebacks), len(inc.error_lines),
            len(inc.warning_lines), inc.phase, inc.server, inc.source)


_START_GAPS = {"duration_s": "max0", "time_to_failure_s": "max0"}  # distances from the lifetime's start
_MODES = ("secs", "max0", "round3")
MAX_CANDIDATES = 64


def _gap(mode: str, d: timedelta) -> float:
    s = d.total_seconds()
    return s if mode == "secs" else (max(0.0, s) if mode == "max0" else round(s, 3))


def _time_name(name: Any) -> bool:
    return type(name) is str and name.endswith(("_s", "seconds"))


class _Recipe:
    """How a stored answer becomes another lifetime's: where its lines, times
    and distances in time sit, found once when the answer is stored."""

    def __init__(self, answer: dict[str, Any], line0: int, walk: _Walk) -> None:
        self.line0 = line0
        self.offsets = _class_offsets(walk)
        self.ts0 = walk.ts0
        self.line_time = walk.line_time
        self.patches: list[tuple[tuple, str, Any]] = []
        self._find(answer, ())

    def _find(self, v: Any, path: tuple, name: Any = None, parent: Any = None) -> None:
        t = type(v)
        if t is dict:
            for k, x in v.items():
                self._find(x, (*path, k), k, v)
        elif t is list:
            for i, x in enumerate(v):
                self._find(x, (*path, i), name, v)
        elif t is int and _line_name(name):
            if v >= self.line0:
                self.patches.append((path, "line", None))
        elif t is str and type(name) is str and name.endswith("_ts"):
            self.patches.append((path, "ts", self._class_of(v)))
        elif (t is float or t is int) and _time_name(name):
            self.patches.append((path, "gap", self._pairs(v, name, parent)))
        elif t not in _SCALARS:
            raise Unwalkable(t.__name__)

    def _class_of(self, iso: str) -> int:
        if self.ts0 is None:
            raise Unwalkable("a time in a lifetime without one")
        k = self.offsets.index(datetime.fromisoformat(iso).replace(tzinfo=None) - self.ts0) \
            if (datetime.fromisoformat(iso).replace(tzinfo=None) - self.ts0) in self.offsets else -1
        if k < 0:
            raise Unwalkable("a time that is not one of the lifetime's")
        return k

    def _pairs(self, v: float, name: str, parent: Any) -> list[tuple[str, int, int]]:
        """Every (mode, a, b) of the lifetime's time classes whose distance
        gives ``v``: the answer's own is among them. The start's class is the
        one end of a distance from the start; a warning's lead ends at its
        line's time when one event holds that line."""
        offs = self.offsets
        if self.ts0 is None:
            raise Unwalkable("a distance in a lifetime without times")
        mode = _START_GAPS.get(name)
        modes = (mode,) if mode else ("round3",) if name == "lead_seconds" else _MODES
        ends = range(len(offs))
        if mode and timedelta(0) in offs:
            ends = range(offs.index(timedelta(0)), offs.index(timedelta(0)) + 1)
        elif name == "lead_seconds" and type(parent) is dict and type(parent.get("line")) is int:
            k = self.line_time.get(parent["line"], -1)
            ends = range(k, k + 1) if k >= 0 else ends
        found = [(m, a, b) for m in modes for b in ends for a in range(len(offs)) if _gap(m, offs[a] - offs[b]) == v]
        if not found or len(found) > MAX_CANDIDATES:
            raise Unwalkable(f"{name} is no distance of the lifetime's times")
        return found

    def replay(self, stored: bytes, inc: Any, walk: _Walk) -> dict[str, Any] | None:
        """The answer for ``inc`` (of the same shape), or None when the stored
        one cannot tell it (two candidate distances now differ)."""
        offs = _class_offsets(walk)
        out = marshal.loads(stored)
        dl = inc.start_line - self.line0
        for path, op, arg in self.patches:
            box = out
            for k in path[:-1]:
                box = box[k]
            last = path[-1]
            if op == "line":
                box[last] += dl
            elif op == "ts":
                shift = (walk.ts0 + offs[arg]) - (self.ts0 + self.offsets[arg])  # type: ignore[operator]
                box[last] = (datetime.fromisoformat(box[last]) + shift).isoformat()
            else:
                got = {_gap(m, offs[a] - offs[b]) for m, a, b in arg}
                if len(got) != 1:
                    return None
                box[last] = got.pop()
                if last == "lead_seconds" and box[last] < 0:
                    return None  # the diagnosis says no lead there (early_warnings.lead_seconds): diagnose afresh
        out["index"] = inc.index
        return out


def _class_offsets(walk: _Walk) -> list[timedelta]:
    offs = [timedelta(0)] * len(walk.times)
    for d, k in walk.times.items():
        offs[k] = d
    return offs


class _Entry:
    __slots__ = ("answer", "bad", "checked", "recipe")

    def __init__(self, answer: bytes | None, recipe: _Recipe | None) -> None:
        self.answer, self.recipe = answer, recipe
        self.checked = False
        self.bad = recipe is None


@mypyc_attr(allow_interpreted_subclasses=True)  # (a test counts what it does)
class LifetimeMemo:
    """Diagnoses of one source's lifetimes, by shape (bounded, LRU)."""

    def __init__(self) -> None:
        self.shapes: OrderedDict[tuple, _Entry] = OrderedDict()
        self.seen: OrderedDict[tuple, None] = OrderedDict()
        self.limits = (SHAPES, SEEN)
        self.replayed = self.diagnosed = 0

    def diagnose(self, inc: Any, compute: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        """``compute(inc)``, or the same answer replayed from a lifetime of the same shape."""
        pre = _pre_key(inc)
        if pre not in self.seen:
            _remember(self.seen, pre, self.limits[1])
            return self._full(inc, compute)
        self.seen.move_to_end(pre)
        try:
            key, walk = shape(inc)
        except Unwalkable:
            return self._full(inc, compute)
        entry = self.shapes.get(key)
        if entry is None:
            answer = self._full(inc, compute)
            _remember(self.shapes, key, self.limits[0], _store(inc, key, walk, answer))
            return answer
        self.shapes.move_to_end(key)
        recipe, stored = entry.recipe, entry.answer
        replay = recipe.replay(stored, inc, walk) if recipe is not None and stored is not None and not entry.bad else None
        if replay is None:
            return self._full(inc, compute)
        if not entry.checked:  # the first replay of a shape is checked against a full diagnosis
            answer = self._full(inc, compute)
            entry.checked = True
            entry.bad = replay != answer or not _unchanged(inc, key)
            return answer
        self.replayed += 1
        return replay

    def _full(self, inc: Any, compute: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        self.diagnosed += 1
        return compute(inc)


def _store(inc: Any, key: tuple, walk: _Walk, answer: dict[str, Any]) -> _Entry:
    try:
        if _unchanged(inc, key):
            return _Entry(marshal.dumps(answer), _Recipe(answer, inc.start_line, walk))
    except (Unwalkable, ValueError):  # (marshal: a value of another type; never in the contract)
        pass
    return _Entry(None, None)


def _unchanged(inc: Any, key: tuple) -> bool:
    """The diagnosis left the incident as the walk sees it (what it writes for
    ``relink`` aside: that is read only where incidents are kept, and the
    memo is not used there)."""
    notes: Any = getattr(inc, "ew_notes", None)
    failure = getattr(notes, "failure", None)
    if notes is not None and failure is not None:
        notes.failure = None
    try:
        return shape(inc)[0] == key
    except Unwalkable:
        return False
    finally:
        if notes is not None and failure is not None:
            notes.failure = failure


def _remember(table: OrderedDict, key: Any, limit: int, value: Any = None) -> None:
    if len(table) >= limit:
        table.popitem(last=False)
    table[key] = value
