"""Rendering a log's records into one of 13 envelope formats: a plain file,
journald (``journalctl -o short…``, ``cat``, ``json``), docker and Kubernetes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from .records import LogState, Rec

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
RENDERERS = ["plain", "short", "short-iso", "short-iso-precise", "short-precise", "short-unix", "short-monotonic", "short-full", "cat", "json",
             "docker-compose", "docker-ts", "k8s-cri"]
RENDER_WEIGHTS = [30, 12, 8, 6, 4, 3, 3, 3, 4, 4, 8, 6, 6]
JOURNALD = {"short", "short-iso", "short-iso-precise", "short-precise", "short-unix", "short-monotonic", "short-full", "cat", "json"}


def journald_split(recs: list[Rec]) -> list[Rec]:
    """What journald stores: trailing whitespace stripped, empty lines dropped."""
    out = []
    for rc in recs:
        t = rc.text.rstrip(" \t\r\n")
        if not t:
            continue
        out.append(Rec(rc.t, t, rc.src, rc.pid, rc.phase, rc.tag, rc.boot, rc.stream))
    return out


def fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    for unit, div in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3)):
        if n < div * 1024 or unit == "G":
            return f"{n / div:.1f}{unit}"
    return f"{n}B"


def printable(s: str) -> bool:
    for ch in s:
        o = ord(ch)
        if (o < 32 and ch not in "\n\t") or o == 127 or 0xDC80 <= o <= 0xDCFF:
            return False
    return True


@dataclass(frozen=True)
class RenderJob:
    """One rendering: the log, the renderer's name, its random stream and the
    process identity journald would record."""
    st: LogState
    renderer: str
    rng: Random
    ident: str
    per_child_pid: bool


Rendered = tuple[list[str], list[Rec]]


def render(st: LogState, renderer: str, rng: Random) -> Rendered:
    """Returns output lines (without newline) and, per line, the record it came from."""
    c = st.c
    ident = rng.choice(["python3", "python3", "python", f"python{c.py}", "sglang" if c.server == "sglang" else "vllm"])
    per_child_pid = rng.random() < 0.3
    return RENDER_TABLE[renderer](RenderJob(st, renderer, rng, ident, per_child_pid))


def render_plain(job: RenderJob) -> Rendered:
    owners = [rc for rc in job.st.recs if rc.src == "app"]
    return [rc.text for rc in owners], owners


def render_container(job: RenderJob) -> Rendered:
    """``docker compose logs``, ``docker logs -t`` and the Kubernetes CRI log file."""
    c, rng, renderer = job.st.c, job.rng, job.renderer
    svc = rng.choice(["sglang-1", "sglang_1", "llm-1", "sglang-server-1"]) if c.server == "sglang" else rng.choice(["vllm-1", "vllm_1", "backend-vllm-openai-1", "vllm-openai-1"])
    pad = max(len(svc), rng.choice([len(svc), len(svc) + 2]))
    zone = rng.choice(["Z", "+00:00", "+08:00", "+02:00"])
    off = {"Z": 0, "+00:00": 0, "+08:00": 8 * 3600, "+02:00": 7200}[zone]
    lines: list[str] = []
    owners: list[Rec] = []
    for rc in job.st.recs:
        if rc.src != "app":
            continue
        body = rc.text
        if renderer == "docker-compose":
            lines.append(f"{svc.ljust(pad)}  | {body}")
        else:
            ns = int((rc.t % 1) * 1e9)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(rc.t + off)) + f".{ns:09d}"
            if renderer == "docker-ts":
                lines.append(f"{stamp}Z {body}")
            else:
                lines.append(f"{stamp}{zone} {rc.stream} F {body}")
        owners.append(rc)
    return lines, owners


def journal_records(job: RenderJob) -> tuple[list[Rec], list[str]]:
    """What journald stored, and one boot id per boot (drawn for every journald renderer)."""
    jrecs = journald_split(job.st.recs)
    boot_ids = [job.rng.randbytes(16).hex() for _ in range(max(r.boot for r in jrecs) + 2)] if jrecs else []
    return jrecs, boot_ids


def _json_message(msg: str) -> str | list[int] | None:
    """journald's MESSAGE field: text, a byte array (unprintable or ANSI), or null (too long)."""
    raw = msg.encode("utf-8", "surrogateescape")
    if len(b"MESSAGE") + 1 + len(raw) >= 4096:
        return None
    if not printable(msg) or "\x1b" in msg:
        return list(raw)
    return msg


def _json_fields(job: RenderJob, rc: Rec, mval: str | list[int] | None, mono: int, stream_id: str,
                 inv: str, full_fields: bool) -> dict:
    st, rng, ident = job.st, job.rng, job.ident
    if rc.src == "kernel":
        return {"_TRANSPORT": "kernel", "SYSLOG_IDENTIFIER": "kernel", "SYSLOG_FACILITY": "0", "PRIORITY": rng.choice(["3", "4", "6"]), "MESSAGE": mval,
                "_SOURCE_MONOTONIC_TIMESTAMP": str(mono - rng.randint(1, 999))}
    if rc.src == "systemd":
        return {"_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "_COMM": "systemd", "_EXE": "/usr/lib/systemd/systemd",
                "_SYSTEMD_UNIT": "init.scope", "UNIT": st.unit, "SYSLOG_FACILITY": "3", "PRIORITY": rng.choice(["6", "5", "4"]), "CODE_FILE": "src/core/unit.c",
                "_UID": "0", "_GID": "0", "MESSAGE": mval}
    pid = rc.pid if job.per_child_pid else st.main_pid
    o = {"_TRANSPORT": "stdout", "SYSLOG_IDENTIFIER": ident, "_PID": str(pid), "_COMM": ident[:15],
         "_SYSTEMD_UNIT": st.unit, "_STREAM_ID": stream_id, "PRIORITY": "6", "SYSLOG_FACILITY": "3", "_UID": "0", "MESSAGE": mval}
    if full_fields:
        o.update({"_EXE": f"/usr/bin/python{st.c.py}", "_SYSTEMD_CGROUP": f"/system.slice/{st.unit}", "_SYSTEMD_SLICE": "system.slice",
                  "_SYSTEMD_INVOCATION_ID": inv, "_GID": "0"})
    return o


