"""Agreement with TLC: the explorer and TLC must have the same states and the same moves.

For one scope, the explorer runs without reduction and keeps its keys and labelled edges; TLC
runs the scope's generated model without symmetry, safety only, and dumps its state graph
(`tlc.run_tlc(dump_dot=...)`, read by `tladump`). Both sides are projected onto the same form
(`canon.project_key` for the explorer, `project_tla` here for TLC) and compared as sets: first
the reachable states, then the labelled transitions `(state, action, state)`. The action names
are the core's event class names on both sides, so equal transition sets mean the two machines
have the same moves, not only the same states.

On a difference, `Agreement` names a shortest path to the first state (or transition) one side
has and the other lacks: for an explorer-only state, the explorer's own trace; for a TLC-only
one, the first such state in breadth-first order over TLC's graph and the actions leading to it.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import tlc
from . import canon, search, tladump
from .scope import Scope, tla_config, tla_module

TLA_VARIABLES = {
    "phase",
    "gen",
    "vstate",
    "deps",
    "remaining",
    "seq",
    "cause",
    "claims",
    "cancelReq",
    "lease",
}


def project_tla(scope: Scope, v: dict[str, Any]) -> canon.Projected:
    """TLC's state `v` in the form of `canon.project_key`."""
    tasks = []
    for t in scope.tasks:
        generation = v["gen"][t]
        if generation == 0:
            tasks.append((0, "NONE", (), 0, 0, ()))
            continue
        cause = v["cause"][t][generation - 1]
        tasks.append(
            (
                generation,
                v["vstate"][t][generation - 1],
                tuple(v["deps"][t]),
                v["remaining"][t],
                v["seq"][t],
                tuple(cause),
            )
        )
    claims = sorted(
        (t, g, str(w))
        for t, by_generation in v["claims"].items()
        for g, workers in enumerate(by_generation, start=1)
        for w in workers
    )
    leases = tuple(
        (t, str(v["lease"][t][0]), v["lease"][t][1]) for t in scope.tasks if v["lease"][t]
    )
    return (v["phase"], tuple(tasks), tuple(claims), tuple(sorted(v["cancelReq"])), leases)


@dataclass(slots=True)
class Agreement:
    """The comparison of one scope. `difference` explains the first disagreement, if any."""

    scope: str
    explorer: search.Result
    tlc: tlc.TlcResult
    explorer_states: int = 0
    tlc_states: int = 0
    explorer_transitions: int = 0
    tlc_transitions: int = 0
    states_agree: bool = False
    transitions_agree: bool = False
    difference: list[str] = field(default_factory=list)
    tlc_seconds: float = 0.0

    @property
    def agrees(self) -> bool:
        return self.states_agree and self.transitions_agree


def tlc_graph(scope: Scope, workers: int = tlc.WORKERS_DEFAULT) -> tuple[tlc.TlcResult, Any]:
    """Run TLC on the scope (no symmetry, safety only) and read its dumped state graph."""
    from .checks import TLA_INVARIANTS, TLA_PROPERTIES

    bare = Scope(**{**_fields(scope), "liveness": False, "expect": ()})
    with tempfile.TemporaryDirectory(prefix="schedspec-agree-") as scratch:
        work = Path(scratch)
        (work / f"{scope.module}.tla").write_text(tla_module(bare))
        (work / f"{scope.module}.cfg").write_text(
            tla_config(bare, invariants=TLA_INVARIANTS, properties=TLA_PROPERTIES, symmetry=False)
        )
        dot = work / "states.dot"
        result = tlc.run_tlc(work / f"{scope.module}.cfg", workers=workers, dump_dot=dot)
        graph = tladump.read_dot(dot, TLA_VARIABLES) if dot.is_file() and result.passed else None
    return result, graph


def _fields(scope: Scope) -> dict[str, Any]:
    return {name: getattr(scope, name) for name in Scope.__dataclass_fields__}


