"""Application prefixes inside a message: SGLang ranks, vLLM process/level
headers, torch ``[rankN]:``, glog, Python logging. They nest (a wrapper's
logger around a vLLM line around a Ray worker prefix), so they are peeled in
a loop. Dispatch on the first character keeps the common case to one regex.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, cast

from forensics.envelope.clock import MAX_OFFSET
from forensics.events.tables import joined, load_table
from forensics.ingest.values import pid_value

UTC = timezone.utc

_RX: dict[str, re.Pattern[str]] = {name: re.compile(cast(str, joined(rx)))
                                    for name, rx in load_table(__file__, "prefixes.yaml").items()}
(_SGL, _SGL_SHORT, _GPU_ID, _RANK, _GLOG, _PROC, _VLLM, UVICORN, _LEVEL_NAME, _PYLOG, _LLAMA_LOG) = (
    _RX[name] for name in ("sglang", "sglang_short", "gpu_id", "rank", "glog", "proc", "vllm", "uvicorn",
                           "level_name", "pylog", "llama_log"))
_VLLM_HEADS = ("DEBUG ", "INFO ", "WARNING ", "WARN ", "ERROR ", "CRITICAL ")
UVICORN_HEADS = ("INFO:", "WARNING:", "ERROR:", "CRITICAL:", "DEBUG:", "TRACE:")
LEVEL_NAMES = {"WARN": "WARNING", "FATAL": "CRITICAL", "I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL",
               "D": "DEBUG"}


class Prefix:
    """What the peeled prefixes said about a line. Class-level defaults (not
    a dataclass): one is built per input line, and only the fields a line
    has are ever assigned."""

    app_ts: datetime | None = None
    app_zoned: bool = False  # the stamp printed a zone (app_ts is then its UTC time already)
    rank: str | None = None
    level: str | None = None
    logger: str | None = None
    proc: str | None = None
    proc_pid: int | None = None
    dialect: str | None = None  # "sglang" | "vllm" | "torch" | "glog" | "uvicorn" | "pylog" | "llama"
    header: str | None = None  # the exact prefix text (vLLM repeats it on every traceback line)

    def __init__(self, text: str) -> None:
        self.text = text


_dt_cache: dict[str, datetime | None] = {}
_SGL_CACHE: dict[str, tuple[datetime | None, str | None]] = {}  # "[date TPn] " -> (app_ts, rank)


def _dt(d: str, ms: str | None = None) -> datetime | None:
    if not ms:
        # Log lines share their second with their neighbours: cache the parse.
        hit = _dt_cache.get(d, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        if len(_dt_cache) > 4096:
            _dt_cache.clear()
        _dt_cache[d] = val = _dt_parse(d, None)
        return val
    return _dt_parse(d, ms)


_MISSING = object()


def _dt_parse(d: str, ms: str | None) -> datetime | None:
    try:
        dt = datetime.fromisoformat(d.replace(" ", "T"))
    except ValueError:
        return None
    if ms:
        dt = dt.replace(microsecond=int(ms.ljust(6, "0")[:6]))
    return dt.replace(tzinfo=UTC)


def _offset_minutes(tz: str) -> int | None:
    """Minutes east of UTC of a printed zone ("Z", ``+08:00``, ``-0500``); None for one no zone is
    ("+99:99": past 14 hours or 59 minutes)."""
    if tz == "Z":
        return 0
    hours, minutes = int(tz[1:3]), int(tz[-2:])
    if minutes >= 60 or (hours * 60 + minutes) * 60 > MAX_OFFSET:
        return None
    return (hours * 60 + minutes) * (-1 if tz[0] == "-" else 1)


def _zoned(ts: datetime, minutes: int) -> datetime:
    """``ts`` (read as UTC) as the UTC time of a stamp ``minutes`` east of UTC."""
    try:
        return ts - timedelta(minutes=minutes)
    except OverflowError:  # moved past year 1 or 9999: the stamp as printed rather than a crash
        return ts


_MD_CACHE: dict[tuple[int, str, str], datetime | None] = {}


def _md(year: int, md: str, hms: str) -> datetime | None:
    """``_md_parse``, remembered (bounded): a second's lines share their stamp."""
    key = (year, md, hms)
    hit = _MD_CACHE.get(key, _MISSING)
    if hit is _MISSING:
        if len(_MD_CACHE) > 4096:
            _MD_CACHE.clear()
        hit = _MD_CACHE[key] = _md_parse(year, md, hms)
    return hit  # type: ignore[return-value]


