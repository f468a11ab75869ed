"""The time zone of log times printed without one.

``journalctl -o short`` (and syslog, and ``short-precise``/``short-full``'s
zone abbreviations) print the wall-clock time of the host that ran
``journalctl``. We read them in the zone given by ``--tz`` (kept in the
``FORENSICS_TZ`` environment variable, so worker processes inherit it), else
``TZ``, else ``/etc/localtime``, else UTC, and turn them into UTC.
"""
from __future__ import annotations

import os
from datetime import timezone, tzinfo
from functools import lru_cache

from forensics.errors import InputError

ENV = "FORENSICS_TZ"


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
        from datetime import timedelta

        digits = abbr[1:].ljust(4, "0")
        off = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
        return timezone(off if abbr[0] == "+" else -off)
    return log_zone()
