"""CrossHair checks the contracts of the core's pure helpers, and is shown to catch planted bugs.

The contracts (PEP 316 `pre:` / `post:` lines in the docstrings of `core/graph.py` and
`core/state.py`, described in `spec/crosshair.md`) are checked by `crosshair check` with a
bounded number of fruitless paths per condition. A contract counts only if CrossHair exercises
it: every `post:` line must come back in CrossHair's report, and for every contracted function a
planted bug (one small edit in a copy of the package) must make CrossHair report a
counterexample.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from schedspec.mutation import apply_edits

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "src" / "schedspec" / "core"
MODULES = ("graph.py", "state.py")
# The budget per condition is a number of consecutive paths that find nothing new, not seconds:
# with a fixed hash seed the search is then the same on every run, however loaded the machine
# (a CPU-time budget let a planted bug slip through under load).
UNINTERESTING_PATHS = "100"
_REPORT = re.compile(r"^(?P<file>[^:]+\.py):(?P<line>\d+): (?P<level>info|error): (?P<text>.*)$")

# One planted bug per contracted function: (module, function, text to find, replacement).
PLANTED = (
    (
        "graph.py",
        "held_by_cycles",
        "        waiting[v] = len(deps[v])",
        "        waiting[v] = len(deps[v]) - (v in deps[v])",
    ),
    (
        "graph.py",
        "strongly_connected",
        "                if on_stack[w] and number[w] < low[v]:",
        "                if number[w] < low[v]:",
    ),
    ("graph.py", "shortest_cycle", "                path.reverse()\n", ""),
    (
        "graph.py",
        "reachable",
        "    queue = deque(seen)",
        "    queue = deque()",
    ),
    (
        "state.py",
        "edges_add",
        "            return (*edges, i)",
        "            return (*edges[:-1], i)",
    ),
    (
        "state.py",
        "edges_remove",
        "        return tuple(x for x in edges if x != i)",
        "        return tuple(x for x in edges if x < i)",
    ),
    ("state.py", "limit_problem", "    if value < 0:", "    if value < 1:"),
)


def _crosshair(targets: list[str], pythonpath: Path | None = None) -> list[dict[str, str]]:
    command = [
        str(Path(sys.executable).parent / "crosshair"),
        "check",
        "--analysis_kind=PEP316",
        f"--max_uninteresting_iterations={UNINTERESTING_PATHS}",
        "--report_all",
        *targets,
    ]
    # A fixed hash seed makes set iteration, and so CrossHair's search, the same on every run.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900, check=False
    )
    found = [m.groupdict() for m in map(_REPORT.match, done.stdout.splitlines()) if m]
    assert found or done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return found


@cache
def _report(module: str) -> tuple[dict[str, str], ...]:
    """CrossHair's report on one module (a module at a time, so that the two can run on two
    workers: `tests/conftest.py` keeps each module's two tests together)."""
    return tuple(_crosshair([str(CORE / module)]))


def _contract_lines(module: str) -> set[int]:
    lines = (CORE / module).read_text().splitlines()
    return {n for n, line in enumerate(lines, start=1) if line.strip().startswith("post:")}


@pytest.mark.parametrize("module", MODULES)
def test_crosshair_finds_no_counterexample_in_the_core_contracts(module: str) -> None:
    errors = [r for r in _report(module) if r["level"] == "error"]
    assert not errors, errors


@pytest.mark.parametrize("module", MODULES)
def test_every_postcondition_is_exercised_by_crosshair(module: str) -> None:
    reported = {int(r["line"]) for r in _report(module) if Path(r["file"]).name == module}
    contracts = _contract_lines(module)
    assert len(contracts) >= 3
    assert contracts <= reported, f"not exercised: lines {sorted(contracts - reported)}"


def test_every_contracted_function_has_a_planted_bug() -> None:
    contracted = set()
    for module in MODULES:
        text = (CORE / module).read_text()
        for match in re.finditer(r"^def (\w+)\(.*?\"\"\"(.*?)\"\"\"", text, re.M | re.S):
            if "post:" in match.group(2):
                contracted.add((module, match.group(1)))
    assert contracted == {(m, f) for m, f, _, _ in PLANTED}


@pytest.mark.parametrize(
    ("module", "function", "find", "replace"), PLANTED, ids=[f for _, f, _, _ in PLANTED]
)
def test_crosshair_reports_the_planted_bug(
    tmp_path: Path, module: str, function: str, find: str, replace: str
) -> None:
    """One bug per copy of the package, so that a bug in one helper cannot be blamed on another
    whose postcondition calls it (`reachable` is used by three contracts)."""
    copy = tmp_path / "schedspec"
    shutil.copytree(ROOT / "src" / "schedspec", copy)
    path = copy / "core" / module
    path.write_text(apply_edits(path.read_text(), [(find, replace)], f"planted bug in {function}"))
    report = _crosshair([f"schedspec.core.{module.removesuffix('.py')}.{function}"], tmp_path)
    caught = {
        _function_at(Path(r["file"]), int(r["line"])) for r in report if r["level"] == "error"
    }
    assert caught == {function}, report


def _function_at(path: Path, line: int) -> str:
    """The name of the top-level function whose docstring holds `line`."""
    for text in reversed(path.read_text().splitlines()[:line]):
        if match := re.match(r"def (\w+)", text):
            return match.group(1)
    raise AssertionError(f"no function above {path}:{line}")
