"""The architecture, checked: the core stays pure, the diagram is generated, clauses are tested."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from schedspec.cli import diagram
from schedspec.explore.checks import GRAPH_PROPERTIES

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "src" / "schedspec" / "core"
ALLOWED_THIRD_PARTY = {"immutables", "pyrsistent"}
# Standard-library modules the core may use: data structures and typing only. No clock,
# threads, randomness, logging or I/O.
# `math` for `isfinite` alone (LEASE-1): a pure function, no clock, no randomness, no I/O.
ALLOWED_STDLIB = {"__future__", "collections", "dataclasses", "enum", "math", "typing"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_effect_1_core_imports_only_stdlib_data_modules_and_persistent_libraries() -> None:
    assert sorted(CORE.glob("*.py")), "no core modules found"
    for path in CORE.glob("*.py"):
        for module in _imports(path):
            assert module in ALLOWED_STDLIB | ALLOWED_THIRD_PARTY, f"{path.name} imports {module}"
            assert module in sys.stdlib_module_names or module in ALLOWED_THIRD_PARTY


def test_purity_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    planted = tmp_path / "bad.py"
    planted.write_text("import time\nfrom threading import Lock\n")
    assert _imports(planted) - ALLOWED_STDLIB == {"time", "threading"}


def _all_imports(path: Path) -> set[str]:
    """Every module a file imports, relative ones as written (`.core`, `..naive`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_the_naive_statement_shares_nothing_with_the_core() -> None:
    """`schedspec/naive.py`, the independent statement of the rules the explorer compares the
    core with, imports only the standard library: nothing of `core/`, nor of `schedspec`."""
    imports = _all_imports(ROOT / "src" / "schedspec" / "naive.py")
    assert imports, "no imports found: the walk is broken"
    for module in imports:
        assert not module.startswith("."), module
        assert module.split(".")[0] in sys.stdlib_module_names, module


def test_the_naive_import_check_catches_a_core_import(tmp_path: Path) -> None:
    planted = tmp_path / "naive.py"
    planted.write_text("from collections import deque\nfrom .core.state import State\n")
    assert _all_imports(planted) == {"collections", ".core.state"}


def test_the_durable_shells_decide_no_rule() -> None:
    """`schedspec/durable/` stores what it is given and gives it back (RESTART-5): it imports
    nothing of the core, nor of the naive model, only the standard library and the errors."""
    paths = sorted((ROOT / "src" / "schedspec" / "durable").glob("*.py"))
    assert len(paths) >= 2, paths
    for path in paths:
        for module in _all_imports(path):
            allowed = module == "..errors" or module.split(".")[0] in sys.stdlib_module_names
            assert allowed, f"{path.name} imports {module}"


def test_state_2_diagram_is_generated_from_the_table() -> None:
    """STATE-2: diagram is generated from the table."""
    committed = (ROOT / "spec" / "diagram.md").read_text()
    assert committed == diagram(), "spec/diagram.md is stale: run `schedspec diagram --write`"


def _clause_ids() -> list[str]:
    text = (ROOT / "spec" / "contract.md").read_text()
    return sorted(set(re.findall(r"\*\*([A-Z]+-\d+)\*\*", text)))


def _test_names() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test_"
            ):
                names.add(node.name)
    return names


def test_every_clause_is_named_by_a_test() -> None:
    """Every clause id has a test naming it (the RESTART clauses too: tests/test_restart.py)."""
    clauses = _clause_ids()
    assert len(clauses) > 50
    names = _test_names()
    untested = [
        c
        for c in clauses
        if not any(re.search(rf"(^|_){c.lower().replace('-', '_')}(_|$)", n) for n in names)
    ]
    assert not untested, f"clauses with no test naming them: {untested}"


def test_every_clause_id_can_be_found_in_the_tests_as_written() -> None:
    """Every clause id appears as written (`BLOCK-3`) in the tests, so `grep -r BLOCK-3 tests`
    finds them: a test named after a clause also cites it in its docstring."""
    here = Path(__file__).name  # this file's docstring cites an example
    text = "\n".join(p.read_text() for p in (ROOT / "tests").glob("*.py") if p.name != here)
    missing = [c for c in _clause_ids() if not re.search(rf"\b{c}\b", text)]
    assert not missing, f"clause ids no test cites as written: {missing}"


def test_every_clause_is_linked_to_the_tla_spec_and_every_linked_name_exists() -> None:
    """Issue 3: contract.md says which actions or invariants state each clause."""
    text = (ROOT / "spec" / "contract.md").read_text()
    table = text[text.index("## Where each clause is checked") :]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    clauses = set(_clause_ids())
    linked = set()
    for row in rows[1:]:
        cell = row.split("|")[1]
        linked.update(re.findall(r"[A-Z]+-\d+", cell))
        for area in re.findall(r"([A-Z]+)-\*", cell):  # `QUERY-*`: every clause of the area
            linked.update(c for c in clauses if c.startswith(f"{area}-"))
    assert clauses == linked, f"not linked: {sorted(clauses - linked)}"
    spec = "\n".join(
        (ROOT / "tla" / f"{m}.tla").read_text() for m in ("Scheduler", "Journal", "Restart")
    )
    names = set(re.findall(r"`([A-Z][A-Za-z]+)(?:\([^`]*\))?`", table))
    defined = set(re.findall(r"^(\w+)(?:\(.*\))? ==", spec, re.MULTILINE))
    defined |= set(re.findall(r"^    (\w+),?\s+\\\*", spec, re.MULTILINE))  # CONSTANTS, VARIABLES
    missing = sorted(names - defined - set(GRAPH_PROPERTIES) - {"ASSUME", "UNCHANGED"})
    assert not missing, f"named in contract.md, defined in no TLA+ spec: {missing}"
