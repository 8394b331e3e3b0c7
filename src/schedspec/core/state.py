"""The core state: immutable, compact, with structural sharing.

How it is laid out, and why:

- Task ids are interned to dense ints, their task indices, the first time they are mentioned, as
  a task or as a dependency. Every per-task fact is then an entry of a column: a persistent
  vector (`pyrsistent`) indexed by that int. A step copies only the few vector nodes it touches,
  never a whole column, so a state can be kept (a snapshot, a state of the explorer) at no cost
  to the next one.
- Above 10^5 tasks the cost of a persistent state is dominated by Python's cyclic garbage
  collector, which visits every entry of every persistent vector, and every key and value of a
  persistent map, at each full collection, slowest where it visits objects in an order unrelated
  to where they lie in memory. Hence few columns, entries the collector does not track (small
  ints, and tuples of ints and strs, which it stops tracking), and no persistent map keyed by id.
- The columns, and what one entry holds:
  - `cells`: the facts of the current version that change during its life, packed into one
    small int: the state code in bits 0-2, the `CLAIMED` and `CANCEL_REQUESTED` flags, and the
    remaining-dependency count above them. Claims and completions touch one int per version.
  - `versions`: the facts fixed for the life of a version, as one flat tuple `(task id,
    generation, seq, dep, dep, ...)` (see `NAME`, `GENERATION`, `SEQ`, `DEPS`), the
    dependencies as task indices in submitted order. A submission replaces the whole tuple.
  - `dependents`: the reverse edges, kept exactly: entry `d` holds the tasks whose current
    version depends on `d` (see `Edges`). A completion touches only its own out-edges (DONE-1).
  - `data`: the payload (`fn`) of a queued or running version, then the detail of a terminal one
    (result, error, cancellation reason or blocking `Cause`). A payload is read only by the one
    claim of its version, which comes before the version is terminal, and a detail exists only
    once it is terminal, so one entry holds both, one after the other.
  - `by_seq`, indexed by submission sequence number: the task index of that submission (VER-3).
- `index` finds a task id's index: an open-addressing hash table (linear probing, at most half
  full) whose slots hold a task id and its index, grouped in flat tuples of `BUCKET` slots,
  which the collector does not track, so it visits one object per bucket. A persistent map
  keyed by the ids (`immutables.Map`) makes it visit every id and every index in hash order:
  at 10^6 tasks that cost 0.9 s per full collection, three times the rest of the state.
- `leases`: the leases of running versions (LEASE-1), a persistent map from task index to
  `(worker, deadline)`, holding only the running versions claimed or heartbeaten with a worker
  or a deadline: empty for a scheduler used without leases, and never larger than the limit.
- `ready` is a 64-ary bitmap tree over submission sequence numbers: a set bit means that the
  version with that sequence number is `ready`. Finding the smallest is one word per level, so
  claims cost O(log64 V) and the claim order is the sequence order (CLAIM-3) by construction.

A task index with no version yet (mentioned only as a dependency) has the code `ABSENT` and the
version `(task id, 0, -1)`: generation 0, sequence number -1, no dependencies.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import immutables
from pyrsistent import PVector, pvector

from .records import fast_init
from .types import EXPIRY_POLICIES, REQUEUE, Cause, Generation, Lease, Phase, TaskId, TaskState

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

# Version layout: positions in a `versions` entry. The dependencies are `version[DEPS:]`.
Version = tuple[Any, ...]
NAME, GENERATION, SEQ, DEPS = 0, 1, 2, 3

# Index layout: slots per bucket, each slot two entries, a task id (None while empty) and its
# task index (-1 while empty).
BUCKET_SHIFT = 4
BUCKET = 1 << BUCKET_SHIFT
BUCKET_MASK = BUCKET - 1
EMPTY_SLOT = -1
EMPTY_BUCKET: tuple[Any, ...] = (None, EMPTY_SLOT) * BUCKET
Index = PVector[tuple[Any, ...]]

WORD_BITS = 64
WORD_SHIFT = 6
WORD_MASK = WORD_BITS - 1

# Reverse edges of one task: a tuple while small (cheap to build, and untracked by the garbage
# collector), a persistent map once it has more than `HUB_EDGES` entries, so that a hub with
# 10^5 dependents still costs O(log) per added edge.
Edges = tuple[int, ...] | immutables.Map[int, None]
EMPTY_EDGES: Edges = ()
HUB_EDGES = 32


def edges_add(edges: Edges, i: int) -> Edges:
    """`edges` with `i` added; `i` is not in `edges` (a version depends on a task once, SUB-2).

    pre: i not in edges
    pre: isinstance(edges, immutables.Map) or len(set(edges)) == len(edges)
    post: set(__return__) == set(edges) | {i} and len(__return__) == len(edges) + 1
    post: isinstance(__return__, tuple) == (isinstance(edges, tuple) and len(edges) < HUB_EDGES)
    """
    if isinstance(edges, tuple):
        if len(edges) < HUB_EDGES:
            return (*edges, i)
        return immutables.Map(dict.fromkeys((*edges, i)))
    return edges.set(i, None)


def edges_remove(edges: Edges, i: int) -> Edges:
    """`edges` without `i`, which is in `edges` (the replaced version's edge, SUB-6).

    pre: i in edges and (isinstance(edges, immutables.Map) or len(set(edges)) == len(edges))
    post: set(__return__) == set(edges) - {i} and len(__return__) == len(edges) - 1
    """
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

    Columns (see the module docstring), indexed by task index: `cells`, `versions`,
    `dependents`, `data`; indexed by submission sequence number: `by_seq`.
    """

    phase: Phase
    limit: int
    running: int
    index: Index
    cells: PVector[int]
    versions: PVector[Version]
    dependents: PVector[Edges]
    data: PVector[object]
    by_seq: PVector[int]
    ready: tuple[PVector[int], ...]
    leases: immutables.Map[int, tuple[str | None, int | float | None]]
    expiry: str  # the expiry policy (LEASE-4), fixed at construction like `limit`

    # Queries (QUERY-1). They take a task id and return None for an id never submitted.

    def lookup(self, task_id: object) -> int | None:
        """The index of a submitted task, or None."""
        if not isinstance(task_id, str):
            return None
        i = find(self.index, task_id)
        if i is None or self.cells[i] & STATE_MASK == ABSENT:
            return None
        return i

    def state_of(self, task_id: TaskId) -> TaskState | None:
        """The state of the current version of `task_id`, or None if it was never submitted
        (QUERY-1)."""
        i = self.lookup(task_id)
        return None if i is None else STATE_OF[self.cells[i] & STATE_MASK]

    def generation_of(self, task_id: TaskId) -> Generation | None:
        """The generation of the current version of `task_id`, or None if it was never
        submitted (QUERY-1, VER-1)."""
        i = self.lookup(task_id)
        return None if i is None else Generation(self.versions[i][GENERATION])

    def cause_of(self, task_id: TaskId) -> Cause | None:
        """The recorded root cause of the current version of `task_id` if it is blocked, else
        None (BLOCK-2, QUERY-1)."""
        i = self.lookup(task_id)
        if i is None or self.cells[i] & STATE_MASK != BLOCKED:
            return None
        cause = self.data[i]
        assert isinstance(cause, Cause)
        return cause

    def lease_of(self, task_id: TaskId) -> Lease | None:
        """The lease the current version of `task_id` holds while running, or None (LEASE-1)."""
        i = self.lookup(task_id)
        held = None if i is None else self.leases.get(i)
        return None if held is None else Lease(*held)

    def detail_of(self, task_id: TaskId) -> object:
        """The recorded result, error, reason or cause of the current version, else None."""
        i = self.lookup(task_id)
        return None if i is None else self.detail_at(i)

    def detail_at(self, i: int) -> object:
        """The detail of the version at index `i`: None until it is terminal (see `data`)."""
        return self.data[i] if self.cells[i] & STATE_MASK in TERMINAL_CODES else None

    def facts(self, task_id: TaskId) -> Facts | None:
        """Everything the core keeps about the current version of `task_id`, or None.

        This is the layout-independent view the explorer and the conformance oracle build
        their canonical states from: whatever the columns become, these facts stay.
        """
        i = self.lookup(task_id)
        if i is None:
            return None
        cell = self.cells[i]
        code = cell & STATE_MASK
        versions = self.versions
        version = versions[i]
        deps = tuple([versions[d][NAME] for d in version[DEPS:]]) if len(version) > DEPS else ()
        # Built as a tuple of the named type directly: the explorer reads facts by the million,
        # and the named tuple's own constructor is a Python function.
        facts: Facts = tuple.__new__(
            Facts,
            (
                STATE_OF[code],
                version[GENERATION],
                version[SEQ],
                bool(cell & CLAIMED),
                bool(cell & CANCEL_REQUESTED),
                cell >> REMAINING_SHIFT,
                deps,
                self.data[i] if code in TERMINAL_CODES else None,
            ),
        )
        return facts

    def task_ids(self) -> Iterator[TaskId]:
        """Submitted task ids in order of their first mention."""
        for cell, version in zip(self.cells, self.versions, strict=True):
            if cell & STATE_MASK != ABSENT:
                yield version[NAME]

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
        return smallest_ready(self.ready, len(self.by_seq))


def find(index: Any, task_id: str) -> int | None:
    """The task index of `task_id` in the table `index` (or its evolver), or None."""
    mask = (len(index) << BUCKET_SHIFT) - 1
    slot = hash(task_id) & mask
    while True:
        bucket = index[slot >> BUCKET_SHIFT]
        k = (slot & BUCKET_MASK) << 1
        name = bucket[k]
        if name is None:
            return None
        if name == task_id:
            i: int = bucket[k + 1]
            return i
        slot = (slot + 1) & mask


def place(index: Any, task_id: str, i: int) -> None:
    """Put `task_id` and its index `i` in the first empty slot of its probe sequence.

    `index` is an evolver of the table, which must not hold `task_id` and must have room.
    """
    mask = (len(index) << BUCKET_SHIFT) - 1
    slot = hash(task_id) & mask
    while index[slot >> BUCKET_SHIFT][(slot & BUCKET_MASK) << 1] is not None:
        slot = (slot + 1) & mask
    bucket = list(index[slot >> BUCKET_SHIFT])
    k = (slot & BUCKET_MASK) << 1
    bucket[k : k + 2] = task_id, i
    index[slot >> BUCKET_SHIFT] = tuple(bucket)


def pairs_of(index: Index) -> Iterator[tuple[str, int]]:
    """The (task id, task index) pairs a hash table holds."""
    for bucket in index:
        for k in range(0, BUCKET << 1, 2):
            if bucket[k] is not None:
                yield bucket[k], bucket[k + 1]


def index_of(count: int, *sources: Iterable[tuple[str, int]]) -> Index:
    """A hash table of the `count` (task id, task index) pairs of `sources`, at most half full.

    It holds the very int objects given, not equal copies: one int per task suffices. The slots
    are laid out in one flat list, then cut into buckets from its end, the list shrinking as the
    buckets grow, so that the two do not both hold every slot at once (at 10^6 tasks that is
    30 MB less at the peak of a large submission).
    """
    slots = BUCKET
    while slots < 2 * count:
        slots <<= 1
    mask = slots - 1
    flat: list[Any] = [None, EMPTY_SLOT] * slots
    for source in sources:
        for name, i in source:
            slot = hash(name) & mask
            while flat[slot << 1] is not None:
                slot = (slot + 1) & mask
            flat[slot << 1] = name
            flat[(slot << 1) + 1] = i
    width = BUCKET << 1
    buckets = []
    for k in range((slots << 1) - width, -1, -width):
        buckets.append(tuple(flat[k:]))
        del flat[k:]
    buckets.reverse()
    return pvector(buckets)


def smallest_ready(levels: Any, wanted: int) -> list[int]:
    """The `wanted` smallest sequence numbers set in the ready index `levels`, ascending.

    `levels` is the tuple of bitmap levels, leaves first, or a list of their evolvers.
    """
    found: list[int] = []
    if wanted > 0:
        _collect(levels, len(levels) - 1, 0, found, wanted)
    return found


def _collect(levels: Any, level: int, word: int, out: list[int], wanted: int) -> None:
    """Append the set positions under `word` of `level`, ascending, until `wanted` are found."""
    words = levels[level]
    bits = words[word] if word < len(words) else 0
    while bits:
        low = bits & -bits
        position = (word << WORD_SHIFT) + low.bit_length() - 1
        if level:
            _collect(levels, level - 1, position, out, wanted)
        else:
            out.append(position)
        if len(out) == wanted:
            return
        bits ^= low


def initial_state(limit: int, expiry: str = REQUEUE) -> State:
    """The state of a new scheduler with `max_concurrency = limit` and the expiry policy
    `expiry` (PHASE-2, LEASE-4: check them first)."""
    assert isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
    assert expiry in EXPIRY_POLICIES
    empty: PVector[Any] = pvector()
    return State(
        phase=Phase.OPEN,
        limit=limit,
        running=0,
        index=pvector([EMPTY_BUCKET]),
        cells=empty,
        versions=empty,
        dependents=empty,
        data=empty,
        by_seq=empty,
        ready=(pvector([0]),),
        leases=immutables.Map(),
        expiry=expiry,
    )


class Dependencies(Sequence[Sequence[int]]):
    """The dependencies of every task's current version, as the adjacency `graph` takes.

    With `task`, that task's list is `override` instead: the new version a re-submission would
    make (SUB-9). A view, so that `start()` builds no list of 10^6 tuples to walk a few edges.
    """

    __slots__ = ("override", "task", "versions")

    def __init__(self, versions: Sequence[Version], task: int = -1, override: tuple[int, ...] = ()):
        self.versions, self.task, self.override = versions, task, override

    def __len__(self) -> int:
        return len(self.versions)

    @overload
    def __getitem__(self, v: int) -> Sequence[int]: ...

    @overload
    def __getitem__(self, v: slice) -> Sequence[Sequence[int]]: ...

    def __getitem__(self, v: int | slice) -> Sequence[int] | Sequence[Sequence[int]]:
        if isinstance(v, slice):
            raise TypeError("a dependency view is indexed by task index only")
        if v == self.task:
            return self.override
        deps: tuple[int, ...] = self.versions[v][DEPS:]
        return deps


def limit_problem(value: object) -> str | None:
    """Why `value` cannot be a `max_concurrency` (PHASE-2), or None if it can.

    post: isinstance(value, int) or __return__ is not None
    post: not isinstance(value, bool) or __return__ is not None
    post: type(value) is not int or (__return__ is None) == (value >= 0)
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return f"max_concurrency must be an int, got {type(value).__name__} {value!r}"
    if value < 0:
        return f"max_concurrency must be >= 0, got {value}"
    return None


def expiry_problem(value: object) -> str | None:
    """Why `value` cannot be an expiry policy (LEASE-4), or None if it can."""
    if isinstance(value, str) and value in EXPIRY_POLICIES:
        return None
    return f"expiry must be one of {', '.join(map(repr, EXPIRY_POLICIES))}, got {value!r:.80}"
