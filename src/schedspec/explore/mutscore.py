"""Mutation score of the pure core: which mutants of `core/` the explorer kills, and the tests.

How it works, as a whole. The mutants are mutmut's own: `create_mutations` (mutmut's operators,
its pragmas, and its rule of running only mutants inside functions and methods) lists, for each
target file (`core/step.py`, `graph.py`, `state.py`, `invariants.py`), every node it would
change and what it would change it into. One mutant is the module with that one node replaced
(`Module.deep_replace`), nothing else. Its id is `<file stem>:<function qualname>:<ordinal>`,
the ordinal counting the mutants of that function in mutmut's order (so `step:_claim:3` is
mutmut's `x__claim__mutmut_3`), and its description is the node's code before and after, on
one line, so that a listed id (`models/mutation/equivalent.toml`) can be checked to still mean
the same mutant after the code around it has moved.

mutmut's runner is not used. It compiles every mutant of a file into one module of
trampolines, a wrapper on every function call that looks up which mutant is active, and runs
pytest through them: that slows every step of the core several-fold, the explorer sends the
core hundreds of thousands of events per scope, and the explorer is not a pytest test anyway.
Instead each mutant runs in a child process forked from this one. The child forgets every
module of the repository (`schedspec.*`, and the tests' own modules when the parent is
pytest), asserts that none is left, and puts an import hook first on `sys.meta_path` that
serves the mutated source for exactly one module name (`schedspec.core.step`, say) and leaves
every other module to the ordinary finders, which load it from its file. It then imports
`schedspec.explore.search` afresh, so every module that imports the mutated one
(`core/__init__`, `step.py` importing `graph`, the explorer importing `invariants`) sees the
mutant, for all four files alike, and it checks that the module in `sys.modules` is the
hook's. The parent never uses the core or the explorer, but it cannot avoid having imported the
core: `schedspec/__init__.py` imports `schedspec.core` and the shell, hence all four target
modules, before a line of this module runs. That is why the child forgets the modules instead
of the parent avoiding them; the effect is that of a fresh interpreter, without its start-up
cost and without enumerating the mutants again.

What is skipped, and why it changes no verdict. The unmutated run (`baseline`) explores each
scope in its own child under line coverage, and runs the tests selection once under coverage
with one context per test. A mutant changes one node; a scope whose exploration never runs a
line of that node explores exactly as unmutated, so the mutant is explored only on the scopes
that run one of its lines (`reached`), and a mutant that no scope reaches survives the
explorer as "unreached" at no cost: out of reach of the default scopes, for the tests to kill.
Likewise its tests are only those that run one of its lines (all of them where a line runs at
import or collection). A mutant of `invariants` changes no state and no move, only the checks'
answers, so its explorer column is computed by replaying the checks of the unmutated
exploration; a mutant of `step` is replayed on the unmutated exploration's steps, and
explored for real only from the first scope where it answers a step otherwise
(`schedspec.explore.replay`; `--no-replay` explores instead). A survivor that no default scope
can kill is reported as `unreached` or `unchanged`: out of reach of the default scopes. A test
compares every shortcut with exploring every mutant on every scope. These make most survivors
cost seconds instead of a whole exploration.

What kills a mutant in the explorer column: the child explores each default scope (the set of
`schedspec verify`, or `--scopes`) that runs its lines, smallest first by the unmutated
run's state count, and
stops at the first scope with a violation (the report names the check, `RunningWithinLimit`
or `AgreesWithNaive` say, and the scope) or whose state space outgrows four times the
unmutated one ("incomplete"). As in mutmut, a child that cannot import the mutant ("import
error"), raises outside the explorer's own checks or dies ("crash"), or overruns its time
budget ("timeout") kills the mutant too, and the reason is reported. A scope's budget is 3
times the unmutated run's time on it plus 5 s (the unmutated run is timed once, at the start),
enforced in the child by an alarm; the parent kills a child that overruns the sum, as a
backstop, and an explorer child has a bounded address space, so that a mutant that grows
without end fails instead of exhausting the machine. A mutant that passes every scope survives
the explorer.

The tests column, for the explorer's survivors only: the child installs the same hook, imports
the mutated module at once, and runs `pytest.main` on the tests of a selection that run the
mutant's lines (the selection by default the fast tier,
`-m "not slow" -x -q -p no:cacheprovider`); a non-zero exit kills the mutant. The import must
come first: pytest puts its own import hook, which rewrites assertions, in front of any other,
and that hook claims every `schedspec` module (the project's pytest11 entry point marks the
package) and reads it from its file. With the mutant already in `sys.modules`, every later
import finds it there, and the child checks afterwards that the module is still the hook's.
The unmutated selection is run once first: if it fails, the column cannot be measured and the
report says so, instead of counting every mutant killed. Tests that start another Python
process (the conformance server, say) run the real core there, so the column is a lower bound.

A whole run takes hours. With `--journal PATH` it writes each finished mutant, and the
unmutated run, to that file as it goes (one JSON object per line), and a run given the same
journal picks up where the last one stopped: the unmutated run and every journaled mutant are
taken from it. The journal's first line holds two keys, each a digest of source files by
their code without docstrings. The explorer's key (`journal_key`) covers the options, the
scopes and every module the explorer imports (`judging_sources`); a journal with another one is
started afresh, so a verdict is never reused for code that has changed since. The tests' key
(`tests_key`) covers the selection, its test files and what they import; a journal with
another one keeps every verdict of the explorer, and every kill by a test file unchanged with
all it imports (`test_file_keys`), and tests the other survivors again, each with its old
killer first: a new test costs the tests it may change, not the explorations. The unmutated
run is reused only while the mutated files' lines are the same (`lines_key`), as its coverage
names lines.
A change elsewhere keeps the journal: `make mutation` keeps its journal in
`models/mutation/`, committed, so that a run longer than a session resumes in the next.

Equivalent mutants, examined by hand, are listed with a reason in
`models/mutation/equivalent.toml`. They are explored like any other and reported in their own
column if they survive; an entry the explorer now kills, or whose description no longer
matches its id, is reported as a problem and fails the run. `check_equivalents` does only that.

    python -m schedspec.explore.mutscore --sample 40 --seed 1 --jobs 2 --json mutscore.json
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import json
import os
import random
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, NoReturn

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import Mutation, create_mutations

ROOT = Path(__file__).resolve().parents[3]
CORE_DIR = ROOT / "src" / "schedspec" / "core"
EQUIVALENTS = ROOT / "models" / "mutation" / "equivalent.toml"
# Mutants whose change no reply of the protocol can show (the oracle columns, `--oracle`).
UNOBSERVABLE = ROOT / "models" / "mutation" / "unobservable.toml"
TARGETS = ("step", "graph", "state", "invariants")
DEFAULT_TESTS = ("-m", "not slow", "-x", "-q", "-p", "no:cacheprovider")
# The modules a child forgets: those loaded from the repository's own code and tests.
_PROJECT_DIRS = (str(ROOT / "src") + os.sep, str(ROOT / "tests") + os.sep)
_WIDTH = 60  # characters of each side of a description

# Outcome statuses and the columns of the report.
KILLED, SURVIVED, ERROR = "killed", "survived", "error"
COLUMNS = ("explorer", "tests", "equivalent", "survived", "error")


# The mutants.


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutant: a single node of one target file replaced by mutmut's operators."""

    id: str  # "<file stem>:<function qualname>:<ordinal within that function>"
    file: str  # "step"
    function: str  # "_claim", "_Tx.move"
    ordinal: int
    line: int  # the lines the node spans, for the reader; not part of the identity
    end_line: int
    original: str  # the node's code, on one line, truncated
    mutated: str
    context: str  # the source line the node starts on, stripped

    @property
    def module(self) -> str:
        return f"schedspec.core.{self.file}"

    @property
    def description(self) -> str:
        return f"{self.original} -> {self.mutated}"


class FileMutants:
    """Every mutant mutmut makes of one target file, in mutmut's order, and their sources."""

    def __init__(self, file: str) -> None:
        if file not in TARGETS:
            raise ValueError(f"unknown target file {file!r}; known: {', '.join(TARGETS)}")
        self.file = file
        self.path = CORE_DIR / f"{file}.py"
        self.source = self.path.read_text()
        # mutmut reads its configuration (`[tool.mutmut]`, pragmas) relative to the working
        # directory, so the enumeration does not depend on where the harness is started.
        with contextlib.chdir(ROOT):
            module, mutations, _, _ = create_mutations(
                str(self.path.relative_to(ROOT)), self.source
            )
        self.module = module
        names = _qualnames(module)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        lines = self.source.splitlines()
        self.mutants: list[Mutant] = []
        self._mutations: dict[str, Mutation] = {}
        # Mutations outside any function or method (module constants, class attributes) are
        # made by mutmut's operators but never run by mutmut, which only switches functions.
        self.outside_functions = 0
        ordinals: dict[str, int] = {}
        for mutation in mutations:
            container = mutation.contained_by_top_level_function
            function = names.get(id(container)) if container is not None else None
            if function is None:
                self.outside_functions += 1
                continue
            ordinal = ordinals[function] = ordinals.get(function, 0) + 1
            position = positions.get(mutation.original_node)
            line = position.start.line if position is not None else 0
            end_line = position.end.line if position is not None else 0
            original, mutated = _describe(
                module.code_for_node(mutation.original_node),
                module.code_for_node(mutation.mutated_node),
            )
            mutant = Mutant(
                id=f"{file}:{function}:{ordinal}",
                file=file,
                function=function,
                ordinal=ordinal,
                line=line,
                end_line=end_line,
                original=original,
                mutated=mutated,
                context=lines[line - 1].strip() if 0 < line <= len(lines) else "",
            )
            self.mutants.append(mutant)
            self._mutations[mutant.id] = mutation

    def mutated_source(self, mutant_id: str) -> str:
        """The file's source with the one node of `mutant_id` replaced."""
        mutation = self._mutations[mutant_id]
        mutated = self.module.deep_replace(mutation.original_node, mutation.mutated_node)
        assert isinstance(mutated, cst.Module)
        return mutated.code


def _qualnames(module: cst.Module) -> dict[int, str]:
    """`id(node)` -> qualname for each top-level function and each method of a top-level
    class: the containers mutmut's `contained_by_top_level_function` points to."""
    names: dict[int, str] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            names[id(statement)] = statement.name.value
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for item in statement.body.body:
                if isinstance(item, cst.FunctionDef):
                    names[id(item)] = f"{statement.name.value}.{item.name.value}"
    return names


