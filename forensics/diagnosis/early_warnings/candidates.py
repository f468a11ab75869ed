"""Candidates: non-fatal lines that read as warnings, collected while the log
streams (bounded) and linked only when the incident failed."""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator

from mypy_extensions import mypyc_attr

from forensics.diagnosis.early_warnings.context import context_tokens
from forensics.diagnosis.early_warnings.subjects import to_gib
from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.diagnosis.early_warnings.wording import holds_any_level_hint, wording_class
from forensics.diagnosis.guarded import AsciiRegex
from forensics.events import types as kinds
from forensics.events.textmemo import memo_by_text, remember
from forensics.events.types import Event

WARN_LEVELS = frozenset({"WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"})
# A level written into the text by loggers the envelope does not know (TGI's
# " WARN ", NCCL's "NCCL WARN", glog "W0412", "warning:", Python warnings).
# Two shapes of many programs: Go's logfmt (slog, logrus: Ollama, containerd, Kubernetes parts)
# ``level=WARN``, and ggml's common log (llama.cpp and the servers built on it) ``0.00.747.142 W fn: ...``.
# Four more (fix-ew3; each a logging library's own header, wherever a wrapper's prefix puts it):
# a level in brackets right after another tag (TurboMind's ``[TM][WARNING]``; a line that opens with a
# bracketed level alone is left to the envelope: read here, two healthy start-ups of the real dev set
# got a live warning each), logrus's text
# formatter (Docker Compose, containerd: ``WARN[0000]``, ``ERRO[0012]``, ``FATA[0000]``), onnxruntime's
# logger (``[W:onnxruntime:Default, ...]``, ``[E:onnxruntime:...]``), and glog's full header after a
# prefix (a Docker build step's ``#17 3.494 W0610 11:42:35.430000 7 file.py:140]``, a worker's tag).
_TEXT_LEVEL = re.compile(r"(?:^|[\s\]|:-])(?:WARN(?:ING)?|ERROR|CRITICAL|FATAL)(?=[\s:\]|-])|^[WE]\d{4} \d\d:|"
                         r"\b(?:User|Future|Deprecation|Runtime|Resource|Import)Warning\b|^\s*(?i:warning|error):|"
                         r"\blevel=[\"']?(?i:warn(?:ing)?|error|fatal|crit(?:ical)?)\b|^\d+\.\d\d\.\d{3}\.\d{3} [WE] \w|"
                         r"\]\[(?:WARN(?:ING)?|ERROR|CRITICAL|FATAL)\]|^(?:WARN|ERRO|FATA)\[\d{4}\]|\[[WEF]:onnxruntime:|"
                         r"\s[WE]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w./-]+:\d+\]")
# Wording that means "something is not as it should be" whatever the level.
CUE_RE = re.compile(
    r"(?i)warn|error|fail|fall(?:ing)? ?back|not installed|not (?:be )?compatible|incompatible|not set|disabled|"
    r"exceed|deprecat|could not|couldn't|cannot|can't|unable|retry|retrying|not supported|unsupported|not found|"
    r"not available|missing|mismatch|lower than|older than|newer than|too (?:old|new|small|large|low|high|many)|"
    r"insufficient|negative|set by environment|overrid|is not|was not|no platform|ignor|skipp|requested for|"
    r"does not support|does not have|doesn't have|\black(?:s|ing)?\b|only supported|below|requires?\b|out of memory|"
    r"ran out of|exhausted|\bhang(?:s|ing)?\b|\bhung\b|\bstuck\b|deadlock|\btime(?:d)? ?out\b|"
    # (fix-ewfound23) data a program found damaged ("Context corruption detected", "corrupted size vs.
    # prev_size"), and a setting that overrides what the program would choose ("VLLM_X is set: forcing
    # FLASHINFER ... instead of TRITON_ATTN"): trouble, or a deliberate change, whatever the level. (Not
    # a force without the choice it overrides: transformers' "Offline mode: forcing local_files_only=True".)
    r"corrupt|\bforc(?:ing|ed)\b[^.;]{0,80}?\binstead of\b")
