"""Subjects: what a line is about, as normalised ``kind:value`` strings."""
from __future__ import annotations

import re

from forensics.diagnosis.early_warnings.vocab import (
    ARCH_GENERATIONS, ATTENTION_BACKENDS, BACKENDS, BOILERPLATE_ENV, COLLECTIVES, DIST_TO_IMPORT, FAMILIES, GENERIC, KNOWN_PACKAGES,
    QUANT, TOOLS, _lazy)
from forensics.diagnosis.guarded import AsciiSet, Guarded, GuardGate
from forensics.events.textmemo import remember

# --------------------------------------------------------------------------
_DOTTED = Guarded(r"(?<![\w./-])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", (".",))
_QUOTED_MOD = Guarded(r"(?:module named|import name|from|import|cannot import|load(?:ing)?)\s+['\"`]?([A-Za-z_][\w.]*)",
                      ("module named", "import name", "from", "import", "load"))
_NOT_INSTALLED = Guarded(r"(?i)\b([A-Za-z_][\w.-]*)\s+(?:is\s+)?not\s+(?:installed|available|found)", ("not",), fold=True)
_PIP = Guarded(r"(?i)pip install (?:-U |--upgrade )?['\"`]?([A-Za-z][\w.-]*)", ("pip install",), fold=True)
_DIST_VER = Guarded(r"\b([A-Za-z][\w-]*)(?:==|>=|<=|~=)\s?v?\d", ("==", ">=", "<=", "~="))
_LIB = Guarded(r"\blib([A-Za-z][\w+-]*?)(?:[-_.]\d[\w.]*)?\.(?:so|a|dylib|dll)\b|(?<![\w-])-l([A-Za-z][\w+]*)\b",
               ("lib", "-l"))
# A native library named in words ("OpenBLAS library file not found", "the cuDNN library"): the same
# subject as its file name (libopenblas.so).
_NAMED_LIB = Guarded(r"(?<![\w-])([A-Za-z][A-Za-z0-9+]*[A-Z][A-Za-z0-9+]*) (?:shared )?librar(?:y|ies)\b", ("librar",))
_TOOL = Guarded(r"(?<![\w/+.-])(" + "|".join(re.escape(t) for t in TOOLS) + r")(?![\w+-])(?!\.\w)", TOOLS)
_ENV = Guarded(r"(?<![\w-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b", ("_",))
_ARCH_SM = Guarded(r"(?i)\b(?:sm|compute)_?(\d{2,3})([af]?)\b", ("sm", "compute"), fold=True)
_ARCH_CC = Guarded(r"(?i)(?:compute capability|capability|cuda capability|\bcc)\s*(?:of|is|=|:|>=|<=|<|>|below|above)?\s*"
                   r"\(?(\d{1,2})(?:[.,]\s?(\d))?\)?", ("capability", "cc"), fold=True)
_ARCH_GFX = Guarded(r"\b(gfx\d{2,4}[a-z]?)\b", ("gfx",), re.I, fold=True)
_DEV = Guarded(r"(?i)\b(?:gpu|cuda|device|gpu_id|cudadev|hip)\s*(?:#|:|=|\s)\s*(\d{1,3})\b",
               ("gpu", "cuda", "device", "hip"), fold=True)
_COUNT = Guarded(r"(?i)\b(tp|dp|pp|ep|tensor_parallel|data_parallel|pipeline_parallel|world|nranks|ngpus|"
                 r"num_gpus|n_gpus)(?:_size)?['\"]?\s*(?:=|:|\s)\s*(\d{1,4})\b",
                 ("tp", "dp", "pp", "ep", "parallel", "world", "nranks", "gpus"), fold=True)
_GPU_COUNT_WORDS = Guarded(r"(?i)\b(?:number of|num(?:ber)? of (?:required|available)|#)\s*(?:\w+\s)?(?:gpus|devices)\b|"
                           r"\bgpus? (?:available|visible|required)\b", ("gpu", "devices"), fold=True)
