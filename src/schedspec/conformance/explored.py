"""Vectors from the explorer: the adversarial interleavings of small scopes, deduplicated.

How it works. For each scope of `EXPLORED` (a file of `models/`, with a depth bound),
`traces(scope, depth)` walks the scope's machine (`explore.model`: the real core and an
environment whose workers deliver any callback for any version they were ever handed, at any
time) breadth-first from the initial node, keeping the first trace that reaches each distinct
state, as the protocol can see it: the core's facts of every task and which versions were
claimed (and asked to cancel), but not which worker holds them, since the protocol has no
workers. With the scope's task symmetry, states equal up to renaming are one state. The
traces kept are the leaves of that breadth-first tree within the bound: every distinct state
is reached by exactly one of them, and no trace is a prefix of another.

Moves that change nothing never reach a new state, so the tree has none; yet they are the
adversary's best moves (a late `complete` for a replaced version, a duplicate `fail`, a stale
`cancel`) and the contract's refusals (a `start` refused for a cycle, a submission refused
after `close`). `with_no_ops` inserts them into the traces: after each state of a trace, every
such move possible there (claims excepted: one that claims nothing is dull) that no earlier
trace sent in that state, each step noted as changing nothing. The reference answers them
without changing anything; an implementation that changes something fails at the
`query_all` after it.

Each trace becomes a scenario named `explore-SCOPE-NNN` (its events translated by
`translate.requests_for_events`), numbered in breadth-first order (the moves are listed in a
fixed order, so the numbering is stable), tagged with the clauses its exchanges exercise
(`clauses.exercised`, by running it through the reference).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..core import events as ev
from ..explore import canon, model
from ..explore.model import Move, Node
from ..explore.scope import Scope, find
from . import clauses as clause_rules
from .corpus import QUERIES
from .fuzz import describe_request
from .protocol import JsonObject
from .reference import ReferenceImplementation
from .scenario import Scenario, Step, create
from .translate import requests_for_events

SOURCE = "explorer"

# Scope -> depth bound (moves that change the state). Chosen so that the corpus stays
# reviewable: `cycle` and `capacity-zero` are explored completely (131 and 37 states),
# `one-slot` (with its task symmetry) and `chain` to the depth where a re-submitted root
# meets the late callbacks of its old version.
EXPLORED: dict[str, int] = {"cycle": 6, "capacity-zero": 5, "one-slot": 6, "chain": 5}
NO_OP_LABELS = ("Submit", "Start", "Complete", "Fail", "ConfirmCancel", "Cancel")
NO_OP_NOTE = "Changes nothing: a late, duplicate or stale move, or one the contract refuses."


def _key(scope: Scope, node: Node, group: list[canon.Renaming]) -> canon.Key:
    """The state as the protocol sees it: workers dropped, symmetric states merged."""
    worker = scope.workers[0]  # every claim as if one worker held it
    claims = tuple(sorted({(t, g, worker, requested) for t, g, _, requested in node.claims}))
    phase, tasks, _, leases = canon.key(scope, node)
    return canon.canonical(scope, (phase, tasks, claims, leases), group)


def traces(scope: Scope, depth: int) -> Iterator[list[Move]]:
    """The leaves of the breadth-first tree within `depth`, as the moves that reach them."""
    group = _group(scope)
    root = model.initial(scope)
    seen = {_key(scope, root, group)}
    frontier: list[tuple[Node, list[Move]]] = [(root, [])]
    for level in range(depth + 1):
        next_frontier = []
        for node, path in frontier:
            children = 0
            for move in model.moves(scope, node) if level < depth else []:
                after, _ = model.apply(node, move)
                k = _key(scope, after, group)
                if after is node or k in seen:
                    continue
                seen.add(k)
                children += 1
                next_frontier.append((after, [*path, move]))
            if children == 0 and path:
                yield path
        frontier = next_frontier


def _group(scope: Scope) -> list[canon.Renaming]:
    return canon.automorphisms(scope, tasks="tasks" in scope.symmetry, workers=True)


def with_no_ops(scope: Scope, paths: Iterable[list[Move]]) -> Iterator[list[tuple[Move, bool]]]:
    """Each path with the moves that change nothing inserted where they are first possible:
    after each state of the path, every such move not yet sent in that state by an earlier
    trace, marked True. Each (state, move that changes nothing) pair is in one trace only."""
    group = _group(scope)
    sent: set[tuple[canon.Key, ev.Event]] = set()
    for path in paths:
        node = model.initial(scope)
        steps: list[tuple[Move, bool]] = []
        for next_move in [*path, None]:
            k = _key(scope, node, group)
            for move in model.moves(scope, node):
                if move.label not in NO_OP_LABELS or (k, move.event) in sent:
                    continue
                after, _ = model.apply(node, move)
                if after is node:
                    sent.add((k, move.event))
                    steps.append((move, True))
            if next_move is not None:
                steps.append((next_move, False))
                node, _ = model.apply(node, next_move)
        yield steps


def exercised_clauses(requests: list[JsonObject], limit: int) -> list[str]:
    """The clauses the trace exercises, as the reference answers it."""
    reference = ReferenceImplementation()
    found = ["PHASE-2"]  # what the create exercises
    reference.handle({"id": 0, "op": "create", "protocol": "schedspec/1", "max_concurrency": limit})
    before: JsonObject | None = None
    for n, body in enumerate(requests, start=1):
        reply = reference.handle({"id": n, **body})
        found += clause_rules.exercised(body, reply, before)
        if body.get("op") not in QUERIES:
            snapshot = reference.handle({"id": -n, "op": "query_all"})
            assert isinstance(snapshot, dict)
            view = snapshot.get("snapshot")
            before = view if isinstance(view, dict) else None
    return list(dict.fromkeys(found))


def scenarios() -> list[Scenario]:
    """Every explored scope's traces as scenarios (see the module docstring)."""
    made = []
    for name, depth in EXPLORED.items():
        scope = find(name)
        paths = with_no_ops(scope, traces(scope, depth))
        for number, steps in enumerate(paths, start=1):
            requests = list(requests_for_events(m.event for m, _ in steps))
            story = ", ".join(
                describe_request(r) + (" (changes nothing)" if no_op else "")
                for r, (_, no_op) in zip(requests, steps, strict=True)
            )
            scenario_steps = [create(scope.limit)]
            scenario_steps += [
                Step(r, note=NO_OP_NOTE if no_op else None)
                for r, (_, no_op) in zip(requests, steps, strict=True)
            ]
            made.append(
                Scenario(
                    f"explore-{name}-{number:03d}",
                    f"Scope {name}, max_concurrency {scope.limit}: {story}.",
                    tuple(exercised_clauses(requests, scope.limit)),
                    tuple(scenario_steps),
                    SOURCE,
                )
            )
    return made