# The streaming check: plain substrings (C speed) that every CUE_RE / ARITH_RE
# match contains; the regexes confirm at link time.
CUE_WORDS = ("warn", "error", "fail", "fall", "not ", "incompatible", "disabled", "exceed", "deprecat", "could",
             "couldn't", "cannot", "can't", "unable", "retry", "unsupported", "missing", "mismatch", "lower than",
             "older than", "newer than", "too ", "insufficient", "negative", "set by environment", "overrid",
             "ignor", "skipp", "requested for", "does not", "doesn't", " lack", "only supported", "below", "require",
             "no platform", "out of", " hang", " hung", "stuck", "deadlock", "timeout", "timed out", "time out",
             "corrupt", "forcing", "forced")
# ("out of memory", "ran out of"; "exhausted" is always printed at an error level; a space before the
# short words: "Blackwell" holds "lack", "change" holds "hang")
ARITH_WORDS = ("took", "load weight end", "kv cache", "memory pool end", "avail", "blocks", "maximum concurrency",
               "max_total_num_tokens", "gpu #", "gpu_id=", "free memory", "system memory")
# What a line says it needs, a count of zero, a throughput (resources.py's shortfall): words too common to make a line a candidate
# on their own, so the line must also hold ARITH_RE's figures.
NEED_WORDS = ("request", "require", "need", "detected 0", "found 0", "initialized: 0", "initialised: 0", "throughput",
              "projected to use", "buffer size =")  # (ggml's buffers: a GPU's, not the CPU's, is a budget line)
# Numbers that resource arithmetic reads, whatever the level.
ARITH_RE = re.compile(
    r"(?i)(?:model loading took|loading model weights took|weights took|load weight end|kv cache memory|"
    r"kv cache is allocated|memory pool end|avail(?:able)? mem|# ?(?:gpu|cuda) blocks|gpu kv cache size|"
    r"maximum concurrency|max_total_num_tokens|starting at gpu #|gpu_id=|free memory on device|"
    r"explicitly set \(-?\d|msg=\"?system memory|"
    # TensorRT-LLM's KV-cache plan (its memory plan at INFO, as vLLM's "Available KV cache memory"):
    # "[MemUsageChange] Allocated 64.49 GiB for max tokens in paged KV cache (1056640)", "Using 693
    # tokens in paged KV cache." -- a budget line, news before a memory failure
    r"allocated -?\d+(?:\.\d+)? ?[GMK]i?B for (?:max tokens in )?paged kv cache|using -?\d+ tokens in paged kv cache|"
    # ggml's plan of a GPU's buffers (llama.cpp, Ollama's runner: "CUDA0 buffer size = 79522.36 MiB",
    # "CUDA0 KV buffer size", "CUDA0 compute buffer size"): the device's memory plan, line by line
    r"\b(?:cuda|rocm|hip|vulkan|sycl|cann|musa|mtl)\d+ (?:model |kv |compute )?buffer size = +\d|"
    # what a line says it needs, beside what it has (resources.py's shortfall)
    r"\b(?:requested|required|requires|needs?|needed)\b[\"']?\s*[=:]?\s*[\"']?\d+(?:\.\d+)? ?[GMT]i?B\b|"
    r"\d ?[GMT]i?B\b[\w ]{0,30}?\b(?:requires|needs|needed|required)\b|required (?:GPU|NPU|XPU|device|card|node)s? exceeds?|"
    r"\bprojected to use \d+(?:\.\d+)? ?[GMT]i?B\b.{0,60}?\bof total\b|"  # a need against the total (need_over_total)
    # llama.cpp's parameter fit (common_params_fit_impl / llama_params_fit_impl) stating its own shortfall:
    # "cannot meet free memory target of 1024 MiB, need to reduce device memory by 14100 MiB", "cannot meet
    # free memory targets on all devices, need to use 3412 MiB less in total". Healthy start-ups print it
    # too (the fit then moves layers to the CPU), so it is a budget line: news after a memory failure.
    r"\bcannot meet free memory targets?\b.{0,80}?\bneed to (?:reduce device memory by|use) \d+ ?[GMT]i?B\b|"
    r"\brequires? \d+ (?:GPU|NPU|XPU|device|card)s?,? but only \d|\b(?:detected|found|initiali[sz]ed:?)\s+0\s+"
    r"(?:compatible|usable|healthy|total)\b|"
    r"generation throughput: 0\.0+ tokens/s, running: [1-9]|#running-req: [1-9]\d*,.{0,200}?gen throughput \(token/s\): 0\.00?\b)")