def _md_parse(year: int, md: str, hms: str) -> datetime | None:
    try:
        if "-" in md:
            mon, day = int(md[:2]), int(md[3:5])
        elif len(md) == 3:
            mon, day = int(md[0]), int(md[1:])
        else:
            mon, day = int(md[:2]), int(md[2:4])
        return datetime(year, mon, day, int(hms[:2]), int(hms[3:5]), int(hms[6:8]), tzinfo=UTC)
    except ValueError:
        return None


def split_prefix(text: str, year: int) -> Prefix:
    """Peel application prefixes off ``text`` (a Prefix of its own)."""
    msg, p = peel_prefix(text, year)
    if p.header is not None and _SHARED.get(p.header) is p:  # a shared one: copy it
        q = Prefix(msg)
        # Field by field (no __dict__: the compiled Prefix has slots).
        q.app_ts, q.app_zoned, q.rank, q.level, q.logger = p.app_ts, p.app_zoned, p.rank, p.level, p.logger
        q.proc, q.proc_pid, q.dialect, q.header = p.proc, p.proc_pid, p.dialect, p.header
        return q
    return p


def peel_prefix(text: str, year: int) -> tuple[str, Prefix]:
    """(the message, what its prefixes said). The Prefix may be shared by
    every line with the same prefix text: read it, never change it."""
    if text[:1] == "[":
        # Fast path: an SGLang "[date TPn] " head (seen before, else parsed
        # now), nothing nested after it: what the loop below makes of it.
        j = text.find("] ", 10, 90)
        head = text[: j + 2] if j > 0 else ""
        hit = _SGL_CACHE.get(head)
        if hit is None:
            hit = _sglang_parts(head) if head else None
            if hit is None and (m := _SGL.match(text)) is not None:
                head = m.group(0)
                hit = _sglang_head(m)
        if hit is not None:
            k = len(head)
            c = text[k:k + 1]
            if c != "[" and c != "(":
                if c not in "IWECDT" or not text.startswith(UVICORN_HEADS, k):
                    return text[k:], _SHARED.get(head) or _shared(head, hit, None)
                um = UVICORN.match(text, k)
                if um is None:
                    return text[k:], _SHARED.get(head) or _shared(head, hit, None)
                n = um.end()
                c = text[n:n + 1]
                if c != "[" and c != "(":
                    header = text[:n]
                    return text[n:], _SHARED.get(header) or _shared(header, hit, um.group("lvl"))
    p = Prefix(text)
    headers: list[str] = []
    for _ in range(5):
        t = p.text
        if not t:
            break
        peel = _PEELERS.get(t[0])
        if peel is None:
            break
        n, stop = peel(p, t, year)
        if not n:
            break
        headers.append(t[:n])
        p.text = t[n:]
        if stop:
            break
    if headers:
        p.header = "".join(headers)
    return p.text, p


# The prefix text of SGLang lines (its head, and uvicorn's level after it)
# -> the one Prefix of all of them: what the peeling loop makes of that text
# (SHARED_LIMIT at most; cleared when full).
_SHARED: dict[str, Prefix] = {}
SHARED_LIMIT = 4096


def _shared(header: str, hit: tuple[datetime | None, str | None], level: str | None) -> Prefix:
    p = Prefix("")
    p.app_ts, rank = hit
    if rank:
        p.rank = rank
    if level:
        p.level = level
    p.dialect = "sglang"
    p.header = header
    if len(_SHARED) >= SHARED_LIMIT:
        _SHARED.clear()
    _SHARED[header] = p
    return p


