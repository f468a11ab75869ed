"""journalctl's output modes -> records: the ``short`` family (``short``,
``-precise``, ``-iso``, ``-full``, ``-unix``, ``-monotonic``, ``-delta``,
``with-unit``) with its indented continuation lines and ``-- Boot --``
markers, ``-o json``/``json-seq``/``json-sse``, ``export`` and ``verbose``.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Iterator, cast

from forensics.envelope.clean import clean_message
from forensics.envelope.clock import TS_ISO, UTC, Clock, from_epoch_us, parse_iso, zone_for_abbreviation
from forensics.envelope.record import Record, load_object, marker_record, split_escaped
from forensics.ingest.values import no_surrogates, pid_value

# ---------------------------------------------------------------- short family
_TS_SHORT = r"(?P<ts>(?P<mon>[^\s\d\[\]{}(<>\-|]\S{0,5}|\d{1,2}月)\s{1,2}(?P<day>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{6})?)"
_TS_FULL = r"(?P<dow>[A-Z][a-z]{2}) (?P<full>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})?) (?P<tz>[A-Za-z][\w+\-/]*|[+-]\d{2,4})"
_TS_UNIX = r"(?P<unix>\d{9,11}\.\d{6})"
_TS_MONO = r"\[\s*(?P<mono>\d+\.\d{6})(?: <\s*\d+\.\d{6}[ *]>|\s{16})?\]"
_IDENT = r"(?:(?P<host>[^\s\[\]:]+) )?(?P<ident>[^\s\[\]:][^\s\[\]]*?)(?:\[(?P<pid>\d+)\])?:(?: (?P<msg>.*)|$)"

SHORT_PATTERNS: dict[str, re.Pattern[str]] = {
    "short": re.compile(rf"^{_TS_SHORT} {_IDENT}"),
    "short-iso": re.compile(rf"^(?P<ts>{TS_ISO}) {_IDENT}"),
    "short-full": re.compile(rf"^(?P<ts>{_TS_FULL}) {_IDENT}"),
    "short-unix": re.compile(rf"^(?P<ts>{_TS_UNIX}) {_IDENT}"),
    "short-monotonic": re.compile(rf"^(?P<ts>{_TS_MONO}) {_IDENT}"),
}
SHORT_ALIASES = {"short-precise": "short", "short-iso-precise": "short-iso", "with-unit": "short-full",
                 "short-delta": "short-monotonic"}

# The same patterns over printable ASCII only: every character class is cut
# down to printable ASCII (``\\s`` to " ", ``\\d`` to 0-9, ``.*`` to ``[ -~]*``)
# and the match must reach the end of the line. On a line of printable ASCII
# each matches exactly where its pattern above does (the classes agree
# there); any other line fails it and takes the pattern above. A line it
# matches needs no ``isprintable`` scan (~1 us on a serving line).
_A_HOST = r"[!-9;-Z\\^-~]"  # printable ASCII but " [ ] :"
_A_IDENT = r"[!-Z\\^-~]"  # printable ASCII but " [ ]"
_A_ID = rf"(?:(?P<host>{_A_HOST}+) )?(?P<ident>{_A_HOST}{_A_IDENT}*?)(?:\[(?P<pid>[0-9]+)\])?:(?: (?P<msg>[ -~]*)|)\Z"
_A_ISO = (r"(?P<iso>[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{1,9})?"
          r"(?:Z|[+-][0-9][0-9]:?[0-9][0-9]))")
_A_SHORT = (r"(?P<ts>(?P<mon>[!-')-,./:;=?-Z\\^-z~][!-~]{0,5}) {1,2}(?P<day>[0-9]{1,2}) "
            r"(?P<hms>[0-9][0-9]:[0-9][0-9]:[0-9][0-9])(?P<frac>\.[0-9]{6})?)")
ASCII_PATTERNS: dict[str, re.Pattern[str]] = {
    "short": re.compile(rf"^{_A_SHORT} {_A_ID}"),
    "short-iso": re.compile(rf"^(?P<ts>{_A_ISO}) {_A_ID}"),
}

VERBOSE_HEAD = re.compile(r"^[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \S+ \[s=[0-9a-f]+;i=")
_EXPORT_FIELD = re.compile(r"^(?P<name>_{0,2}[A-Z0-9][A-Z0-9_]*)(?:=(?P<value>.*))?$")


def _ts_unix(m: re.Match[str], clock: Clock) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(m.group("unix")), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _ts_monotonic(m: re.Match[str], clock: Clock) -> datetime | None:
    # seconds since boot; anchored at the epoch so differences still work
    try:
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=float(m.group("mono")))
    except (ValueError, OverflowError):
        return None


# How each short mode's timestamp column becomes a time (parsed once per distinct column text).
_TS_PARSERS: dict[str, Callable[[re.Match[str], Clock], datetime | None]] = {
    "short": lambda m, clock: clock.month_day(*m.group("mon", "day", "hms", "frac")),
    "short-iso": lambda m, clock: parse_iso(m.group("iso")),
    "short-full": lambda m, clock: parse_iso(m.group("full").replace(" ", "T"), zone_for_abbreviation(m.group("tz"))),
    "short-unix": _ts_unix,
    "short-monotonic": _ts_monotonic,
}


def short_reader(fmt: str) -> Callable[[Iterable[tuple[int, str]], Clock, bool], Iterator[Record]]:
    """The reader of one short mode. With ``merge``, a message printed over
    several lines stays one record (one line of lookahead: live streams turn it off)."""
    def read(lines: Iterable[tuple[int, str]], clock: Clock, merge: bool = True) -> Iterator[Record]:
        recs = _short_records(lines, fmt, clock)
        return _merge_continuations(recs) if merge else recs
    return read


def _merge_continuations(recs: Iterator[Record]) -> Iterator[Record]:
    held: Record | None = None
    for rec in recs:
        if rec.cont and held is not None and held.marker is None:
            held.text = held.text + "\n" + rec.text
            if rec.line != held.line:
                held.line_step = 1
            continue
        if held is not None:
            yield held
        held = rec
    if held is not None:
        yield held


PRINTABLE_TAIL = re.compile(r"[ -~]*\Z").match  # from a position to the end: printable ASCII only
# short-iso: the timestamps and the "host ident[pid]: " columns of the lines
# the ASCII pattern matched, with what they mean, SEEN_LIMIT of each at most
# (cleared when full). The pattern is "ts columns message": the timestamp has
# no space and ends at the first one, each column is a run without spaces,
# the message is the rest, so how it matches the timestamp and the columns
# depends on neither the other nor the message, and the timestamp needs no
# clock. A line made of a seen timestamp and seen columns, then printable
# ASCII, is read as the pattern reads it (every other line takes the pattern).
SEEN_LIMIT = 1024


def columns_end(text: str, sp: int) -> int:
    """Where a short-iso line's message starts when its columns are "host
    ident[pid]: " (after the third space; ``sp``: the first), else a position
    no seen columns end at."""
    return text.find(" ", text.find(" ", sp + 1) + 1) + 1


# A short line's columns as declared to mypyc (which checks them at run time):
# host, ident, pid and the message may be absent.
_Columns = tuple[str, str | None, str | None, str | None, str | None]


def _short_records(lines: Iterable[tuple[int, str]], fmt: str, clock: Clock) -> Iterator[Record]:
    prev: Record | None = None
    col = 0
    match = SHORT_PATTERNS[fmt].match
    fast = ASCII_PATTERNS[fmt].match if fmt in ASCII_PATTERNS else match
    parse_ts = _TS_PARSERS[fmt]
    last_ts_text: str | None = None
    last_ts: datetime | None = None
    pid_cache: dict[str, int | None] = {}  # SEEN_LIMIT at most: a crash loop's pids never repeat
    stamps: dict[str, datetime | None] | None = {} if fmt == "short-iso" else None  # see SEEN_LIMIT
    columns: dict[str, tuple] = {}
    for n, text in lines:
        if stamps is not None and (sp := text.find(" ")) > 0:
            k = text.find(" ", text.find(" ", sp + 1) + 1) + 1  # columns_end, inline: every line
            cols = columns.get(text[sp + 1:k])
            if cols is not None and PRINTABLE_TAIL(text, k) is not None and (
                    (ts := stamps.get(text[:sp], UNSEEN)) is not UNSEEN or (ts := _new_stamp(stamps, text, sp))
                    is not UNSEEN):
                msg, col = text[k:], k
                if "[0" in msg or "#0" in msg or "001b[" in msg:
                    msg = clean_message(msg)
                prev = Record(n, msg, ts, *cols)  # type: ignore[arg-type]
                if "#012" in msg:
                    yield from split_escaped(prev)
                    continue
                yield prev
                continue
        m = fast(text)
        printable = m is not None and fast is not match  # the ASCII pattern matched: printable ASCII
        if m is None:
            m = match(text)
            if m is None:
                rec = _unmatched(n, text, prev, col)
                if not rec.cont:
                    prev = None
                yield rec
                continue
        ts_text, host, ident, pid, got_msg = cast(_Columns, m.group("ts", "host", "ident", "pid", "msg"))
        if ts_text == last_ts_text:
            ts = last_ts
        else:
            ts = parse_ts(m, clock)
            last_ts_text, last_ts = ts_text, ts
        pid_i = None if pid is None else pid_cache.get(pid) or _pid_of(pid_cache, pid)
        if got_msg is None:
            col, msg = len(text) + 1, ""
        else:
            msg = got_msg
            col = len(text) - len(msg)
            if stamps is not None and printable and col == columns_end(text, len(ts_text)):
                _remember(stamps, ts_text, ts)
                _remember(columns, text[len(ts_text) + 1:col], (host, ident, pid_i))
            if "[0" in msg or "#0" in msg or "001b[" in msg or not (printable or msg.isprintable()):
                msg = clean_message(msg)
        prev = Record(n, msg, ts, host, ident, pid_i)
        if "#012" in msg:
            yield from split_escaped(prev)
            continue
        yield prev


UNSEEN = object()
_ISO_ONLY = re.compile(rf"(?P<ts>{_A_ISO})\Z").match  # the ASCII pattern's timestamp, alone


def _new_stamp(stamps: dict[str, datetime | None], text: str, sp: int) -> Any:
    """The time of a short-iso timestamp column not seen yet (``text[:sp]``),
    remembered; UNSEEN when it is not one."""
    ts = iso_column_time(text[:sp])
    if ts is not UNSEEN:
        _remember(stamps, text[:sp], ts)
    return ts


def iso_column_time(ts_text: str) -> Any:
    """The time a short-iso line whose timestamp column (up to its first
    space) is ``ts_text`` is read with, when the rest of it is read by
    ``SEEN_LIMIT``'s rule: the ASCII pattern's timestamp part matched alone
    (it ends at the first space whatever follows), parsed; UNSEEN when that
    part does not match."""
    tm = _ISO_ONLY(ts_text)
    return UNSEEN if tm is None else parse_iso(tm.group("iso"))


def _pid_of(seen: dict[str, int | None], pid: str) -> int | None:
    got = pid_value(pid)
    _remember(seen, pid, got)
    return got


def _remember(seen: dict[str, Any], key: str, value: Any) -> None:
    if len(seen) >= SEEN_LIMIT:
        seen.clear()
    seen[key] = value


def _unmatched(n: int, text: str, prev: Record | None, col: int) -> Record:
    """A line without the mode's columns: a journal marker, the indented
    continuation of ``prev`` (a multi-line entry), or a line of its own."""
    if text.startswith("-- ") and (rec := marker_record(n, text)) is not None:
        return rec
    if prev is not None and text[:1] in (" ", "\t"):
        # Continuation of a multi-line journal entry: indented to the message column.
        lead = len(text) - len(text.lstrip(" "))
        body = text[min(lead, col):] if lead >= col else text.lstrip(" ")
        return Record(n, clean_message(body), prev.ts, prev.host, prev.ident, prev.pid, cont=True)
    return Record(n, clean_message(text))


# ---------------------------------------------------------------- json, export, verbose
def _field(obj: dict, *names: str) -> str | None:
    for name in names:
        v = obj.get(name)
        if v is None:
            continue
        if isinstance(v, list):  # repeated field -> array of strings
            v = v[0] if v and isinstance(v[0], str) else None
            if v is None:
                continue
        return str(v)
    return None


def _json_message(v: object) -> tuple[str, bool]:
    if v is None:
        return "", True  # journalctl nulls fields of 4096+ bytes: content unknown
    if isinstance(v, list):
        if v and all(isinstance(x, int) for x in v):
            return bytes(x & 0xFF for x in v).decode("utf-8", "replace"), False
        return "\n".join(str(x) for x in v), False
    return str(v), False


def json_records(lines: Iterable[tuple[int, str]], clock: Clock, merge: bool = True) -> Iterator[Record]:
    boot: str | None = None
    for n, text in lines:
        raw = text.lstrip("\x1e\ufeff")
        if raw.startswith("data: "):
            raw = raw[6:]
        if not raw.strip():
            continue
        obj = load_object(raw)
        if obj is None:
            # A truncated last object, or junk between objects: keep the text.
            yield Record(n, clean_message(text))
            continue
        b = _field(obj, "_BOOT_ID")
        if boot is not None and b is not None and b != boot:
            yield Record(n, f"-- Boot {b} --", marker="boot")
        boot = b or boot
        ts = from_epoch_us(_field(obj, "_SOURCE_REALTIME_TIMESTAMP", "__REALTIME_TIMESTAMP"))
        clock.saw(ts)
        msg, unknown = _json_message(obj.get("MESSAGE"))
        pid = pid_value(_field(obj, "_PID", "SYSLOG_PID"))
        host = _field(obj, "_HOSTNAME")
        ident = _field(obj, "SYSLOG_IDENTIFIER", "_COMM")
        unit = _field(obj, "UNIT", "_SYSTEMD_UNIT")
        if "\\u" in raw:  # JSON escapes can spell lone surrogates: no encoder writes them
            msg = no_surrogates(msg)
            host, ident, unit = (None if v is None else no_surrogates(v) for v in (host, ident, unit))
        if unknown:
            yield Record(n, "[message withheld by journalctl: 4096 bytes or more]", ts, host, ident, pid, marker="null-message", unit=unit)
            continue
        yield Record(n, _clean_lines(msg), ts, host, ident, pid, unit=unit)


def _clean_lines(msg: str) -> str:
    """A journal MESSAGE cleaned line by line (blank lines dropped, as journald does)."""
    if "\n" not in msg:
        return clean_message(msg)
    return "\n".join(clean_message(p) for i, p in enumerate(msg.split("\n")) if not i or p.strip())


def _entry_record(n: int, fields: dict[str, str], boot_state: list[str | None]) -> Iterator[Record]:
    b = fields.get("_BOOT_ID")
    if boot_state[0] is not None and b is not None and b != boot_state[0]:
        yield Record(n, f"-- Boot {b} --", marker="boot")
    boot_state[0] = b or boot_state[0]
    ts = from_epoch_us(fields.get("_SOURCE_REALTIME_TIMESTAMP") or fields.get("__REALTIME_TIMESTAMP"))
    pid = pid_value(fields.get("_PID") or fields.get("SYSLOG_PID"))
    yield Record(n, _clean_lines(fields.get("MESSAGE", "")), ts, fields.get("_HOSTNAME"),
                 fields.get("SYSLOG_IDENTIFIER") or fields.get("_COMM"), pid,
                 unit=fields.get("UNIT") or fields.get("_SYSTEMD_UNIT"))


def export_records(lines: Iterable[tuple[int, str]], clock: Any = None, merge: bool = True) -> Iterator[Record]:
    fields: dict[str, str] = {}
    start = 0
    binary: str | None = None  # name of a binary field whose value is being read
    boot_state: list[str | None] = [None]
    for n, text in lines:
        if not fields and not binary:
            start = n
        if binary is not None:
            m = _EXPORT_FIELD.match(text)
            if text == "" or (m and (m.group("value") is not None or text.isupper())):
                binary = None
            else:
                fields[binary] = (fields[binary] + "\n" + text) if binary in fields else text[8:]
                continue
        if text == "":
            if fields:
                yield from _entry_record(start, fields, boot_state)
                fields = {}
            continue
        m = _EXPORT_FIELD.match(text)
        if m is None:
            # Not a field (a log that is not an export, or junk between entries):
            # keep the text, as json_records does, after the entry it interrupts.
            if fields:
                yield from _entry_record(start, fields, boot_state)
                fields = {}
            yield Record(n, clean_message(text))
            continue
        if m.group("value") is None:
            binary = m.group("name")
        else:
            fields[m.group("name")] = m.group("value")
    if fields:
        yield from _entry_record(start, fields, boot_state)


_VERBOSE_FIELD = re.compile(r"^    (?P<name>_{0,2}[A-Z0-9][A-Z0-9_]*)=(?P<value>.*)$")


def verbose_records(lines: Iterable[tuple[int, str]], clock: Any = None, merge: bool = True) -> Iterator[Record]:
    fields: dict[str, str] = {}
    start = 0
    last: str | None = None
    boot_state: list[str | None] = [None]
    for n, text in lines:
        if VERBOSE_HEAD.match(text):
            if fields:
                yield from _entry_record(start, fields, boot_state)
            fields, start, last = {}, n, None
            continue
        if text.startswith("-- ") and (rec := marker_record(n, text)) is not None:
            yield rec
            continue
        m = _VERBOSE_FIELD.match(text)
        if m:
            if not fields and not start:
                start = n  # fields before any entry header (a cut-off first entry)
            last = m.group("name")
            val = m.group("value")
            if val.endswith(" blob data]"):
                val = ""
            fields[last] = val
        elif last is not None and text.startswith("    "):
            fields[last] += "\n" + text.strip()
        elif text.strip():  # neither header, field nor continuation: keep the text (see export_records)
            if fields:
                yield from _entry_record(start, fields, boot_state)
            fields, start, last = {}, 0, None
            yield Record(n, clean_message(text))
    if fields:
        yield from _entry_record(start, fields, boot_state)