# An engine that generates nothing while requests run (vLLM's metrics "Avg generation throughput:
# 0.0 tokens/s, Running: 1 reqs", SGLang's "Decode batch. #running-req: 2, ... gen throughput
# (token/s): 0.00"): counted per incident (``facts['stalls']``), read by resources.py.
STALL_PATTERN = (r"(?i)generation throughput: 0\.0+ tokens/s, Running: [1-9]\d* reqs|"
                 r"#running-req: [1-9]\d*,.{0,200}?gen throughput \(token/s\): 0\.00?\b")
_STALL = re.compile(STALL_PATTERN)
# Context facts (counts, budgets) that arithmetic needs; read from any line.
FACT_RE = re.compile(
    r"(?i)(?:gpu_memory_utilization|mem_fraction_static)['\"]?\s*[=:]\s*(0?\.\d+|1\.0)|"
    r"(?:tensor_parallel_size|tp_size)['\"]?\s*[=:]\s*(\d+)|CUDA_VISIBLE_DEVICES['\"]?\s*[=:]\s*['\"]?([\d,]+)|"
    r"total (?:gpu )?memory[^\d-]{0,20}(\d+(?:\.\d+)?)\s?(GiB|GB)|total capacity of (\d+(?:\.\d+)?)\s?(GiB|GB)|"
    r"Free memory on device \((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) GiB\)|\bnGpus:? (\d+)|"
    r"(?:data_parallel_size|dp_size)['\"]?\s*[=:]\s*(\d+)|"
    r"msg=\"?model weights\"? device=CPU size=\"?(\d+(?:\.\d+)?) ?([GM]i?B)")
_FACT_HINT = ("utilization", "mem_fraction", "tp_size", "tensor_parallel", "CUDA_VISIBLE", "total", "nGpus",
              "Free memory", "dp_size", "data_parallel", "model weights")
_NOISE = re.compile(r"^\W*$|\d+%\|[^|]*\|\s*\d+/\d+|\bit/s\]|s/it\]|[█▏▎▍▌▋▊▉]{2,}|^\s*\^+\s*$|^\s*warnings\.warn\(")
_FAST_KEY = re.compile(r"\d+")  # the streaming dedupe key: digits masked (template() runs only at link time)
MAX_TEMPLATES = 400  # distinct templates kept per incident (start-up first)
PER_TEMPLATE = 4  # occurrences kept per template naming a GPU index (DP0..DP3 start at different GPUs)
RECENT = 128  # the latest candidates, whatever the cap
MAX_HANDLED = 16  # distinct handled tracebacks considered per failure


def text_level(ev: Event) -> str | None:
    """The level an event carries, from its prefix or, failing that, its text
    (TGI's `` WARN ``, ``NCCL WARN``, glog ``W0412``, ``warning:``, Python warnings)."""
    lvl = (ev.level or "").upper()
    if lvl in ("ERROR", "CRITICAL", "FATAL"):
        return "ERROR"
    if lvl in ("WARNING", "WARN"):
        return "WARNING"
    m = _TEXT_LEVEL.search(ev.text[:160])
    if m is None:
        return lvl or None
    tok = m.group(0).strip(" :]|-\t[").upper()
    if tok.startswith("LEVEL="):
        tok = tok[6:].strip("\"'")
    elif tok[:1].isdigit():
        tok = tok.split(" ")[1]  # ggml's stamp, then its level letter
    elif tok[1:2] == ":":
        tok = tok[0]  # onnxruntime's severity letter
    if tok.startswith(("ERRO", "CRIT", "FATA")) or re.match(r"[EF]\d{4}", tok) or tok in ("E", "F"):
        return "ERROR"
    return "WARNING"


