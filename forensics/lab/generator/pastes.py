"""Short failure logs assembled from catalogue entries (see ``from_catalogue``).

Each log is what someone hands over from one server: a few lines of its
start-up, maybe a warning that predicted the failure, the failing message
(raised as a traceback, logged at error level, printed by a runtime or a
compiler), the server's wrapper lines, sometimes a death line, sometimes behind
a container runtime's prefix. Formats, from the programs' sources:

* vLLM: ``LEVEL MM-DD HH:MM:SS [file.py:N] msg``; its V1 engine and Ray
  workers put ``(EngineCore_DP0 pid=N)`` / ``(RayWorkerWrapper pid=N)`` in front;
* SGLang: ``[YYYY-MM-DD HH:MM:SS TP0] msg``;
* TGI's launcher (Rust ``tracing``): ``YYYY-MM-DDTHH:MM:SS.ffffffZ LEVEL
  text_generation_launcher: msg``, level right-aligned to five;
* LMDeploy (``lmdeploy/utils.py`` ``_FORMAT``): ``YYYY-MM-DD HH:MM:SS,mmm -
  lmdeploy - LEVEL - file.py:N - msg``;
* NCCL: ``host:pid:tid [dev] NCCL WARN msg``;
* wrappers: docker compose ``svc-1  | `` prefixes; bash's ``Killed`` /
  ``Aborted (core dumped)`` / ``Segmentation fault (core dumped)``.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from random import Random
from typing import Any

from .from_catalogue import CARRIED_LABELS, SERVER_WEIGHTS, SERVERS, pool, render_entry

_PY_KINDS = ("raise", "assert", "check")
# A line that is itself an exception line ("RuntimeError: ...", "torch.AcceleratorError: ...").
_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|$)")
_DEATHS = ("Killed", "Aborted (core dumped)", "Segmentation fault (core dumped)")
_SITE = ("/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages",
         "/usr/local/lib/python3.12/dist-packages", "/home/user/.venv/lib/python3.11/site-packages")
LABEL_PHASE = {"env.module-missing": "launch", "env.library-missing": "launch", "env.abi-mismatch": "launch",
               "env.gpu-arch-unsupported": "kernel-jit", "env.driver-too-old": "launch",
               "toolchain.compiler-missing": "kernel-jit", "toolchain.compile-failed": "kernel-jit",
               "gpu.out-of-memory": "memory-plan", "gpu.illegal-access": "serving",
               "gpu.cuda-graph-capture": "cuda-graph-capture", "dist.nccl": "launch",
               "config.model-load": "load-weights", "config.invalid-argument": "launch",
               "net.port-in-use": "launch", "host.out-of-memory": "load-weights", "hang.timeout": "launch"}


@dataclass
class Paste:
    """One log being written: its lines, clock and where it came from."""

    server: str
    rng: Random
    t: float
    site: str
    pid: int
    lines: list[str] = field(default_factory=list)
    modules: tuple[str, ...] = ()

    def tick(self, lo: float = 0.01, hi: float = 3.0) -> float:
        self.t += self.rng.uniform(lo, hi)
        return self.t


def _stamp(fmt: str, t: float) -> str:
    return time.strftime(fmt, time.gmtime(t))


def log_line(p: Paste, level: str, msg: str, entry: dict[str, Any] | None) -> str:
    """``msg`` as the server's logger prints it at ``level``."""
    t = p.tick()
    fname = ((entry or {}).get("file") or "main.py").rsplit("/", 1)[-1]
    lineno = p.rng.randrange(30, 3000)
    s = p.server
    if s in ("vllm", "vllm-v1", "vllm-ascend", "ray"):
        return f"{_proc_prefix(p)}{level} {_stamp('%m-%d %H:%M:%S', t)} [{fname}:{lineno}] {msg}"
    if s == "sglang":
        return f"[{_stamp('%Y-%m-%d %H:%M:%S', t)}{p.rng.choice(('', ' TP0', ' TP1', ' DP0 TP0'))}] {msg}"
    if s == "tgi":
        lvl = {"WARNING": "WARN", "CRITICAL": "ERROR"}.get(level, level)
        return f"{_stamp('%Y-%m-%dT%H:%M:%S', t)}.{int(t * 1e6) % 1000000:06d}Z {lvl:>5} text_generation_launcher: {msg}"
    return f"{_stamp('%Y-%m-%d %H:%M:%S', t)},{int(t * 1000) % 1000:03d} - lmdeploy - {level} - {fname}:{lineno} - {msg}"


