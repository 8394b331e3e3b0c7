"""The core state: immutable, compact, with structural sharing.

How it is laid out, and why:

- Task ids are interned to dense ints (`index`) the first time they are mentioned, as a task or
  as a dependency. Every per-task fact is then a column: a persistent vector indexed by that int.
  A step copies only the few vector nodes it touches, never a whole map, so a state can be kept
  (a snapshot, a state of the explorer) at no cost to the next one.
- The hot facts of a task's current version are packed into one small int, its **cell**: the
  state code in bits 0-2, `CLAIMED` and `CANCEL_REQUESTED` flags, and the remaining-dependency
  count above them. Claims and completions then touch one int per version.
- `dependents` are the reverse edges, kept exactly: entry `d` holds the tasks whose current
  version depends on `d` (see `Edges`). A completion touches only its own out-edges (DONE-1).
- `ready` is a 64-ary bitmap tree over submission sequence numbers: a set bit means that the
  version with that sequence number is `ready`. Finding the smallest is one word per level, so a
  claim costs O(log64 V) and the claim order is the sequence order (CLAIM-3) by construction.

A task index with no version yet (mentioned only as a dependency) has the code `ABSENT`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import immutables
from pyrsistent import PVector, pvector

from .records import fast_init
from .types import Cause, Generation, Phase, TaskId, TaskState

# Cell layout.
STATE_BITS = 3
STATE_MASK = (1 << STATE_BITS) - 1
CLAIMED = 1 << 3
CANCEL_REQUESTED = 1 << 4
REMAINING_SHIFT = 5
REMAINING_ONE = 1 << REMAINING_SHIFT

CODE_OF: dict[TaskState, int] = {
    TaskState.PENDING: 0,
    TaskState.READY: 1,
    TaskState.RUNNING: 2,
    TaskState.SUCCEEDED: 3,
    TaskState.FAILED: 4,
    TaskState.CANCELLED: 5,
    TaskState.BLOCKED: 6,
}
ABSENT = 7
STATE_OF: tuple[TaskState, ...] = tuple(sorted(CODE_OF, key=CODE_OF.__getitem__))
PENDING, READY, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED = range(7)
UNSUCCESSFUL_CODES = frozenset({FAILED, CANCELLED, BLOCKED})
TERMINAL_CODES = frozenset({SUCCEEDED, FAILED, CANCELLED, BLOCKED})

WORD_BITS = 64
WORD_SHIFT = 6
WORD_MASK = WORD_BITS - 1

# Reverse edges of one task: a tuple while small (cheap to build, cheap for the garbage
# collector, which dominates at 10^5 tasks and more), a persistent map once it has more than
# `HUB_EDGES` entries, so that a hub with 10^5 dependents still costs O(log) per added edge.
Edges = tuple[int, ...] | immutables.Map[int, None]
EMPTY_EDGES: Edges = ()
HUB_EDGES = 32


def edges_add(edges: Edges, i: int) -> Edges:
    if isinstance(edges, tuple):
        if len(edges) < HUB_EDGES:
            return (*edges, i)
        return immutables.Map(dict.fromkeys((*edges, i)))
    return edges.set(i, None)


def edges_remove(edges: Edges, i: int) -> Edges:
    if isinstance(edges, tuple):
        return tuple(x for x in edges if x != i)
    return edges.delete(i)


class Facts(NamedTuple):
    """The facts of one current version (`State.facts`). `remaining` is 0 unless pending."""

    state: TaskState
    generation: Generation
    seq: int
    claimed: bool
    cancel_requested: bool
    remaining: int
    deps: tuple[TaskId, ...]
    detail: object


@fast_init
@dataclass(frozen=True, slots=True)
class State:
    """One immutable scheduler state. Build the first with `initial_state`.

    Columns (indexed by task index): `names` the task id; `cells` the packed facts above;
    `generations` the current generation (0 while absent); `seqs` the current version's
    submission sequence number (-1 while absent); `deps` the current version's dependencies in
    submitted order; `dependents` the reverse edges; `payloads` the submitted `fn`; `details`
    the result, error, cancellation reason or blocking `Cause` of a terminal version.
    """

    phase: Phase
    limit: int
    running: int
    index: immutables.Map[TaskId, int]
    names: PVector[TaskId]
    cells: PVector[int]
    generations: PVector[int]
    seqs: PVector[int]
    deps: PVector[tuple[int, ...]]
    dependents: PVector[Edges]
    payloads: PVector[object]
    details: PVector[object]
    by_seq: PVector[int]
    ready: tuple[PVector[int], ...]

    # Queries (QUERY-1). They take a task id and return None for an id never submitted.

    def lookup(self, task_id: object) -> int | None:
        """The index of a submitted task, or None."""
        if not isinstance(task_id, str):
            return None
        i = self.index.get(task_id)  # type: ignore[call-overload]
        if i is None or self.cells[i] & STATE_MASK == ABSENT:
            return None
        return int(i)

    def state_of(self, task_id: TaskId) -> TaskState | None:
        i = self.lookup(task_id)
        return None if i is None else STATE_OF[self.cells[i] & STATE_MASK]

    def generation_of(self, task_id: TaskId) -> Generation | None:
        i = self.lookup(task_id)
        return None if i is None else Generation(self.generations[i])

    def cause_of(self, task_id: TaskId) -> Cause | None:
        i = self.lookup(task_id)
        if i is None or self.cells[i] & STATE_MASK != BLOCKED:
            return None
        cause = self.details[i]
        assert isinstance(cause, Cause)
        return cause

    def detail_of(self, task_id: TaskId) -> object:
        """The recorded result, error, reason or cause of the current version, else None."""
        i = self.lookup(task_id)
        return None if i is None else self.details[i]

    def facts(self, task_id: TaskId) -> Facts | None:
        """Everything the core keeps about the current version of `task_id`, or None.

        This is the layout-independent view the explorer and the conformance oracle build
        their canonical states from: whatever the columns become, these facts stay.
        """
        i = self.lookup(task_id)
        if i is None:
            return None
        cell = self.cells[i]
        names = self.names
        return Facts(
            state=STATE_OF[cell & STATE_MASK],
            generation=Generation(self.generations[i]),
            seq=self.seqs[i],
            claimed=bool(cell & CLAIMED),
            cancel_requested=bool(cell & CANCEL_REQUESTED),
            remaining=cell >> REMAINING_SHIFT,
            deps=tuple(names[d] for d in self.deps[i]),
            detail=self.details[i],
        )

    def task_ids(self) -> Iterator[TaskId]:
        """Submitted task ids in order of their first mention."""
        for i, cell in enumerate(self.cells):
            if cell & STATE_MASK != ABSENT:
                yield self.names[i]

    def counts(self) -> dict[TaskState, int]:
        """Current versions per state (QUERY-2)."""
        result = dict.fromkeys(TaskState, 0)
        for cell in self.cells:
            code = cell & STATE_MASK
            if code != ABSENT:
                result[STATE_OF[code]] += 1
        return result

    def ready_seqs(self) -> list[int]:
        """Sequence numbers set in the ready index, ascending (for invariants and tests)."""
        found: list[int] = []
        _collect(self.ready, len(self.ready) - 1, 0, found)
        return found


def _collect(levels: tuple[PVector[int], ...], level: int, word: int, out: list[int]) -> None:
    bits = levels[level][word] if word < len(levels[level]) else 0
    while bits:
        low = bits & -bits
        position = (word << WORD_SHIFT) + low.bit_length() - 1
        if level == 0:
            out.append(position)
        else:
            _collect(levels, level - 1, position, out)
        bits ^= low


def initial_state(limit: int) -> State:
    """The state of a new scheduler with `max_concurrency = limit` (PHASE-2: check it first)."""
    assert isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
    empty: PVector[Any] = pvector()
    return State(
        phase=Phase.OPEN,
        limit=limit,
        running=0,
        index=immutables.Map(),
        names=empty,
        cells=empty,
        generations=empty,
        seqs=empty,
        deps=empty,
        dependents=empty,
        payloads=empty,
        details=empty,
        by_seq=empty,
        ready=(pvector([0]),),
    )


def limit_problem(value: object) -> str | None:
    """Why `value` cannot be a `max_concurrency` (PHASE-2), or None if it can."""
    if not isinstance(value, int) or isinstance(value, bool):
        return f"max_concurrency must be an int, got {type(value).__name__} {value!r}"
    if value < 0:
        return f"max_concurrency must be >= 0, got {value}"
    return None