def _one_line(code: str) -> str:
    return " ".join(code.split())


def _describe(original: str, mutated: str, width: int = _WIDTH) -> tuple[str, str]:
    """Both codes on one line; if either is long, the same window of both around where they
    differ, so that the change stays visible after truncation."""
    a, b = _one_line(original), _one_line(mutated)
    if len(a) <= width and len(b) <= width:
        return a, b
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    start = max(0, prefix - width // 3)

    def window(s: str) -> str:
        cut = s[start : start + width]
        return ("..." if start else "") + cut + ("..." if start + width < len(s) else "")

    return window(a), window(b)


@cache
def file_mutants(file: str) -> FileMutants:
    """The mutants of `file`, enumerated once per process (the enumeration is deterministic)."""
    return FileMutants(file)


def all_mutants(files: Sequence[str] = TARGETS) -> list[Mutant]:
    return [m for f in files for m in file_mutants(f).mutants]


def sample(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """A fixed sample: the ids sorted as strings, then `random.Random(seed).sample`, so the
    same `n` and `seed` pick the same mutants on every machine."""
    by_id = {m.id: m for m in mutants}
    ids = sorted(by_id)
    picked = set(random.Random(seed).sample(ids, min(n, len(ids))))
    return [m for m in mutants if m.id in picked]


# The equivalent mutants.


@dataclass(frozen=True, slots=True)
class Equivalent:
    id: str
    description: str
    reason: str


def load_equivalents(path: Path = EQUIVALENTS, table: str = "equivalent") -> list[Equivalent]:
    """The entries of `path` (`[[equivalent]]`, or `[[unobservable]]` with that `table`)."""
    if not path.is_file():
        return []
    data = tomllib.loads(path.read_text())
    entries = []
    for entry in data.get(table, []):
        unknown = set(entry) - {"id", "description", "reason"}
        if unknown:
            raise ValueError(f"{path}: unknown fields {sorted(unknown)} in {entry}")
        entries.append(
            Equivalent(str(entry["id"]), str(entry["description"]), str(entry["reason"]))
        )
    return entries


def stale_equivalents(entries: Sequence[Equivalent]) -> list[str]:
    """Entries whose id no longer exists, or no longer means the mutant that was examined."""
    problems = []
    for entry in entries:
        file = entry.id.partition(":")[0]
        if file not in TARGETS:
            problems.append(f"{entry.id}: not a mutant of {', '.join(TARGETS)}")
            continue
        found = {m.id: m for m in file_mutants(file).mutants}.get(entry.id)
        if found is None:
            problems.append(f"{entry.id}: no such mutant any more")
        elif found.description != entry.description:
            problems.append(
                f"{entry.id}: now means {found.description!r}, not {entry.description!r}"
                " (re-examine it and update its id or description)"
            )
    return problems


# What a child reports.


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one column made of one mutant."""

    status: str  # KILLED, SURVIVED or ERROR (the harness itself failed)
    reason: str = ""  # "violation", "incomplete", "import error", "crash", "timeout", "tests"
    check: str = ""  # the explorer's check, or the first failing test
    scope: str = ""
    detail: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        if self.status == SURVIVED:
            return f"survived ({self.reason})" if self.reason in OUT_OF_REACH else "survived"
        where = f" in {self.scope}" if self.scope else ""
        what = self.check or self.detail
        return f"{self.status} ({self.reason}{where}){': ' + what if what else ''}"


@dataclass(slots=True)
class MutantResult:
    mutant: Mutant
    explorer: Outcome
    tests: Outcome | None = None
    equivalent: Equivalent | None = None

    @property
    def column(self) -> str:
        if self.explorer.status == ERROR or (self.tests and self.tests.status == ERROR):
            return "error"
        if self.explorer.status == KILLED:
            return "explorer"
        if self.equivalent is not None:
            return "equivalent"
        if self.tests is not None and self.tests.status == KILLED:
            return "tests"
        return "survived"


@dataclass(frozen=True, slots=True)
class Options:
    scopes: tuple[str, ...] | None = None  # None: the default scopes of `models/`
    jobs: int = 1
    tests: tuple[str, ...] | None = DEFAULT_TESTS  # pytest arguments; None: no tests column
    timeout_factor: float = 3.0
    timeout_slack: float = 5.0
    states_factor: int = 4  # a scope whose states outgrow this many times the unmutated count
    memory_mb: int = 4096  # address space of an explorer child
    replay: bool = True  # mutants of `invariants` and `step` replayed first (`_replayed`)
    skip: bool = True  # explore and test a mutant only where its lines run (`reached`)


@dataclass(slots=True)
class Baseline:
    """The unmutated run: the scopes in the order mutants are explored, and their cost."""

    scopes: list[dict[str, Any]]  # {"name", "states", "seconds"}, smallest first
    seconds: float
    tests_seconds: float | None = None
    tests_problem: str = ""  # why the tests column could not be measured
    tests_order: list[str] = field(default_factory=list)  # the selection's tests, as run
    # {file stem: {line: [index in tests_order, or -1 outside any test]}}
    tests_reach: dict[str, dict[str, list[int]]] | None = None


@dataclass(slots=True)
class Report:
    files: tuple[str, ...]
    baseline: Baseline
    results: list[MutantResult]
    options: Options
    seconds: float = 0.0
    selection: str = ""  # how the mutants were chosen
    problems: list[str] = field(default_factory=list)  # stale equivalents, harness errors

    def counts(self, file: str | None = None) -> dict[str, int]:
        chosen = [r for r in self.results if file is None or r.mutant.file == file]
        counts = {c: sum(r.column == c for r in chosen) for c in COLUMNS}
        counts["total"] = len(chosen)
        # Of the mutants killed by the tests only, those whose lines no default scope runs.
        counts["out_of_reach"] = sum(
            r.column == "tests" and r.explorer.reason in OUT_OF_REACH for r in chosen
        )
        return counts

    @property
    def ok(self) -> bool:
        return not self.problems and not any(
            r.column in ("survived", "error") for r in self.results
        )


def kill_rate(counts: dict[str, int], reached: bool = False) -> float | None:
    """The explorer's kills over the non-equivalent mutants (None if there are none); with
    `reached`, over those that some default scope reaches."""
    judged = counts["total"] - counts["equivalent"] - counts["error"]
    if reached:
        judged -= counts["out_of_reach"]
    return counts["explorer"] / judged if judged else None


# The child: the import hook, and what it runs.


class _MutantLoader(importlib.abc.SourceLoader):
    """Loads one module from a given source instead of its file. It implements no
    `path_stats`, so the import system neither reads nor writes bytecode for it."""

    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self.source.encode()
        return Path(path).read_bytes()


class _MutantFinder(importlib.abc.MetaPathFinder):
    """First on `sys.meta_path`: the mutant for one module name, nothing for the others."""

    def __init__(self, name: str, path: str, source: str) -> None:
        self.name = name
        self.loader = _MutantLoader(path, source)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.loader.path, loader=self.loader
        )


def _is_project_module(name: str, module: object) -> bool:
    if name == "schedspec" or name.startswith("schedspec."):
        return True
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and os.path.abspath(file).startswith(_PROJECT_DIRS)


def _install(mutant: Mutant | None) -> _MutantFinder | None:
    """In the child: forget the repository's modules, then serve `mutant` for its module."""
    for name, module in list(sys.modules.items()):
        # `__main__` stays: it may be this very module run with -m; nothing imports it.
        if name != "__main__" and _is_project_module(name, module):
            del sys.modules[name]
    left = [n for n in sys.modules if n == "schedspec" or n.startswith("schedspec.")]
    assert not left, f"schedspec modules still imported in the child: {left}"
    if mutant is None:
        return None
    source = file_mutants(mutant.file).mutated_source(mutant.id)
    finder = _MutantFinder(mutant.module, str(CORE_DIR / f"{mutant.file}.py"), source)
    sys.meta_path.insert(0, finder)
    return finder


def _served(finder: _MutantFinder | None) -> bool:
    """Whether the module in `sys.modules` under the finder's name is the mutant."""
    if finder is None:
        return True
    module = sys.modules.get(finder.name)
    return module is not None and getattr(module, "__loader__", None) is finder.loader


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException, so that the explorer's `except Exception` around
    each move does not report it as a crash of the core."""


# What one request to a mutant behind the reference may take, in processor seconds, before
# `fuzz_seeds` counts it as a loop: a clean request takes well under a millisecond.
PER_REQUEST = 2.0

_SIGNALS = {
    signal.ITIMER_REAL: signal.SIGALRM,
    signal.ITIMER_PROF: signal.SIGPROF,
    signal.ITIMER_VIRTUAL: signal.SIGVTALRM,
}


@contextlib.contextmanager
def _alarm(seconds: float | None, timer: int = signal.ITIMER_REAL) -> Iterator[None]:
    """Raise `_Timeout` in the block once `seconds` have passed: of the wall clock, or, with
    `timer=ITIMER_PROF`, of this process's own processor time, which other load on a shared
    machine does not shorten (`ITIMER_VIRTUAL`: its user time alone, so that two such alarms
    can nest)."""
    if seconds is None:
        yield
        return
    with _ringing(timer), _armed(seconds, timer):
        yield


@contextlib.contextmanager
def _ringing(timer: int) -> Iterator[None]:
    """In the block, `timer`'s signal raises `_Timeout` (see `_armed`)."""

    def ring(signum: int, frame: FrameType | None) -> None:
        raise _Timeout

    signum = _SIGNALS[timer]
    previous = signal.signal(signum, ring)
    try:
        yield
    finally:
        signal.signal(signum, previous)


@contextlib.contextmanager
def _armed(seconds: float, timer: int) -> Iterator[None]:
    """`timer` rings once `seconds` have passed in the block, inside `_ringing(timer)`.

    It rings again every quarter second until the block ends: a ring that lands in a callback
    whose exceptions are ignored (Hypothesis's garbage-collector callback, say) would
    otherwise be lost, and the block would run on to the parent's backstop."""
    signal.setitimer(timer, seconds, 0.25)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What an explorer child explores: scopes in order, each with its budget and bound."""

    scopes: tuple[str, ...] | None  # None: discover the default scopes (the baseline run)
    budget: dict[str, float] = field(default_factory=dict)
    states_max: dict[str, int] = field(default_factory=dict)
    coverage: bool = False  # measure which lines of the core each scope runs (the baseline)


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:300]


def _coverage() -> Any:
    """A line coverage of the four target files, begun before they are imported, so that the
    lines run at import count too (a mutant's node never is one of them: mutmut mutates inside
    functions only)."""
    import coverage

    measured = coverage.Coverage(
        data_file=None, include=[str(CORE_DIR / f"{file}.py") for file in TARGETS]
    )
    measured.start()
    return measured


def _lines_by_context(measured: Any) -> dict[str, dict[str, list[int]]]:
    """{context: {file stem: sorted lines}} of a stopped coverage; the context "" holds the
    lines run outside any named context (imports, collection)."""
    data = measured.get_data()
    found: dict[str, dict[str, set[int]]] = {}
    for path in data.measured_files():
        stem = Path(path).stem
        for line, contexts in data.contexts_by_lineno(path).items():
            for context in contexts:
                found.setdefault(context, {}).setdefault(stem, set()).add(line)
    return {c: {f: sorted(lines) for f, lines in files.items()} for c, files in found.items()}


def _explore_child(mutant: Mutant | None, plan: _Plan) -> dict[str, Any]:
    finder = _install(mutant)
    measured = _coverage() if plan.coverage else None
    try:
        search = importlib.import_module("schedspec.explore.search")
        scope_module = importlib.import_module("schedspec.explore.scope")
    except BaseException as e:
        return {"status": KILLED, "reason": "import error", "detail": _short(e)}
    if not _served(finder):
        return {"status": ERROR, "reason": "hook", "detail": "the mutant was not imported"}
    names = plan.scopes
    if names is None:
        names = tuple(s.name for s in scope_module.scopes() if s.default)
    explored = []
    for name in names:
        started = time.monotonic()
        scope = scope_module.find(name)
        if measured is not None:
            measured.switch_context(name)
        try:
            with _alarm(plan.budget.get(name)):
                result = search.explore(scope, states_max=plan.states_max.get(name))
        except _Timeout:
            return {"status": KILLED, "reason": "timeout", "scope": scope.name}
        except Exception as e:  # a check of the explorer itself raised on the mutant
            return {"status": KILLED, "reason": "crash", "scope": scope.name, "detail": _short(e)}
        seconds = time.monotonic() - started
        if result.violation is not None:
            found = result.violation
            return {
                "status": KILLED,
                "reason": "violation",
                "check": found.check,
                "scope": scope.name,
                "detail": f"{found.kind}: {found.message}"[:300],
            }
        if not result.complete:
            detail = f"more than {plan.states_max.get(name)} states"
            return {"status": KILLED, "reason": "incomplete", "scope": scope.name, "detail": detail}
        explored.append({"name": name, "states": result.states, "seconds": seconds})
    if measured is not None:
        measured.stop()
        lines = _lines_by_context(measured)
        imported = lines.get("", {})
        for entry in explored:
            ran = lines.get(entry["name"], {})
            entry["lines"] = {f: sorted({*ran.get(f, ()), *imported.get(f, ())}) for f in TARGETS}
    return {"status": SURVIVED, "scopes": explored}


# What one scope's unmutated exploration did, kept by a "record" child for the "replay"
# children it forks (`schedspec.explore.replay` says why a replay is the explorer's verdict):
# the scope's name as the explorer reports it, every check call, every step of the core.
_RECORDED: dict[str, Any] = {}

# The files whose mutants are replayed: `invariants` (its check calls) and `step` (the core's
# steps, to find where the mutant first answers otherwise).
REPLAYED = ("invariants", "step")
INFECTED = "infected"  # a replay's report: the mutant answers a step of this scope otherwise


def _record_child(job: _Job) -> dict[str, Any]:
    """Explore one scope with the real core, keeping every check call and every step, then
    replay them on each of `job.mutants`, `job.width` children at a time."""
    _install(None)
    replay = importlib.import_module("schedspec.explore.replay")
    scope_module = importlib.import_module("schedspec.explore.scope")
    assert job.plan.scopes is not None and len(job.plan.scopes) == 1
    (name,) = job.plan.scopes
    calls, steps, result = replay.record(scope_module.find(name))
    if result.violation is not None:
        return {"status": ERROR, "reason": "harness", "detail": "the unmutated core fails"}
    _RECORDED.update(scope=result.scope, calls=calls, steps=steps)
    # The children only read the records. Frozen, the collector leaves them alone; their
    # reference counts still change as a child reads them, so each child may copy the pages
    # it reads: memory is about (1 + width) times the recording (1 GB for `diamond`).
    gc.freeze()
    deadline = job.plan.budget.get(name, 0.0) + 30.0
    jobs = [_Job("replay", m, deadline, job.plan, memory_mb=job.memory_mb) for m in job.mutants]
    with tempfile.TemporaryDirectory(prefix="schedspec-replay-") as tmp:
        reports = _pool(jobs, job.width, Path(tmp), job.memory_mb)
    return {
        "status": "recorded",
        "calls": len(calls),
        "steps": len(steps),
        "results": {m.id: r for m, r in zip(job.mutants, reports, strict=True)},
    }


def _replay_child(job: _Job) -> dict[str, Any]:
    """One mutant against the recorded scope: for `invariants`, the explorer's verdict; for
    `step`, whether it answers any recorded step otherwise (then the scope must be explored)."""
    assert job.mutant is not None and job.plan.scopes is not None
    (name,) = job.plan.scopes
    replay = sys.modules["schedspec.explore.replay"]
    source = file_mutants(job.mutant.file).mutated_source(job.mutant.id)
    scope = _RECORDED["scope"]
    try:
        module = replay.load(source, str(CORE_DIR / f"{job.mutant.file}.py"), job.mutant.module)
    except BaseException as e:
        return {"status": KILLED, "reason": "import error", "detail": _short(e)}
    try:
        with _alarm(job.plan.budget.get(name)):
            if job.mutant.file == "step":
                difference = replay.first_difference(_RECORDED["steps"], module.step)
                if difference is not None:
                    return {"status": INFECTED, "scope": scope, "detail": difference}
                return {"status": SURVIVED}
            checks = replay.checks_for(module, source, job.mutant.function)
            verdict = replay.replay(_RECORDED["calls"], *checks)
    except _Timeout:
        return {"status": KILLED, "reason": "timeout", "scope": scope}
    if verdict is None:
        return {"status": SURVIVED}
    return {"status": KILLED, "scope": scope, **verdict}


class _Failures:
    """A pytest plugin that keeps the ids of the failing tests and collectors."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    def pytest_runtest_logreport(self, report: Any) -> None:  # pytest's TestReport
        if report.failed:
            self.failed.append(str(report.nodeid))

    def pytest_collectreport(self, report: Any) -> None:  # pytest's CollectReport
        if report.failed:
            self.failed.append(str(report.nodeid) or "<collection>")


class _Contexts:
    """A pytest plugin that names the coverage context after each test about to run, so that
    the unmutated run tells which tests run which lines of the core."""

    def __init__(self, measured: Any) -> None:
        self.measured = measured
        self.order: list[str] = []

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.order.append(nodeid)
        self.measured.switch_context(nodeid)


def _tests_child(
    mutant: Mutant | None, selection: tuple[str, ...], coverage: bool = False
) -> dict[str, Any]:
    finder = _install(mutant)
    measured = _coverage() if coverage else None
    if finder is not None:
        # Imported now, before pytest starts: pytest puts its assertion-rewriting hook in
        # front of every hook already on `sys.meta_path`, and that hook claims every
        # `schedspec` module (the project's pytest11 entry point marks the package for
        # rewriting) and reads it from its file, which would be the unmutated one. Once the
        # mutant is in `sys.modules`, every later import of it finds it there, whoever loads
        # the modules that import it.
        try:
            importlib.import_module(finder.name)
        except BaseException as e:
            return {"status": KILLED, "reason": "import error", "detail": _short(e)}
    import pytest

    os.chdir(ROOT)
    # The suite's Hypothesis profile for mutants (tests/conftest.py): derandomised as in
    # `make test`, but a failing example is not shrunk. Shrinking changes no verdict (the test
    # fails either way) and cost minutes per mutant that a Hypothesis test kills.
    os.environ.setdefault("SCHEDSPEC_HYPOTHESIS_PROFILE", "mutation")
    failures = _Failures()
    plugins: list[object] = [failures]
    if measured is not None:
        contexts = _Contexts(measured)
        plugins.append(contexts)
    code = int(pytest.main(list(selection), plugins=plugins))
    if measured is not None:
        measured.stop()
        number = {nodeid: n for n, nodeid in enumerate(contexts.order)}
        number[""] = -1  # run outside any test: at import or collection
        reach: dict[str, dict[str, list[int]]] = {}
        for context, files in _lines_by_context(measured).items():
            for file, lines in files.items():
                for line in lines:
                    tests = reach.setdefault(file, {}).setdefault(str(line), [])
                    tests.append(number.get(context, -1))
        status = KILLED if code != 0 else SURVIVED
        return {"status": status, "reason": "tests", "order": contexts.order, "reach": reach}
    loaded = finder is not None and finder.name in sys.modules
    if loaded and not _served(finder):
        return {"status": ERROR, "reason": "hook", "detail": "pytest imported the real module"}
    status = KILLED if code != 0 else SURVIVED
    first = failures.failed[0] if failures.failed else ""
    detail = f"pytest exit {code}" + ("" if loaded else "; the mutated module was never imported")
    return {"status": status, "reason": "tests", "check": first, "detail": detail}


# The oracle's columns (issue 11, section 2): the mutated core behind the reference adapter,
# judged by the conformance vectors alone, or by the differential fuzzing alone.
ORACLE_COLUMNS = ("vectors", "fuzz")


def _oracle_child(job: _Job) -> dict[str, Any]:
    """`vectors`: the vectors in corpus order, up to the first that fails. `fuzz`: the
    fuzzing at its default budget and seed, in relaxed mode, whose oracle is the plain
    implementation (`conformance/plain.py`, which shares no code with the core: the
    reference would share the mutant), up to the first divergence."""
    finder = _install(job.mutant)
    try:
        runner = importlib.import_module("schedspec.conformance.runner")
        reference = importlib.import_module("schedspec.conformance.reference")
        fuzz = importlib.import_module("schedspec.conformance.fuzz")
    except BaseException as e:
        return {"status": KILLED, "reason": "import error", "detail": _short(e)}
    if not _served(finder):
        return {"status": ERROR, "reason": "hook", "detail": "the mutant was not imported"}
    try:
        if job.kind == "fuzz" and job.seeds:
            return {"status": SURVIVED, "reason": "seeds", "found": _seeds(job, fuzz, reference)}
        if job.kind == "fuzz":
            seed = fuzz.DEFAULT_SEED if job.seed is None else job.seed
            found = fuzz.fuzz(
                reference.ReferenceImplementation, mode=fuzz.Mode.RELAXED, shrink=False, seed=seed
            )
            if found.divergence is None:
                return {
                    "status": SURVIVED,
                    "reason": "fuzz",
                    "detail": f"{found.examples} programs",
                }
            return {
                "status": KILLED,
                "reason": "fuzz",
                "check": f"program {found.found_after_examples}",
                "detail": found.divergence.describe()[:300],
            }
        for vector in job.vectors:
            result = runner.run_vector(reference.ReferenceImplementation(), vector)
            failure = result.failure
            if failure is not None:
                detail = f"step {failure.step_index + 1}: {failure.describe()}"[:300]
                return {
                    "status": KILLED,
                    "reason": "vectors",
                    "check": vector.name,
                    "detail": detail,
                }
    except _Timeout:
        return {"status": KILLED, "reason": "timeout"}
    return {"status": SURVIVED, "reason": "vectors", "detail": f"{len(job.vectors)} vectors pass"}


def _seeds(job: _Job, fuzz: Any, reference: Any) -> list[int | str | None]:
    """The fuzz column with each seed of `job.seeds` in turn, in one child: for each, the
    programs it took to find the mutant, None if the budget passed, or "timeout" if that seed
    overran `job.per_seed` seconds of processor time or one request overran `PER_REQUEST`
    (a timeout kills, as everywhere here). Processor time, so that a clean seed slowed by other
    work is not counted as found; per request too, so that a mutant that loops costs seconds a
    seed rather than the whole `per_seed`."""
    assert job.per_seed is not None

    class Timed(reference.ReferenceImplementation):  # type: ignore[misc]
        def handle(self, request: Any) -> Any:
            with _armed(PER_REQUEST, signal.ITIMER_VIRTUAL):
                return super().handle(request)

    found: list[int | str | None] = []
    with _ringing(signal.ITIMER_VIRTUAL):  # once: each request only arms the timer
        for seed in job.seeds:
            try:
                with _alarm(job.per_seed, signal.ITIMER_PROF):
                    run = fuzz.fuzz(Timed, mode=fuzz.Mode.RELAXED, shrink=False, seed=seed)
            except _Timeout:
                found.append("timeout")
                continue
            found.append(None if run.divergence is None else run.found_after_examples)
    return found


def fuzz_seeds(
    mutants: Sequence[Mutant],
    seeds: Sequence[int],
    width: int = 2,
    per_seed: float = 30.0,
) -> Iterator[tuple[Mutant, list[int | str | None] | str]]:
    """Each mutant behind the reference, fuzzed against the plain implementation with every
    seed of `seeds` in one child (the fuzz column, seed by seed, without forking and importing
    the mutant once per seed), `width` at a time, as each finishes: the list of `_seeds`, or,
    where the child itself failed (the mutant does not import, say), its reason."""
    # The parent's backstop, on the wall clock, allows twice the children's processor time.
    deadline = 2 * per_seed * len(seeds) + 10.0
    jobs = [_Job("fuzz", m, deadline, seeds=tuple(seeds), per_seed=per_seed) for m in mutants]
    results: list[dict[str, Any]] = [{}] * len(jobs)
    with tempfile.TemporaryDirectory(prefix="schedspec-seeds-") as workdir:
        for index in _pool_iter(jobs, width, Path(workdir), 4096, results):
            report = results[index]
            found = report.get("found")
            yield mutants[index], found if isinstance(found, list) else str(report.get("reason"))


def oracle_column(
    column: str,
    mutants: Sequence[Mutant],
    vectors: Sequence[Any] = (),
    width: int = 2,
    deadline: float = 120.0,
    progress: Callable[[Mutant, Outcome, int], None] | None = None,
    seed: int | None = None,
) -> list[tuple[Mutant, Outcome]]:
    """Each mutant judged by the oracle's `column` alone (`_oracle_child`), `width` at a time;
    a mutant that overruns `deadline` seconds is killed as a timeout, as in the explorer
    column. `seed`: the fuzz column's seed, if not the fuzzing's default."""
    assert column in ORACLE_COLUMNS, column
    # The child's alarm ends a mutant that loops; the parent's deadline, a little later, is
    # the backstop for one that the alarm cannot interrupt.
    jobs = [_Job(column, m, deadline + 10.0, vectors=tuple(vectors), seed=seed) for m in mutants]
    results: list[dict[str, Any]] = [{}] * len(jobs)
    found: list[tuple[Mutant, Outcome]] = []
    with tempfile.TemporaryDirectory(prefix=f"schedspec-{column}-") as workdir:
        for done, index in enumerate(
            _pool_iter(jobs, width, Path(workdir), 4096, results), start=1
        ):
            outcome = _outcome(results[index])
            found.append((mutants[index], outcome))
            if progress is not None:
                progress(mutants[index], outcome, done)
    order = {m.id: n for n, m in enumerate(mutants)}
    return sorted(found, key=lambda pair: order[pair[0].id])


# The parent: forking, budgets, collecting.


@dataclass(slots=True)
class _Job:
    kind: str  # "explore", "tests", "record" (a scope, then "replay" of each of `mutants`)
    mutant: Mutant | None  # None: the unmutated baseline
    deadline: float | None  # seconds the parent allows the child, None: no limit
    plan: _Plan = field(default_factory=lambda: _Plan(None))
    selection: tuple[str, ...] = ()
    coverage: bool = False  # tests: which test runs which line (the unmutated selection)
    mutants: tuple[Mutant, ...] = ()  # record: the mutants of `invariants` to replay
    width: int = 1  # record: replays at a time
    memory_mb: int = 4096
    vectors: tuple[Any, ...] = ()  # the oracle's columns: the vectors, loaded by the parent
    seed: int | None = None  # the fuzz column: the fuzzing's seed (None: its default)
    seeds: tuple[int, ...] = ()  # the fuzz column, seed by seed in one child (`fuzz_seeds`)
    per_seed: float | None = None  # `fuzz_seeds`: each seed's processor seconds


@dataclass(slots=True)
class _Child:
    job: _Job
    pid: int
    started: float
    out: Path
    log: Path
    timed_out: bool = False


_forks = itertools.count()


def _fork(job: _Job, workdir: Path, memory_mb: int) -> _Child:
    n = next(_forks)
    out, log = workdir / f"{n}.json", workdir / f"{n}.log"
    # Whatever the parent has buffered would otherwise be written twice, once by the child.
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(job, out, log, memory_mb)
    # The child sets its group too; setting it here as well closes the race with a kill that
    # comes before the child has run.
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    return _Child(job, pid, time.monotonic(), out, log)


def _child(job: _Job, out: Path, log: Path, memory_mb: int) -> NoReturn:
    """The child's whole life; it leaves by `os._exit`, never through the parent's code."""
    try:
        # Its own process group, so that a timeout also ends whatever the tests started.
        os.setpgid(0, 0)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        if job.kind == "explore":
            # A mutant that grows without bound fails here rather than exhausting the machine.
            # Not for the tests: Java and Node reserve far more address space than they use.
            limit = memory_mb * 2**20
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            result = _explore_child(job.mutant, job.plan)
        elif job.kind == "record":
            result = _record_child(job)
        elif job.kind == "replay":
            result = _replay_child(job)
        elif job.kind in ORACLE_COLUMNS:
            # `fuzz_seeds` gives each seed its share of the deadline instead.
            with _alarm(None if job.deadline is None or job.seeds else job.deadline - 10.0):
                result = _oracle_child(job)
        else:
            result = _tests_child(job.mutant, job.selection, job.coverage)
    except BaseException as e:
        # What the mutant can raise is caught where it runs (the import, each scope, pytest);
        # anything that gets here is the harness's own failure, not a verdict on the mutant.
        result = {"status": ERROR, "reason": "harness", "detail": _short(e)}
    try:
        partial = out.with_suffix(".part")
        partial.write_text(json.dumps(result))
        os.replace(partial, out)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").strip().splitlines()[-lines:])[-300:]
    except OSError:
        return ""


def _reap(child: _Child) -> dict[str, Any]:
    """Wait for a finished child, end what it left behind, and read what it reported."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)  # its group: only processes this run started
    _, status = os.waitpid(child.pid, 0)
    seconds = time.monotonic() - child.started
    if child.timed_out:
        return {"status": KILLED, "reason": "timeout", "seconds": seconds}
    try:
        result: dict[str, Any] = json.loads(child.out.read_text())
    except (OSError, ValueError):
        if os.WIFSIGNALED(status):
            how = f"killed by signal {os.WTERMSIG(status)}"
        else:
            how = f"exit status {os.waitstatus_to_exitcode(status)}"
        result = {"status": KILLED, "reason": "crash", "detail": f"{how}; {_log_tail(child.log)}"}
    result["seconds"] = seconds
    return result


def _finished(child: _Child) -> bool:
    """Whether the child has exited, without reaping it: its group id stays reserved until
    `_reap` has ended the group."""
    info = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _pool(jobs: Sequence[_Job], width: int, workdir: Path, memory_mb: int) -> list[dict[str, Any]]:
    """Run `jobs`, `width` children at a time; their reports in the order of `jobs`."""
    results: list[dict[str, Any]] = [{}] * len(jobs)
    for _ in _pool_iter(list(jobs), width, workdir, memory_mb, results):
        pass
    return results


def _pool_iter(
    queue: list[_Job],
    width: int,
    workdir: Path,
    memory_mb: int,
    results: list[dict[str, Any]],
    more: Callable[[int, dict[str, Any]], list[_Job]] | None = None,
) -> Iterator[int]:
    """Yield the index of each job as it finishes (its report in `results`); `more`, given a
    finished job's index and report, may add jobs to the end of the queue."""
    running: dict[int, tuple[int, _Child]] = {}
    pending = deque(range(len(queue)))
    try:
        while pending or running:
            while pending and len(running) < width:
                index = pending.popleft()
                child = _fork(queue[index], workdir, memory_mb)
                running[child.pid] = (index, child)
            progressed = False
            now = time.monotonic()
            for pid, (index, child) in list(running.items()):
                deadline = child.job.deadline
                if not _finished(child):
                    if deadline is None or now - child.started <= deadline:
                        continue
                    child.timed_out = True
                results[index] = _reap(child)
                del running[pid]
                progressed = True
                for job in more(index, results[index]) if more else []:
                    queue.append(job)
                    results.append({})
                    pending.append(len(queue) - 1)
                yield index
            if not progressed:
                time.sleep(0.05)
    finally:
        for _, child in running.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)


def _outcome(report: dict[str, Any]) -> Outcome:
    return Outcome(
        status=str(report.get("status", ERROR)),
        reason=str(report.get("reason", "")),
        check=str(report.get("check", "")),
        scope=str(report.get("scope", "")),
        detail=str(report.get("detail", "")),
        seconds=round(float(report.get("seconds", 0.0)), 2),
    )


class BaselineError(RuntimeError):
    """The unmutated core does not pass: no mutant can be judged against it."""


def baseline(options: Options, workdir: Path | None = None) -> Baseline:
    """Explore the unmutated core once, each scope in its own child under line coverage: which
    scopes, in which order, how long each takes (under coverage, some three times the plain
    time: the budgets are generous), and which lines of the core each runs."""
    names = options.scopes
    if names is None:
        from . import scope as scope_module  # in the parent only to list the default scopes

        names = tuple(s.name for s in scope_module.scopes() if s.default)
    jobs = [_Job("explore", None, None, _Plan((name,), coverage=True)) for name in names]
    with contextlib.ExitStack() as stack:
        if workdir is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="schedspec-mutscore-"))
            workdir = Path(tmp)
        reports = _pool(jobs, options.jobs, workdir, options.memory_mb)
    for report in reports:
        if report.get("status") != SURVIVED:
            raise BaselineError(f"the unmutated core does not pass the explorer: {report}")
    explored = [entry for report in reports for entry in report["scopes"]]
    scopes = sorted(explored, key=lambda s: (s["states"], s["name"]))
    return Baseline(scopes, round(sum(float(s["seconds"]) for s in scopes), 2))