def _proc_prefix(p: Paste) -> str:
    if p.server in ("vllm-v1", "vllm-ascend"):
        return f"(EngineCore_DP0 pid={p.pid}) "
    if p.server == "ray":
        return f"(RayWorkerWrapper pid={p.pid}) "
    return ""


def library_line(p: Paste, entry: dict[str, Any], msg: str, level: str) -> str:
    """A message of a library the server runs: Python warnings print
    ``file:N: Category: msg``; transformers' and huggingface_hub's loggers
    print the bare message; the server's own logger formats the rest."""
    if entry.get("kind") == "warn":
        cat = (entry.get("exc_type") or "UserWarning").rsplit(".", 1)[-1]
        return f"{p.site}/{entry.get('file') or 'module.py'}:{p.rng.randrange(20, 2000)}: {cat}: {msg}"
    if entry.get("package") in ("transformers", "huggingface-hub") and p.server != "tgi":
        return msg
    if entry.get("kind") == "native-log" and entry.get("package") == "nccl":
        return f"node-{p.rng.randrange(1, 9)}:{p.pid}:{p.pid + 7} [{p.rng.randrange(8)}] NCCL {level[:4]} {msg}"
    return log_line(p, level, msg, entry)


def _frame(p: Paste, module: str | None, function: str | None) -> list[str]:
    if not module or "::" in module or not function:
        return []
    path = f"{p.site}/{module.replace('.', '/')}.py"
    return [f'  File "{path}", line {p.rng.randrange(20, 4000)}, in {function.rsplit(".", 1)[-1]}']


def traceback_block(p: Paste, entry: dict[str, Any], exc_line: str, outer: list[dict[str, Any]]) -> list[str]:
    """A Python traceback: the wrapper's frames outermost, the entry's own
    frame innermost, then the exception line."""
    out = ["Traceback (most recent call last):"]
    for w in outer:
        out += _frame(p, w.get("module"), w.get("function"))
    out += _frame(p, entry.get("module"), entry.get("function"))
    out.append(exc_line)
    return out


def exception_line(entry: dict[str, Any], msg: str) -> str | None:
    """The ``Type: message`` line the entry surfaces as in Python, or None
    when it is printed as a line of its own (compilers, loaders' logs)."""
    kind, pkg = entry.get("kind"), entry.get("package")
    if kind == "exc-line":
        return msg
    if kind == "line":
        return None
    if kind in _PY_KINDS:
        exc = (entry.get("exc_type") or ("AssertionError" if kind == "assert" else "RuntimeError")).rsplit(".", 1)[-1]
        return f"{exc}: {msg}"
    if pkg == "cuda-runtime":
        return f"RuntimeError: {msg}" if msg.startswith("CUDA error") else f"RuntimeError: CUDA error: {msg}"
    if kind == "binary-string" and pkg in ("torch", "deepgemm", "nccl", "sgl-kernel", "flashinfer"):
        return f"RuntimeError: {msg}"
    if pkg == "glibc":
        return f"ImportError: {msg}"
    if kind == "error-string" and pkg == "python":
        return f"OSError: {msg}"
    return None


def tool_line(entry: dict[str, Any], msg: str) -> str:
    """How a compiler or build tool prints its own error line."""
    pkg = entry.get("package")
    if pkg == "ptxas" and not msg.startswith("ptxas"):
        return f"ptxas error   : {msg}"
    if pkg == "ninja" and not msg.startswith("ninja"):
        return f"ninja: error: {msg}"
    return msg


def choose_server(rng: Random, label: str) -> str:
    names = sorted(SERVER_WEIGHTS)
    return rng.choices(names, weights=[SERVER_WEIGHTS[n] for n in names])[0]


