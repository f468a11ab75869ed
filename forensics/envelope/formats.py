"""Stage 2: the outer line shape -> records (timestamp, host, identifier, pid, message).

Every journalctl output mode, ``-o json``/``json-seq``/``json-sse``/``export``/
``verbose``, docker / kubectl ``--timestamps`` and CRI lines, and plain files.
The format is sniffed from the first lines of each source (``detect_format``)
unless forced. Wrappers that people add when they copy logs (docker compose
service columns, box-drawing borders, ``host >> `` markers, markdown quotes) are
detected per source too and peeled off each message.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Iterator

from forensics.envelope.clean import clean_message
from forensics.envelope.zone import log_zone, zone_for_abbreviation
from forensics.ingest.values import bounded_int, json_nesting_exceeds, no_surrogates, pid_value

UTC = timezone.utc

FORMATS = (
    "auto", "plain", "jsonl", "short", "short-precise", "short-iso", "short-iso-precise", "short-full",
    "with-unit", "short-unix", "short-monotonic", "short-delta", "cat", "json", "json-seq",
    "json-sse", "export", "verbose", "docker",
)


class Record:
    """One logical message line with its envelope. ``line`` is the 1-based
    physical input line where it starts; ``cont`` marks a journald
    continuation line of a multi-line entry."""

    __slots__ = ("line", "text", "ts", "host", "ident", "pid", "cont", "marker", "unit", "line_step")

    def __init__(self, line: int, text: str, ts: datetime | None = None, host: str | None = None,
                 ident: str | None = None, pid: int | None = None, cont: bool = False,
                 marker: str | None = None, unit: str | None = None, line_step: int = 0):
        self.line = line
        self.text = text
        self.ts = ts
        self.host = host
        self.ident = ident
        self.pid = pid
        self.cont = cont
        self.marker = marker
        self.unit = unit
        # A multi-line message: its k-th line is on physical line ``line + k * line_step``
        # (1 for journald's indented continuation lines, 0 inside one JSON/export entry).
        self.line_step = line_step

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Record({self.line}, {self.text!r}, ts={self.ts}, host={self.host}, ident={self.ident}, pid={self.pid})"


# ---------------------------------------------------------------- timestamps
_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}


class Clock:
    """Turns partial timestamps (no year; monotonic seconds) into datetimes.
    The year comes from the context (the newest full date seen in the stream,
    else the file's mtime, else today: see ``plan_source``) and rolls over when
    the month goes from December to January. Times without a zone (journald
    ``short``, syslog) are wall-clock times of ``zone`` (``--tz``, default the
    machine's zone: ``forensics.envelope.zone``), returned in UTC."""

    def __init__(self, zone: Any = None) -> None:
        self.year = datetime.now(UTC).year
        self.zone = zone if zone is not None else log_zone()
        self._utc = self.zone is UTC or getattr(self.zone, "key", None) in ("UTC", "Etc/UTC")
        self._last_month = 0
        self._cache_key: str | None = None
        self._cache_val: datetime | None = None

    def saw(self, ts: datetime | None) -> None:
        if ts is not None:
            self.year = ts.year

    def month_day(self, mon: str, day: str, hms: str, frac: str | None) -> datetime | None:
        key = mon + day + hms + (frac or "")
        if key == self._cache_key:
            return self._cache_val
        m = _MONTHS.get(mon[:3].lower())
        if m is None:
            m = _month_from_digits(mon)
            if m is None:
                return None
        last = self._last_month
        if last and last - m >= 6:  # December -> January: a new year, not a line back in time
            self.year += 1
            year = self.year
            self._last_month = m
        elif last and m - last >= 6:  # a stray older line (a December line in a January log)
            year = self.year - 1
        else:
            year = self.year
            self._last_month = m
        try:
            val = datetime(year, m, int(day), int(hms[0:2]), int(hms[3:5]), int(hms[6:8]),
                           int((frac or ".0")[1:7].ljust(6, "0")), tzinfo=UTC if self._utc else self.zone)
            if not self._utc:
                val = val.astimezone(UTC)
        except ValueError:
            val = None
        self._cache_key, self._cache_val = key, val
        return val


def _month_from_digits(mon: str) -> int | None:
    digits = "".join(ch for ch in mon if "0" <= ch <= "9")  # "6月" (CJK locales); not "²"
    v = bounded_int(digits, 12, 2)
    return v if v else None


def parse_iso(ts: str, zone: Any = None) -> datetime | None:
    """An ISO-8601 time; without an offset it is a time of ``zone`` (default UTC)."""
    try:
        if ts.endswith("Z"):
            ts = ts[:-1] + "+00:00"
        # Python <3.11 compat is not needed; 3.11 fromisoformat takes +0000 too,
        # but not more than 6 fractional digits (docker prints 9).
        if "." in ts:
            head, _, tail = ts.partition(".")
            i = 0
            while i < len(tail) and tail[i].isdigit():
                i += 1
            ts = head + "." + tail[:min(i, 6)].ljust(6, "0") + tail[i:]
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if dt.tzinfo:
        return dt
    if zone is None or zone is UTC:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.replace(tzinfo=zone).astimezone(UTC)
    except (OverflowError, ValueError):
        return dt.replace(tzinfo=UTC)


def from_epoch_us(us: str | int | None) -> datetime | None:
    try:
        v = us if isinstance(us, int) else bounded_int(us)
        if v is None:
            return None
        return datetime.fromtimestamp(v / 1e6, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


# ---------------------------------------------------------------- short family
_TS_SHORT = r"(?P<ts>(?P<mon>[^\s\d\[\]{}(<>\-|]\S{0,5}|\d{1,2}月)\s{1,2}(?P<day>\d{1,2}) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{6})?)"
_TS_ISO = r"(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d))"
_TS_FULL = r"(?P<dow>[A-Z][a-z]{2}) (?P<full>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})?) (?P<tz>[A-Za-z][\w+\-/]*|[+-]\d{2,4})"
_TS_UNIX = r"(?P<unix>\d{9,11}\.\d{6})"
_TS_MONO = r"\[\s*(?P<mono>\d+\.\d{6})(?: <\s*\d+\.\d{6}[ *]>|\s{16})?\]"
_IDENT = r"(?:(?P<host>[^\s\[\]:]+) )?(?P<ident>[^\s\[\]:][^\s\[\]]*?)(?:\[(?P<pid>\d+)\])?:(?: (?P<msg>.*)|$)"

SHORT_PATTERNS: dict[str, re.Pattern[str]] = {
    "short": re.compile(rf"^{_TS_SHORT} {_IDENT}"),
    "short-iso": re.compile(rf"^(?P<ts>{_TS_ISO}) {_IDENT}"),
    "short-full": re.compile(rf"^(?P<ts>{_TS_FULL}) {_IDENT}"),
    "short-unix": re.compile(rf"^(?P<ts>{_TS_UNIX}) {_IDENT}"),
    "short-monotonic": re.compile(rf"^(?P<ts>{_TS_MONO}) {_IDENT}"),
}
SHORT_ALIASES = {"short-precise": "short", "short-iso-precise": "short-iso", "with-unit": "short-full",
                 "short-delta": "short-monotonic"}

_MARKER = re.compile(r"^-- (?:(?P<boot>Boot [0-9a-f]{32})|(?P<reboot>Reboot)|(?P<none>No entries)|(?P<begin>(?:Logs|Journal) begins? at .*?)) --\s*$")
_DOCKER = re.compile(rf"^{_TS_ISO} (?:(?P<stream>stdout|stderr) (?P<flag>[FP]) )?(?P<msg>.*)$")
_VERBOSE_HEAD = re.compile(r"^[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \S+ \[s=[0-9a-f]+;i=")
_EXPORT_FIELD = re.compile(r"^(?P<name>_{0,2}[A-Z0-9][A-Z0-9_]*)(?:=(?P<value>.*))?$")


def detect_format(sample: list[str]) -> str:
    """Pick the envelope format from the first lines of a source."""
    lines = [ln for ln in sample if ln.strip() and not _MARKER.match(ln)][:60]
    if not lines:
        return "plain"
    first = lines[0].lstrip("\ufeff")
    if first.startswith("\x1e{") or first.startswith("\x1e"):
        return "json-seq"
    if first.startswith("data: {"):
        return "json-sse"
    if first.startswith("{") and ('"MESSAGE"' in first or '"__REALTIME_TIMESTAMP"' in first or '"__CURSOR"' in first):
        return "json"
    if first.startswith("{") and any(f'"{k}"' in first for k in _JSONL_MESSAGE_KEYS):
        return "jsonl"
    if first.startswith("__CURSOR=") or first.startswith("__REALTIME_TIMESTAMP="):
        return "export"
    if _VERBOSE_HEAD.match(first):
        return "verbose"
    scores: dict[str, int] = {}
    for name, pat in SHORT_PATTERNS.items():
        scores[name] = sum(1 for ln in lines if pat.match(ln))
    docker = sum(1 for ln in lines if _DOCKER.match(ln))
    best = max(scores, key=lambda k: scores[k])
    n = len(lines)
    if scores[best] >= max(1, n * 0.3):
        # A docker --timestamps line can also look like short-iso with a
        # "host ident:" shape by accident; journald needs the ident column.
        if best == "short-iso" and docker > scores[best] * 1.5:
            return "docker"
        return best
    if docker >= max(1, n * 0.3):
        return "docker"
    return "plain"


# ---------------------------------------------------------------- wrappers
_BORDERS = "│┃║|"


class _BoxMatch:
    __slots__ = ("_msg",)

    def __init__(self, msg: str) -> None:
        self._msg = msg

    def group(self, name: str) -> str:
        return self._msg


class _BoxPattern:
    r"""``^\s*[│┃║|](?:\s*\d+\s*[│┃║|])?\s?(?P<msg>.*?)\s*(?:[│┃║|]\s*)?$`` in
    linear time. As one regex the lazy message and the trailing ``\s*``
    backtrack into each other: ``'| ' + 40,000 spaces + 'x'`` took minutes.
    The head is matched by a regex, the tail (spaces, one border, spaces)
    is stripped with ``str`` methods: the same message, in one pass."""

    _HEAD = re.compile(r"\s*[│┃║|](?:\s*\d+\s*[│┃║|])?\s?")
    pattern = _HEAD.pattern

    def match(self, text: str) -> _BoxMatch | None:
        m = self._HEAD.match(text)
        if m is None:
            return None
        msg = text[m.end():].rstrip()
        if msg and msg[-1] in _BORDERS:
            msg = msg[:-1].rstrip()
        if "\n" in msg:  # the message is one line (the spaces around it may span lines)
            return None
        return _BoxMatch(msg)


_WRAPPERS: dict[str, re.Pattern[str]] = {
    # docker compose: "sglang-1  | msg", "backend-vllm-openai-1  | msg"
    "compose": re.compile(r"^(?P<svc>[A-Za-z0-9][\w.\-]*)\s+\| ?(?P<msg>.*)$"),
    # web console / TUI borders: "│ msg   │", "| 12 | msg |"
    "box": _BoxPattern(),  # type: ignore[dict-item]
    "host-marker": re.compile(r"^(?:\d{4}-\d\d-\d\d[ T][\d:.,]+ )?(?P<host>[\w.\-]+) >> (?P<msg>.*)$"),
    "quote": re.compile(r"^> ?(?P<msg>.*)$"),
    "ci-timestamp": re.compile(r"^(?:\[)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z(?:\])? (?P<msg>.*)$"),
    "cloud-severity": re.compile(r"^(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL) \d{4}-\d\d-\d\dT[\d:.]+Z (?:\[[^\]]*\] )?(?P<msg>.*)$"),
}


def detect_wrappers(messages: list[str]) -> list[re.Pattern[str]]:
    """Wrapper layers present on most sampled messages, outermost first."""
    active: list[re.Pattern[str]] = []
    msgs = [m for m in messages if m.strip()][:60]
    for _ in range(3):
        if not msgs:
            break
        best, best_hits = None, 0
        for name, pat in _WRAPPERS.items():
            # The same layer may come twice: a web console's "  |   | " nests two borders.
            hits = sum(1 for m in msgs if pat.match(m))
            if hits > best_hits:
                best, best_hits = pat, hits
        if best is None or best_hits < max(2, len(msgs) * 0.5):
            break
        active.append(best)
        msgs = [(mm.group("msg") if (mm := best.match(m)) else m) for m in msgs]
    return active


def unwrap(text: str, wrappers: list[re.Pattern[str]]) -> str:
    for pat in wrappers:
        m = pat.match(text)
        if m:
            text = m.group("msg")
    return text


# ---------------------------------------------------------------- record readers
def iter_records(lines: Iterable[tuple[int, str]], fmt: str, clock: Clock, merge: bool = True) -> Iterator[Record]:
    """Records from numbered physical lines (text without the newline). With
    ``merge``, a journald message printed over several lines stays one record
    (this needs one line of lookahead, so live streams turn it off)."""
    fmt = SHORT_ALIASES.get(fmt, fmt)
    if fmt in SHORT_PATTERNS:
        recs = _short_records(lines, SHORT_PATTERNS[fmt], fmt, clock)
        return _merge_continuations(recs) if merge else recs
    if fmt in ("json", "json-seq", "json-sse"):
        return _json_records(lines, clock)
    if fmt == "jsonl":
        return _jsonl_records(lines)
    if fmt == "export":
        return _export_records(lines)
    if fmt == "verbose":
        return _verbose_records(lines)
    if fmt == "docker":
        return _docker_records(lines)
    return _plain_records(lines)


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


def _marker_record(n: int, text: str) -> Record | None:
    m = _MARKER.match(text)
    if not m:
        return None
    kind = "boot" if (m.group("boot") or m.group("reboot")) else ("no-entries" if m.group("none") else "logs-begin")
    return Record(n, text.strip(), marker=kind)


def _plain_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
    for n, text in lines:
        if text.startswith("-- ") and (rec := _marker_record(n, text)) is not None:
            yield rec
            continue
        yield from _split_escaped(Record(n, clean_message(text)))


def _short_records(lines: Iterable[tuple[int, str]], pat: re.Pattern[str], fmt: str, clock: Clock) -> Iterator[Record]:
    prev: Record | None = None
    col = 0
    match = pat.match
    last_ts_text: str | None = None
    last_ts: datetime | None = None
    pid_cache: dict[str, int] = {}
    for n, text in lines:
        m = match(text)
        if m is None:
            if text.startswith("-- ") and (rec := _marker_record(n, text)) is not None:
                prev = None
                yield rec
                continue
            if prev is not None and text[:1] in (" ", "\t"):
                # Continuation of a multi-line journal entry: indented to the message column.
                lead = len(text) - len(text.lstrip(" "))
                body = text[min(lead, col):] if lead >= col else text.lstrip(" ")
                yield Record(n, clean_message(body), prev.ts, prev.host, prev.ident, prev.pid, cont=True)
                continue
            prev = None
            yield Record(n, clean_message(text))
            continue
        ts_text, host, ident, pid, msg = m.group("ts", "host", "ident", "pid", "msg")
        if ts_text == last_ts_text:
            ts = last_ts
        else:
            g = m.groupdict()
            if fmt == "short":
                ts = clock.month_day(g["mon"], g["day"], g["hms"], g["frac"])
            elif fmt == "short-iso":
                ts = parse_iso(g["iso"])
            elif fmt == "short-full":
                ts = parse_iso(g["full"].replace(" ", "T"), zone_for_abbreviation(g["tz"]))
            elif fmt == "short-unix":
                try:
                    ts = datetime.fromtimestamp(float(g["unix"]), tz=UTC)
                except (ValueError, OverflowError, OSError):
                    ts = None
            else:  # monotonic: seconds since boot; anchored at the epoch so differences still work
                try:
                    ts = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=float(g["mono"]))
                except (ValueError, OverflowError):
                    ts = None
            last_ts_text, last_ts = ts_text, ts
        col = len(text) - len(msg) if msg is not None else len(text) + 1
        if pid is not None:
            pid_i = pid_cache.get(pid)
            if pid_i is None:
                pid_i = pid_cache[pid] = pid_value(pid)  # type: ignore[assignment]
        else:
            pid_i = None
        if msg is None:
            msg = ""
        elif not msg.isprintable() or "[0" in msg or "#0" in msg or "001b[" in msg:
            msg = clean_message(msg)
        prev = Record(n, msg, ts, host, ident, pid_i)
        if "#012" in msg:
            yield from _split_escaped(prev)
            continue
        yield prev


def _docker_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
    partial: list[str] = []  # Kubernetes CRI "P" records: a line the runtime split
    first = 0
    for n, text in lines:
        m = _DOCKER.match(text)
        if m is None:
            yield Record(n, clean_message(text))
            continue
        msg = m.group("msg")
        if m.group("flag") == "P":
            if not partial:
                first = n
            partial.append(msg)
            continue
        if partial:
            msg = "".join(partial) + msg
            partial = []
            yield from _split_escaped(Record(first, clean_message(msg), parse_iso(m.group("iso")), ident=m.group("stream")))
            continue
        yield from _split_escaped(Record(n, clean_message(msg), parse_iso(m.group("iso")), ident=m.group("stream")))
    if partial:
        yield Record(first, clean_message("".join(partial)))


def _split_escaped(rec: Record) -> Iterator[Record]:
    """Syslog transports escape newlines as ``#012``: a whole traceback can
    arrive as one line. Split it back into its lines."""
    if "#012" not in rec.text:
        yield rec
        return
    for i, part in enumerate(rec.text.split("#012")):
        if i and not part.strip():
            continue
        yield Record(rec.line, part, rec.ts, rec.host, rec.ident, rec.pid, cont=i > 0 or rec.cont, unit=rec.unit)


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


# A journal entry is flat (byte arrays at most one level down). A line that
# nests deeper is kept as text: the bound is explicit, so the answer never
# depends on how much stack the caller happened to have left.
MAX_JSON_DEPTH = 64


def _json_records(lines: Iterable[tuple[int, str]], clock: Clock) -> Iterator[Record]:
    boot: str | None = None
    for n, text in lines:
        raw = text.lstrip("\x1e\ufeff")
        if raw.startswith("data: "):
            raw = raw[6:]
        if not raw.strip():
            continue
        try:
            if json_nesting_exceeds(raw, MAX_JSON_DEPTH):
                raise ValueError("nested too deep")
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deep
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
            msg, host, ident, unit = (None if v is None else no_surrogates(v) for v in (msg, host, ident, unit))
        if unknown:
            yield Record(n, "[message withheld by journalctl: 4096 bytes or more]", ts, host, ident, pid, marker="null-message", unit=unit)
            continue
        yield Record(n, _clean_lines(msg), ts, host, ident, pid, unit=unit)


# Generic JSON lines from log shippers: docker's json-file driver ({"log": "...\n",
# "stream": ..., "time": ...}), fluentd/vector/Loki ({"message"|"msg": ...}), GCP
# exports ({"textPayload": ...}).
_JSONL_MESSAGE_KEYS = ("log", "message", "msg", "textPayload", "MESSAGE")
_JSONL_TIME_KEYS = ("time", "timestamp", "@timestamp", "ts", "receiveTimestamp")


def _jsonl_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
    for n, text in lines:
        raw = text.strip()
        if not raw:
            continue
        try:
            if json_nesting_exceeds(raw, MAX_JSON_DEPTH):
                raise ValueError("nested too deep")
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            yield Record(n, clean_message(text))
            continue
        msg = next((obj[k] for k in _JSONL_MESSAGE_KEYS if isinstance(obj.get(k), str)), None)
        if msg is None:
            yield Record(n, clean_message(text))
            continue
        ts = None
        for k in _JSONL_TIME_KEYS:
            v = obj.get(k)
            if isinstance(v, str):
                ts = parse_iso(v)
                if ts is not None:
                    break
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and 1e9 < v < 1e17:
                try:  # NaN, Infinity and 1e300 are valid JSON numbers, not times
                    ts = datetime.fromtimestamp(v / 1000 if v > 1e12 else v, tz=UTC)
                except (ValueError, OverflowError, OSError):
                    ts = None
                break
        k8s = obj.get("kubernetes")
        host = obj.get("host") or obj.get("hostname") or (k8s.get("pod_name") if isinstance(k8s, dict) else None)
        stream = obj.get("stream") if isinstance(obj.get("stream"), str) else None
        host = host if isinstance(host, str) else None
        if "\\u" in raw:  # lone surrogates from JSON escapes
            msg, host, stream = (None if v is None else no_surrogates(v) for v in (msg, host, stream))
        parts = msg.rstrip("\n").split("\n")
        for i, part in enumerate(parts):
            if i and not part.strip():
                continue
            yield Record(n, clean_message(part), ts, host, stream, None, cont=i > 0)


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


def _export_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
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
            continue
        if m.group("value") is None:
            binary = m.group("name")
        else:
            fields[m.group("name")] = m.group("value")
    if fields:
        yield from _entry_record(start, fields, boot_state)


_VERBOSE_FIELD = re.compile(r"^    (?P<name>_{0,2}[A-Z0-9][A-Z0-9_]*)=(?P<value>.*)$")


def _verbose_records(lines: Iterable[tuple[int, str]]) -> Iterator[Record]:
    fields: dict[str, str] = {}
    start = 0
    last: str | None = None
    boot_state: list[str | None] = [None]
    for n, text in lines:
        if _VERBOSE_HEAD.match(text):
            if fields:
                yield from _entry_record(start, fields, boot_state)
            fields, start, last = {}, n, None
            continue
        if text.startswith("-- ") and (rec := _marker_record(n, text)) is not None:
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
    if fields:
        yield from _entry_record(start, fields, boot_state)