def reached(base: Baseline, mutant: Mutant, skip: bool = True) -> tuple[str, ...]:
    """The scopes whose unmutated exploration runs a line of `mutant`'s node, in the baseline's
    order. On the others the mutant cannot change anything: its node is never evaluated. Every
    scope without `skip`, or for a node whose lines are not known."""
    lines = set(range(mutant.line, mutant.end_line + 1))
    if not skip or mutant.line < 1:
        return tuple(s["name"] for s in base.scopes)
    return tuple(s["name"] for s in base.scopes if lines.intersection(s["lines"][mutant.file]))


def _plan(
    base: Baseline, options: Options, names: Sequence[str] | None = None
) -> tuple[_Plan, float]:
    """The plan of an explorer child over `names` (by default every scope), in the baseline's
    order, and the parent's backstop for it."""
    chosen = [s for s in base.scopes if names is None or s["name"] in names]
    budget = {
        s["name"]: options.timeout_factor * s["seconds"] + options.timeout_slack for s in chosen
    }
    states_max = {s["name"]: options.states_factor * s["states"] + 1_000 for s in chosen}
    plan = _Plan(tuple(s["name"] for s in chosen), budget, states_max)
    # The parent's backstop: every scope's budget, and time to fork, import and compile.
    return plan, sum(budget.values()) + 30.0


