"""The package's shape (issue 18): stages import only earlier stages, only
forensics/cli/ imports click, no import cycles, and the size limits."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO

PKG = REPO / "forensics"
BASE = ("errors", "exitcodes", "versions", "extras", "atomic", "cache", "native", "compile", "re_cache", "code_cache")
# The one-way order; a module may import its own stage, an earlier one, or a base module.
STAGES = ("base", "ingest", "envelope", "events", "incidents", "diagnosis", "report", "pipeline", "drivers",
          "api", "root", "lab", "cli")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # a module of forensics, or an outside top-level name ("click")
    line: int
    module_level: bool  # runs when the module is imported (not inside a function)
    type_only: bool  # under `if TYPE_CHECKING:` (never runs)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def stage(mod: str) -> str:
    """forensics.diagnosis.x -> diagnosis; forensics (the package root) -> root; __main__ -> cli."""
    parts = mod.split(".")
    if len(parts) == 1:
        return "root"
    head = parts[1]
    if head in BASE:
        return "base"
    if head == "__main__":
        return "cli"
    return head if head in STAGES else f"unknown stage {head!r}"


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, module_level: bool = True, type_only: bool = False):
    """(import node, runs at import time, only for type checkers) for every import under node."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, module_level, type_only
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk(child, False, type_only)
        elif isinstance(child, ast.If) and _is_type_checking(child):
            yield from _walk(child, module_level, True)
        else:
            yield from _walk(child, module_level, type_only)


def _targets(mod: str, is_pkg: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
        pkg = pkg[: len(pkg) - node.level + 1]
        base = ".".join(pkg + ([node.module] if node.module else []))
    # `from forensics.diagnosis import signatures` names a module when one exists
    subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
    if base == "forensics":  # `from forensics import x` reads the package root, whatever x is
        return [base] + subs
    return subs if len(subs) == len(node.names) else [base] + subs


def imports() -> list[Import]:
    mods = modules()
    known = set(mods)
    out = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, at_import, type_only in _walk(tree):
            for target in _targets(mod, path.name == "__init__.py", node, known):
                out.append(Import(mod, _owner(target, known), node.lineno, at_import, type_only))
    return out


def _owner(target: str, known: set[str]) -> str:
    """The module of forensics a dotted name lives in (forensics.a.b.Name -> forensics.a.b); else the top name."""
    if target.split(".")[0] != "forensics":
        return target.split(".")[0]
    while target not in known and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


IMPORTS = imports()
INTERNAL = [i for i in IMPORTS if i.target.split(".")[0] == "forensics"]


def test_every_module_belongs_to_a_stage():
    unknown = sorted({(m, stage(m)) for m in modules() if stage(m) not in STAGES})
    assert not unknown, unknown


def backward(imports: list[Import]) -> list[str]:
    rank = {s: i for i, s in enumerate(STAGES)}
    return [f"{i.source}:{i.line} ({stage(i.source)}) imports {i.target} ({stage(i.target)})"
            for i in imports if stage(i.target) in rank and stage(i.source) in rank
            and rank[stage(i.target)] > rank[stage(i.source)]]


def test_stages_import_only_earlier_stages():
    bad = backward(INTERNAL)
    assert not bad, "\n".join(bad)


def test_the_stage_rule_sees_a_backward_import():
    # the break the issue found: diagnose.py importing report.contract
    wrong = Import("forensics.diagnosis.diagnose", "forensics.report.contract", 1, True, False)
    right = Import("forensics.report.text", "forensics.diagnosis.taxonomy", 1, True, False)
    assert backward([wrong, right]) == [
        "forensics.diagnosis.diagnose:1 (diagnosis) imports forensics.report.contract (report)"]
    assert stage("forensics") == "root" and stage("forensics.atomic") == "base" and stage("forensics.__main__") == "cli"


def test_only_the_cli_imports_click():
    bad = [f"{i.source}:{i.line}" for i in IMPORTS if i.target == "click" and stage(i.source) != "cli"]
    assert not bad, bad


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    """Over every import that can run, lazy ones inside functions included (a
    lazy import still makes the two modules depend on each other)."""
    edges: dict[str, set[str]] = {}
    for i in INTERNAL:
        if i.target != i.source and not i.type_only:
            edges.setdefault(i.source, set()).add(i.target)
    cycles = _cycles(edges)
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_scan_sees_lazy_relative_and_from_imports():
    seen = {(i.source, i.target) for i in IMPORTS}
    assert ("forensics.lab.goodlog", "forensics.diagnosis.signatures") in seen
    assert any(not i.module_level for i in INTERNAL)  # imports inside functions are seen too


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_no_function_is_over_60_lines():
    long = [f"{p.relative_to(REPO)}:{line} {name} ({n} lines)" for p in sorted(PKG.rglob("*.py"))
            for name, line, n in _functions(p) if n > MAX_FUNCTION_LINES]
    assert not long, "\n".join(long)


def test_no_module_outside_lab_is_over_500_lines():
    big = [f"{p.relative_to(REPO)} ({n} lines)" for p in sorted(PKG.rglob("*.py"))
           if "lab" not in p.relative_to(PKG).parts[:1]
           and (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES]
    assert not big, big


def test_nothing_imports_the_package_root():
    # The root re-exports the API; a stage reading __version__ from it would load every stage.
    bad = [f"{i.source}:{i.line}" for i in INTERNAL if i.target == "forensics" and i.source != "forensics"]
    assert not bad, bad
