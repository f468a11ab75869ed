"""What a run was, as its log prints it: versions, GPU, host, server arguments, environment.

``RunFacts`` is fed the events of one lifetime and keeps, for each fact, the
first value printed and the line it came from (bounded: ``MAX_FACTS`` keys).
The rules are data (``VERSION_RULES`` ... in facts.yaml): each names a fact and a regex over
the message text of what real programs print, e.g. vLLM's ``vLLM API server
version 0.11.0``, SGLang's ``server_args=ServerArgs(...)`` and ``sglang is
using nccl==2.21.5``, NCCL's ``NCCL version 2.28.9+cuda13.0`` and
``NCCL INFO NCCL_P2P_LEVEL set by environment to SYS``, nvidia-smi's
``Driver Version: 580.159.04   CUDA Version: 13.0``.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from forensics.events.tables import joined, load_table
from forensics.events.types import Event

MAX_FACTS = 2000
MAX_VALUE = 300

_TABLES = load_table(__file__, "facts.yaml")
# (fact, regex): the first group is the value. First match in the run wins.
VERSION_RULES: list[tuple[str, re.Pattern[str]]] = [(r["fact"], re.compile(joined(r["regex"])))
                                                    for r in _TABLES["version_rules"]]
# GPU model, compute capability, free memory and count as torch / nvidia-smi / the servers print them.
GPU_RULES: list[tuple[str, re.Pattern[str]]] = [(r["fact"], re.compile(joined(r["regex"])))
                                                for r in _TABLES["gpu_rules"]]

# A kernel's file or module names the architecture it was built for: flash_fwd_sm100, sm90_gemm, sm_120.
_KERNEL_ARCH = re.compile(r"(?<![A-Za-z])sm_?(\d{2,3})[a-z]?(?![\d])")

_SERVER_ARGS = re.compile(r"\bserver_args=ServerArgs\((.*)\)\s*$")
_VLLM_NONDEFAULT = re.compile(r"\bnon-default args: (\{.*\})\s*$")
_VLLM_NAMESPACE = re.compile(r"\bargs: Namespace\((.*)\)\s*$")
_VLLM_ENGINE_CONFIG = re.compile(r"\bLLM engine \(v[^)]*\) with config: (.*)$")

_ENV_NAME = r"((?:[A-Z][A-Z0-9]*_)+[A-Z0-9]+|PATH|LD_LIBRARY_PATH|HOME)"
_ENV_NCCL = re.compile(r"\b" + _ENV_NAME + r" set by environment to (\S*)")
_ENV_ASSIGN = re.compile(r"(?:^|\s)" + _ENV_NAME + r"=(\"[^\"]*\"|'[^']*'|\S*)")
# A line that sets variables: `export A=B`, `+ env A=B cmd`, `A=B C=D python ...`, `Environment: A=B`.
_ENV_LINE = re.compile(r"^\s*(?:\++ )?(?:export |env |declare -x |Environment(?:=|: ))?(?:[A-Z][A-Z0-9_]*=)")

# One cheap scan decides whether a line can hold any fact (most lines of a long log cannot).
_TRIGGER = re.compile(r"(?i)version|torch|cuda|nccl|flashinfer|triton|python\d?[ ./]|driver|nvidia|tesla|amd |"
                      r"capabilit|sm_?\d\d|avail mem|free memory|serverargs|args|device|gpu|set by environment|="
                      r"|text-generation")


@dataclass
class Fact:
    value: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "line": self.line}


def _cc(m: re.Match[str]) -> str:
    """A compute capability in one spelling: 9.0, 10.3, 12.0."""
    if m.lastindex and m.lastindex >= 2:
        return f"{m.group(1)}.{m.group(2)}"
    v = m.group(1)
    if v.startswith("sm_"):
        d = v[3:]
        return f"{d[:-1]}.{d[-1]}"
    return v


def split_top_level(s: str, sep: str = ",") -> list[str]:
    """Split ``a=1, b=[1, 2], c='x, y'`` at top-level separators (quotes and brackets respected)."""
    out, cur, depth, quote, esc = [], [], 0, "", False
    for ch in s:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


def parse_kwargs(s: str, kv: str = "=") -> dict[str, str]:
    """``model_path='x', tp_size=8`` -> {"model_path": "x", "tp_size": "8"} (values as printed, quotes off)."""
    out: dict[str, str] = {}
    for part in split_top_level(s):
        if kv not in part:
            continue
        k, v = part.split(kv, 1)
        k = k.strip().strip("'\"")
        if not k or not re.fullmatch(r"[\w.\-]+", k):
            continue
        out[k] = _unquote(v.strip())
    return out


def _unquote(v: str) -> str:
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def parse_vllm_dict(s: str) -> dict[str, str]:
    """vLLM's ``non-default args: {'model': 'x', 'max_model_len': 4096}``."""
    try:
        d = ast.literal_eval(s)
        if isinstance(d, dict):
            return {str(k): v if isinstance(v, str) else repr(v) for k, v in d.items()}
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    inner = s.strip()[1:-1]
    return parse_kwargs(inner, ":")