# The SGLang head is "[" + a fixed-width date + the rest (milliseconds, tags,
# "] "): the date part matches exactly 19 characters whatever follows, and the
# rest, which reads no "]" before its end, is decided by the text up to the
# first "] ". So a new second's head is read as the date matched alone and the
# rest remembered (the full pattern on a rest not seen, or when the table's
# pattern is not this one).
_SGL_DATE_RX = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
_SGL_REST_RX = r"(?:[.,](?P<ms>\d{3}))?(?P<tags>(?: [A-Za-z_]+\d+)*| encode_server| encode_dp_worker\[\d+\])\] "
SGL_SPLIT = _SGL.pattern == rf"\[(?P<d>{_SGL_DATE_RX}){_SGL_REST_RX}"
_SGL_DATE = re.compile(rf"{_SGL_DATE_RX}\Z").match
_SGL_REST = re.compile(_SGL_REST_RX).match
_SGL_RESTS: dict[str, tuple[str | None, str] | None] = {}  # rest text -> (ms, tags); None: not one


def is_sglang_rest(rest: str) -> bool:
    """Whether "[" + any 19-character date of digits + ``rest`` (up to and
    with its first "] ") is an SGLang head to ``peel_prefix``'s fast path,
    which then reads its rank from ``rest`` alone (the date sets only
    ``app_ts``)."""
    if not SGL_SPLIT:
        return False
    m = _SGL_REST(rest)
    return m is not None and m.end() == len(rest) and rest.find("] ") == len(rest) - 2


def _sglang_parts(head: str) -> tuple[datetime | None, str | None] | None:
    """``_sglang_head`` of ``head`` (a line up to its first "] ") from its
    parts, or None (rest not seen yet, or not a head: the caller matches)."""
    if not SGL_SPLIT or len(head) < 22:
        return None
    rest = _SGL_RESTS.get(head[20:], _MISSING)
    if rest is _MISSING:
        m = _SGL_REST(head, 20)
        if len(_SGL_RESTS) > 1024:
            _SGL_RESTS.clear()
        _SGL_RESTS[head[20:]] = (m.group("ms"), m.group("tags")) if m is not None and m.end() == len(head) else None
        return None
    if rest is None or _SGL_DATE(head, 1, 20) is None:
        return None
    ms, tags = cast("tuple[str | None, str]", rest)
    tags = tags.strip()
    hit = (_dt(head[1:20], ms), tags or None)
    if len(_SGL_CACHE) > 4096:
        _SGL_CACHE.clear()
    _SGL_CACHE[head] = hit
    return hit


def _sglang_head(m: re.Match[str]) -> tuple[datetime | None, str | None]:
    """(time, rank tags) of an SGLang head, remembered by its text."""
    tags = m.group("tags").strip()
    hit = (_dt(m.group("d"), m.group("ms")), tags or None)
    if len(_SGL_CACHE) > 4096:
        _SGL_CACHE.clear()
    _SGL_CACHE[m.group(0)] = hit
    return hit


# A peeler reads the prefix at the start of ``t`` into ``p`` and returns (its
# length, 0 when there is none; whether peeling stops after it).
def _peel_sglang_rest(p: Prefix, t: str, rest: str, dialect: str | None) -> tuple[int, bool]:
    """After an SGLang "[date TPn] " head: an optional uvicorn level, then
    nothing nests inside an SGLang record but rank / process tags."""
    um = UVICORN.match(rest) if rest.startswith(UVICORN_HEADS) else None
    if um:
        p.level = um.group("lvl")
        rest = rest[um.end():]
        if dialect:
            p.dialect = dialect
    return len(t) - len(rest), rest[:1] not in ("[", "(")


