"""Classifier features from the message catalogue: what the programs
themselves say a line is.

A failing line that the catalogue knows carries facts that generalise across
servers and releases better than its words: the package that prints it, the
exception type it is raised as, and the label the catalogue's rules give it
(``text-arch`` -> ``env.gpu-arch-unsupported``). These are emitted as tokens
of the ``context`` field (``catp_`` for the proving line, ``cate_`` for other
error lines and exceptions, ``catw_`` for warnings), so the model learns from
the generated corpus how far each one can be trusted.

Only a bounded number of lines is looked up per incident (the proving line,
the last error lines, the last warnings), each lookup costs microseconds, and
results are cached by text: the classifier's cost stays flat.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Label rules too loose to name a label on their own (any ValueError raised
# in start-up code, any NCCL line, any "argument" wording): the token names
# the rule instead, and the model weighs it.
LOOSE_RULES = frozenset({"exc-invalid-launch", "package-nccl", "text-arguments"})
MAX_ERRORS = 8
MAX_WARNINGS = 8
MAX_TEXT = 400


def entries(text: str) -> list[Any]:
    """The catalogue's entries for one line (its first ``MAX_TEXT`` characters, the best five), or
    none where the catalogue's data cannot be read."""
    try:
        from forensics.events import catalogue  # type: ignore[attr-defined]

        return list(catalogue.lookup_all(text[:MAX_TEXT], limit=5))
    except Exception:  # noqa: BLE001 - no catalogue data: no catalogue facts
        return []


@lru_cache(maxsize=4096)
def line_facts(text: str) -> tuple[str, ...]:
    """Catalogue facts of one line: ``label:X`` / ``rule:R`` for every entry
    that matches (a line may hold several messages: ``Could not import X: No
    module named 'y'``), then ``pkg:P``, ``exc:E`` and ``kind:K`` of the best."""
    found = [e for e in entries(text) if _specific(e.template)]
    if not found:
        return ()
    out: list[str] = []
    for e in found:
        tok = f"rule:{e.label_rule}" if e.label_rule in LOOSE_RULES else (f"label:{e.label}" if e.label else "")
        if tok and tok not in out:
            out.append(tok)
    best = found[0]
    out.append(f"pkg:{best.package}")
    if best.exc_type:
        out.append(f"exc:{best.exc_type.rsplit('.', 1)[-1]}")
    out.append(f"kind:{best.kind}")
    return tuple(out)


_EXC_WORD = re.compile(r"\w+(Error|Exception|Warning)\b|\{[^{}]*\}|[^\w\s]")


def _specific(template: str) -> bool:
    """A template that says something of its own: at least two words and ten
    letters besides placeholders and exception names ("RuntimeError {e}."
    matches every RuntimeError and says nothing)."""
    words = _EXC_WORD.sub(" ", template).split()
    return len(words) >= 2 and sum(len(w) for w in words) >= 10


def _tokens(prefix: str, texts: list[str]) -> list[str]:
    out: list[str] = []
    for t in texts:
        for fact in line_facts(t.strip()):
            tok = f"{prefix}_{fact.replace(':', '_', 1)}"
            if tok not in out:
                out.append(tok)
    return out


def catalogue_tokens(inc: Any, proof: str | None) -> list[str]:
    """Context tokens from the catalogue for an incident's proving line,
    error lines and exceptions, and warnings (``catp_none`` when the catalogue
    does not know the proving line)."""
    from forensics.events import types as kinds

    proof_lines = [ln for ln in (proof or "").splitlines() if ln.strip()][:3]
    toks = _tokens("catp", proof_lines) or ["catp_none"]
    errors = [ev.text for ev in list(inc.error_lines)[-MAX_ERRORS:] if ev.kind != kinds.TRACEBACK]
    for ev, _phase, _after in inc.tracebacks[-3:]:
        chain = ev.data.get("chain") or ()
        errors.extend(exc.rendered.split("\n", 1)[0] for exc in list(chain)[-2:] if exc.rendered)
    toks += _tokens("cate", errors)
    toks += _tokens("catw", [ev.text for ev in list(inc.warning_lines)[-MAX_WARNINGS:]])
    return toks
