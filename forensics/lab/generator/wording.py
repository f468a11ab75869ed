"""Real wording for the generator: what programs print for each label.

The hand-written builders (``failures.py``) speak their authors' vocabulary.
This module swaps a builder's final message for one drawn from what the
programs themselves print, so the classifier learns the wording of many
servers and releases:

* the message catalogue (``forensics.events.catalogue``, mined from released
  wheels and sources, each entry with its release), where it is installed;
* the signatures' own ``match`` examples (lines built around exact program
  strings, checked against source; never lines of a real log).

The builder keeps the structure (phase, process scope, frames, precursor);
only the proving line changes. Everything is drawn from the context's seeded
``Random``, so a corpus stays a pure function of its seed.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any

from .catalog import Ctx, Failure

_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|$)")
_PHASES = ("launch", "load-weights", "memory-plan", "kernel-jit", "cuda-graph-capture", "warmup", "serving")


SNAPSHOT = Path(__file__).with_name("wording.json")
MAX_PER_LABEL = 80
# Catalogue label rules too loose to teach a label: any ValueError raised in
# start-up code, any NCCL warning.
_LOOSE_RULES = ("exc-invalid-launch", "package-nccl")


def _signature_wording() -> dict[str, list[dict[str, Any]]]:
    """label -> messages from the failure signatures' match examples."""
    from forensics.diagnosis.signatures import View, signature_set
    from forensics.events.prefixes import split_prefix

    sset = signature_set()
    out: dict[str, list[dict[str, Any]]] = {}
    for sig in sset.signatures:
        if sig.kind != "failure" or sig.status == "experimental" or sig.root_cause == "unknown":
            continue
        for ex in sig.examples_match:
            line = _proving_line(ex, sig, sset, View, split_prefix)
            if line:
                out.setdefault(sig.root_cause, []).append(
                    {"text": line, "exc_type": None, "level": None, "phase": sig.phase, "source": f"signature {sig.id}"})
    return out


def _proving_line(example: str, sig: Any, sset: Any, view_cls: Any, split_prefix: Any) -> str | None:
    """The one line of an example that the signature matches on its own,
    without the logger prefixes the generator adds itself."""
    for raw in reversed(example.splitlines()):
        line = split_prefix(raw.strip(), 2026).text.strip()
        if not line or len(line) > 600:
            continue
        if sset.match_views([view_cls(line)], [sig]):
            return line
    return None


def _catalogue_wording(rng: Random) -> dict[str, list[dict[str, Any]]]:
    """label -> messages of the message catalogue (error/warning level), rendered."""
    try:
        from forensics.events import catalogue  # type: ignore[attr-defined]
        from forensics.diagnosis.taxonomy import FAILURE_LABELS
    except ImportError:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for label in FAILURE_LABELS:
        try:
            entries = list(catalogue.entries_for_label(label) or ())
        except Exception:  # noqa: BLE001 - no catalogue data yet: less wording
            return out
        for entry in entries:
            level = (getattr(entry, "level", None) or "").upper() or None
            kind = getattr(entry, "kind", "")
            # Failures only: what is raised, asserted or logged at error level
            # (NCCL's WARN is its error channel); not warnings, not bare
            # strings of a binary whose level is unknown.
            if not (kind in ("raise", "assert", "check", "error-string", "panic") or level in ("ERROR", "CRITICAL")
                    or (kind == "native-log" and getattr(entry, "package", "") == "nccl")):
                continue
            if getattr(entry, "label_rule", None) in _LOOSE_RULES:
                continue
            literal = re.sub(r"\{[^}]*\}", "", getattr(entry, "template", ""))
            if len(literal.strip()) < 20:
                continue
            text = _render(entry, rng).strip().splitlines()[0][:500] if getattr(entry, "template", "") else ""
            if len(text) < 12:
                continue
            rel = getattr(entry, "releases", ()) or ()
            if getattr(entry, "package", "") == "nccl" and kind == "native-log":
                text = "NCCL WARN " + text
            out.setdefault(label, []).append({
                "text": text, "exc_type": getattr(entry, "exc_type", None), "level": level,
                "phase": getattr(entry, "phase", None),
                "source": f"{getattr(entry, 'package', '?')} {rel[0] if rel else ''}".strip()})
    return out


