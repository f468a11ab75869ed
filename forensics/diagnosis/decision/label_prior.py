"""A label prior for the proving line, learned from the corpora (issue 27, item 2).

The text classifier reads a family's whole start-up and is unsure on families it never
met; the proving line's *kind* travels better: its exception class (``ImportError``,
``AssertionError``), a runtime's error name (``cudaErrorPeerAccessUnsupported``,
``HSA_STATUS_ERROR_*``, an errno), and what the message catalogue knows of it (package,
exception type, the label its rules give). ``forensics train`` counts, over the labelled
failures, which labels each such key came with (only keys seen in two server families or
more: a key one family prints says nothing of the next); the label model reads the mean
of those distributions as one more input (``label_features``). Pure, no scikit-learn.
"""
from __future__ import annotations

import re
from typing import Any

# An exception class named in the line (Python's, Rust's, C++'s): "ImportError:", "(RuntimeError)".
_EXC = re.compile(r"(?:^|[\s:(\[.'\"])([A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Fault|Panic))\b")
# A runtime's own error name or number: CUDA/HIP/HSA/NCCL names, Ascend codes, errno, signals.
_CODE = re.compile(r"\b(cudaError\w+|CUDA_ERROR_\w+|hipError\w+|HSA_STATUS_ERROR_\w+|NCCL_\w+|ERR\d{5}|EZ\d{4}"
                   r"|SIG(?:SEGV|ABRT|ILL|BUS|KILL|TERM|FPE))\b|(\[Errno \d+\]|errno[ =:]+\d+)")
MAX_TEXT = 400


def keys(text: str | None) -> tuple[str, ...]:
    """The keys of one proving line the prior is kept for, most telling first."""
    if not text:
        return ()
    t = text.strip()[:MAX_TEXT]
    out: list[str] = []
    from forensics.diagnosis.catalogue_features import line_facts

    for fact in line_facts(t):
        if fact.startswith(("exc:", "pkg:", "label:", "rule:")):
            out.append("cat" + fact)
    m = _EXC.search(t[:300])
    if m:
        out.append("exc:" + m.group(1))
    for m in _CODE.finditer(t):
        name = m.group(1) or re.sub(r"\D+", "", m.group(2))
        out.append("code:" + (name if m.group(1) else f"errno{name}"))
    return tuple(dict.fromkeys(out))


def catalogue_says(text: str | None) -> tuple[str, ...]:
    """The labels the message catalogue's rules give the proving line's first lines (a loose rule,
    which names no label, says nothing here)."""
    if not text:
        return ()
    from forensics.diagnosis.catalogue_features import line_facts

    out: list[str] = []
    for ln in [ln.strip() for ln in text.strip()[:MAX_TEXT].splitlines() if ln.strip()][:3]:
        out += [f[6:] for f in line_facts(ln) if f.startswith("label:")]
    return tuple(dict.fromkeys(out))


def wanted(inp: Any) -> bool:
    """Whether a failure's decision reads the prior: where no signature matched or the text
    classifier was consulted (the catalogue is loaded then anyway; a conclusive signature's
    answer never pays for loading it)."""
    return inp.rule_label is None or inp.clf is not None


def prior_of(table: dict[str, dict[str, float]] | None, text: str | None) -> dict[str, float]:
    """P(label | proving line): the mean of the distributions of its keys the table holds
    ({} when it holds none)."""
    if not table or not text:
        return {}
    return prior_of_keys(table, keys(text))


def prior_of_keys(table: dict[str, dict[str, float]], line_keys: tuple[str, ...]) -> dict[str, float]:
    """``prior_of`` over a line's ``keys`` already computed."""
    found = [table[k] for k in line_keys if k in table]
    if not found:
        return {}
    out: dict[str, float] = {}
    for dist in found:
        for label, p in dist.items():
            out[label] = out.get(label, 0.0) + p / len(found)
    return out


def count_table(pairs: Any, min_rows: int = 2, min_groups: int = 2, alpha: float = 1.0
                ) -> dict[str, dict[str, float]]:
    """The table from (the proving line's ``keys``, label, group) triples: each key's label counts
    over (count + ``alpha``), kept only where ``min_rows`` rows of ``min_groups`` groups carry it."""
    counts: dict[str, dict[str, int]] = {}
    groups: dict[str, set[str]] = {}
    for line_keys, label, group in pairs:
        for k in line_keys:
            c = counts.setdefault(k, {})
            c[label] = c.get(label, 0) + 1
            groups.setdefault(k, set()).add(group)
    table: dict[str, dict[str, float]] = {}
    for k in sorted(counts):
        n = sum(counts[k].values())
        if n >= min_rows and len(groups[k]) >= min_groups:
            table[k] = {lab: round(v / (n + alpha), 4) for lab, v in sorted(counts[k].items())}
    return table