_KV_PAIR = re.compile(r"\w['\"]?\s?(?:=|: )")


def _is_config_dump(text: str) -> bool:
    """``server_args=ServerArgs(...)``, ``non-default args: {...}``, engine
    config lines: facts for arithmetic, not warnings."""
    return len(text) > 300 and len(_KV_PAIR.findall(text[:3000])) >= 10


_ALNUM = re.compile(r"[^\W_]")
_NOISE_HINTS = ("|", "it/s", "s/it", "█", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "^", "warnings.warn(")


def is_noise(text: str) -> bool:
    """Blank lines, progress bars, caret underlines: never a warning (``watch`` asks this; after the
    fact a log record written onto a bar's line is read: ``after_progress_bar``)."""
    stripped = text.strip()
    if not stripped:
        return True
    if any(map(text.__contains__, _NOISE_HINTS)) or not _ALNUM.search(stripped[:40]):
        return bool(_NOISE.search(text))  # looks like a bar or punctuation only: let the pattern decide
    return False


def is_noise_after_the_fact(text: str) -> bool:
    """``is_noise``, except a progress bar's line that carries another process's log record with a
    level: after the fact that record is a candidate like any line. (Live it stays noise: healthy
    Blackwell start-ups write CuTe DSL's package-walk warning onto SGLang's capture bar, and its
    precursor would be announced there.)"""
    return is_noise(text) and after_progress_bar(text) is None


# The end of a tqdm bar ("| 453/512 [00:06<00:00, 79.11it/s]") and a log record another process wrote
# right after it, with no newline between (a bar redraws with carriage returns, so the record lands on
# its line: vLLM's "Adding requests: 88%|...| 453/512 [00:06<00:00, 79.11it/s](EngineCore_DP0 pid=10311)
# [kvcached][WARNING][...] available_size()=9.0 < need_size=30"): the record is a line of its own.
_BAR_THEN_RECORD = re.compile(r"\|\s*\d+/\d+ \[[^\]]{0,80}?(?:it/s|s/it)\]\s*(\S.{20,})$")


def after_progress_bar(text: str) -> str | None:
    """The log record written onto a progress bar's line, when it carries a level of its own (its
    program's word that it is a warning or an error); None otherwise."""
    if "it/s]" not in text and "s/it]" not in text:
        return None
    m = _BAR_THEN_RECORD.search(text[:2000])
    if m is None:
        return None
    rest = m.group(1)
    return rest if _TEXT_LEVEL.search(rest[:160]) else None


# Python classes even where this module is compiled (forensics.native): they are
# copied, deep-copied or pickled (live readers fork them), which mypyc's native classes
# do not support.
@mypyc_attr(native_class=False)
@dataclass
class Candidate:
    event: Event
    level: str | None
    count: int = 1


@mypyc_attr(native_class=False)
@dataclass
class Notes:
    """What an incident keeps for early warnings (bounded)."""

    templates: OrderedDict = field(default_factory=OrderedDict)  # template -> list[Candidate]
    recent: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    failure: tuple | None = None  # (label, fail_line, fail_ts, evidence) of the last link(), for relink()
    carried: list = field(default_factory=list)  # the previous lifetime's, when its boundary was no process exit

    def candidates(self) -> Iterator[Candidate]:
        yield from self.carried
        seen: set[int] = set()
        for cands in self.templates.values():
            for c in cands:
                seen.add(id(c))
                yield c
        for c in self.recent:
            if id(c) not in seen:
                yield c


TEMPLATES_KEPT = 4096
_TEMPLATES: dict[str, str] = {}  # the same lines recur in every lifetime of a crash loop


def template(text: str) -> str:
    """The masked form of a line (numbers, paths, versions, hex -> tokens)."""
    head = text[:240]
    got = _TEMPLATES.get(head)
    if got is None:
        from forensics.diagnosis.features import mask

        got = remember(_TEMPLATES, head, mask(head).lower(), TEMPLATES_KEPT)
    return got


