"""Breadth-first exploration of a scope over the real core, with every check.

How it works. Nodes are numbered in the order they are found; for each, the search keeps its
parent's number and the position of the move that reached it in `moves(parent)`, nothing more:
a trace is rebuilt by replaying those moves from the initial node (the core is pure, so the
replay is exact). Breadth-first order makes the first violation found a shortest one.

Every move of every expanded node is sent to the core, including the moves that change nothing
(stale and duplicate callbacks, refused submissions), and every transition property is checked
on it; every new node is checked against every state invariant. Labelled edges between distinct
nodes are kept in flat arrays (source, label, target), deduplicated per source, for the graph
properties (`Deadlock`, `AllVersionsCanFinish`, `ClosingCanClose`, decided by backward
reachability once the graph is complete) and for the comparison with TLC.

Beside the core runs the naive statement of the rules (`schedspec.naive`), carried along each
explored path: on every move, the regular ones and the probes (`model.probes`: the caller's
mistakes and every other operation, checked but not explored further), the core's reply, its
notifications and its next state must equal the naive ones (`differential.divergence`,
reported as `AgreesWithNaive`). Each node also keeps a fingerprint of its naive world's key, so
that two paths reaching one core key with naive worlds of different keys, a merge of states
the rules tell apart, is reported too. The property and invariant checks run first, so a
broken rule is reported by name where a named check sees it.

Everything checked on one move is a function of the core state before it, the naive world
beside it and the move, so a node whose state and world equal those of nodes already expanded
takes each move's answer from them (`_Memo`): in a scope with several workers most states are
reached by many claim histories (`stale`: 34,965 nodes, 1,477 core states), and their moves are
computed at most twice per state (answers are kept from a state's second node on) instead of
once per node. Every move of every node is still answered, counted and labelled.

With `reduce=True` the scope's symmetries (`canon.automorphisms`) identify each node with its
orbit representative; the node kept for expansion is the first member of its orbit found, and
traces replay the concrete moves, so a counterexample is always a real run of the core.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import naive
from ..core.effects import Effect
from ..core.invariants import check_transition, validate_state
from ..core.types import Phase, TaskState
from ..durable.journal import Journal
from . import canon
from .checks import EXPECTATIONS, HISTORY_INVARIANTS, work_remains
from .crash import CHECK as RECOVERY
from .crash import Recovery
from .differential import divergence
from .model import Move, Node, Step, advance, apply, initial, moves, probes
from .scope import Scope
from .situations import label

LABELS = (
    "Submit",
    "Start",
    "Claim",
    "Complete",
    "Fail",
    "ConfirmCancel",
    "Cancel",
    "Close",
    "Heartbeat",
    "Expire",
)
LABEL_CODE = {label: code for code, label in enumerate(LABELS)}
Progress = Callable[[int, int, int, float], None]  # states, frontier, depth, seconds


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of a counterexample: the move, the core's effects, and the node it reached."""

    move: Move
    effects: tuple[Effect, ...]
    node: Node


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken check: its name, what is wrong, and a shortest trace that shows it.

    For a transition property the last step of the trace is the offending move; for a graph
    property the trace ends in the node from which the wanted state cannot be reached.
    """

    check: str
    kind: str  # "invariant", "property", "graph", "expectation" or "crash"
    message: str
    trace: tuple[TraceStep, ...]


@dataclass(slots=True)
class Result:
    scope: str
    reduced: bool
    states: int = 0
    transitions: int = 0
    no_op_moves: int = 0
    probes: int = 0
    situations: set[str] = field(default_factory=set, repr=False)
    witnesses: dict[str, tuple[TraceStep, ...]] = field(default_factory=dict, repr=False)
    depth: int = 0
    seconds: float = 0.0
    violation: Violation | None = None
    complete: bool = True
    keys: list[canon.Key] = field(default_factory=list, repr=False)
    edges: tuple[array[int], array[int], array[int]] | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        return self.violation is None and self.complete


class _Found(Exception):
    def __init__(self, check: str, kind: str, message: str, index: int, move: int | None) -> None:
        super().__init__(message)
        self.check, self.kind, self.message, self.index, self.move = (
            check,
            kind,
            message,
            index,
            move,
        )


def explore(
    scope: Scope,
    *,
    reduce: bool = False,
    step: Step | None = None,
    keep_keys: bool = False,
    keep_edges: bool = False,
    states_max: int | None = None,
    progress: Progress | None = None,
    differential: bool = True,
    witnesses: Callable[[Move], bool] | None = None,
    journal_type: type[Journal] = Journal,
) -> Result:
    """Explore `scope` breadth-first and check everything; stop at the first violation.

    `differential=False` leaves out the naive differential and the probes (for measuring
    what they cost, and for runs that only count states). Given `witnesses`, a test of moves,
    the search keeps for each situation a shortest trace whose last move reaches it and passes
    the test (`Result.witnesses`, the conformance corpus's raw material:
    `conformance.situations`, which keeps out what the protocol cannot say). On a scope with
    `crash`, every state is also served by the reference server on a `journal_type` journal,
    crashed and recovered (`explore.crash`, `RecoveryRebuildsTheState`)."""
    from ..core import step as real_step

    stepper: Step = step or real_step
    group = canon.automorphisms(
        scope,
        tasks=reduce and "tasks" in scope.symmetry,
        workers=reduce and "workers" in scope.symmetry,
    )
    result = Result(scope.name, reduce and len(group) > 1)
    started = time.monotonic()
    index: dict[canon.Key, int] = {}
    parent, via, depth = array("l"), array("l"), array("l")
    finished, closing, closed = bytearray(), bytearray(), bytearray()
    sources, labels, targets = array("l"), array("b"), array("l")
    keys: list[canon.Key] = []
    expectations = [EXPECTATIONS[name] for name in scope.expect]

    fingerprints = array("q")  # per node: the hash of its naive world's canonical key
    recovery = Recovery(scope, stepper, journal_type) if scope.crash else None

    def fingerprint(world: naive.World, node: Node) -> int:
        if not differential:
            return 0
        return hash(canon.canonical(scope, canon.naive_key(scope, world, node.claims), group))

    def add(node: Node, k: canon.Key, from_index: int, move_position: int) -> int:
        i = len(parent)
        index[k] = i
        parent.append(from_index)
        via.append(move_position)
        depth.append(0 if from_index < 0 else depth[from_index] + 1)
        if keep_keys:
            keys.append(k)
        core = node.core
        counts = core.counts()
        queued_or_running = counts[TaskState.PENDING] + counts[TaskState.READY]
        queued_or_running += counts[TaskState.RUNNING]
        finished.append(queued_or_running == 0 and core.phase is not Phase.CLOSING)
        closing.append(core.phase is Phase.CLOSING)
        closed.append(core.phase is Phase.CLOSED)
        problems = validate_state(core)
        if problems:
            name, _, message = problems[0].partition(": ")
            raise _Found(name, "invariant", message, i, None)
        for history in HISTORY_INVARIANTS:
            for problem in history(core, node.claims):
                raise _Found(history.__name__, "invariant", problem, i, None)
        for check in expectations:
            for problem in check(core):
                raise _Found(check.__name__, "expectation", problem, i, None)
        if recovery is not None:
            path = [s.move.event for s in _replay(scope, stepper, parent, via, i, None)]
            for problem in recovery.problems(path, core):
                raise _Found(RECOVERY, "invariant", problem, i, None)
        return i

    shared: dict[object, object] = {}

    def canonical_key(node: Node) -> canon.Key:
        return canon.canonical(scope, canon.key(scope, node, shared), group)

    def differ(
        i: int, position: int, node: Node, move: Move, after: Node, effects: Any, world: naive.World
    ) -> naive.World:
        """The naive differential of one move from node `i`: the naive world after it."""
        if not differential:
            return world
        world_after, difference = divergence(node.core, after.core, effects, move.event, world)
        if difference is not None:
            raise _Found("AgreesWithNaive", "differential", str(difference), i, position)
        return world_after

    memo = _Memo()

    def settle(
        answers: dict[tuple[object, ...], Answer] | None,
        key: tuple[object, ...] | None,
        i: int,
        position: int,
        node: Node,
        move: Move,
        after: Node,
        effects: Any,
        reached: set[str],
        world: naive.World,
    ) -> naive.World:
        """The differential of a move just answered, every other check on it passed: the
        naive world after it. The answer is kept for the memo."""
        world_after = differ(i, position, node, move, after, effects, world)
        if answers is not None and key is not None:
            answers[key] = memo.answer(node, after, effects, reached, world, world_after)
        return world_after

    situations = result.situations
    first_seen: dict[str, tuple[int, int]] = {}
    start_node = initial(scope)
    start_world = naive.initial(scope.limit, scope.expiry)
    frontier: deque[tuple[int, Node, naive.World]] = deque()
    try:
        first = add(start_node, canonical_key(start_node), -1, -1)
        fingerprints.append(fingerprint(start_world, start_node))
        frontier.append((first, start_node, start_world))
        while frontier:
            i, node, world = frontier.popleft()
            seen_edges: set[tuple[int, int]] = set()
            progressed = False
            regular = moves(scope, node)
            extra = probes(scope, node) if differential or witnesses is not None else []
            answers = memo.answers(node.core, world) if differential else None
            for position, move in enumerate((*regular, *extra)):
                probe = position >= len(regular)
                key = known = None
                if answers is not None:
                    key = memo.move_key(move, probe)
                    known = answers.get(key)
                if known is not None:
                    # This very move was answered, and passed every check, from a core state
                    # and a naive world equal to these: the same answer, without asking again.
                    after_core, effects, reached, world_after = known
                    after = advance(
                        node, move, node.core if after_core is None else after_core, effects
                    )
                    world_after = world if world_after is None else world_after
                else:
                    try:
                        after, effects = apply(node, move, stepper)
                    except Exception as crash:  # a broken core may raise; the real one never does
                        message = f"{move.describe()} raised {type(crash).__name__}: {crash}"
                        raise _Found("EFFECT-1", "crash", message, i, position) from crash
                    problems = check_transition(node.core, after.core, effects, move.event)
                    if problems:
                        name, _, message = problems[0].partition(": ")
                        raise _Found(name, "property", message, i, position)
                    reached = label(node.core, move.event, effects)
                    world_after = None
                if witnesses is not None and witnesses(move):
                    for situation in reached.difference(first_seen):
                        first_seen[situation] = (i, position)
                situations |= reached
                if probe or after is node:
                    # A probe's state is checked, not explored; a no-op move leads nowhere.
                    if known is None:
                        if after is not node:
                            problems = validate_state(after.core)
                            if problems:
                                name, _, message = problems[0].partition(": ")
                                raise _Found(name, "invariant", message, i, position)
                        settle(
                            answers, key, i, position, node, move, after, effects, reached, world
                        )
                    if probe:
                        result.probes += 1
                    else:
                        result.no_op_moves += 1
                    continue
                progressed = True
                k = canonical_key(after)
                j = index.get(k)
                new = j is None
                if j is None:
                    j = add(after, k, i, position)
                if known is None:
                    world_after = settle(
                        answers, key, i, position, node, move, after, effects, reached, world
                    )
                assert world_after is not None
                if new:
                    fingerprints.append(fingerprint(world_after, after))
                    frontier.append((j, after, world_after))
                    if states_max is not None and len(parent) >= states_max:
                        result.complete = False
                        frontier.clear()
                        break
                    if progress is not None and len(parent) % 20_000 == 0:
                        progress(len(parent), len(frontier), depth[j], time.monotonic() - started)
                elif fingerprints[j] != fingerprint(world_after, after):
                    message = (
                        "this core key was reached before with a naive world of another"
                        " key: the core merged states the rules tell apart"
                    )
                    raise _Found("AgreesWithNaive", "differential", message, i, position)
                edge = (LABEL_CODE[move.label], j)
                if edge not in seen_edges:
                    seen_edges.add(edge)
                    sources.append(i)
                    labels.append(edge[0])
                    targets.append(j)
            if not progressed and work_remains(node.core):
                message = "work remains but no move changes anything"
                raise _Found("Deadlock", "graph", message, i, None)
        if result.complete:
            _check_graph(len(parent), sources, targets, finished, closing, closed, depth)
    except _Found as found:
        trace = _replay(scope, stepper, parent, via, found.index, found.move)
        result.violation = Violation(found.check, found.kind, found.message, trace)
    finally:
        if recovery is not None:
            recovery.close()
    result.witnesses = {
        situation: _replay(scope, stepper, parent, via, i, position)
        for situation, (i, position) in sorted(first_seen.items())
    }
    result.states = len(parent)
    result.transitions = len(sources)
    result.depth = max(depth, default=0)
    result.seconds = time.monotonic() - started
    result.keys = keys
    if keep_edges:
        result.edges = (sources, labels, targets)
    if progress is not None:
        progress(result.states, 0, result.depth, result.seconds)
    return result


Answer = tuple[Any, tuple[Effect, ...], set[str], Any]


class _Hashed:
    """A key that hashes its value once: a state and world key costs O(tasks) to hash, and the
    memo both looks it up and remembers its hash."""

    __slots__ = ("hash", "value")

    def __init__(self, value: tuple[object, ...]) -> None:
        self.value = value
        self.hash = hash(value)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Hashed) and other.hash == self.hash and other.value == self.value


class _Memo:
    """Answers to moves already checked, by the core state and the naive world they were sent
    in, for the differential search.

    Everything the search computes for one move is a function of the core state before it,
    the naive world beside it, and the move: the core's step and the naive one are pure, and so
    are the transition properties, the situations, the state invariants of a probe's state and
    the differential. When a node's core state and naive world are equal to those of a node
    already expanded (in a scope with several workers, many claim histories share a state),
    each of its moves has the answer it had there, and every check on it passed there, so the
    answer is taken as it was: every move is still answered and labelled, only not recomputed.
    Equality is the values' own: a state is its columns, a world its facts. Which object stood
    for "unchanged" is kept as such (`None`), so a reused answer leaves this node's own state
    and world in place where the first left its own.

    A table is kept for a state from the second node that has it on: most states of a scope with
    one worker are met once, and keeping their answers would cost memory for nothing. A state
    met once is remembered by its hash alone."""

    def __init__(self) -> None:
        self.tables: dict[_Hashed, dict[tuple[object, ...], Answer]] = {}
        self.met: set[int] = set()
        self.keys: dict[int, tuple[Move, tuple[object, ...]]] = {}

    def answers(self, core: object, world: naive.World) -> dict[tuple[object, ...], Answer] | None:
        """The table of answers for this state and world, or None while it is met first."""
        try:
            k = _Hashed(
                (core, world.phase, world.limit, world.next_seq, tuple(world.tasks.items()))
            )
        except TypeError:  # a value that cannot be hashed: nothing is kept for it
            return None
        table = self.tables.get(k)
        if table is None:
            # Met once: only its hash is kept, so that a state met once is not kept alive
            # (the collector would walk its columns at every full collection). A collision
            # costs a table for a state met once, never a wrong answer: tables are found by
            # equality.
            if k.hash not in self.met:
                self.met.add(k.hash)
                return None
            table = self.tables[k] = {}
        return table

    def move_key(self, move: Move, probe: bool) -> tuple[object, ...]:
        """The move as a key. The repr, not the event: `Claim(True) == Claim(1)`, and the
        probes tell them apart. A probe is built once and shared (`model.probes`), so its key
        is kept by identity, beside the probe itself, which keeps the identity its own."""
        kept = self.keys.get(id(move)) if probe else None
        if kept is not None and kept[0] is move:
            return kept[1]
        k = (move.label, move.worker, repr(move.event))
        if probe:
            self.keys[id(move)] = (move, k)
        return k

    @staticmethod
    def answer(
        node: Node,
        after: Node,
        effects: tuple[Effect, ...],
        reached: set[str],
        world: naive.World,
        world_after: naive.World,
    ) -> Answer:
        """What a move's answer keeps: "unchanged" as None, so a reused answer leaves the
        reusing node's own state and world in place."""
        return (
            None if after is node else after.core,
            effects,
            reached,
            None if world_after is world else world_after,
        )


