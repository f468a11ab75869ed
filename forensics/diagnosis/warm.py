"""Build now what a diagnosis otherwise builds on first use.

``classify`` keeps its tables lazy: a one-shot run over a healthy log never
compiles the death shapes or imports the catalogue. ``forensics watch`` is the
other way round: its start-up is free and its first failure is on the clock
(printed <= 0.5 s after the proving line, issue 15). On a 2-core machine the
lazy work (modules imported, ~100 regexes compiled, the model's first
prediction) came to ~0.2 s of that budget, all of it inside the moment the
failure arrived. ``warm_up`` pays it before watch says ``started``.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from types import ModuleType
from typing import Any

from lark import Lark

from forensics.diagnosis.early_warnings.vocab import _lazy
from forensics.diagnosis.guarded import AsciiRegex, AsciiSet, GuardGate, Guarded

LAZY_REGEXES = (_lazy, Guarded, AsciiSet, GuardGate, AsciiRegex)  # each compiles on first use; ``warm()`` now

# The per-line and diagnosis stages. lab/, report/, drivers/ and cli/ are not
# walked: nothing there is on the path from a line to a diagnosis.
PACKAGES = ("forensics.envelope", "forensics.events", "forensics.incidents", "forensics.diagnosis")

# The shipped decision models, each read from its file on first use (module, its loader).
SHIPPED_MODELS = (
    ("forensics.diagnosis.decision.label_model", "label_model"),
    ("forensics.diagnosis.decision.phase_model", "phase_model"),
    ("forensics.diagnosis.decision.evidence_rank", "ranker"),
    ("forensics.diagnosis.decision.death", "death_model"),
    ("forensics.diagnosis.early_warnings.live_gate", "live_gate"),
    ("forensics.diagnosis.early_warnings.learned", "listing_model"),
)


def _modules() -> list[ModuleType]:
    out = []
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        out.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, name + "."):
            try:
                out.append(importlib.import_module(info.name))
            except ImportError:  # a module that needs an extra not installed (it stays lazy)
                continue
    return out


def _zero_arg_table(value: Any) -> bool:
    """A module-level ``lru_cache`` function that takes no argument: a table
    built once (any other cached function is keyed by what it is asked)."""
    if not isinstance(value, functools._lru_cache_wrapper):
        return False
    try:
        params = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def _warm_lexers(parser: Any) -> int:
    """Build a Lark parser's lexers now: lark (1.3) compiles each state's
    scanner on the first token it lexes in that state. Reached through
    attributes lark does not promise; another lark leaves them lazy."""
    lexer = getattr(getattr(parser, "parser", None), "lexer", None)
    lexers = list(getattr(lexer, "lexers", {}).values()) + [getattr(lexer, "root_lexer", None)]
    built = 0
    for one in lexers:
        if getattr(one, "scanner", None) is not None:  # the property builds the scanner
            built += 1
    return built


def _warm_within(value: Any, depth: int = 3) -> int:
    """Warm the lazy regexes a table holds (wording.yaml's classes keep one each) and the lexers of
    the Lark parsers it is."""
    if isinstance(value, LAZY_REGEXES):
        value.warm()
        return 1
    if isinstance(value, Lark):
        return _warm_lexers(value)
    if depth == 0:
        return 0
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return sum(_warm_within(v, depth - 1) for v in value)
    return 0


def warm_up() -> int:
    """Import the diagnosis stages, build their tables, compile their lazy
    regexes and read the shipped decision models. Returns how many tables and regexes it built (for tests)."""
    built = 0
    for module in _modules():
        for value in list(vars(module).values()):
            built += 1 + _warm_within(value()) if _zero_arg_table(value) else _warm_within(value, depth=0)
    for module_name, loader in SHIPPED_MODELS:
        getattr(importlib.import_module(module_name), loader)()
        built += 1
    return built