def build_snapshot(seed: int = 13) -> dict[str, list[dict[str, Any]]]:
    """The wording the generator draws from, pinned in ``wording.json`` so a
    corpus is a function of its seed and this file only (not of whatever
    signatures or catalogue are installed when it is regenerated)."""
    rng = Random(seed)
    merged: dict[str, list[dict[str, Any]]] = {}
    for source in (_signature_wording(), _catalogue_wording(rng)):
        for label, items in source.items():
            merged.setdefault(label, []).extend(items)
    out = {}
    for label, items in sorted(merged.items()):
        seen: set[str] = set()
        uniq = []
        for it in items:
            if it["text"] not in seen:
                seen.add(it["text"])
                uniq.append(it)
        if len(uniq) > MAX_PER_LABEL:
            sigs = [u for u in uniq if u["source"].startswith("signature")]
            rest = [u for u in uniq if not u["source"].startswith("signature")]
            uniq = sigs + Random(seed).sample(rest, max(0, MAX_PER_LABEL - len(sigs)))
        out[label] = uniq
    return out


@lru_cache(maxsize=1)
def snapshot() -> dict[str, list[dict[str, Any]]]:
    try:
        return json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _render(entry: Any, rng: Random) -> str:
    """A catalogue entry as the program would print it, placeholders filled."""
    names = re.findall(r"\{(\w*)\}", getattr(entry, "template", ""))
    values = [_value(n, rng) for n in names]
    try:
        return str(entry.render(values))
    except Exception:  # noqa: BLE001
        return str(getattr(entry, "template", ""))


def _value(name: str, rng: Random) -> str:
    n = name.lower()
    if any(k in n for k in ("size", "num", "count", "rank", "dim", "len", "id", "port", "bytes")) or rng.random() < 0.3:
        return str(rng.choice([1, 2, 4, 8, 16, 64, 128, 4096, 32768]))
    return rng.choice(["model", "qwen3", "cuda:0", "fp8", "flashinfer", "triton", "bfloat16", "auto", "x"])


def draw(label: str, rng: Random) -> tuple[str, str | None, str | None, str | None] | None:
    """(text, exc_type, level, phase) of a real message for ``label``, or None."""
    items = snapshot().get(label) or []
    if not items:
        return None
    # Most from the signatures' examples (few, exact), one in seven from the
    # catalogue (many releases; its labels are rule-guessed, so they weigh less).
    sigs = [i for i in items if str(i.get("source", "")).startswith("signature")]
    rest = [i for i in items if not str(i.get("source", "")).startswith("signature")]
    pool = sigs if sigs and (not rest or rng.random() < 0.85) else rest
    it = rng.choice(pool)
    return it["text"], it.get("exc_type"), it.get("level"), it.get("phase")


def reword(c: Ctx, base: Failure, p: float = 0.4) -> Failure:
    """With probability ``p``, ``base`` with its proving line replaced by real wording."""
    rng = c.rng
    if rng.random() >= p or base.scope in ("kernel", "systemd", "argparse", "cxx"):
        return base
    got = draw(base.label, rng)
    if got is None:
        return base
    text, exc_type, level, phase = got
    text = text.splitlines()[0][:500]
    new_phase = phase if phase in _PHASES and rng.random() < 0.5 else base.phase
    if exc_type or _EXC_LINE.match(text):
        line = text if _EXC_LINE.match(text) else f"{exc_type}: {text}"
        idx = _exception_index(base.exc)
        if idx is None:
            return replace(base, scope="log", log_line=line, log_level=(level or "ERROR").upper(), exc=[], pre=[],
                           fatal=line[:80], phase=new_phase, variant="wording")
        exc = list(base.exc[:idx]) + [line]
        return replace(base, exc=exc, fatal=line[:80], phase=new_phase, variant="wording", pre=[], cxx=[])
    return replace(base, scope="log", log_line=text, log_level=(level or "ERROR").upper(), exc=[], pre=[],
                   fatal=text[:80], phase=new_phase, variant="wording")


def _exception_index(exc: list[str]) -> int | None:
    """Index of the last exception line of a traceback (what follows it, like
    CUDA's trailer, belongs to the old message)."""
    for i in range(len(exc) - 1, -1, -1):
        if _EXC_LINE.match(exc[i].strip()):
            return i
    return None


def main() -> None:
    """``python -m forensics.lab.generator.wording``: rebuild ``wording.json``."""
    snap = build_snapshot()
    from forensics.atomic import atomic_write_text

    atomic_write_text(SNAPSHOT, json.dumps(snap, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{SNAPSHOT}: {sum(len(v) for v in snap.values())} messages over {len(snap)} labels")


if __name__ == "__main__":
    main()