# The reasons of an explorer survivor that no default scope can kill: its lines never run
# there, or it answers every move there as the real core does (or, for a check, reports
# nothing where the real one reports nothing). Both are out of reach of the default scopes.
_UNREACHED = "unreached"
_UNCHANGED = "unchanged"
OUT_OF_REACH = (_UNREACHED, _UNCHANGED)


def _replayed(
    mutants: Sequence[Mutant],
    base: Baseline,
    options: Options,
    workdir: Path,
    journal: Journal | None = None,
) -> dict[str, dict[str, Any]]:
    """Replays (`schedspec.explore.replay`), scope by scope, smallest first: for a mutant of
    `invariants`, its explorer column, until a scope kills it; for a mutant of `step`, the
    first scope where it answers a step otherwise, from which on it must be explored (its
    report then has the status `INFECTED` and that scope). A mutant that no scope tells apart
    survives as `_UNCHANGED`, one whose lines no scope runs as `_UNREACHED`. Each scope's
    verdict on each mutant is journaled as soon as that scope is replayed, and taken from the
    journal when it is there, so that an interrupted replay resumes scope by scope."""
    reports: dict[str, dict[str, Any]] = {}
    seconds = dict.fromkeys((m.id for m in mutants), 0.0)

    def judge(m: Mutant, name: str, result: dict[str, Any]) -> None:
        seconds[m.id] += float(result.get("seconds", 0.0))
        if result.get("status") != SURVIVED:
            reports[m.id] = {**result, "from": name}

    for entry in base.scopes:
        name = entry["name"]
        here = tuple(
            m for m in mutants if m.id not in reports and name in reached(base, m, options.skip)
        )
        if journal is not None:
            for m in here:
                found = journal.replay(m, name)
                if found is not None:
                    judge(m, name, found)
            here = tuple(m for m in here if journal.replay(m, name) is None)
        if not here:
            continue
        plan, _ = _plan(base, options, (name,))
        job = _Job(
            "record", None, None, plan, mutants=here, width=options.jobs,
            memory_mb=options.memory_mb,
        )  # fmt: skip
        (recorded,) = _pool([job], 1, workdir, options.memory_mb)
        for m in here:
            result = recorded.get("results", {}).get(m.id)
            if result is None:
                # The record child itself failed: no verdict on any of its mutants.
                detail = f"recording {name} failed: {_outcome(recorded).describe()}"
                result = {"status": ERROR, "reason": "harness", "detail": detail[:300]}
            elif journal is not None:
                journal.record_replay(m, name, result)
            judge(m, name, result)
    for m in mutants:
        if m.id not in reports:
            reason = _UNCHANGED if reached(base, m, options.skip) else _UNREACHED
            reports[m.id] = {"status": SURVIVED, "reason": reason}
        reports[m.id]["seconds"] = seconds[m.id]
    return reports


