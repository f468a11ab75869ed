"""What a generated log is made of: timed records, the state of one log, and the
emitter that writes the lines one server process family would write."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from random import Random

from .catalog import Ctx, Failure, Precursor


@dataclass
class Rec:
    t: float
    text: str
    src: str = "app"          # app | systemd | kernel
    pid: int = 0
    phase: str = ""
    tag: str = ""             # fatal | early | ready | serving
    boot: int = 0
    stream: str = "stderr"


@dataclass
class LogState:
    c: Ctx
    t: float
    boot: int = 0
    boot_t0: float = 0.0       # realtime of boot (for monotonic)
    recs: list[Rec] = field(default_factory=list)
    phase: str = "launch"
    main_pid: int = 0
    child_pids: list[int] = field(default_factory=list)
    core_pid: int = 0
    api_pid: int = 0
    tqdm_nl: bool = False
    ms: bool = False
    tty: bool = False
    unit: str = "sglang.service"
    unit_desc: str = "SGLang server"


def ts_sg(st: LogState, t: float) -> str:
    base = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    if st.ms:
        base += f".{int((t % 1) * 1000):03d}"
    return base


def ts_vl(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


class Emitter:
    """Writes the lines one server process family would write."""

    def __init__(self, st: LogState):
        self.st = st
        self.c = st.c
        self.r = st.c.rng
        c = self.c
        if c.server == "sglang":
            tags = []
            for i in range(c.tp):
                parts = []
                if c.dp_attn:
                    parts.append(f"DP{i}")
                if c.tp > 1 or c.dp_attn:
                    parts.append(f"TP{i}")
                if c.ep and c.gen != "old":
                    parts.append(f"EP{i}")
                tags.append((" " + " ".join(parts)) if parts else "")
            self.rank_tags = tags

    # -- basic
    def adv(self, lo: float, hi: float) -> None:
        self.st.t += self.r.uniform(lo, hi)

    def add(self, text: str, *, src: str = "app", tag: str = "", pid: int | None = None, stream: str = "stderr") -> Rec:
        st = self.st
        rec = Rec(st.t, text, src, pid if pid is not None else st.main_pid, st.phase, tag, st.boot, stream)
        st.recs.append(rec)
        st.t += self.r.uniform(0.0, 0.004)
        return rec

    def rank_pid(self, rank: int | None) -> int:
        if rank is None or not self.st.child_pids:
            return self.st.main_pid
        return self.st.child_pids[rank % len(self.st.child_pids)]

    # -- SGLang lines
    def sg(self, msg: str, rank: int | None = None, tag: str = "") -> Rec:
        pfx = "" if rank is None else self.rank_tags[rank]
        return self.add(f"[{ts_sg(self.st, self.st.t)}{pfx}] {msg}", tag=tag, pid=self.rank_pid(rank))

    def sg_ranks(self, fn, ranks: list[int] | None = None, tag: str = "") -> None:
        ranks = list(range(self.c.tp)) if ranks is None else ranks
        order = ranks[:]
        if len(order) > 1 and self.r.random() < 0.7:
            self.r.shuffle(order)
        for i in order:
            self.sg(fn(i), i, tag)
            self.st.t += self.r.uniform(0, 0.05)

    def uv(self, level: str, msg: str, tag: str = "", proc: str = "api") -> Rec:
        lp = f"{level}:".ljust(9) + " "
        if self.st.tty:
            col = {"INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31m"}.get(level, "")
            lp = f"{col}{level}\x1b[0m:".ljust(9 + len(col) + 4) + " "
        if self.c.server == "sglang":
            if self.c.gen == "old":
                return self.add(f"{lp}{msg}", tag=tag)
            return self.add(f"[{ts_sg(self.st, self.st.t)}] {lp}{msg}", tag=tag)
        return self.add(self.vbare(proc) + f"{lp}{msg}", tag=tag, pid=self.vpid(proc), stream="stdout")

    # -- vLLM lines
    def vname(self, proc) -> str | None:
        c = self.c
        if proc == "api":
            return "APIServer" if c.gen in ("v011", "v033") else None
        if proc == "core":
            return "EngineCore_DP0" if c.gen in ("v011", "v033") else None
        if isinstance(proc, tuple):
            r = proc[1]
            if c.gen == "v06":
                return "VllmWorkerProcess" if r > 0 else None
            if c.gen == "v09":
                return f"VllmWorker rank={r}"
            return f"Worker_TP{r}" if c.tp > 1 else "Worker"
        return None

    def vpid(self, proc) -> int:
        if proc == "api":
            return self.st.api_pid
        if proc == "core":
            return self.st.core_pid
        return self.rank_pid(proc[1])

    def vbare(self, proc) -> str:
        """Prefix a bare (non-logger) line gets from the stream wrapper (<=0.11)."""
        name = self.vname(proc)
        if name is None or self.c.gen == "v033":
            return ""
        return f"\x1b[1;36m({name} pid={self.vpid(proc)})\x1b[0;0m "

    def vheader(self, level: str, file: str, proc) -> str:
        c = self.c
        ln = c.lineno(file, "log") % 2200 + 20
        ts = ts_vl(self.st.t)
        lvl = level
        if self.st.tty and c.gen == "v033":
            lvl = {"INFO": "\x1b[32mINFO\x1b[0m", "WARNING": "\x1b[33mWARNING\x1b[0m", "ERROR": "\x1b[31mERROR\x1b[0m"}.get(level, level)
        if c.gen == "v06":
            h = f"{lvl} {ts} {file}:{ln}] "
        else:
            h = f"{lvl} {ts} [{file}:{ln}] "
        if c.gen == "v033":
            name = self.vname(proc)
            if name:
                h = f"({name} pid={self.vpid(proc)}) " + h
        return h

    def vl(self, level: str, file: str, msg: str, proc="core", tag: str = "") -> Rec:
        return self.add(self.vbare(proc) + self.vheader(level, file, proc) + msg, tag=tag, pid=self.vpid(proc), stream="stdout")

    def vl_multi(self, level: str, file: str, lines: list[str], proc="core", tag_line: str = "", tag: str = "fatal") -> None:
        h = self.vheader(level, file, proc)
        pfx = self.vbare(proc)
        for i, ln in enumerate(lines):
            last = i == len(lines) - 1
            tg = tag if tag_line and tag_line in ln else ""
            self.add(pfx + h + ln + ("" if last else "\r"), tag=tg, pid=self.vpid(proc), stream="stdout")

    def bare(self, text: str, proc=None, tag: str = "", rank: int | None = None) -> Rec:
        if self.c.server == "vllm" and proc is not None:
            return self.add(self.vbare(proc) + text, tag=tag, pid=self.vpid(proc))
        return self.add(text, tag=tag, pid=self.rank_pid(rank))

    # -- tqdm
    def tqdm(self, desc: str, total: int, secs: float, proc=None, rank0: int | None = 0, steps: int | None = None, style: str = "pct") -> None:
        r = self.r
        steps = steps or min(total, r.randint(4, 9))
        pts = sorted(set([0] + [max(1, round(total * (i + 1) / steps)) for i in range(steps)]))
        segs = []
        for k in pts:
            el = secs * k / total
            rate = (k / el) if el > 0 else 0
            rem = (secs - el)
            if style == "pct":
                pct = int(100 * k / total)
                if k == 0:
                    segs.append(f"{desc}:   0% Completed | 0/{total} [00:00<?, ?it/s]")
                else:
                    rs = f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"
                    segs.append(f"{desc}: {pct:3d}% Completed | {k}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}<{int(rem) // 60:02d}:{int(rem) % 60:02d}, {rs}]")
            else:
                pct = int(100 * k / total)
                fill = int(10 * k / total)
                bar = "\u2588" * fill + (" " * (10 - fill))
                if k == 0:
                    segs.append(f"{desc}:   0%|          | 0/{total} [00:00<?, ?it/s]")
                else:
                    segs.append(f"{desc}: {pct:3d}%|{bar}| {k}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}<{int(rem) // 60:02d}:{int(rem) % 60:02d}, {max(rate, 0.01):5.2f}it/s]")
        pid = self.rank_pid(rank0)
        if self.st.tqdm_nl or style == "pct" and r.random() < 0.5:
            for s in segs:
                self.bare(s, proc=proc, rank=rank0)
                self.st.t += secs / len(segs)
            if style == "pct" and r.random() < 0.5:
                self.bare("", proc=proc, rank=rank0)
        else:
            self.add((self.vbare(proc) if proc is not None and self.c.server == "vllm" else "") + "\r".join(segs), pid=pid)
            self.st.t += secs



def sd(em: Emitter, st: LogState, text: str, unit_prefix: bool = True, tag: str = "") -> None:
    em.add(f"{st.unit}: {text}" if unit_prefix else text, src="systemd", pid=1, tag=tag)


class RunParts:
    """What the parts of one run (the server stories, failure injection) share;
    :class:`~forensics.lab.generator.run.Run` sets it in ``__init__``."""
    st: LogState
    c: Ctx
    r: Random
    em: Emitter
    failure: Failure | None
    precursor: Precursor | None
    pre_done: bool
    outcome: str

    def step_cut_short(self, lo: float, hi: float, partial: bool) -> bool:
        """A start-up step takes lo..hi seconds; ``partial``: the log stops inside it."""
        self.em.adv(lo, hi)
        return partial