def _peel_bracket(p: Prefix, t: str, year: int) -> tuple[int, bool]:
    j = t.find("] ", 10, 90)
    hit = _SGL_CACHE.get(t[: j + 2]) if j > 0 else None
    if hit is not None:
        # The same "[date TPn] " prefix recurs on many lines: reuse its parse.
        p.app_ts, rank = hit
        if rank:
            p.rank = rank
        p.dialect = p.dialect or "sglang"
        return _peel_sglang_rest(p, t, t[j + 2:], None)
    m = _SGL.match(t)
    if m:
        p.app_ts, rank = _sglang_head(m)
        if rank:
            p.rank = rank
        p.dialect = p.dialect or "sglang"
        return _peel_sglang_rest(p, t, t[m.end():], "sglang")
    m = _RANK.match(t)
    if m:
        p.rank = p.rank or f"rank{m.group('rank')}"
        p.dialect = p.dialect or "torch"
    elif (m := _GLOG.match(t)) is not None:
        p.level = p.level or LEVEL_NAMES[m.group("lvl")]
        p.logger = p.logger or m.group("file")
        p.dialect = p.dialect or "glog"
    elif (m := _SGL_SHORT.match(t)) is not None:
        p.rank = m.group("tags").strip()
        p.dialect = p.dialect or "sglang"
    elif (m := _GPU_ID.match(t)) is not None:
        p.rank = f"gpu{m.group('gpu')}"
        p.dialect = p.dialect or "sglang"
    return (m.end() if m else 0), False


# "(proc rank=N pid=N) " tags -> (proc, pid, rank tag). The tag regex reads no
# ")" before its end, so its match is decided by the text up to the first ") ".
_PROC_CACHE: dict[str, tuple[str, Any, str | None]] = {}


def _peel_proc(p: Prefix, t: str, year: int) -> tuple[int, bool]:
    """A Ray-style process tag: ``(EngineCore_0 pid=123) ``."""
    i = t.find(")")
    hit = _PROC_CACHE.get(t[:i + 2]) if i > 0 and t[i + 1:i + 2] == " " else None
    if hit is None:
        m = _PROC.match(t)
        if m is None:
            return 0, False
        hit = (m.group("proc"), pid_value(m.group("pid")) if m.group("pid") else _MISSING,
               f"rank{m.group('rank')}" if m.group("rank") else None)
        if len(_PROC_CACHE) > 1024:
            _PROC_CACHE.clear()
        _PROC_CACHE[m.group(0)] = hit
        n = m.end()
    else:
        n = i + 2
    proc, pid, rank = hit
    p.proc = proc
    if pid is not _MISSING:  # a pid=, even one out of range (None)
        p.proc_pid = cast("int | None", pid)
    if rank is not None:
        p.rank = rank
    elif p.proc and p.proc[-1].isdigit() and p.rank is None:
        p.rank = p.proc
    return n, False


def _peel_level(p: Prefix, t: str, year: int) -> tuple[int, bool]:
    """A line that starts with a level: vLLM's header, glog, uvicorn, ``LEVEL:logger:``."""
    m = _VLLM.match(t) if t.startswith(_VLLM_HEADS) else None
    if m:
        p.level = LEVEL_NAMES.get(m.group("lvl"), m.group("lvl"))
        p.logger = m.group("file")
        if p.app_ts is None:
            p.app_ts = _md(year, m.group("md"), m.group("hms"))
        p.dialect = "vllm"
    elif t[1:2].isdigit() and (m := _GLOG.match(t)) is not None:
        p.level = p.level or LEVEL_NAMES[m.group("lvl")]
        p.logger = p.logger or m.group("file")
        p.dialect = p.dialect or "glog"
    elif not t.startswith(UVICORN_HEADS):
        m = None
    elif (m := UVICORN.match(t)) is not None:
        p.level = m.group("lvl")
        p.dialect = p.dialect or "uvicorn"
    elif (m := _LEVEL_NAME.match(t)) is not None:
        p.level = m.group("lvl")
        p.logger = m.group("logger")
        p.dialect = p.dialect or "pylog"
    if m is None and (m := _TRACING.match(t)) is not None:
        _read_tracing(p, m)
    return (m.end() if m else 0), False


