"""`schedspec verify`, `schedspec explore` and `schedspec models`.

`verify` is the project's main job: for every default scope of `models/` (or the ones named,
or all with `--all`), it explores the scope over the real core with every check, runs TLC on
the same scope and compares the two state graphs (`agree.compare`); for a scope with
symmetries it also explores the reduced graph. It prints one table, shows a live progress line
with states per second on long runs, writes every counterexample to `traces/` as replayable
JSON and as ITF, and exits non-zero on any violation or disagreement.

`explore SCOPE` runs the explorer alone (with `--reduce`), and `models` lists the scopes or, with
`--write`, regenerates their TLC models in `tla/models/`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .. import tlc
from . import agree, search, trace
from .checks import GRAPH_PROPERTIES, STATE_INVARIANTS, TRANSITION_PROPERTIES
from .scope import Scope, ScopeError, find, scopes, write_tla_models
from .situations import REQUIRED

TRACES_DIR = Path("traces")


def make_console() -> Console:
    """A console; when the output is not a terminal (CI logs, files), wide enough for tables."""
    console = Console()
    return console if console.is_terminal else Console(width=150)


def _selected(names: list[str], every: bool) -> list[Scope]:
    if names:
        return [find(n) for n in names]
    return [s for s in scopes() if s.default or every]


@contextmanager
def _live(console: Console, label: str) -> Iterator[search.Progress]:
    """A live line: scope, states found, states per second, elapsed time."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label)

        def report(states: int, frontier: int, depth: int, seconds: float) -> None:
            rate = states / seconds if seconds > 0 else 0.0
            bar.update(
                task,
                description=f"{label}: {states:,} states, depth {depth}, "
                f"frontier {frontier:,}, {rate:,.0f} states/s",
            )

        yield report


def verify(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="schedspec verify", description=__doc__.split("\n")[0])
    parser.add_argument("scopes", nargs="*", help="scopes of models/ (default: the default ones)")
    parser.add_argument("--all", action="store_true", help="every scope, the long ones too")
    parser.add_argument("--no-tlc", action="store_true", help="explore only, no TLC comparison")
    parser.add_argument("--traces", type=Path, default=TRACES_DIR, help="counterexample dir")
    parser.add_argument("--json", type=Path, default=None, help="also write the table as JSON")
    parser.add_argument("--markdown", type=Path, default=None, help="also write it as Markdown")
    args = parser.parse_args(argv)
    console = make_console()
    try:
        selected = _selected(args.scopes, args.all)
    except ScopeError as problem:
        console.print(f"[red]{problem}[/]")
        return 2
    use_tlc = not args.no_tlc
    if use_tlc:
        try:
            tlc.jar_path(), tlc.java_path(), tlc.spec_path()
        except tlc.TlcUnavailableError as problem:
            console.print(f"[red]{problem}[/] (or run with --no-tlc)")
            return 2
    # The state invariants, the transition properties, the graph properties, AgreesWithNaive.
    checks = len(STATE_INVARIANTS) + len(TRANSITION_PROPERTIES) + len(GRAPH_PROPERTIES) + 1
    rows, failed = [], False
    started = time.monotonic()
    # The scopes are explored two at a time, in processes of their own, and TLC runs beside
    # them, one scope after another on one worker: the machine's two cores stay busy, and each
    # comparison waits only for its own two runs. The largest scopes go first (`estimated_size`),
    # so that no large one is left to run alone at the end. The workers are spawned, not forked:
    # a fork while the TLC thread runs a subprocess can leave a child waiting forever on a lock.
    order = sorted(selected, key=estimated_size, reverse=True)
    explorers = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
    explorations = {scope.name: explorers.submit(_explore, scope, use_tlc) for scope in order}
    tlc_pool = ThreadPoolExecutor(max_workers=1)
    runs = {
        scope.name: tlc_pool.submit(agree.timed_tlc_graph, scope, 1) for scope in order if use_tlc
    }
    reached: set[str] = set()
    for scope in order:
        with console.status(f"explore {scope.name} (two scopes at a time)"):
            explored, reduced = explorations[scope.name].result()
        reached |= explored.situations
        agreement = None
        if use_tlc and explored.passed:
            with console.status(f"TLC {scope.name}"):
                agreement = agree.compare(scope, explored, runs[scope.name].result())
        row = _row(scope, explored, reduced, agreement, checks + len(scope.expect))
        rows.append(row)
        for result in (explored, reduced):
            if result is not None and result.violation is not None:
                failed = True
                trace.print_violation(console, scope, result.violation)
                for path in trace.save_traces(scope, result.violation, args.traces):
                    console.print(f"  written: {path}")
        if agreement is not None and not agreement.agrees:
            failed = True
            console.print(f"[bold red]{scope.name}: the explorer and TLC disagree[/]")
            for line in agreement.difference:
                console.print(f"  {line}", markup=False, highlight=False)
    tlc_pool.shutdown(cancel_futures=True)
    explorers.shutdown(cancel_futures=True)
    seconds = time.monotonic() - started
    asked = {scope.name: position for position, scope in enumerate(selected)}
    rows.sort(key=lambda row: asked[str(row["scope"])])
    _print_table(console, rows, use_tlc)
    console.print(f"{len(rows)} scopes in {seconds:.1f} s")
    missing = [s for s in REQUIRED if s not in reached]
    console.print(
        f"situations of spec/explore.md reached: {len(REQUIRED) - len(missing)} of {len(REQUIRED)}"
    )
    if missing and {s.name for s in selected} >= {s.name for s in scopes() if s.default}:
        failed = True
        for situation in missing:
            console.print(f"[red]  not reached by any scope: {situation}[/]")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.markdown is not None:
        args.markdown.write_text(_markdown(rows, use_tlc, seconds))
    return 1 if failed else 0


