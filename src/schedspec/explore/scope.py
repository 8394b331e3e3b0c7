"""Bounded scopes: the data files in `models/`, and the TLC model generated from each.

A scope is everything both checkers need to explore the same finite machine: the tasks, the
dependency lists each submission of a task may carry (in submitted order), a bound on each
task's generations, the concurrency limit, the workers, and which optional client moves are
enabled. It is written once, as TOML, and read by the explorer (`explore.model`) and by TLC
through the `MC<Name>.tla` / `MC<Name>.cfg` pair that `tla_module` and `tla_config` generate
from it. The generated files are committed in `tla/models/` for readers of the TLA+ side, and a
test regenerates them, so they cannot drift from the scope.

The format (`models/chain.toml`):

    description = "A chain a <- b <- c ..."
    limit = 1                 # max_concurrency (PHASE-2)
    workers = 1               # workers w1, w2, ... that claim and deliver callbacks
    moves = ["Cancel", "Close"]   # optional client moves; Submit, Start, Claim and the
                                  # callbacks are always enabled
    symmetry = ["workers"]    # reductions the explorer and TLC may apply ("workers", "tasks")
    liveness = true           # TLC also checks AllVersionsFinish and ClosingEndsClosed
    expect = ["StartRefused"] # scope-specific expectations (`explore.checks.EXPECTATIONS`)
    default = true            # part of `schedspec verify` without --all
    deadlines = [1, 2]        # leases (LEASE-*): claims and heartbeats set one of these
                              # deadlines, expire(now) is sent for each; needs limit <= 1
    expiry = "requeue"        # the expiry policy (LEASE-4): "requeue" (default) or "fail"
    crash = true              # RESTART-5..7: every state is also served by the reference
                              # server with a journal, crashed and recovered (`explore.crash`)

    [tasks]
    a = { deps = [[]], generations = 2 }   # a may be submitted twice (re-submission)
    b = { deps = [["a"]] }                 # generations default to 1
    c = { deps = [["a", "b"], []] }         # two possible dependency lists

Submitting a task is always possible while the contract allows it and its generation bound is
not reached; late, duplicate and stale callback deliveries are always explored (they are the
adversary the contract is written against), so they are not switches.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import data

MODELS_DIR = data.path("models")
TLA_MODELS_DIR = data.path("tla") / "models"
OPTIONAL_MOVES = ("Cancel", "Close")
REDUCTIONS = ("workers", "tasks")
_KEYS = {
    "description",
    "limit",
    "workers",
    "moves",
    "symmetry",
    "liveness",
    "expect",
    "default",
    "deadlines",
    "expiry",
    "crash",
    "tasks",
}
EXPIRY_POLICIES = ("requeue", "fail")
# The liveness properties of tla/Scheduler.tla that TLC checks on a scope with `liveness`; with
# deadlines, AtLeastOnce too (LEASE-6: under fair expiry, every task reaches a finished version).
LIVENESS = ("AllVersionsFinish", "ClosingEndsClosed")
LEASE_LIVENESS = ("AtLeastOnce",)


class ScopeError(ValueError):
    """A scope file that cannot be read as a scope; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Scope:
    """One bounded scope. `tasks` is in the file's order, which is only a naming order."""

    name: str
    description: str
    tasks: tuple[str, ...]
    dep_choices: dict[str, tuple[tuple[str, ...], ...]]
    max_gen: dict[str, int]
    limit: int
    workers: tuple[str, ...]
    moves: frozenset[str]
    symmetry: frozenset[str]
    liveness: bool
    expect: tuple[str, ...]
    default: bool
    deadlines: tuple[int, ...] = ()
    expiry: str = "requeue"
    crash: bool = False

    @property
    def module(self) -> str:
        return module_name(self.name)


def module_name(scope_name: str) -> str:
    """The TLC model's module name: `chain` -> `MCChain`, `one-slot` -> `MCOneSlot`."""
    return "MC" + "".join(part.capitalize() for part in scope_name.replace("_", "-").split("-"))


def load(path: Path) -> Scope:
    """Read and check one scope file."""
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as problem:
        raise ScopeError(f"{path}: not TOML: {problem}") from None
    return parse(path.stem, data, str(path))