@dataclass
class RunFacts:
    """Facts of one lifetime, fed event by event."""

    facts: dict[str, Fact] = field(default_factory=dict)
    hosts: Counter = field(default_factory=Counter)
    ranks: set[str] = field(default_factory=set)
    kernel_archs: dict[str, int] = field(default_factory=dict)  # "sm100" -> first line
    _args_seen: set[str] = field(default_factory=set)

    def _put(self, key: str, value: str, line: int) -> None:
        if key in self.facts or len(self.facts) >= MAX_FACTS:
            return
        value = value.strip()
        if value:
            self.facts[key] = Fact(value[:MAX_VALUE], line)

    def observe(self, ev: Event) -> None:
        if ev.host and len(self.hosts) < 64:
            self.hosts[ev.host] += 1
        if ev.rank and len(self.ranks) < 1024:
            self.ranks.add(ev.rank)
        if ev.kind == "traceback":
            self._frames(ev)
            return
        text = ev.text
        if not _TRIGGER.search(text):
            return
        self.observe_text(text, ev.line)

    def _frames(self, ev: Event) -> None:
        for exc in ev.data.get("chain") or ():
            for f in exc.frames:
                self._arch(f.file, ev.line)
            self._arch(exc.exc_message[:400], ev.line)

    def _arch(self, text: str, line: int) -> None:
        for m in _KERNEL_ARCH.finditer(text):
            tag = f"sm{m.group(1)}"
            if tag not in self.kernel_archs and len(self.kernel_archs) < 32:
                self.kernel_archs[tag] = line

    def _arg_dump(self, text: str, line: int, tag: str, rx: re.Pattern[str],
                  parse: Callable[[str], dict[str, Any]], prefix: str) -> bool:
        """Record the arguments of the first dump of form ``tag`` in the run as
        ``<prefix>.<name>`` facts; True when this line is that dump."""
        if tag in self._args_seen:
            return False
        m = rx.search(text)
        if not m:
            return False
        self._args_seen.add(tag)
        for k, v in parse(m.group(1)).items():
            self._put(f"{prefix}.{k}", v, line)
        return True

    def observe_text(self, text: str, line: int) -> None:
        if "ServerArgs(" in text and self._arg_dump(text, line, "server_args", _SERVER_ARGS, parse_kwargs, "arg"):
            self._put("server", "sglang", line)
            return
        if "args" in text:
            if self._arg_dump(text, line, "non-default", _VLLM_NONDEFAULT, parse_vllm_dict, "arg"):
                self._put("server", "vllm", line)
                return
            if self._arg_dump(text, line, "namespace", _VLLM_NAMESPACE, parse_kwargs, "arg"):
                return
        if "with config:" in text:
            self._arg_dump(text, line, "engine", _VLLM_ENGINE_CONFIG, parse_kwargs, "engine")
        for key, rx in VERSION_RULES:
            if key in self.facts:
                continue
            m = rx.search(text)
            if m:
                if key.startswith("server."):
                    self._put("server", key.split(".", 1)[1], line)
                    self._put("server_version", m.group(1), line)
                    continue
                self._put(key, m.group(1), line)
        for key, rx in GPU_RULES:
            if key in self.facts:
                continue
            m = rx.search(text)
            if m:
                if key == "compute_capability":
                    self._put(key, _cc(m), line)
                elif key == "gpu":
                    self._put(key, re.sub(r"_+", " ", m.group(1)).strip(), line)
                else:
                    self._put(key, m.group(1), line)
        if "sm" in text:
            self._arch(text, line)
        if "set by environment" in text:
            m = _ENV_NCCL.search(text)
            if m:
                self._put(f"env.{m.group(1)}", m.group(2).rstrip(".,;:"), line)
        elif "=" in text and _ENV_LINE.match(text):
            for m in _ENV_ASSIGN.finditer(text):
                self._put(f"env.{m.group(1)}", _unquote(m.group(2).rstrip(",;")), line)

    def finish(self) -> dict[str, Fact]:
        """All facts, derived ones included (host, ranks, inferred GPU)."""
        out = dict(self.facts)
        if self.hosts:
            out.setdefault("host", Fact(self.hosts.most_common(1)[0][0], 0))
        tp = [r for r in self.ranks if re.fullmatch(r"TP\d+", r)]
        if tp:
            out.setdefault("ranks.tp", Fact(str(max(int(r[2:]) for r in tp) + 1), 0))
        if self.kernel_archs:
            out["kernel_arch"] = Fact(", ".join(sorted(self.kernel_archs)), min(self.kernel_archs.values()))
        if "gpu" not in out and "gpu_free_gib" in out:
            guess = guess_gpu(out["gpu_free_gib"].value)
            if guess:
                out["gpu (inferred from free memory)"] = Fact(guess, out["gpu_free_gib"].line)
        return out