def estimated_size(scope: Scope) -> int:
    """A rough measure of a scope's state space, to start the largest explorations first: the
    ways each task can be submitted (its dependency choices times its generations, or not yet),
    multiplied over the tasks, times the slots and the workers. It orders the work only; a
    wrong estimate costs time, never a verdict."""
    size = max(scope.limit, 1) * len(scope.workers)
    for task in scope.tasks:
        size *= len(scope.dep_choices[task]) * scope.max_gen[task] + 1
    return size


def _explore(scope: Scope, keep: bool) -> tuple[search.Result, search.Result | None]:
    """One scope for `verify`, in a worker process: the full exploration with every check
    (keeping keys and edges for the comparison with TLC), then, for a scope with symmetries,
    the reduced one (the differential and the probes ran on the full graph already)."""
    explored = search.explore(scope, keep_keys=keep, keep_edges=keep)
    reduced = None
    if scope.symmetry and explored.passed:
        reduced = search.explore(scope, reduce=True, differential=False)
    return explored, reduced


def _row(
    scope: Scope,
    explored: search.Result,
    reduced: search.Result | None,
    agreement: agree.Agreement | None,
    checks: int,
) -> dict[str, object]:
    row: dict[str, object] = {
        "scope": scope.name,
        "states": explored.states,
        "transitions": explored.transitions,
        "depth": explored.depth,
        "checks": checks,
        "reduced states": None if reduced is None else reduced.states,
        "probes": explored.probes,
        "situations": len(explored.situations & set(REQUIRED)),
        "explorer s": round(explored.seconds, 2),
        "explorer states/s": round(explored.states / max(explored.seconds, 1e-9)),
        "verdict": "ok" if explored.passed else _verdict(explored),
    }
    if reduced is not None and not reduced.passed:
        row["verdict"] = "reduced: " + _verdict(reduced)
    if agreement is not None:
        row |= {
            "TLC states": agreement.tlc.distinct_states,
            "projected": agreement.tlc_states,
            "agree": "yes" if agreement.agrees else "NO",
            "TLC s": round(agreement.tlc.seconds, 2),
            "TLC states/s": round((agreement.tlc.distinct_states or 0) / agreement.tlc.seconds),
        }
    return row


def _verdict(result: search.Result) -> str:
    if result.violation is not None:
        return f"{result.violation.check} violated"
    return "incomplete"


def _columns(use_tlc: bool) -> list[str]:
    columns = ["scope", "states", "transitions", "depth", "checks", "reduced states"]
    columns += ["probes", "situations"]
    columns += ["explorer s", "explorer states/s"]
    if use_tlc:
        columns += ["TLC states", "projected", "agree", "TLC s", "TLC states/s"]
    return [*columns, "verdict"]