def choose_failure(rng: Random, label: str, server: str, k: int) -> dict[str, Any] | None:
    """The failing message: every other paste one of the signatures' program
    strings for the label (exact, their label checked; taken in turn, so each
    appears), else a catalogue entry the server's packages print."""
    sigs = signature_wording(label)
    if sigs and k % 2 == 0:
        text = sigs[(k // 2) % len(sigs)]
        exc = _EXC_LINE.match(text)
        return {"package": SERVERS[server][0], "kind": "exc-line" if exc else "line", "level": "ERROR",
                "template": text.replace("{", "{{").replace("}", "}}"), "exc_type": None, "module": None,
                "function": None, "label": label, "phase": None, "release": "", "file": "", "id": "signature"}
    runtime = (pool().get("runtime") or {}).get(label) or []
    if runtime and k % 4 == 1:
        # the CUDA runtime's own error strings, each in turn: the words of the
        # error decide, not torch's wrapper around them
        return runtime[(k // 4) % len(runtime)]
    items = (pool().get("failures") or {}).get(label) or []
    mine = [d for d in items if d["package"] in SERVERS[server]]
    return rng.choice(mine or items) if items else None


def signature_wording(label: str) -> list[str]:
    """The failure signatures' proving lines for ``label`` (``wording.json``)."""
    from .wording import snapshot

    return [str(i["text"]) for i in snapshot().get(label) or [] if str(i.get("source", "")).startswith("signature")]


def noise(p: Paste, n: int) -> None:
    """Start-up chatter: info and warning log calls of the server's packages
    that teach no label (mostly the server's own)."""
    by_pkg = pool().get("noise") or {}
    own = SERVERS[p.server][0]
    for _ in range(n):
        pkg = own if p.rng.random() < 0.7 else p.rng.choice(SERVERS[p.server])
        items = by_pkg.get(pkg) or by_pkg.get(own) or []
        if not items:
            return
        d = p.rng.choice(items)
        p.lines.append(library_line(p, d, render_entry(d, p.rng, p.modules), d.get("level") or "INFO"))


def precursor(p: Paste, label: str, fail: dict[str, Any]) -> str:
    """A warning of the same label before the failure, when the catalogue has
    one the server's packages print, or a warning that logs a caught
    exception of that label; its text, else ''."""
    items = [d for d in (pool().get("warnings") or {}).get(label) or [] if d["package"] in SERVERS[p.server]]
    carriers = [d for d in pool().get("carriers") or [] if d["package"] in SERVERS[p.server]]
    if label in CARRIED_LABELS and carriers and p.rng.random() < 0.5:
        d = p.rng.choice(carriers)
        caught = render_entry(fail, p.rng, p.modules).splitlines()[0]
        msg = re.sub(r"\{(e|err|error|exc|exception|ex)\}", lambda _m: caught, d["template"], flags=re.I)
        msg = render_entry(dict(d, template=msg.replace("{", "{{").replace("}", "}}")), p.rng, p.modules)
        p.lines.append(library_line(p, d, msg, d.get("level") or "WARNING"))
        return msg[:80]
    if not items or p.rng.random() >= 0.45:
        return ""
    d = p.rng.choice(items)
    msg = render_entry(d, p.rng, p.modules)
    p.lines.append(library_line(p, d, msg, "WARNING"))
    return msg[:80]


def failure_block(p: Paste, d: dict[str, Any]) -> str:
    """The failing message in the server's shape; returns its proving text."""
    msg = render_entry(d, p.rng, p.modules).splitlines()[0]
    wrappers = (pool().get("wrappers") or {}).get(p.server) or []
    exc = exception_line(d, msg)
    if exc is None:
        if d.get("package") in ("ptxas", "ninja"):
            line = tool_line(d, msg)
            p.lines.append(line)
            for w in (pool().get("wrappers") or {}).get("_build") or []:
                if p.rng.random() < 0.6:
                    p.lines.append("ninja: " + w["template"].replace("{}", "subcommand failed"))
            return line[:80]
        level = "ERROR" if d.get("kind") != "native-log" or d.get("package") != "nccl" else "WARN"
        bare = d.get("kind") == "line" and p.rng.random() < 0.5  # a runtime's own stderr line
        p.lines.append(msg if bare else library_line(p, d, msg, level))
        return msg[:80]
    block = traceback_block(p, d, exc, wrappers[:1] if p.rng.random() < 0.7 else [])
    head = _block_head(p, wrappers)
    if head is not None:
        p.lines.append(head)
    pre = _proc_prefix(p) if p.server in ("vllm-v1", "vllm-ascend", "ray") else ""
    if p.server == "sglang" and head is None:
        p.lines.append(f"[{_stamp('%Y-%m-%d %H:%M:%S', p.tick())} TP0] Scheduler hit an exception: {block[0]}")
        block = block[1:]
    p.lines.extend(pre + ln for ln in block)
    if d.get("package") == "cuda-runtime" and p.rng.random() < 0.7:
        p.lines.append(pre + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")  # torch's, as catalogued
    return exc[:80]


def _block_head(p: Paste, wrappers: list[dict[str, Any]]) -> str | None:
    """The error line a server logs right before the traceback it prints
    (TGI's ``Error when initializing model``, V1's ``EngineCore failed to start.``)."""
    if p.server in ("tgi", "vllm-v1", "vllm-ascend") and wrappers:
        w = wrappers[0]
        return log_line(p, "ERROR", render_entry(w, p.rng, p.modules), w)
    return None


def wrap_up(p: Paste) -> None:
    """What follows the cause: the server's later wrapper lines, a death."""
    wrappers = (pool().get("wrappers") or {}).get(p.server) or []
    rest = wrappers[1:] if p.server in ("tgi", "vllm-v1", "vllm-ascend") else wrappers
    for w in rest:
        if p.rng.random() < 0.7:
            p.lines.append(log_line(p, "ERROR", render_entry(w, p.rng, p.modules), w))
    if p.server == "tgi" and p.rng.random() < 0.6:
        p.lines.append(log_line(p, "INFO", "Shutting down shards", None))
        p.lines.append("Error: ShardCannotStart")
    elif p.rng.random() < 0.35:
        p.lines.append(p.rng.choice(_DEATHS))


def container(p: Paste) -> str:
    """Optionally put docker compose's prefix on every line (no time of its own:
    an outer receive time that disagrees with the app's own stamps would make
    warnings look later than the failure)."""
    r = p.rng.random()
    if r < 0.2:
        svc = {"tgi": "tgi", "lmdeploy": "lmdeploy"}.get(p.server, p.server.split("-")[0])
        pad = " " * p.rng.randrange(1, 4)
        p.lines = [f"{svc}-1{pad}| {ln}" for ln in p.lines] + [f"{svc}-1 exited with code {p.rng.choice((1, 137, 134))}"]
        return "docker-compose"
    return "plain"


def _module_names() -> tuple[str, ...]:
    """Real importable names (the catalogue's modules): what a missing-module
    message names."""
    mods = {d["module"].split(".")[0] for v in (pool().get("noise") or {}).values() for d in v
            if d.get("module") and "::" not in d["module"]}
    return tuple(sorted(mods)) or ("vllm",)


def build_paste(seed: int, idx: int, label: str, k: int = 0) -> tuple[bytes, dict[str, Any]] | None:
    """One failure log of ``label`` and its labels.csv row, or None when the
    catalogue has nothing to teach it."""
    rng = Random(f"paste:{seed}:{idx}")
    server = choose_server(rng, label)
    d = choose_failure(rng, label, server, k)
    if d is None:
        return None
    p = Paste(server, rng, t=rng.uniform(1.70e9, 1.79e9), site=rng.choice(_SITE), pid=rng.randrange(200, 90000),
              modules=_module_names())
    noise(p, rng.randrange(2, 10))
    ew = precursor(p, label, d)
    noise(p, rng.randrange(0, 3))
    wrappers = (pool().get("wrappers") or {}).get(server) or []
    head = _block_head(p, wrappers) if ew and rng.random() < 0.3 else None
    if head is not None:
        # Handed over cut after the wrapper's error line: the warning before
        # it is all that names the cause.
        p.lines.append(head)
        fatal = head.split(": ", 1)[-1][:80] if server == "tgi" else head[-60:]
    else:
        fatal = failure_block(p, d)
    wrap_up(p)
    style = container(p)
    data = ("\n".join(p.lines) + "\n").encode("utf-8")
    from forensics.events.catalogue import phase_of_function

    phase = d.get("phase") or phase_of_function(d.get("module"), (d.get("function") or "").rsplit(".", 1)[-1])
    row = {"renderer": f"paste-{style}", "cut": "none", "server": f"{server} ({d['package']} {d['release']})", "tp": 1,
           "gpu": "-", "runs": 1, "root_cause": label, "phase": phase or LABEL_PHASE[label],
           "early_warning_substring": ew if ew and ew in data.decode("utf-8") else "",
           "fatal_substring": fatal, "verdict": "failed", "variant": f"catalogue {d['id']}", "spliced": ""}
    return data, row


def write_pastes(seed: int, out_dir: Any, per_label: int, labels: list[str]) -> list[dict[str, Any]]:
    """Write ``per_label`` pastes per label into ``out_dir`` (ids
    ``g{seed}-p{n}``); return their rows for labels.csv."""
    from forensics.atomic import atomic_write_bytes

    rows = []
    n = 0
    for label in labels:
        for k in range(per_label):
            got = build_paste(seed, n, label, k)
            n += 1
            if got is None:
                continue
            data, row = got
            row["id"] = f"g{seed}-p{n - 1:04d}"
            atomic_write_bytes(out_dir / f"{row['id']}.log", data, fsync=False)
            rows.append(row)
    return rows