TlcRun = tuple[tlc.TlcResult, Any, float]  # TLC's result, its state graph, its seconds


def timed_tlc_graph(scope: Scope, workers: int = tlc.WORKERS_DEFAULT) -> TlcRun:
    started = time.monotonic()
    result, graph = tlc_graph(scope, workers)
    return result, graph, time.monotonic() - started


def compare(
    scope: Scope, explored: search.Result | None = None, tlc_run: TlcRun | None = None
) -> Agreement:
    """Explore (unless given an unreduced run with keys and edges), run TLC (unless given its
    run, which `schedspec verify` makes beside the explorer's), compare."""
    if explored is None:
        explored = search.explore(scope, keep_keys=True, keep_edges=True)
    assert not explored.reduced and explored.edges is not None and explored.keys
    result, graph, seconds = timed_tlc_graph(scope) if tlc_run is None else tlc_run
    agreement = Agreement(scope.name, explored, result, tlc_seconds=seconds)
    if graph is None or not explored.passed:
        agreement.difference.append("TLC or the explorer found a violation: nothing to compare")
        return agreement
    mine = [canon.project_key(scope, k) for k in explored.keys]
    theirs = {fp: project_tla(scope, v) for fp, v in graph.states.items()}
    mine_set, theirs_set = set(mine), set(theirs.values())
    sources, labels, targets = explored.edges
    my_edges = {
        (mine[s], search.LABELS[a], mine[t])
        for s, a, t in zip(sources, labels, targets, strict=True)
        if mine[s] != mine[t]
    }
    their_edges = {(theirs[s], a, theirs[t]) for s, a, t in graph.edges if theirs[s] != theirs[t]}
    agreement.explorer_states, agreement.tlc_states = len(mine_set), len(theirs_set)
    agreement.explorer_transitions, agreement.tlc_transitions = len(my_edges), len(their_edges)
    agreement.states_agree = mine_set == theirs_set
    agreement.transitions_agree = my_edges == their_edges
    if not agreement.states_agree:
        agreement.difference = _first_state_difference(scope, explored, mine, theirs, graph)
    elif not agreement.transitions_agree:
        agreement.difference = _first_edge_difference(my_edges, their_edges)
    return agreement


def _first_state_difference(
    scope: Scope,
    explored: search.Result,
    mine: list[canon.Projected],
    theirs: dict[int, canon.Projected],
    graph: tladump.StateGraph,
) -> list[str]:
    mine_set, theirs_set = set(mine), set(theirs.values())
    for fingerprint, _parent, _label in tladump.breadth_first_paths(graph):
        if theirs[fingerprint] not in mine_set:
            path = _tlc_path(graph, fingerprint)
            lines = ["TLC reaches a state the explorer does not, by:"]
            lines += [f"  {action}" for action in path]
            lines.append(f"  -> {theirs[fingerprint]}")
            return lines
    for k, projected in enumerate(mine):
        if projected not in theirs_set:
            return [
                "the explorer reaches a state TLC does not (explorer node "
                f"{k}, in breadth-first order): {projected}"
            ]
    return []


def _tlc_path(graph: tladump.StateGraph, target: int) -> list[str]:
    parents: dict[int, tuple[int | None, str | None]] = {}
    for fingerprint, parent, label in tladump.breadth_first_paths(graph):
        parents[fingerprint] = (parent, label)
        if fingerprint == target:
            break
    path: list[str] = []
    current: int | None = target
    while current is not None:
        parent, label = parents[current]
        if label is not None:
            path.append(label)
        current = parent
    return path[::-1]


def _first_edge_difference(
    mine: set[tuple[Any, str, Any]], theirs: set[tuple[Any, str, Any]]
) -> list[str]:
    lines = []
    for name, only in (("explorer", mine - theirs), ("TLC", theirs - mine)):
        for source, action, target in sorted(only, key=repr)[:1]:
            lines += [f"only the {name} moves by {action}", f"  from {source}", f"  to   {target}"]
    return lines