# Memory as torch reports it (GiB) of GPUs whose start-up logs print only free memory.
# Free memory at the first weight load is 93-99.9% of this in SGLang's logs.
GPU_MEMORY_GIB: list[tuple[str, float]] = [
    ("Tesla T4", 14.56), ("NVIDIA L4 / A10G", 22.05), ("RTX 4090", 23.52), ("RTX 3090", 23.69), ("RTX 5090", 31.36),
    ("A100 40GB", 39.39), ("L40S", 44.39), ("H100 80GB / A100 80GB", 79.2), ("RTX PRO 6000 Blackwell", 94.97),
    ("GB10", 119.7), ("H200", 139.81), ("B200", 178.35), ("GB200", 184.31), ("B300", 267.7),
]


def guess_gpu(free_gib: str) -> str | None:
    try:
        free = float(free_gib)
    except ValueError:
        return None
    hits = [name for name, total in GPU_MEMORY_GIB if total * 0.9 <= free <= total * 1.001]
    return " or ".join(hits) if hits else None


def extract(events: Iterable[Event]) -> dict[str, Fact]:
    """Facts of a whole event stream (one lifetime)."""
    rf = RunFacts()
    for ev in events:
        rf.observe(ev)
    return rf.finish()


def facts_of_text(text: str) -> dict[str, str]:
    """Facts of log text (tests, notebooks): key -> value. The lines are read
    as given and also through the envelope like any log, so a journal in JSON
    or a docker log gives the same facts as a plain one (the first reading of
    a key wins)."""
    import io

    from forensics.events.parser import iter_source_events
    from forensics.ingest.sources import Source

    class _Text(Source):
        def open_binary(self):  # type: ignore[no-untyped-def, override]
            return io.BufferedReader(io.BytesIO(text.encode("utf-8", "surrogateescape")))  # type: ignore[arg-type]

    rf = RunFacts()
    for i, line in enumerate(text.splitlines(), 1):  # the lines as given (a pasted nvidia-smi table)
        if _TRIGGER.search(line):
            rf.observe_text(line, i)
    for ev in iter_source_events(_Text("<text>", None), "auto"):  # and their messages
        rf.observe(ev)
    return {k: f.value for k, f in rf.finish().items()}
