"""The clock of the envelope: partial log times (no year, no zone, seconds
since boot) -> UTC datetimes, and the time zone of times printed without one.

``journalctl -o short`` (and syslog, and ``short-precise``/``short-full``'s
zone abbreviations) print the wall-clock time of the host that ran
``journalctl``. We read them in the zone given by ``--tz`` (kept in the
``FORENSICS_TZ`` environment variable, so worker processes inherit it), else
``TZ``, else ``/etc/localtime``, else UTC, and turn them into UTC.
"""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any, Callable, Iterable

from forensics.errors import InputError
from forensics.ingest.values import bounded_int

UTC = timezone.utc
ENV = "FORENSICS_TZ"
# An ISO-8601 time as journald (``short-iso``) and docker (``--timestamps``) print it.
TS_ISO = r"(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d))"
QUARTER = 900  # seconds: zones are whole quarters of an hour from UTC
MAX_OFFSET = 14 * 3600  # the farthest a zone is from UTC (Pacific/Kiritimati, +14:00)


def set_log_zone(name: str | None) -> None:
    """``--tz NAME``: validate it (one-line error when unknown) and make it the default here and in workers."""
    if not name:
        return
    parse_zone(name)
    os.environ[ENV] = name
    log_zone.cache_clear()


def parse_zone(name: str) -> tzinfo:
    if name.upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InputError(f"--tz {name!r}: unknown time zone (use an IANA name such as Europe/Berlin, or UTC)") from None


@lru_cache(maxsize=1)
def log_zone() -> tzinfo:
    for var in (ENV, "TZ"):
        name = os.environ.get(var, "").lstrip(":")
        if name:
            try:
                return parse_zone(name)
            except InputError:
                if var == ENV:
                    raise
    real = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in real:  # /usr/share/zoneinfo/Etc/UTC -> "Etc/UTC"
        try:
            return parse_zone(real.split("zoneinfo/", 1)[1])
        except InputError:
            pass
    try:
        from zoneinfo import ZoneInfo

        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return timezone.utc


def zone_for_abbreviation(abbr: str) -> tzinfo | None:
    """``short-full``'s zone column: UTC/GMT, a numeric offset, or the local zone's abbreviation."""
    if abbr in ("UTC", "GMT", "Z"):
        return timezone.utc
    if abbr[:1] in "+-" and abbr[1:].isdigit():
        digits = abbr[1:].ljust(4, "0")
        off = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
        return timezone(off if abbr[0] == "+" else -off)
    return log_zone()


# ---------------------------------------------------------------- timestamps
_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}


class Clock:
    """Turns partial timestamps (no year; monotonic seconds) into datetimes.
    The year comes from the context (the newest full date seen in the stream,
    else the file's mtime, else today: see ``plan_source``) and rolls over when
    the month goes from December to January. Times without a zone (journald
    ``short``, syslog) are wall-clock times of ``zone`` (``--tz``, default the
    machine's zone: ``log_zone``), returned in UTC."""

    def __init__(self, zone: Any = None, offset: int | None = None) -> None:
        self.year = datetime.now(UTC).year
        # ``offset``: minutes east of UTC of the log's zone-less clock, inferred
        # from stamps that say their zone (``naive_offset``); None: not inferred.
        self.offset = offset
        if zone is None and offset is not None:
            zone = UTC if offset == 0 else timezone(timedelta(minutes=offset))
        self.zone = zone if zone is not None else log_zone()
        self._utc = self.zone is UTC or getattr(self.zone, "key", None) in ("UTC", "Etc/UTC")
        # The zone of application stamps printed without one (vLLM's "INFO 03-27 19:09:32"):
        # the inferred one, else ``--tz``; else they are read as UTC (None), whatever this
        # machine's zone, as the logs of another machine mostly are.
        explicit = offset is not None or zone is not None or bool(os.environ.get(ENV))
        self.app_zone: tzinfo | None = None if self._utc or not explicit else self.zone
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


def naive_offset(naive: datetime, aware: datetime) -> int | None:
    """The zone (minutes east of UTC) of a clock printed without one, from one of
    its stamps (``naive``: its wall-clock time, tagged UTC) and a stamp that says
    its zone printed at about the same moment: the difference in whole quarters
    of an hour; 0 under a quarter (the clock is UTC); None past 14 hours (no zone
    is that far: the two stamps are not of one moment)."""
    diff = (naive - aware).total_seconds()
    if abs(diff) > MAX_OFFSET + QUARTER / 2:
        return None
    if abs(diff) < QUARTER:
        return 0
    return round(diff / QUARTER) * QUARTER // 60


def infer_offset(records: Iterable[Any], fmt: str,
                 app_stamp: Callable[[str], tuple[datetime | None, bool]]) -> int | None:
    """The zone of a clock printed without one, from its first stamp next to (on
    the same line as, or on the line beside) a stamp that says its zone: two
    processes printing at about the same moment (``naive_offset``). None when
    the records hold one kind of clock only. ``app_stamp``: a message's
    application stamp (UTC where it printed its zone) and whether it did
    (the prefix reader's ``app_zoned``: the stamp is read once)."""
    zone, naive_env = log_zone(), fmt.split("+")[0] in ("short", "short-precise")
    prev: tuple[datetime, bool] | None = None
    for rec in records:
        stamps: list[tuple[datetime, bool]] = []
        if rec.ts is not None and fmt not in ("short-monotonic", "short-delta"):  # seconds since boot: no clock
            stamps.append((rec.ts.astimezone(zone).replace(tzinfo=UTC), False) if naive_env else (rec.ts, True))
        if rec.marker is None:
            ts, zoned = app_stamp(rec.text)
            if ts is not None:
                stamps.append((ts, zoned))
        for stamp in stamps:
            if prev is not None and prev[1] != stamp[1]:
                return naive_offset(prev[0], stamp[0]) if stamp[1] else naive_offset(stamp[0], prev[0])
            prev = stamp
    return None


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