_COARSE = _lazy(r"['\"`][^'\"`]{1,120}['\"`]|\b[A-Za-z_]\w*(?:\.\w+)+\b|\b\w*\d\w*\b")


def coarse_template(text: str) -> str:
    """The shape of a line: also quoted names and dotted names masked, so the
    same message about another model or module is the same shape."""
    words = [w for w in _COARSE.sub(" q ", template(text)).replace("[", " ").replace("]", " ").split()
             if w not in _MASK_TOKENS and any(c.isalpha() for c in w)]
    return " ".join(words[:10])


_MASK_TOKENS = frozenset({"n", "path", "hex", "ver", "size", "smarch", "q", "(", ")", ":", "-", "info", "warning",
                          "warn", "error", "debug"})


def collect(inc: Any, ev: Event) -> None:
    """The streaming hook: keep ``ev`` on the incident when it may be an early
    warning, and remember the facts arithmetic needs. Cheap on the hot path:
    most lines fail the first checks, and a line seen before (a crash loop
    prints the same start-up every lifetime) is judged from memory."""
    kind = ev.kind
    if kind not in (kinds.LOG, kinds.MESSAGE, kinds.PACKAGE_WALK_WARNING) and kind != kinds.PHASE_MARKER:
        return
    text = ev.text
    notes = inc.ew_notes
    if notes is None:
        notes = inc.ew_notes = Notes()
    memo_key = (text, kind, ev.level)
    verdict = _VERDICTS.get(memo_key)
    if verdict is None:
        verdict = _verdict(ev)
        if len(text) <= VERDICT_LEN:
            remember(_VERDICTS, memo_key, verdict, VERDICTS)
    facts, level, key, per_gpu, ctx = verdict
    if facts:
        _apply_facts(notes.facts, facts)
    if ctx:
        notes.facts["context"] = notes.facts.get("context", frozenset()) | ctx
    if key is None:
        return
    if "throughput" in text and _STALL.search(text[:400]):
        notes.facts["stalls"] = notes.facts.get("stalls", 0) + 1
    cands = notes.templates.get(key)
    if cands is not None:
        if len(cands) < PER_TEMPLATE and per_gpu and not any(c.event.text == text for c in cands):
            cands.append(Candidate(ev, level))  # the same line about another GPU index: arithmetic may need it
        else:
            cands[0].count += 1
        return
    cand = Candidate(ev, level)
    if len(notes.templates) < MAX_TEMPLATES:
        notes.templates[key] = [cand]
    else:
        notes.recent.append(cand)
        if len(notes.recent) > RECENT:
            del notes.recent[: len(notes.recent) - RECENT]


VERDICTS = 2048  # lines judged by collect, remembered (cleared when full)
VERDICT_LEN = 400  # longer lines are judged every time
_VERDICTS: dict[tuple[str, str, str | None], tuple[tuple, str | None, str | None, bool, frozenset[str]]] = {}


def _verdict(ev: Event) -> tuple[tuple, str | None, str | None, bool, frozenset[str]]:
    """``_judge``'s answer and the line's context tokens (GPU, backends, model kind)."""
    return (*_judge(ev), context_tokens(ev.text))