# Rust's tracing-subscriber, as TGI's launcher and router (and other Rust front
# ends) print once an envelope took the timestamp: the level right-aligned in
# five columns, the spans, the target, a source location:
# " INFO shard-manager: text_generation_launcher: Starting shard rank=0",
# "ERROR warmup{max_input_length=4095}:warmup: text_generation_router_v3::client:
# backends/v3/src/client/mod.rs:54: Server error: ...". The target is a Rust path
# with an underscore or a "::" (a bare word after a level is some other logger).
# Spans stay in the message (they say what the process was doing: "warmup{...}:warmup:",
# "download:", "shard-manager:"); without them the target and location are peeled.
_SPAN = r"[\w-]+(?:\{[^{}\n]{0,2000}\})?"
_TARGET = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:::[a-z0-9_]+)*|[a-z][a-z0-9_]*(?:::[a-z0-9_]+)+"
_TRACING = re.compile(rf" {{0,2}}(?P<lvl>TRACE|DEBUG|INFO|WARN|ERROR) (?:(?={_SPAN}(?::{_SPAN})*: (?:{_TARGET}): )|"
                      rf"(?P<target>{_TARGET}): (?:[\w./-]{{1,300}}\.rs:\d+: )?)")


def _read_tracing(p: Prefix, m: re.Match[str]) -> None:
    p.level = LEVEL_NAMES.get(m.group("lvl"), m.group("lvl"))
    p.logger = m.group("target")
    p.dialect = p.dialect or "tracing"


def _peel_tracing(p: Prefix, t: str, year: int) -> tuple[int, bool]:
    """A tracing line whose level is right-aligned (" INFO", "  WARN")."""
    m = _TRACING.match(t) if t[1:5] in _ONE_SPACE or t[2:6] in _PADDED_LEVELS else None
    if m is None:
        return 0, False
    _read_tracing(p, m)
    return m.end(), False


_PADDED_LEVELS = ("INFO", "WARN")  # the levels tracing pads to five columns
_ONE_SPACE = (*_PADDED_LEVELS, "DEBU", "TRAC")  # and one space before any level (an envelope took the other)


def _peel_pylog(p: Prefix, t: str, year: int) -> tuple[int, bool]:
    m = _PYLOG.match(t)
    if m is None:
        return _peel_llama_log(p, t)
    if p.app_ts is None:
        ts = _dt(m.group("d"), m.group("ms"))
        tz = m.group("tz")
        minutes = _offset_minutes(tz.lstrip()) if tz and ts is not None else None
        if ts is not None and minutes is not None:
            # A stamp that says its zone is that zone's time, not UTC's; the clock and the
            # offset inference read ``app_zoned`` instead of parsing the stamp again.
            ts, p.app_zoned = _zoned(ts, minutes), True
        p.app_ts = ts
    lvl = m.group("lvl") or m.group("lvl2") or m.group("lvl3")
    if m.group("lvl4") and m.group("logger4") != "MODEL_LOG":
        # (TorchServe relays a worker's stdout at INFO and its stderr at WARN, whatever they say)
        lvl = m.group("lvl4")
    if lvl:
        p.level = LEVEL_NAMES.get(lvl, lvl)
    lg = m.group("logger") or m.group("logger2") or m.group("logger3") or m.group("logger4")
    if lg:
        p.logger = lg
    p.dialect = p.dialect or "pylog"
    return m.end(), False


def _peel_llama_log(p: Prefix, t: str) -> tuple[int, bool]:
    """llama.cpp's timestamped log: the uptime is no clock time; the level letter is the line's."""
    m = _LLAMA_LOG.match(t)
    if m is None:
        return 0, False
    p.level = LEVEL_NAMES[m.group("lvl")]
    p.dialect = p.dialect or "llama"
    return m.end(), False


# Dispatch on the first character: each kind of prefix starts with its own few.
_PEELERS = {"[": _peel_bracket, "(": _peel_proc, " ": _peel_tracing, **{c: _peel_level for c in "DIWECFT"},
            **{c: _peel_pylog for c in "0123456789"}}