def _check_graph(
    n: int,
    sources: array[int],
    targets: array[int],
    finished: bytearray,
    closing: bytearray,
    closed: bytearray,
    depth: array[int],
) -> None:
    """AllVersionsCanFinish and ClosingCanClose, by backward reachability over the edges."""
    # Reverse adjacency in compressed form: the predecessors of v are
    # preds[start[v]:start[v + 1]].
    start = [0] * (n + 1)
    for t in targets:
        start[t + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    preds = array("l", bytes(8 * len(targets)))
    for s, t in zip(sources, targets, strict=True):
        preds[fill[t]] = s
        fill[t] += 1

    def can_reach(goal: bytearray) -> bytearray:
        reached = bytearray(goal)
        queue = deque(v for v in range(n) if goal[v])
        while queue:
            v = queue.popleft()
            for p in preds[start[v] : start[v + 1]]:
                if not reached[p]:
                    reached[p] = 1
                    queue.append(p)
        return reached

    def shallowest(bad: list[int]) -> int:
        return min(bad, key=lambda v: (depth[v], v))

    can_finish = can_reach(finished)
    stuck = [v for v in range(n) if not can_finish[v]]
    if stuck:
        raise _Found(
            "AllVersionsCanFinish",
            "graph",
            "from this state no sequence of moves leaves every current version terminal",
            shallowest(stuck),
            None,
        )
    can_close = can_reach(closed)
    never_closed = [v for v in range(n) if closing[v] and not can_close[v]]
    if never_closed:
        raise _Found(
            "ClosingCanClose",
            "graph",
            "this closing scheduler can never become closed",
            shallowest(never_closed),
            None,
        )


def _replay(
    scope: Scope,
    step: Step,
    parent: array[int],
    via: array[int],
    index: int,
    last_move: int | None,
) -> tuple[TraceStep, ...]:
    """The moves from the initial node to node `index` (and then `last_move`), replayed."""
    path = []
    i = index
    while parent[i] >= 0:
        path.append(via[i])
        i = parent[i]
    path.reverse()
    if last_move is not None:
        path.append(last_move)
    node = initial(scope)
    trace = []
    for position in path:
        move = (*moves(scope, node), *probes(scope, node))[position]
        try:
            after, effects = apply(node, move, step)
        except Exception:  # the crash itself: report the move with no effects
            trace.append(TraceStep(move, (), node))
            break
        trace.append(TraceStep(move, effects, after))
        node = after
    return tuple(trace)