def parse(name: str, data: dict[str, object], where: str = "<scope>") -> Scope:
    """Check `data` field by field; every problem names the file and the field."""

    def fail(message: str) -> ScopeError:
        return ScopeError(f"{where}: {message}")

    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise fail(f"unknown fields {unknown}; known: {sorted(_KEYS)}")
    limit = data.get("limit")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise fail(f"limit must be an int >= 0, got {limit!r}")
    workers = data.get("workers", 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise fail(f"workers must be an int >= 1, got {workers!r}")
    moves = _names(data.get("moves", list(OPTIONAL_MOVES)), OPTIONAL_MOVES, "moves", fail)
    symmetry = _names(data.get("symmetry", []), REDUCTIONS, "symmetry", fail)
    from .checks import EXPECTATIONS  # imported here: checks imports the core, scope does not

    expect = _names(data.get("expect", []), tuple(EXPECTATIONS), "expect", fail)
    deadlines = data.get("deadlines", [])
    if not isinstance(deadlines, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in deadlines
    ):
        raise fail(f"deadlines must be a list of ints >= 0, got {deadlines!r}")
    if deadlines and limit > 1:
        # The TLA+ spec states an expire that ends one lease (tla/Scheduler.tla, ASSUME).
        raise fail(f"a scope with deadlines needs limit <= 1, got {limit}")
    expiry = data.get("expiry", "requeue")
    if expiry not in EXPIRY_POLICIES:
        raise fail(f"expiry must be one of {list(EXPIRY_POLICIES)}, got {expiry!r}")
    tasks_data = data.get("tasks")
    if not isinstance(tasks_data, dict) or not tasks_data:
        raise fail("tasks must be a non-empty table of task id -> { deps, generations }")
    tasks = tuple(tasks_data)
    dep_choices: dict[str, tuple[tuple[str, ...], ...]] = {}
    max_gen: dict[str, int] = {}
    for task, spec in tasks_data.items():
        if not isinstance(spec, dict) or set(spec) - {"deps", "generations"}:
            raise fail(f"tasks.{task} must be a table with deps and optional generations")
        choices = spec.get("deps")
        if not isinstance(choices, list) or not choices:
            raise fail(f"tasks.{task}.deps must be a non-empty list of dependency lists")
        checked = []
        for ds in choices:
            if not isinstance(ds, list) or not all(isinstance(d, str) for d in ds):
                raise fail(f"tasks.{task}.deps: {ds!r} is not a list of task ids")
            if len(set(ds)) != len(ds):
                raise fail(f"tasks.{task}.deps: {ds!r} names an id twice (SUB-2)")
            strangers = sorted(set(ds) - set(tasks))
            if strangers:
                raise fail(f"tasks.{task}.deps: {strangers} are not tasks of the scope")
            checked.append(tuple(ds))
        if len(set(checked)) != len(checked):
            raise fail(f"tasks.{task}.deps lists the same dependency list twice")
        generations = spec.get("generations", 1)
        if not isinstance(generations, int) or isinstance(generations, bool) or generations < 1:
            raise fail(f"tasks.{task}.generations must be an int >= 1, got {generations!r}")
        dep_choices[task] = tuple(checked)
        max_gen[task] = generations
    return Scope(
        name=name,
        description=str(data.get("description", "")),
        tasks=tasks,
        dep_choices=dep_choices,
        max_gen=max_gen,
        limit=limit,
        workers=tuple(f"w{k}" for k in range(1, workers + 1)),
        moves=frozenset(moves),
        symmetry=frozenset(symmetry),
        liveness=bool(data.get("liveness", False)),
        expect=tuple(expect),
        default=bool(data.get("default", True)),
        deadlines=tuple(sorted(set(deadlines))),
        expiry=str(expiry),
        crash=bool(data.get("crash", False)),
    )


def _names(
    value: object, allowed: tuple[str, ...], field: str, fail: Callable[[str], ScopeError]
) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{field} must be a list of names from {list(allowed)}")
    wrong = sorted(set(value) - set(allowed))
    if wrong:
        raise fail(f"{field}: unknown {wrong}; known: {list(allowed)}")
    return list(value)


def scopes(directory: Path | None = None) -> list[Scope]:
    """Every scope in `directory` (by default `models/`), by name. None at all is an error,
    never an empty success: a command that checked nothing must not exit 0."""
    directory = MODELS_DIR if directory is None else directory
    found = [load(p) for p in sorted(directory.glob("*.toml"))]
    if not found:
        raise ScopeError(
            f"no scopes in {directory}: the folder of models is missing or empty (the wheel "
            "carries it in schedspec/_data/models/, a checkout in models/)"
        )
    return found


def find(name: str, directory: Path | None = None) -> Scope:
    """The scope called `name` (a file stem in `models/`, or a path to a .toml file)."""
    directory = MODELS_DIR if directory is None else directory
    path = Path(name)
    if path.suffix != ".toml":
        path = directory / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(p.stem for p in sorted(directory.glob("*.toml")))
        raise ScopeError(f"no scope {name!r} (looked for {path}); known: {known}")
    return load(path)


# The TLC model of a scope.


def _tla_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tla_seq(items: tuple[str, ...]) -> str:
    return "<<" + ", ".join(_tla_string(i) for i in items) + ">>"


def _tla_case(tasks: tuple[str, ...], value: dict[str, str]) -> str:
    if len(tasks) == 1:
        return value[tasks[0]]
    arms = [f"t = {_tla_string(t)} -> {value[t]}" for t in tasks]
    return "CASE " + "\n                      [] ".join(arms)


def tla_module(scope: Scope) -> str:
    """`MC<Name>.tla`: the scope's constants as TLA+ definitions."""
    tasks = "{" + ", ".join(_tla_string(t) for t in scope.tasks) + "}"
    choices = {
        t: "{" + ", ".join(_tla_seq(ds) for ds in scope.dep_choices[t]) + "}" for t in scope.tasks
    }
    gens = {t: str(scope.max_gen[t]) for t in scope.tasks}
    header = f"MODULE {scope.module}"
    dashes = "-" * ((76 - len(header)) // 2)
    lines = [
        f"{dashes} {header} {dashes}",
        f"(* Generated from models/{scope.name}.toml by schedspec models --write; do not edit *)",
    ]
    lines += [f"(* {line} *)" for line in _wrap(scope.description, 72)]
    lines += [
        "EXTENDS Scheduler, TLC",
        "",
        f"MCTask == {tasks}",
        "MCDepChoices == [t \\in MCTask |->",
        f"                    {_tla_case(scope.tasks, choices)}]",
        "MCMaxGen == [t \\in MCTask |->",
        f"                    {_tla_case(scope.tasks, gens)}]",
    ]
    if "workers" in scope.symmetry:
        lines += [
            "",
            "\\* Workers are interchangeable: nothing tells them apart but their identity, so",
            "\\* permuting them maps behaviours to behaviours and preserves every invariant.",
            "WorkerSymmetry == Permutations(Worker)",
        ]
    lines.append("=" * 77)
    return "\n".join(lines) + "\n"


def tla_config(
    scope: Scope,
    *,
    invariants: tuple[str, ...],
    properties: tuple[str, ...],
    symmetry: bool = True,
) -> str:
    """`MC<Name>.cfg`: what TLC checks. Liveness is never combined with symmetry, which TLC
    cannot check soundly; a scope asking for both gets liveness and no symmetry."""
    use_symmetry = symmetry and "workers" in scope.symmetry and not scope.liveness
    lines = [
        f"\\* Generated from models/{scope.name}.toml by schedspec models --write; do not edit",
        "CONSTANTS",
        "    Task <- MCTask",
        "    DepChoices <- MCDepChoices",
        "    MaxGen <- MCMaxGen",
        f"    Limit = {scope.limit}",
        "    Worker = {" + ", ".join(scope.workers) + "}",
        "    Moves = {" + ", ".join(_tla_string(m) for m in sorted(scope.moves)) + "}",
        "    Deadlines = {" + ", ".join(str(d) for d in scope.deadlines) + "}",
        f"    Expiry = {_tla_string(scope.expiry)}",
    ]
    if use_symmetry:
        lines.append("SYMMETRY WorkerSymmetry")
    lines.append("SPECIFICATION Spec")
    lines.append("INVARIANTS")
    lines += [f"    {name}" for name in (*invariants, *scope.expect)]
    lines.append("PROPERTIES")
    liveness: tuple[str, ...] = LIVENESS if scope.liveness else ()
    if scope.liveness and scope.deadlines:
        liveness += LEASE_LIVENESS
    lines += [f"    {name}" for name in (*properties, *liveness)]
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line.ljust(width))
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line.ljust(width))
    return lines


def tla_files(scope: Scope) -> dict[str, str]:
    """The generated TLC model of `scope`: file name -> text (`tla/models/`)."""
    from .checks import TLA_INVARIANTS, TLA_PROPERTIES

    config = tla_config(scope, invariants=TLA_INVARIANTS, properties=TLA_PROPERTIES)
    return {f"{scope.module}.tla": tla_module(scope), f"{scope.module}.cfg": config}


def write_tla_models(directory: Path = TLA_MODELS_DIR) -> list[Path]:
    """Regenerate every scope's TLC model in `directory`; remove models of vanished scopes."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, str] = {}
    for scope in scopes():
        wanted.update(tla_files(scope))
    for stale in directory.glob("MC*.*"):
        if stale.name not in wanted:
            stale.unlink()
    written = []
    for name, text in sorted(wanted.items()):
        path = directory / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written