def _judge(ev: Event) -> tuple[tuple, str | None, str | None, bool]:
    """What collect keeps of a line, a function of its kind, level and text:
    (its fact groups, its level as a candidate, its streaming dedupe key --
    None when it is no candidate --, whether it names a GPU index)."""
    text = ev.text
    facts = _fact_groups(text) if any(map(text.__contains__, _FACT_HINT)) else ()  # map: no generator frame
    lvl = ev.level
    kind = ev.kind
    head = text[:400]  # what a line is about is said early; long lines (request dumps) cost no more
    if kind == kinds.PHASE_MARKER and (lvl is None or lvl.upper() not in WARN_LEVELS):
        # start-up progress lines (server args, weights loaded): only their numbers matter.
        # A marker line its logger printed as a warning or an error ("FlashInfer JIT will look
        # for nvcc on PATH") is read as one: the level says more than the phrase it shares.
        low = head.lower()
        glued = after_progress_bar(text)  # a warning another process wrote onto a progress bar's line
        if glued is not None:
            level: str | None = text_level(Event(kinds.LOG, ev.line, glued))
        elif not (any(map(low.__contains__, ARITH_WORDS)) or any(map(low.__contains__, NEED_WORDS))) \
                or not ARITH_RE.search(head):
            return facts, None, None, False
        else:
            level = lvl
    elif lvl is not None and lvl not in ("INFO", "DEBUG") and lvl.upper() in WARN_LEVELS:
        level = "WARNING" if lvl.upper() in ("WARNING", "WARN") else "ERROR"
    elif kind == kinds.PACKAGE_WALK_WARNING:
        level = "WARNING"
    else:
        low = head.lower()
        if not any(map(low.__contains__, CUE_WORDS)) and not any(map(low.__contains__, ARITH_WORDS)) \
                and not _TEXT_LEVEL.search(text[:160]) \
                and not (any(map(low.__contains__, NEED_WORDS)) and ARITH_RE.search(head)) \
                and not _said_at_any_level(head):
            return facts, None, None, False
        level = text_level(ev) or _leading_bracket_level(head)
        glued = after_progress_bar(text) if level is None else None
        if glued is not None:
            level = text_level(Event(ev.kind, ev.line, glued))
    if is_noise_after_the_fact(head) or _is_config_dump(text):
        return facts, None, None, False
    per_gpu = "GPU #" in text or "gpu_id=" in text or "cuda:" in text
    return facts, level, _FAST_KEY.sub("N", text[:160]), per_gpu


# A level in brackets that opens the line ("[WARN] metrics skipped, HTTP status=500": llama-swap, Go and
# shell tools that print their own level). Read here only, as a candidate's level after the fact:
# text_level leaves it to the envelope, because ``watch`` announced such lines of two healthy real
# start-ups (fix-ew3); a line its program marked as a warning is a warning by its author's word.
_LEADING_LEVEL = re.compile(r"^\s*\[(WARN(?:ING)?|ERRO(?:R)?|FATAL|CRITICAL)\]")


def _leading_bracket_level(head: str) -> str | None:
    m = _LEADING_LEVEL.match(head)
    if m is None:
        return None
    return "WARNING" if m.group(1).startswith("WARN") else "ERROR"


def _said_at_any_level(head: str) -> bool:
    """The line holds wording that says a failure follows at any level (``wording.yaml``: a memory
    shortfall stated at INFO, a continuation line of a multi-line message): a candidate, level or not."""
    low = head.lower()
    if not holds_any_level_hint(low):
        return False
    said = wording_class(head)
    return said is not None and said[3]


_FACT_RE2 = AsciiRegex(FACT_RE.pattern)  # server_args lines run to kilobytes, one per lifetime


@memo_by_text
def _fact_groups(text: str) -> tuple[tuple[str | None, ...], ...]:
    return _FACT_RE2.groups_all(text)


def _read_facts(facts: dict[str, Any], text: str) -> None:
    _apply_facts(facts, _fact_groups(text))


def _apply_facts(facts: dict[str, Any], groups: tuple[tuple[str | None, ...], ...]) -> None:
    for g in groups:
        if g[0]:
            facts["mem_fraction"] = float(g[0])
        elif g[1]:
            facts["tp"] = int(g[1])
        elif g[2]:
            facts["visible"] = len([x for x in g[2].split(",") if x.strip()])
        elif g[3]:
            facts["total_gib"] = to_gib(g[3], g[4])  # type: ignore[arg-type]
        elif g[5]:
            facts["total_gib"] = to_gib(g[5], g[6])  # type: ignore[arg-type]
        elif g[7]:
            facts["free_gib"], facts["total_gib"] = float(g[7]), float(g[8])  # type: ignore[arg-type]
        elif g[9]:
            facts["visible"] = max(facts.get("visible", 0), int(g[9]))
        elif g[10]:
            facts["dp"] = int(g[10])
        elif g[11]:  # Ollama's weights placed on the CPU (host memory)
            facts["cpu_weights_gib"] = to_gib(g[11], g[12])  # type: ignore[arg-type]