def _selection_flags(selection: Sequence[str]) -> list[str]:
    """The options of a pytest selection without its paths, which a list of tests replaces."""
    valued = {"-m", "-k", "-p", "-c", "-o", "-W", "--deselect", "--ignore", "--rootdir"}
    flags: list[str] = []
    taking = False
    for arg in selection:
        if taking or arg.startswith("-"):
            flags.append(arg)
            taking = not taking and arg in valued
    return flags


def _tests_for(base: Baseline, mutant: Mutant) -> list[str] | None:
    """The tests of the selection that run a line of `mutant`'s node, in their order; None
    where a line runs outside any test (at import or collection): then the whole selection."""
    assert base.tests_reach is not None
    if mutant.line < 1:
        return None
    by_line = base.tests_reach.get(mutant.file, {})
    numbers: set[int] = set()
    for line in range(mutant.line, mutant.end_line + 1):
        numbers.update(by_line.get(str(line), ()))
    if -1 in numbers:
        return None
    return [base.tests_order[n] for n in sorted(numbers)]


Progress = Callable[[MutantResult, int, int], None]  # a finished mutant, done, total


class Journal:
    """A run's results as they come, so that an interrupted run can be resumed (see the module
    docstring). Lines: {"key", "tests"}, then {"baseline", "lines"} (the last one wins),
    {"mutant", ...}, {"replay", "scope", ...}: one scope's replay verdict on a mutant not yet
    finished, and {"explored", ...}: the explorer's verdict on a survivor whose tests are to
    run again.

    `key` (`journal_key`) says what the explorer's verdicts depend on: the code. `tests`
    (`tests_key`) says what the tests column depends on: the selection and the tests' code. A
    journal of another `key` is started afresh; one of other `tests` keeps every explorer
    verdict and, of the tests column, only the kills by a test whose file is unchanged, with
    all it imports (`files`, `test_file_keys`: a test that failed on a mutant fails again);
    the other survivors of the explorer are tested again, after the unmutated selection is
    measured again (the file is rewritten so). `lines`
    (`lines_key`) says where the mutated files' lines are, on which the baseline's coverage
    depends: a baseline of other lines is kept only to report (`baseline_current` is then
    False), and is measured again before any mutant that is left is judged."""

    def __init__(
        self,
        path: Path,
        key: str,
        lines: str = "",
        tests: str = "",
        files: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.tests = tests
        self.files = files or {}
        self.lines = lines
        self.baseline: Baseline | None = None
        self.baseline_current = False
        self._results: dict[str, dict[str, Any]] = {}
        self._replays: dict[tuple[str, str], dict[str, Any]] = {}
        self._explored: dict[str, dict[str, Any]] = {}
        text = path.read_text().splitlines() if path.exists() else []
        head = json.loads(text[0]) if text else {}
        self.resumed = head.get("key") == key
        if not self.resumed:
            self._rewrite()
            return
        for line in text[1:]:
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short when the last run was killed
                continue
            if "baseline" in entry:
                self.baseline = Baseline(**entry["baseline"])
                self.baseline_current = entry.get("lines") == lines
            elif "mutant" in entry:
                self._results[entry["mutant"]] = entry
            elif "replay" in entry:
                self._replays[entry["replay"], entry["scope"]] = entry
            elif "explored" in entry:
                self._explored[entry["explored"]] = entry
        if head.get("tests") != tests:
            self._retest(head.get("files", {}))
        elif head.get("files") != self.files:
            self._rewrite()  # the same tests: their files are the ones the verdicts were of

    def _retest(self, before: dict[str, str]) -> None:
        """Forget the tests column but the kills by unchanged test files, keep the explorer's:
        rewrite the journal so."""
        for name, entry in list(self._results.items()):
            tests = entry.get("tests") or {}
            killer = tests.get("check", "").partition("::")[0]
            kept = before.get(killer)
            if (
                tests.get("status") == KILLED
                and kept is not None
                and kept == self.files.get(killer)
            ):
                continue
            if entry["explorer"]["status"] == SURVIVED:
                del self._results[name]
                self._explored[name] = {
                    "explored": name,
                    "description": entry["description"],
                    "explorer": entry["explorer"],
                    # The test that killed it, run first next time (`first_test`).
                    "killer": tests.get("check", ""),
                }
        if self.baseline is not None:
            self.baseline = replace(
                self.baseline,
                tests_seconds=None,
                tests_problem="",
                tests_order=[],
                tests_reach=None,
            )
        self._rewrite()

    def _rewrite(self) -> None:
        """Write the journal anew: the keys, then what is kept of it."""
        entries: list[dict[str, Any]] = [
            {"key": self.key, "tests": self.tests, "files": self.files}
        ]
        if self.baseline is not None:
            lines = self.lines if self.baseline_current else ""
            entries.append({"baseline": asdict(self.baseline), "lines": lines})
        # A replay only serves a mutant whose explorer verdict is still to come.
        decided = self._results.keys() | self._explored.keys()
        replays = [e for (name, _), e in self._replays.items() if name not in decided]
        entries += [*self._results.values(), *replays, *self._explored.values()]
        new = self.path.with_suffix(".tmp")
        new.write_text("".join(json.dumps(e) + "\n" for e in entries))
        new.replace(self.path)

    def _append(self, entry: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def save_baseline(self, base: Baseline) -> None:
        self.baseline = base
        self.baseline_current = True
        self._append({"baseline": asdict(base), "lines": self.lines})

    def result(self, mutant: Mutant, equivalent: Equivalent | None) -> MutantResult | None:
        """The journaled result of `mutant`, if its description is still the same."""
        entry = self._results.get(mutant.id)
        if entry is None or entry.get("description") != mutant.description:
            return None
        tests = entry.get("tests")
        return MutantResult(
            mutant,
            Outcome(**entry["explorer"]),
            None if tests is None else Outcome(**tests),
            equivalent,
        )

    def record(self, result: MutantResult) -> None:
        tests = result.tests
        self._append(
            {
                "mutant": result.mutant.id,
                "description": result.mutant.description,
                "explorer": asdict(result.explorer),
                "tests": None if tests is None else asdict(tests),
            }
        )

    def replay(self, mutant: Mutant, scope: str) -> dict[str, Any] | None:
        """The journaled verdict of replaying `scope` with `mutant` (see `_replayed`), if its
        description is still the same."""
        entry = self._replays.get((mutant.id, scope))
        if entry is None or entry.get("description") != mutant.description:
            return None
        return dict(entry["result"])

    def record_replay(self, mutant: Mutant, scope: str, result: dict[str, Any]) -> None:
        entry = {
            "replay": mutant.id,
            "description": mutant.description,
            "scope": scope,
            "result": result,
        }
        self._replays[mutant.id, scope] = entry
        self._append(entry)

    def explored(self, mutant: Mutant) -> Outcome | None:
        """The journaled explorer verdict on `mutant`, a survivor whose tests are to run again,
        if its description is still the same."""
        entry = self._explored.get(mutant.id)
        if entry is None or entry.get("description") != mutant.description:
            return None
        return Outcome(**entry["explorer"])

    def first_test(self, mutant: Mutant) -> str:
        """The test that killed `mutant` before the tests changed, or "": the likeliest to kill
        it again, so run first (a killed mutant's tests stop at the first failure)."""
        return str(self._explored.get(mutant.id, {}).get("killer", ""))

    @property
    def journaled(self) -> int:
        return len(self._results)


def journal_key(options: Options) -> str:
    """A digest of what the explorer's verdicts depend on: the options but the tests selection
    and the jobs, the scopes, and every source file the explorer imports (`judging_sources`),
    each by its code alone (`_code_digest`), so that a docstring or a comment keeps them."""
    explorer = replace(options, tests=None, jobs=1)  # how many at a time changes no verdict
    return _digest(
        repr(explorer), [*judging_sources(explorer), *sorted((ROOT / "models").glob("*.toml"))]
    )


def tests_key(options: Options) -> str:
    """A digest of what the tests column depends on besides the explorer's verdicts: the
    selection, its test files, and every source file they import. A change here keeps the
    explorer's verdicts and tests the explorer's survivors again (`Journal`)."""
    if options.tests is None:
        return ""
    return _digest(repr(options.tests), judging_sources(options, explorer=False))


def test_file_keys(options: Options) -> dict[str, str]:
    """For each test file of the selection, a digest of its code and of all it imports (as
    `tests_key` digests the whole selection): a kill by one of its tests stands while its key
    does (`Journal`)."""
    if options.tests is None:
        return {}
    named = [a for a in options.tests if a.endswith(".py")]
    paths = named or [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").glob("test_*.py"))]
    return {
        path: _digest(path, judging_sources(replace(options, tests=(path,)), explorer=False))
        for path in paths
    }


def _digest(text: str, paths: Sequence[Path]) -> str:
    digest = hashlib.sha256(text.encode())
    for path in paths:
        digest.update(str(path.relative_to(ROOT)).encode())
        if not path.exists():
            continue
        if path.suffix == ".py":
            digest.update(_code_digest(path.read_text()))
        else:
            digest.update(path.read_bytes())
    return digest.hexdigest()


def lines_key() -> str:
    """A digest of the mutated files byte for byte: their lines place the mutants and the
    baseline's coverage, so a baseline is reused only for the very same lines."""
    digest = hashlib.sha256()
    for name in TARGETS:
        path = CORE_DIR / f"{name}.py"
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def _code_digest(source: str) -> bytes:
    """The module's syntax tree without its docstrings (comments are not in the tree), or the
    source itself where it does not parse: what can change a verdict, and not what documents
    it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source.encode()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


# Imported by a child to learn which sources judge a mutant (`judging_sources`).
_IMPORTS = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    importlib.import_module(name)
files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
print(json.dumps(sorted(f for f in files if f)))
"""


def judging_sources(options: Options, explorer: bool = True) -> list[Path]:
    """The source files whose code can change a verdict: the modules of the package that the
    explorer imports (`explorer`), or else the tests of the selection (every test file, when it
    names none), found by importing them in a child, with those test files, `conftest.py` and
    the helpers they import. Not the harness's own `mutscore.py` (a change to how it decides
    must start a run afresh, by deleting the journal), and not the rest of the package (the
    command line, the conformance fuzzer, the shell's runner when no test of the selection uses
    it): a change there keeps the journal, so that a run longer than a session resumes in the
    next one."""
    tests: list[Path] = []
    if explorer:
        modules = ["schedspec.explore.search", "schedspec.explore.replay"]
    else:
        named = [a for a in options.tests or () if a.endswith(".py")]
        tests = [ROOT / a for a in named] if named else sorted((ROOT / "tests").glob("test_*.py"))
        modules = ["conftest", *(t.stem for t in tests)]
    return _imported_sources(modules, tests)


def fuzz_key() -> str:
    """A digest of what the fuzz column's verdicts depend on besides the mutant: every source
    file the oracle child imports (the fuzzer, its strategies, the reference, the plain
    implementation, the core), by its code alone. `benchmarks/fuzz_seeds.py --journal`
    resumes only a journal of the same key."""
    modules = ["schedspec.conformance." + m for m in ("fuzz", "reference", "runner")]
    return _digest("fuzz", _imported_sources(modules, []))


def _imported_sources(modules: Sequence[str], tests: Sequence[Path]) -> list[Path]:
    """The package's source files (and test files) loaded once `modules` are imported in a
    fresh interpreter, with `tests`, and not this harness."""
    tests_dir = ROOT / "tests"
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS, str(tests_dir), *modules],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    harness = Path(__file__).resolve()
    found = {Path(f).resolve() for f in json.loads(done.stdout)}
    package = (ROOT / "src" / "schedspec").resolve()
    return sorted(
        f
        for f in found | {t.resolve() for t in tests}
        if f != harness and (f.is_relative_to(package) or f.is_relative_to(tests_dir.resolve()))
    )


def run(
    mutants: Sequence[Mutant],
    options: Options = Options(),
    *,
    equivalents: Sequence[Equivalent] = (),
    progress: Progress | None = None,
    base: Baseline | None = None,
    files: Sequence[str] | None = None,
    journal: Journal | None = None,
) -> Report:
    """Run every mutant through the explorer, and the explorer's survivors through the tests.
    `files` are the files the report has a row for (by default, those of the mutants).

    A mutant is explored only on the scopes that run one of its lines (`reached`); one of
    `invariants` is judged by replaying the explorer's check calls (`_replayed`); a survivor
    is tested only by the tests that run one of its lines (`_tests_for`)."""
    started = time.monotonic()
    listed = {e.id: e for e in equivalents}
    files = tuple(dict.fromkeys(files or [m.file for m in mutants]))
    for file in dict.fromkeys(m.file for m in mutants):
        file_mutants(file)  # enumerated before forking, so that no child enumerates again
    with tempfile.TemporaryDirectory(prefix="schedspec-mutscore-") as tmp:
        workdir = Path(tmp)
        earlier = {}
        explored_before: dict[str, Outcome] = {}  # explorer verdicts whose tests are to run
        if journal is not None:
            for m in mutants:
                found = journal.result(m, listed.get(m.id))
                if found is not None:
                    earlier[m.id] = found
                elif (kept := journal.explored(m)) is not None:
                    explored_before[m.id] = kept
        mutants_left = [m for m in mutants if m.id not in earlier]
        to_explore = [m for m in mutants_left if m.id not in explored_before]
        if base is None and journal is not None and (journal.baseline_current or not mutants_left):
            base = journal.baseline
        if base is None:
            base = baseline(options, workdir)
        if journal is not None and journal.baseline is not base:
            journal.save_baseline(base)
        replaying = [m for m in to_explore if options.replay and m.file in REPLAYED]
        replayed = _replayed(replaying, base, options, workdir, journal)
        queue: list[_Job] = []
        decided = [(m, explored_before[m.id]) for m in mutants_left if m.id in explored_before]
        for m in to_explore:
            scopes = reached(base, m, options.skip)
            verdict = replayed.get(m.id)
            if verdict is not None and verdict["status"] == INFECTED:
                # Explored for real from the first scope that tells it apart.
                scopes = scopes[scopes.index(verdict["from"]) :]
                plan, deadline = _plan(base, options, scopes)
                queue.append(_Job("explore", m, deadline, plan))
            elif verdict is not None:
                decided.append((m, _outcome(verdict)))
            elif not scopes:
                decided.append((m, Outcome(SURVIVED, _UNREACHED)))
            else:
                plan, deadline = _plan(base, options, scopes)
                queue.append(_Job("explore", m, deadline, plan))
        results: list[dict[str, Any]] = [{} for _ in queue]
        by_mutant: dict[str, MutantResult] = {}
        waiting_for_tests: list[Mutant] = []
        done = 0

        def tests_job(mutant: Mutant | None) -> _Job:
            assert options.tests is not None
            if mutant is None:  # the unmutated selection, under coverage
                return _Job("tests", None, None, selection=options.tests, coverage=True)
            limit = None
            if base is not None and base.tests_seconds is not None:
                limit = options.timeout_factor * base.tests_seconds + options.timeout_slack
            return _Job("tests", mutant, limit, selection=options.tests)

        def finish(result: MutantResult, journaled: bool = False) -> None:
            nonlocal done
            done += 1
            by_mutant[result.mutant.id] = result
            if journal is not None and not journaled:
                journal.record(result)
            if progress is not None:
                progress(result, done, len(mutants))

        def test(mutant: Mutant) -> list[_Job]:
            """The tests job of an explorer survivor, or none if no test runs its lines."""
            assert base is not None and options.tests is not None
            tests = _tests_for(base, mutant) if options.skip else None
            if tests == []:
                result = by_mutant.pop(mutant.id)
                detail = "no test of the selection runs its lines"
                result.tests = Outcome(SURVIVED, _UNREACHED, detail=detail)
                finish(result)
                return []
            job = tests_job(mutant)
            if tests is not None:
                first = journal.first_test(mutant) if journal is not None else ""
                if first in tests:
                    tests = [first, *(t for t in tests if t != first)]
                job.selection = (*_selection_flags(options.tests), *tests)
            return [job]

        def explored(mutant: Mutant, outcome: Outcome) -> list[_Job]:
            """What follows the explorer column of `mutant`: nothing, or its tests."""
            assert base is not None
            result = MutantResult(mutant, outcome, equivalent=listed.get(mutant.id))
            if result.explorer.status != SURVIVED or result.equivalent is not None:
                finish(result)
                return []
            if options.tests is None or base.tests_problem:
                finish(result)
                return []
            by_mutant[mutant.id] = result  # finished once the tests have run
            if base.tests_reach is not None:
                return test(mutant)
            waiting_for_tests.append(mutant)
            if len(waiting_for_tests) == 1:
                return [tests_job(None)]
            return []

        def more(index: int, report: dict[str, Any]) -> list[_Job]:
            assert base is not None
            job = queue[index]
            if job.kind == "tests" and job.mutant is None:
                # The unmutated selection: its time sets the budget, its failure voids the column,
                # and which test runs which line decides what each survivor runs.
                if report.get("status") == SURVIVED:
                    base.tests_seconds = round(float(report["seconds"]), 2)
                    base.tests_order = list(report["order"])
                    base.tests_reach = report["reach"]
                    if journal is not None:
                        journal.save_baseline(base)
                    jobs = [j for m in waiting_for_tests for j in test(m)]
                else:
                    base.tests_problem = (
                        f"the unmutated selection fails ({_outcome(report).describe()}):"
                        " the tests column is not measured"
                    )
                    jobs = []
                    for m in waiting_for_tests:
                        finish(by_mutant.pop(m.id))
                waiting_for_tests.clear()
                return jobs
            assert job.mutant is not None
            if job.kind == "tests":
                result = by_mutant.pop(job.mutant.id)
                result.tests = _outcome(report)
                finish(result)
                return []
            return explored(job.mutant, _outcome(report))

        for result in earlier.values():
            finish(result, journaled=True)
        for m, outcome in decided:
            for job in explored(m, outcome):
                queue.append(job)
                results.append({})
        if queue:  # empty when every mutant was journaled
            for _ in _pool_iter(queue, options.jobs, workdir, options.memory_mb, results, more):
                pass
    ordered = [by_mutant[m.id] for m in mutants]
    report = Report(files, base, ordered, options, round(time.monotonic() - started, 2))
    for r in ordered:
        if r.equivalent is not None and r.explorer.status == KILLED:
            report.problems.append(
                f"{r.mutant.id} is listed as equivalent but the explorer kills it: "
                f"{r.explorer.describe()}"
            )
        for column in (r.explorer, r.tests):
            if column is not None and column.status == ERROR:
                report.problems.append(f"{r.mutant.id}: harness error: {column.detail}")
    if base.tests_problem:
        report.problems.append(base.tests_problem)
    return report


def check_equivalents(
    path: Path = EQUIVALENTS, options: Options = Options(tests=None)
) -> list[str]:
    """Every listed equivalent must still mean the examined mutant and survive the explorer;
    the problems, or an empty list."""
    entries = load_equivalents(path)
    problems = stale_equivalents(entries)
    if problems:
        return problems
    by_id = {m.id: m for e in entries for m in file_mutants(e.id.split(":")[0]).mutants}
    mutants = [by_id[e.id] for e in entries]
    if not mutants:
        return []
    report = run(mutants, Options(options.scopes, options.jobs, None), equivalents=entries)
    return report.problems


# The report.


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f}%"


def _mean(values: Sequence[float]) -> str:
    return f"{sum(values) / len(values):.1f} s" if values else "-"


def to_json(report: Report) -> dict[str, Any]:
    summary: dict[str, dict[str, Any]] = {}
    for file in (*report.files, None):
        counts = report.counts(file)
        summary[file or "all"] = {
            **counts,
            "explorer_kill_rate": kill_rate(counts),
            "explorer_kill_rate_where_reached": kill_rate(counts, reached=True),
        }

    def outcome(o: Outcome | None) -> dict[str, Any] | None:
        if o is None:
            return None
        return {
            "status": o.status,
            "reason": o.reason,
            "check": o.check,
            "scope": o.scope,
            "detail": o.detail,
            "seconds": o.seconds,
        }

    return {
        "format": "schedspec-mutscore/1",
        "files": list(report.files),
        "selection": report.selection,
        "scopes": report.baseline.scopes,
        "tests_selection": list(report.options.tests) if report.options.tests else None,
        "baseline_seconds": report.baseline.seconds,
        "tests_baseline_seconds": report.baseline.tests_seconds,
        "seconds": report.seconds,
        "summary": summary,
        "problems": report.problems,
        "mutants": [
            {
                "id": r.mutant.id,
                "file": r.mutant.file,
                "function": r.mutant.function,
                "line": r.mutant.line,
                "description": r.mutant.description,
                "context": r.mutant.context,
                "column": r.column,
                "explorer": outcome(r.explorer),
                "tests": outcome(r.tests),
                "equivalent": r.equivalent.reason if r.equivalent else None,
            }
            for r in report.results
        ],
    }


def to_markdown(report: Report) -> str:
    header = (
        "| file | killed by the explorer | by tests only | of which out of reach of the scopes"
        " | equivalent | survived | total | explorer kill rate | where reached |"
    )
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for file in (*report.files, None):
        c = report.counts(file)
        name = file or "all"
        lines.append(
            f"| {name} | {c['explorer']} | {c['tests']} | {c['out_of_reach']} | {c['equivalent']}"
            f" | {c['survived']} | {c['total']} | {_pct(kill_rate(c))}"
            f" | {_pct(kill_rate(c, reached=True))} |"
        )
    lines.append("")
    lines += _timing(report)
    survivors = [r for r in report.results if r.column == "survived"]
    if survivors:
        lines += ["", "Survivors:", ""]
        lines += [
            f"- `{r.mutant.id}` (line {r.mutant.line}): `{r.mutant.description}`" for r in survivors
        ]
    by_tests = [r for r in report.results if r.column == "tests"]
    if by_tests:
        lines += ["", "Killed by the tests only:", ""]
        lines += [
            f"- `{r.mutant.id}` (line {r.mutant.line}): `{r.mutant.description}`"
            f" by {r.tests.check if r.tests else ''}"
            for r in by_tests
        ]
    if report.problems:
        lines += ["", "Problems:", ""] + [f"- {p}" for p in report.problems]
    return "\n".join(lines) + "\n"


def _timing(report: Report) -> list[str]:
    killed = [r.explorer.seconds for r in report.results if r.column == "explorer"]
    survivors = [
        r.explorer.seconds + (r.tests.seconds if r.tests else 0.0)
        for r in report.results
        if r.explorer.status == SURVIVED
    ]
    tests = report.baseline.tests_seconds
    return [
        f"{len(report.results)} mutants in {report.seconds:.0f} s with {report.options.jobs}"
        f" jobs; unmutated explorer run {report.baseline.seconds:.1f} s"
        + (f", unmutated tests {tests:.1f} s" if tests is not None else "")
        + f"; per mutant killed by the explorer {_mean(killed)}, per explorer survivor"
        f" {_mean(survivors)} (explorer and tests)."
    ]


def print_report(report: Report, out: Any = None) -> None:
    out = out or sys.stdout
    head = (
        "file", "explorer", "tests only", "out of reach", "equivalent", "survived", "total",
        "kill rate", "where reached",
    )  # fmt: skip
    rows = []
    for file in (*report.files, None):
        c = report.counts(file)
        rows.append(
            (
                file or "all",
                c["explorer"],
                c["tests"],
                c["out_of_reach"],
                c["equivalent"],
                c["survived"],
                c["total"],
                _pct(kill_rate(c)),
                _pct(kill_rate(c, reached=True)),
            )
        )
    widths = [max(len(str(x)) for x in column) for column in zip(head, *rows, strict=True)]
    for row in (head, *rows):
        cells = [
            str(x).ljust(w) if i == 0 else str(x).rjust(w)
            for i, (x, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells), file=out)
    print("\n".join(_timing(report)), file=out)
    if report.options.tests is None:
        print("(tests column not run)", file=out)
    for title, column in (("Killed by the tests only", "tests"), ("Survived", "survived")):
        chosen = [r for r in report.results if r.column == column]
        if chosen:
            print(f"\n{title}:", file=out)
        for r in chosen:
            print(f"  {r.mutant.id} (line {r.mutant.line}): {r.mutant.description}", file=out)
            print(f"      in: {r.mutant.context}", file=out)
            if r.tests is not None and column == "tests":
                print(f"      by: {r.tests.check or r.tests.detail}", file=out)
    for problem in report.problems:
        print(f"problem: {problem}", file=out)


# The command line.


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m schedspec.explore.mutscore", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--files", default=",".join(TARGETS), help="target files, by stem")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sample", type=int, default=None, help="run a fixed sample of N")
    which.add_argument("--ids", nargs="+", default=None, help="run exactly these mutants")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--jobs", type=int, default=2, help="children at a time")
    parser.add_argument(
        "--tests-selection",
        default=shlex.join(DEFAULT_TESTS),
        help="pytest arguments for the tests column (one shell-quoted string)",
    )
    parser.add_argument("--no-tests", action="store_true", help="the explorer column only")
    parser.add_argument(
        "--no-replay",
        action="store_true",
        help="explore mutants of invariants and step too, instead of replaying first",
    )
    parser.add_argument(
        "--scopes",
        default=None,
        help="comma-separated scopes (default: the default scopes of models/)",
    )
    parser.add_argument("--timeout-factor", type=float, default=3.0)
    parser.add_argument("--timeout-slack", type=float, default=5.0)
    parser.add_argument("--equivalents", type=Path, default=EQUIVALENTS)
    parser.add_argument(
        "--unobservable",
        type=Path,
        default=UNOBSERVABLE,
        help="with --oracle: mutants no reply of the protocol can show, each with its reason",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument(
        "--journal",
        type=Path,
        default=None,
        help="write results there as they come, and resume from it (module docstring)",
    )
    parser.add_argument(
        "--oracle",
        choices=ORACLE_COLUMNS,
        default=None,
        help="an oracle's column instead: each mutant of step, graph and state behind the"
        " reference adapter, judged by the conformance vectors alone, or by the fuzzing alone",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the report as JSON")
    parser.add_argument("--markdown", type=Path, default=None, help="and as Markdown")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    files = tuple(f.strip() for f in args.files.split(",") if f.strip())
    unknown = sorted(set(files) - set(TARGETS))
    if unknown:
        print(f"unknown files {unknown}; known: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    if args.ids is not None:
        # Only the files the ids name are enumerated (and reported).
        files = tuple(dict.fromkeys(i.partition(":")[0] for i in args.ids))
        wrong = sorted(set(files) - set(TARGETS))
        by_id = {m.id: m for m in all_mutants([f for f in files if f in TARGETS])}
        missing = [i for i in args.ids if i not in by_id]
        if missing or wrong:
            print(f"no such mutants: {', '.join(missing)} (see --list)", file=sys.stderr)
            return 2
        mutants = [by_id[i] for i in dict.fromkeys(args.ids)]
        selection = "ids " + " ".join(m.id for m in mutants)
    else:
        mutants = all_mutants(files)
        selection = f"all of {','.join(files)}"
    if args.list:
        for m in mutants:
            print(f"{m.id}\tline {m.line}\t{m.description}")
        return 0
    if args.sample is not None and args.ids is None:
        mutants = sample(mutants, args.sample, args.seed)
        selection = f"sample {args.sample} of {','.join(files)} with seed {args.seed}"
    equivalents = load_equivalents(args.equivalents)
    if args.oracle is not None:
        return _oracle_main(args, mutants, selection, equivalents)
    # Every entry is checked, not only those of the selection: a stale entry is found by any
    # run, however small (the enumeration of the files it names is all it costs).
    problems = stale_equivalents(equivalents)
    scopes = None
    if args.scopes:
        scopes = tuple(s.strip() for s in args.scopes.split(",") if s.strip())
    tests = None if args.no_tests else tuple(shlex.split(args.tests_selection))
    options = Options(
        scopes=scopes,
        jobs=max(1, args.jobs),
        tests=tests,
        timeout_factor=args.timeout_factor,
        timeout_slack=args.timeout_slack,
        replay=not args.no_replay,
    )
    killed = 0
    live = sys.stderr.isatty()

    def progress(result: MutantResult, done: int, total: int) -> None:
        nonlocal killed
        killed += result.column in ("explorer", "tests")
        line = (
            f"[{done}/{total}] killed {killed}  {result.mutant.id}: {result.column}"
            f" ({(result.tests or result.explorer).describe()[:90]})"
        )
        print(("\r\x1b[2K" if live else "") + line, file=sys.stderr, end="" if live else "\n")

    journal = None
    if args.journal is not None:
        journal = Journal(
            args.journal,
            journal_key(options),
            lines_key(),
            tests_key(options),
            test_file_keys(options),
        )
    base = None
    if journal is not None:
        # A baseline of other lines serves a journal that decided every mutant, to report.
        left = [m for m in mutants if journal.result(m, None) is None]
        if journal.baseline_current or not left:
            base = journal.baseline
    if journal is not None and journal.resumed:
        print(
            f"resuming from {args.journal}: {journal.journaled} mutants journaled"
            f"{'' if base is None else ', the unmutated run too'}",
            file=sys.stderr,
        )
    if base is None:
        print(
            f"{len(mutants)} mutants ({selection}); exploring the unmutated core first",
            file=sys.stderr,
        )
        try:
            base = baseline(options)
        except BaselineError as problem:
            print(problem, file=sys.stderr)
            return 2
    scopes_line = ", ".join(f"{s['name']} {s['seconds']:.1f} s" for s in base.scopes)
    print(f"unmutated: {base.seconds:.0f} s ({scopes_line})", file=sys.stderr)
    report = run(
        mutants,
        options,
        equivalents=equivalents,
        progress=progress,
        base=base,
        files=files,
        journal=journal,
    )
    if live:
        print(file=sys.stderr)
    report.selection = selection
    report.problems[:0] = problems
    print_report(report)
    if args.json is not None:
        args.json.write_text(json.dumps(to_json(report), indent=1) + "\n")
    if args.markdown is not None:
        args.markdown.write_text(to_markdown(report))
    return 0 if report.ok else 1


# The oracle's columns judge behaviour: `invariants` only checks states and decides nothing.
ORACLE_TARGETS = ("step", "graph", "state")


def _oracle_main(
    args: argparse.Namespace,
    mutants: Sequence[Mutant],
    selection: str,
    equivalents: Sequence[Equivalent],
) -> int:
    """`--oracle vectors|fuzz`: that column alone (issue 11, section 2), its own report."""
    from ..conformance.corpus import load_corpus
    from ..conformance.options import DEFAULT_EXAMPLES

    column = str(args.oracle)
    mutants = [m for m in mutants if m.file in ORACLE_TARGETS]
    vectors = load_corpus() if column == "vectors" else []
    judge = f"{len(vectors)} vectors" if vectors else f"fuzzing, {DEFAULT_EXAMPLES} programs"
    equivalent = {e.id for e in equivalents}
    # Listed as beyond any reply (models/mutation/unobservable.toml): their own column, and a
    # listed mutant the oracle kills is a problem, as is one whose id means another mutant now.
    listed = load_equivalents(args.unobservable, "unobservable")
    problems = stale_equivalents(listed)
    unobservable = {e.id for e in listed} - equivalent
    live = sys.stderr.isatty()
    killed = 0

    def progress(mutant: Mutant, outcome: Outcome, done: int) -> None:
        nonlocal killed
        killed += outcome.status == KILLED
        line = f"[{done}/{len(mutants)}] killed {killed}  {mutant.id}: {outcome.describe()[:90]}"
        print(("\r\x1b[2K" if live else "") + line, file=sys.stderr, end="" if live else "\n")

    started = time.monotonic()
    found = oracle_column(column, mutants, vectors, max(1, args.jobs), progress=progress)
    if live:
        print(file=sys.stderr)
    rows = []
    for file in (*ORACLE_TARGETS, None):
        mine = [(m, o) for m, o in found if file is None or m.file == file]
        if not mine:
            continue
        dead = sum(o.status == KILLED for _, o in mine)
        eq = sum(o.status != KILLED and m.id in equivalent for m, o in mine)
        hidden = sum(o.status == SURVIVED and m.id in unobservable for m, o in mine)
        errors = sum(o.status == ERROR for _, o in mine)
        alive = len(mine) - dead - eq - hidden - errors
        judged = len(mine) - eq - hidden
        rate = _pct(dead / judged if judged else None)
        rows.append(
            f"| {file or 'all'} | {dead} | {eq} | {hidden} | {alive} | {errors} | {len(mine)}"
            f" | {rate} |"
        )
    problems += [
        f"{m.id} is listed as not observable, but the {column} kill it: {o.describe()}"
        for m, o in found
        if o.status == KILLED and m.id in unobservable
    ]
    survivors = [
        (m, o)
        for m, o in found
        if o.status == SURVIVED and m.id not in equivalent and m.id not in unobservable
    ]
    programs = sorted(
        int(o.check.split()[-1]) for _, o in found if o.reason == "fuzz" and o.status == KILLED
    )
    lines = [
        f"The {column} column: {judge}, {selection}, {time.monotonic() - started:.0f} s",
        "",
        f"| file | killed by the {column} | equivalent | not observable | survived | error"
        " | total | kill rate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "The kill rate is over the mutants neither equivalent nor listed as not observable"
        " through the protocol (models/mutation/unobservable.toml, each with its reason).",
    ]
    if programs:
        lines += ["", f"Median programs to the first divergence: {programs[len(programs) // 2]}"]
    if survivors:
        lines += ["", "Survivors:", ""]
        lines += [f"- `{m.id}` (line {m.line}): `{m.description}`" for m, _ in survivors]
    if problems:
        lines += ["", "Problems:", ""]
        lines += [f"- {problem}" for problem in problems]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text)
    if args.json is not None:
        entries = [
            {
                "id": m.id,
                "file": m.file,
                "line": m.line,
                "description": m.description,
                "equivalent": m.id in equivalent,
                "unobservable": m.id in unobservable,
                "status": o.status,
                "reason": o.reason,
                "check": o.check,
                "detail": o.detail,
                "seconds": o.seconds,
            }
            for m, o in found
        ]
        document = {"format": "schedspec-oracle-mutscore/1", "column": column, "mutants": entries}
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    failed = survivors or problems or any(o.status == ERROR for _, o in found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