def render_json(job: RenderJob) -> Rendered:
    """``journalctl -o json``: one object per entry, its keys in a shuffled order."""
    st, rng = job.st, job.rng
    jrecs, boot_ids = journal_records(job)
    machine = rng.randbytes(16).hex()
    stream_id = rng.randbytes(16).hex()
    inv = rng.randbytes(16).hex()
    seq = rng.randint(10 ** 5, 10 ** 7)
    full_fields = rng.random() < 0.3
    lines: list[str] = []
    for rc in jrecs:
        seq += 1
        rt = int(rc.t * 1e6)
        mono = int((rc.t - st.boot_t0) * 1e6)
        bid = boot_ids[rc.boot]
        mval = _json_message(rc.text)
        o = {"__CURSOR": f"s={stream_id};i={seq:x};b={bid};m={mono:x};t={rt:x};x={rng.randbytes(8).hex()}",
             "__REALTIME_TIMESTAMP": str(rt), "__MONOTONIC_TIMESTAMP": str(mono), "_BOOT_ID": bid, "_HOSTNAME": st.c.host}
        if full_fields:
            o["_MACHINE_ID"] = machine
        o.update(_json_fields(job, rc, mval, mono, stream_id, inv, full_fields))
        keys = list(o)
        rng.shuffle(keys)
        lines.append(json.dumps({k: o[k] for k in keys}, ensure_ascii=False, separators=(",", ":")))
    return lines, list(jrecs)


def render_cat(job: RenderJob) -> Rendered:
    jrecs, _boot_ids = journal_records(job)
    return [rc.text for rc in jrecs], list(jrecs)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))


# journalctl -o short*: the time stamp of one entry, from (time, microseconds, "+00:00" zone?, log state).
SHORT_STAMPS: dict[str, Callable[[float, int, bool, LogState], str]] = {
    "short": lambda t, us, iso_colon, st: time.strftime("%b %d %H:%M:%S", time.gmtime(t)),
    "short-precise": lambda t, us, iso_colon, st: time.strftime("%b %d %H:%M:%S", time.gmtime(t)) + f".{us:06d}",
    "short-iso": lambda t, us, iso_colon, st: _iso(t) + ("+00:00" if iso_colon else "+0000"),
    "short-iso-precise": lambda t, us, iso_colon, st: _iso(t) + f".{us:06d}" + ("+00:00" if iso_colon else "+0000"),
    "short-full": lambda t, us, iso_colon, st: time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(t)),
    "short-unix": lambda t, us, iso_colon, st: f"{int(t)}.{us:06d}",
    "short-monotonic": lambda t, us, iso_colon, st: f"[{int(t - st.boot_t0):5d}.{int(((t - st.boot_t0) % 1) * 1e6):06d}]",
}


def _short_line(job: RenderJob, rc: Rec, stamp: str) -> str:
    st = job.st
    if rc.src == "kernel":
        who = "kernel"
    elif rc.src == "systemd":
        who = "systemd[1]"
    else:
        who = f"{job.ident}[{rc.pid if job.per_child_pid else st.main_pid}]"
    msg = ANSI_RE.sub("", rc.text).replace("\t", "        ")
    raw = rc.text.encode("utf-8", "surrogateescape")
    if not printable(msg):
        msg = f"[{fmt_bytes(len(raw))} blob data]"
    return f"{stamp} {st.c.host} {who}: {msg}"


def render_short(job: RenderJob) -> Rendered:
    """The ``journalctl -o short*`` family: header, ``-- Boot … --`` markers, stamp, host, identifier[pid]."""
    st, rng = job.st, job.rng
    jrecs, boot_ids = journal_records(job)
    stamp_of = SHORT_STAMPS[job.renderer]
    lines: list[str] = []
    owners: list[Rec] = []
    iso_colon = rng.random() < 0.5
    prev_boot = jrecs[0].boot if jrecs else 0
    header_old = rng.random() < 0.15
    if header_old and jrecs:
        t0, t1 = jrecs[0].t - rng.uniform(1e4, 1e7), jrecs[-1].t
        f = lambda t: time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(t))  # noqa: E731
        lines.append(rng.choice([f"-- Logs begin at {f(t0)}, end at {f(t1)}. --", f"-- Journal begins at {f(t0)}, ends at {f(t1)}. --"]))
        owners.append(Rec(0, "", "marker"))
    for rc in jrecs:
        if rc.boot != prev_boot:
            lines.append(f"-- Boot {boot_ids[rc.boot]} --")
            owners.append(Rec(rc.t, "", "marker"))
            prev_boot = rc.boot
        us = int(round((rc.t % 1) * 1e6)) % 1000000
        lines.append(_short_line(job, rc, stamp_of(rc.t, us, iso_colon, st)))
        owners.append(rc)
    return lines, owners


# The 13 envelope formats, each rendered by one function.
RENDER_TABLE: dict[str, Callable[[RenderJob], Rendered]] = {
    "plain": render_plain,
    **dict.fromkeys(SHORT_STAMPS, render_short),
    "cat": render_cat,
    "json": render_json,
    **dict.fromkeys(("docker-compose", "docker-ts", "k8s-cri"), render_container),
}
assert set(RENDER_TABLE) == set(RENDERERS)