_MODEL = Guarded(r"(?i)model (?:type|architecture)[s]?\s*[`'\"]?([A-Za-z][\w.-]*)|\b([A-Z]\w+For(?:CausalLM|"
                 r"ConditionalGeneration|SequenceClassification|MaskedLM))\b|model_type['\"]?\s*[=:]\s*['\"]?(\w+)",
                 ("model", "for"), fold=True)
_QTY = Guarded(r"(-?\d+(?:\.\d+)?)\s?(TiB|GiB|MiB|KiB|TB|GB|MB|KB|bytes)\b", ("B", "bytes"))
_ADDR = Guarded(r"\b(\d{1,3}(?:\.\d{1,3}){3}|localhost):(\d{2,5})\b|\((\d{1,3}(?:\.\d{1,3}){3}|localhost),\s?"
                r"(\d{2,5})\)", (":", "("))
_BIGNUM = _lazy(r"(?<![\w.:/-])(\d{7,})(?![\w.:/-])")  # byte counts and sizes printed raw
# A figure a line compares with a limit ("sequence length ... (3646 > 2048)", "input sequences (3646)
# exceeds ... (2048)"): the same figure in a warning and in the failure is the same request or setting.
_COMPARED = _lazy(r"\((\d{3,7}) ?(?:>|<|>=|<=|!=) ?(\d{3,7})\)|\((\d{3,7})\) (?:exceeds?|is (?:larger|greater|longer|more) than)\b")
# An identifier a message names as one (in backticks, or quoted after "attribute", "argument",
# "parameter", "field", "option", "setting"): snake_case, two words at least ("has not defined
# `packed_modules_mapping`" then "has no attribute 'packed_modules_mapping'"). Not any quoted name:
# a model's name is on every line about it.
_QUOTED_IDENT = Guarded(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`|\b(?:attribute|argument|parameter|field|option|setting)s?"
                        r" ['\"]([a-z][a-z0-9]*(?:_[a-z0-9]+)+)['\"]", ("_",))
_CPP_OP = Guarded(r"\b(_?[A-Za-z]\w*)::(\w+)", ("::",))
_WORD_SPLIT = _lazy(r"[A-Za-z_][\w]*")
_QUANT_RE = Guarded(r"(?i)(?<![\w-])(" + "|".join(re.escape(q) for q in QUANT) + r")(?![\w-])", QUANT, fold=True)
_BACKEND_RE = Guarded(r"(?i)(?<![\w-])(" + "|".join(re.escape(b) for b in sorted(BACKENDS, key=len, reverse=True))
                      + r")(?![\w-])", tuple(BACKENDS), fold=True)
_COLL_RE = Guarded(r"(?i)(?<![A-Za-z0-9-])(" + "|".join(re.escape(c) for c in sorted(COLLECTIVES, key=len, reverse=True))
                   + r")(?![\w-])", tuple(COLLECTIVES), fold=True)
_UNIT_GIB = {"TiB": 1024.0, "TB": 1000.0 / 1.073741824, "GiB": 1.0, "GB": 1.0 / 1.073741824, "MiB": 1 / 1024.0,
             "MB": 1 / 1073.741824, "KiB": 1 / 1048576.0, "KB": 1 / 1073741.824, "bytes": 1 / 1073741824.0}
_UNIT_GIB_FOLDED = {unit.lower(): v for unit, v in _UNIT_GIB.items()}


def to_gib(number: str, unit: str) -> float:
    """``number`` ``unit`` in GiB. The unit as a case-insensitive pattern
    matched it ("Gb", "gib"): the lower-case spelling is the same unit."""
    factor = _UNIT_GIB.get(unit)
    return float(number) * (factor if factor is not None else _UNIT_GIB_FOLDED[unit.lower()])


# The family patterns are long alternations that ``re`` tries at every
# position (~110 µs a line for the three): one RE2 set pass on ASCII text.
_FAMILY_NAMES = tuple(FAMILIES)
_FAMILY_SET = AsciiSet([FAMILIES[name]._args for name in _FAMILY_NAMES])
_DOT_DIGIT = _lazy(r"\.\d")
_FILE_EXT = _lazy(r"\.(?:py|pyc|so|cc|cpp|cu|cuh|h|hpp|c|json|yaml|yml|txt|md|log|html|sh|jinja|safetensors|bin)$")


def _norm(name: str) -> str:
    return name.strip("'\"`()[],:;").replace("-", "_").lower()


MODULES_KEPT = 2048
_MODULES: dict[str, tuple[str, ...]] = {}  # dotted name -> its subjects: the same frames fail every lifetime


def _add_module(out: set[str], dotted: str) -> None:
    """``cutlass.cute.experimental`` -> pkg:cutlass, mod:cute, mod:experimental;
    ``vllm._C`` -> pkg:vllm, mod:vllm._C, mod:_c."""
    got = _MODULES.get(dotted)
    if got is None:
        got = _module_subjects(dotted)
        if len(dotted) <= 300:
            remember(_MODULES, dotted, got, MODULES_KEPT)
    out.update(got)


def _module_subjects(dotted: str) -> tuple[str, ...]:
    if _FILE_EXT.search(dotted) or _DOT_DIGIT.search(dotted) or ".so" in dotted:
        return ()  # a file name or a version/host-like token, not a module path
    parts = [p for p in dotted.split(".") if p]
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return ()
    head = _norm(parts[0])
    if head in GENERIC or len(head) < 2:
        return ()
    out = ["pkg:" + DIST_TO_IMPORT.get(head, head), "mod:" + ".".join(parts[:2]).lower()]
    if any("attention" in p.lower() or "attn" in p.lower() for p in parts):
        out.append("backend:attention")
    for p in parts[1:3]:
        n = _norm(p)
        if n not in GENERIC and len(n) >= 2:
            out.append("mod:" + n)
    return tuple(out)


def _package(out: set[str], name: str) -> None:
    n = _norm(name)
    if not n or n in GENERIC or len(n) < 2:
        return
    if "." in n:
        _add_module(out, name.strip("'\"`"))
        return
    out.add("pkg:" + DIST_TO_IMPORT.get(n, n))


def normalise_arch(major: str, minor: str | None = None, suffix: str = "") -> str:
    """sm_90 / 9.0 / (9, 0) / "compute capability 9.0" -> ``sm_90``; 12.0 -> ``sm_120``."""
    if minor is None:
        if len(major) >= 2:  # "90", "120", "75"
            return f"sm_{int(major)}{suffix.lower()}"
        minor = "0"
    return f"sm_{int(major)}{int(minor)}{suffix.lower()}"


_PATH = _lazy(r"(?:[A-Za-z]:)?(?:/[\w.\-+@~]+){2,}/?")
_REL_PY = _lazy(r"(?<![\w/.-])([A-Za-z_]\w*(?:/[A-Za-z_]\w*)+)\.py\b")  # torch/utils/cpp_extension.py
_PY_TAIL = _lazy(r"\.(?:py|pyc|abi3\.so|cpython[\w.-]*\.so|so)(?::\d+)?$")


def _path_subject(m: re.Match[str]) -> str:
    """A path says little, except the module it names inside site-packages,
    the library it names, or the tool it runs."""
    p = m.group(0)
    for anchor in ("site-packages/", "dist-packages/"):
        i = p.rfind(anchor)
        if i >= 0:
            return " " + _PY_TAIL.sub("", p[i + len(anchor):]).strip("/").replace("/", ".") + " "
    parts = p.rstrip("/").split("/")
    base = parts[-1]
    if base.startswith("lib") and ".so" in base or base in TOOLS:
        return " " + base + " "
    if re.search(r"\.py(?::\d+)?$", base):
        # a package outside site-packages (a source tree, a venv of one's own):
        # the identifiers that end the path name it, its head not private
        mods = [_PY_TAIL.sub("", base)]
        for d in reversed(parts[:-1]):
            if not d.isidentifier() or len(mods) >= 3 and not mods[0].startswith("_"):
                break
            mods.insert(0, d)
        while len(mods) > 1 and mods[0].startswith("_"):
            mods.pop(0)
        if len(mods) >= 2:
            return " " + ".".join(mods) + " "
    elif _NATIVE_SOURCE.search(base):
        # a native source or header a C++/CUDA error names (file:line) inside a known package's own
        # tree, wherever that tree was checked out ("/opt/my-flashinfer/include/flashinfer/attention/
        # prefill.cuh:3201"): the package it is part of
        named = [d for d in parts[:-1] if _norm(d) in KNOWN_PACKAGES]
        if named:
            return " " + named[-1] + " "
    return " "


_NATIVE_SOURCE = _lazy(r"\.(?:cu|cuh|cc|cpp|cxx|c|h|hpp|hxx|inl)(?::\d+)?$")


SUBJECTS_KEPT = 2048
_SUBJECTS: dict[str, frozenset[str]] = {}  # text -> subjects: a crash loop prints the same lines every lifetime


def subjects(text: str) -> frozenset[str]:
    """What a line is about, as normalised ``kind:value`` strings."""
    if not text:
        return frozenset()
    text = text[:1000]
    got = _SUBJECTS.get(text)
    if got is None:
        got = remember(_SUBJECTS, text, _subjects(text), SUBJECTS_KEPT)
    return got


def _subjects(text: str) -> frozenset[str]:
    fams = ["fam:" + _FAMILY_NAMES[i] for i in _FAMILY_SET.which(text)]  # before paths are rewritten
    if "/" in text:
        text = _PATH.sub(_path_subject, text)
        text = _REL_PY.sub(lambda m: " " + m.group(1).replace("/", ".") + " ", text)
    _GATE.open(text)  # the patterns below that cannot match this text skip it
    out: set[str] = set()
    low = text.lower()
    _python_subjects(out, text, low)
    _native_subjects(out, text)
    _hardware_subjects(out, text)
    _vocabulary_subjects(out, text, low)
    _address_and_amount_subjects(out, text, low)
    out.update(fams)  # a part of one subsystem, however the program names it
    return frozenset(out)


def _python_subjects(out: set[str], text: str, low: str) -> None:
    """Packages and modules: dotted names, import wording, pip names, bare known names."""
    for m in _DOTTED.finditer(text):
        _add_module(out, m.group(1))
    for rx in (_QUOTED_MOD, _NOT_INSTALLED, _PIP, _DIST_VER):
        for m in rx.finditer(text):
            name = m.group(1)
            if rx is _QUOTED_MOD and "." not in name and _norm(name) not in KNOWN_PACKAGES and not name.startswith("_") \
                    and "_" not in name:
                continue  # "from the", "load model": only real package-looking names
            if rx is _NOT_INSTALLED and _norm(name) not in KNOWN_PACKAGES and "_" not in name and "." not in name:
                continue
            _package(out, name)
    for w in KNOWN_PACKAGES.intersection(_WORD_SPLIT.findall(low)):  # (out is a set: order is free)
        out.add("pkg:" + DIST_TO_IMPORT.get(w, w))


def _native_subjects(out: set[str], text: str) -> None:
    """Native libraries, tools and environment variables."""
    for m in _LIB.finditer(text):
        name = _norm(m.group(1) or m.group(2))
        if name:
            out.add("lib:" + name)
    for m in _NAMED_LIB.finditer(text):
        out.add("lib:" + _norm(m.group(1)))
    for m in _TOOL.finditer(text):
        tool = m.group(1).lower()
        if tool in ("ld", "make", "c++") and not re.search(r"(?i)\b(?:ld ?:|ld returned|make\[|make ?:|c\+\+ ?:)",
                                                            text):
            continue  # short words: only when the tool itself speaks
        out.add("tool:" + tool)
    for m in _ENV.finditer(text):
        name = m.group(1)
        if name in BOILERPLATE_ENV or len(name) < 5:
            continue
        if "_" in name and any(c.isalpha() for c in name):
            out.add("env:" + name)
            fam = name.split("_", 1)[0].lower()
            if fam in ("nccl", "rccl", "nvshmem", "gloo", "ucx"):
                out.add("coll:nccl" if fam == "rccl" else "coll:" + fam)
            elif fam in ("vllm", "sglang", "torch", "cuda", "triton", "flashinfer"):
                out.add("envfam:" + fam)


def _hardware_subjects(out: set[str], text: str) -> None:
    """GPU architectures in every spelling, device indices and counts."""
    for m in _ARCH_SM.finditer(text):
        out.add("arch:" + normalise_arch(m.group(1), None, m.group(2)))
    for m in _ARCH_CC.finditer(text):
        major, minor = m.group(1), m.group(2)
        if minor is None and len(major) == 1:
            out.add("arch:" + normalise_arch(major, "0"))
        elif minor is not None:
            out.add("arch:" + normalise_arch(major, minor))
    for a in [a for a in out if a.startswith("arch:sm_")]:
        gen = ARCH_GENERATIONS.get(a[5:].rstrip("af"))
        if gen is not None:
            out.add("arch:" + gen)
    for m in _ARCH_GFX.finditer(text):
        out.add("arch:" + m.group(1).lower())
    for m in _DEV.finditer(text):
        out.add("dev:" + m.group(1))
    if _GPU_COUNT_WORDS.search(text):
        out.add("count:gpus")
    for m in _COUNT.finditer(text):
        key = m.group(1).lower().replace("tensor_parallel", "tp").replace("data_parallel", "dp").replace(
            "pipeline_parallel", "pp").replace("nranks", "world").replace("num_gpus", "ngpus").replace("n_gpus", "ngpus")
        out.add(f"count:{key}={int(m.group(2))}")


def _vocabulary_subjects(out: set[str], text: str, low: str) -> None:
    """Model types, quantisation methods, backends, collectives, quoted identifiers, C++ ops."""
    for m in _MODEL.finditer(text):
        name = next((g for g in m.groups() if g), None)
        if name and len(name) > 2:
            out.add("model:" + _norm(name))
    for m in _QUANT_RE.finditer(text):
        q = m.group(1).lower().replace("-", "_")
        out.add("quant:" + {"bfloat16": "bf16", "float16": "fp16"}.get(q, q))
    for m in _BACKEND_RE.finditer(text):
        b = BACKENDS[m.group(1).lower()]
        out.add("backend:" + b)
        if b in ATTENTION_BACKENDS:
            out.add("backend:attention")
    if "attention" in low or "_attn" in low or "attn_" in low:
        out.add("backend:attention")
    for m in _COLL_RE.finditer(text):
        out.add("coll:" + COLLECTIVES[m.group(1).lower()])
    for m in _QUOTED_IDENT.finditer(text):
        name = m.group(1) or m.group(2)
        if len(name) >= 8:
            out.add("ident:" + name)
    for m in _CPP_OP.finditer(text):
        ns, op = _norm(m.group(1)), _norm(m.group(2))
        if ns not in GENERIC and ns not in ("std", "c10", "at", "torch"):
            out.add("mod:" + ns)
        if len(op) > 3 and op not in GENERIC:
            out.add("mod:" + op)


def _address_and_amount_subjects(out: set[str], text: str, low: str) -> None:
    """Addresses and ports, raw byte counts and quantities with units."""
    for m in _ADDR.finditer(text):
        out.add(f"addr:{m.group(1) or m.group(3)}:{m.group(2) or m.group(4)}")
        out.add(f"port:{m.group(2) or m.group(4)}")
    in_bytes = "byte" in low
    if "(" in text:
        for m in _COMPARED.finditer(text):
            out.update("num:" + g for g in m.groups() if g)
    for m in _BIGNUM.finditer(text):
        out.add("num:" + m.group(1))
        if in_bytes and int(m.group(1)) >= 1 << 20:
            out.add(f"qty:{int(m.group(1)) / (1 << 30):.2f}GiB")  # a byte count printed raw
    for m in _QTY.finditer(text):
        gib = to_gib(m.group(1), m.group(2))
        if m.group(2) == "bytes" and gib < 1e-3:
            continue
        out.add(f"qty:{gib:.2f}GiB")


# ~20 patterns search every text; most find nothing, and their needles are
# common ("." "_" ":"): one RE2 pass rules out those that cannot match.
_GATE = GuardGate([g for g in globals().values() if isinstance(g, Guarded)])


def subject_value(s: str) -> str:
    return s.split(":", 1)[1]


def quantities_gib(text: str) -> list[float]:
    return [to_gib(m.group(1), m.group(2)) for m in _QTY.finditer(text)]
