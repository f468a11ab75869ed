"""Container runtimes' envelopes: ``docker logs --timestamps`` / ``kubectl logs
--timestamps`` lines, Kubernetes CRI lines (a ``P`` record continues in the
next), and JSON lines from docker's json-file driver and log shippers."""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Iterable, Iterator

from forensics.envelope.clean import clean_message
from forensics.envelope.clock import TS_ISO, UTC, parse_iso
from forensics.envelope.record import Record, load_object, split_escaped
from forensics.ingest.values import no_surrogates

DOCKER = re.compile(rf"^{TS_ISO} (?:(?P<stream>stdout|stderr) (?P<flag>[FP]) )?(?P<msg>.*)$")


def docker_records(lines: Iterable[tuple[int, str]], clock: Any = None, merge: bool = True) -> Iterator[Record]:
    partial: list[str] = []  # Kubernetes CRI "P" records: a line the runtime split
    first = 0
    for n, text in lines:
        m = DOCKER.match(text)
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
            yield from split_escaped(Record(first, clean_message(msg), parse_iso(m.group("iso")), ident=m.group("stream")))
            continue
        yield from split_escaped(Record(n, clean_message(msg), parse_iso(m.group("iso")), ident=m.group("stream")))
    if partial:
        yield Record(first, clean_message("".join(partial)))


# Generic JSON lines from log shippers: docker's json-file driver ({"log": "...\n",
# "stream": ..., "time": ...}), fluentd/vector/Loki ({"message"|"msg": ...}), GCP
# exports ({"textPayload": ...}).
JSONL_MESSAGE_KEYS = ("log", "message", "msg", "textPayload", "MESSAGE")
_JSONL_TIME_KEYS = ("time", "timestamp", "@timestamp", "ts", "receiveTimestamp")


def jsonl_records(lines: Iterable[tuple[int, str]], clock: Any = None, merge: bool = True) -> Iterator[Record]:
    for n, text in lines:
        raw = text.strip()
        if not raw:
            continue
        obj = load_object(raw)
        if obj is None:
            yield Record(n, clean_message(text))
            continue
        msg = next((obj[k] for k in JSONL_MESSAGE_KEYS if isinstance(obj.get(k), str)), None)
        if msg is None:
            yield Record(n, clean_message(text))
            continue
        ts = _jsonl_time(obj)
        k8s = obj.get("kubernetes")
        host = obj.get("host") or obj.get("hostname") or (k8s.get("pod_name") if isinstance(k8s, dict) else None)
        stream = obj.get("stream") if isinstance(obj.get("stream"), str) else None
        host = host if isinstance(host, str) else None
        msg = msg + access_fields(obj, msg)
        if "\\u" in raw:  # lone surrogates from JSON escapes
            msg, host, stream = (None if v is None else no_surrogates(v) for v in (msg, host, stream))
        parts = msg.rstrip("\n").split("\n")
        for i, part in enumerate(parts):
            if i and not part.strip():
                continue
            yield Record(n, clean_message(part), ts, host, stream, None, cont=i > 0)


# An HTTP request a program logs as a JSON record: its method, its path and the status it answered
# with as fields beside a bare message (llama.cpp's server before 2025, also inside llamafile and
# Ollama's runner: {"function":"log_server_request","msg":"request","method":"GET","path":"/health",
# "status":200}; zap's, structlog's and logrus' access middlewares). The message alone ("request")
# says nothing; written after it as key=value fields, the way the same servers print them as text
# ("request | method=\"GET\" path=\"/health\" status=200"), the phase markers read them (phases.yaml).
_HTTP_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"))
_PATH_KEYS = ("path", "url", "uri", "route")
_STATUS_KEYS = ("status", "status_code")
_PATH = re.compile(r'/[^\s"]{0,200}')


def access_fields(obj: dict, msg: str) -> str:
    """`` | method="M" path="/p" status=N`` for a JSON record of an HTTP request answered, else ""."""
    if obj.get("method") not in _HTTP_METHODS:  # (every JSON record passes here: the cheap test first)
        return ""
    method = obj["method"]
    path = next((obj[k] for k in _PATH_KEYS if isinstance(obj.get(k), str)), None)
    status = next((obj[k] for k in _STATUS_KEYS if isinstance(obj.get(k), int) and not isinstance(obj.get(k), bool)),
                  None)
    if path is None or _PATH.fullmatch(path) is None or status is None or not 100 <= status <= 599 or "method=" in msg:
        return ""
    return f' | method="{method}" path="{path}" status={status}'


def _jsonl_time(obj: dict) -> datetime | None:
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
    return ts