def _print_table(console: Console, rows: list[dict[str, object]], use_tlc: bool) -> None:
    table = Table(title="schedspec verify: explorer over the real core, and TLC")
    for c in _columns(use_tlc):
        table.add_column(c, justify="left" if c in ("scope", "verdict", "agree") else "right")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in _columns(use_tlc)))
    console.print(table)


def _markdown(rows: list[dict[str, object]], use_tlc: bool, seconds: float) -> str:
    """The same table as Markdown, for the README."""
    columns = _columns(use_tlc)
    right = ["---" if c in ("scope", "verdict", "agree") else "---:" for c in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(right) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join([*lines, "", f"{len(rows)} scopes in {seconds:.1f} s", ""])


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else str(value)


def explore(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="schedspec explore", description="explore one scope")
    parser.add_argument("scope")
    parser.add_argument("--reduce", action="store_true", help="apply the scope's symmetries")
    parser.add_argument("--states-max", type=int, default=None)
    parser.add_argument("--traces", type=Path, default=TRACES_DIR)
    parser.add_argument(
        "--situations", action="store_true", help="list every situation reached (* required)"
    )
    parser.add_argument(
        "--no-differential",
        action="store_true",
        help="leave out the naive differential and the probes (for the reach of a long scope)",
    )
    args = parser.parse_args(argv)
    console = make_console()
    try:
        scope = find(args.scope)
    except ScopeError as problem:
        console.print(f"[red]{problem}[/]")
        return 2
    with _live(console, f"explore {scope.name}") as report:
        result = search.explore(
            scope,
            reduce=args.reduce,
            states_max=args.states_max,
            progress=report,
            differential=not args.no_differential,
        )
    rate = result.states / max(result.seconds, 1e-9)
    console.print(
        f"{scope.name}: {result.states:,} states, {result.transitions:,} transitions, "
        f"{result.no_op_moves:,} moves that changed nothing, depth {result.depth}, "
        f"{result.probes:,} probes, {result.seconds:.1f} s ({rate:,.0f} states/s)"
        + (" [reduced]" if result.reduced else "")
        + ("" if result.complete else " [stopped at --states-max]")
    )
    reached = [s for s in REQUIRED if s in result.situations]
    console.print(f"situations of spec/explore.md reached: {len(reached)} of {len(REQUIRED)}")
    if args.situations:
        for situation in sorted(result.situations):
            mark = "*" if situation in REQUIRED else " "
            console.print(f"  {mark} {situation}", markup=False, highlight=False)
    if result.violation is not None:
        trace.print_violation(console, scope, result.violation)
        for path in trace.save_traces(scope, result.violation, args.traces):
            console.print(f"  written: {path}")
        return 1
    return 0 if result.complete else 3


def models(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="schedspec models", description="the scopes")
    parser.add_argument("--write", action="store_true", help="regenerate tla/models/")
    parser.add_argument("--names", action="store_true", help="only the names, one a line")
    args = parser.parse_args(argv)
    console = make_console()
    if args.names:
        for s in scopes():
            print(s.name)
        return 0
    if args.write:
        for path in write_tla_models():
            console.print(f"written: {path}")
        return 0
    table = Table(title="scopes (models/): task(dependency lists)xgenerations")
    for c in ("scope", "tasks", "limit", "workers", "symmetry", "default"):
        table.add_column(c)
    for s in scopes():
        tasks = " ".join(
            t
            + "("
            + "|".join(",".join(ds) for ds in s.dep_choices[t])
            + ")"
            + (f"x{s.max_gen[t]}" if s.max_gen[t] > 1 else "")
            for t in s.tasks
        )
        table.add_row(
            s.name,
            tasks,
            str(s.limit),
            str(len(s.workers)),
            ",".join(sorted(s.symmetry)) or "-",
            "yes" if s.default else "no",
        )
    console.print(table)
    return 0


COMMANDS = {"verify": verify, "explore": explore, "models": models}


def main(argv: list[str]) -> int:
    try:
        return COMMANDS[argv[0]](argv[1:])
    except ScopeError as problem:  # no scopes, or none by that name: nothing was checked
        make_console().print(f"[red]{problem}[/]")
        return 2
