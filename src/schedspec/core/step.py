"""`step(state, event) -> (state, effects)`: the whole scheduler, as one total function.

Theory of operation. A step wraps the state in a transaction (`_Tx`) and runs the handler of the
event. Every handler first checks the event against the contract without writing anything; a
refused event returns the very same state object and one `Rejected` reply (SUB-3). The first
write opens transient copies of the columns (evolvers over the persistent vectors, so only
touched nodes are copied), and the step then freezes them into the next state. Every version
state change goes through `_Tx.move`, which checks it against `table.TRANSITIONS`, keeps the
running count and the ready index in step with the cell, and records a `Transitioned`
notification (or its batch form `_Tx.move_all`, for a claim); every phase change goes through
`_Tx.set_phase`.

The legality rules live here and only here: the shell, the explorer and the conformance oracle
all ask this function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, TypeGuard, assert_never

from pyrsistent import pvector

from . import graph
from .effects import (
    Answered,
    Batched,
    CancelNotRequested,
    CancelRequested,
    Claimed,
    Closed,
    Cycles,
    DuplicateDependency,
    Effect,
    Expired,
    FutureGeneration,
    GenerationMismatch,
    Grant,
    GraphClosed,
    InvalidDependency,
    InvalidDeps,
    InvalidGeneration,
    InvalidIfGeneration,
    InvalidLeaseArgument,
    InvalidMaxTasks,
    InvalidTaskId,
    NotClaimed,
    NotStarted,
    PhaseChanged,
    Rejected,
    Rejection,
    Reply,
    RunningConflict,
    SchedulerClosed,
    Started,
    Submitted,
    Transitioned,
    UnknownDependencies,
    UnknownTask,
)
from .events import (
    Cancel,
    Claim,
    Close,
    Complete,
    CompleteBatch,
    ConfirmCancel,
    Event,
    Expire,
    Fail,
    Heartbeat,
    Start,
    Submit,
    SubmitBatch,
)
from .state import (
    ABSENT,
    BLOCKED,
    BUCKET_SHIFT,
    CANCEL_REQUESTED,
    CANCELLED,
    CLAIMED,
    CODE_OF,
    DEPS,
    EMPTY_EDGES,
    FAILED,
    GENERATION,
    HUB_EDGES,
    NAME,
    PENDING,
    READY,
    REMAINING_ONE,
    REMAINING_SHIFT,
    RUNNING,
    SEQ,
    STATE_BITS,
    STATE_MASK,
    STATE_OF,
    SUCCEEDED,
    TERMINAL_CODES,
    UNSUCCESSFUL_CODES,
    WORD_MASK,
    WORD_SHIFT,
    Dependencies,
    Index,
    State,
    Version,
    edges_add,
    edges_remove,
    find,
    index_of,
    pairs_of,
    place,
    smallest_ready,
)
from .table import PHASE_TRANSITIONS, TRANSITIONS
from .types import (
    FAIL,
    LEASE_EXPIRED,
    REASON_CANCELLED,
    REASON_SHUTDOWN,
    Cause,
    EventId,
    Generation,
    Outcome,
    OutcomeKind,
    Phase,
    TaskId,
)

# The transition table in cell codes, for a cheap check on the hot path: for each event, a
# bitmask with bit `source << STATE_BITS | target` set for every legal move. A new version's
# source is ABSENT.
_LEGAL: dict[str, int] = {}
for (_source, _target), _events in TRANSITIONS.items():
    for _event in _events:
        _code = ABSENT if _source is None else CODE_OF[_source]
        _LEGAL[_event] = _LEGAL.get(_event, 0) | 1 << (_code << STATE_BITS | CODE_OF[_target])
_FLAGS = CLAIMED | CANCEL_REQUESTED
# The bits a move sets in the cell, by target code: a claim also marks the version claimed.
_TARGET_BITS = tuple(code | CLAIMED if code == RUNNING else code for code in range(ABSENT + 1))
# The bits a move keeps, by target code: the flags, and for a new pending version (the only
# move to PENDING) the remaining count it was submitted with.
_KEPT_BITS = tuple(~STATE_MASK if code == PENDING else _FLAGS for code in range(ABSENT + 1))
# The source state a notification reports, by cell code: None for a new version.
_SOURCE_STATE: tuple[Any, ...] = (*STATE_OF, None)
# Enum members the per-task paths compare or record, as module constants: in Python 3.11 each
# `Phase.X` reads the member through a descriptor, about 50 ns, several times per task.
_STARTED, _CLOSING, _CLOSED = Phase.STARTED, Phase.CLOSING, Phase.CLOSED
_ACCEPTED = OutcomeKind.ACCEPTED


def step(state: State, event: Event) -> tuple[State, tuple[Effect, ...]]:
    """Apply one event (EFFECT-1). Never raises for a well-typed event."""
    tx = _Tx(state, event.event_id)
    reply: Reply
    match event:
        case Submit():
            reply = _submit(tx, event)
        case Start():
            reply = _start(tx)
        case Claim():
            reply = _claim(tx, event)
        case Complete():
            reply = _complete(tx, event)
        case Fail():
            reply = _fail(tx, event)
        case Cancel():
            reply = _cancel(tx, event)
        case ConfirmCancel():
            reply = _confirm_cancel(tx, event)
        case Heartbeat():
            reply = _heartbeat(tx, event)
        case Expire():
            reply = _expire(tx, event)
        case Close():
            reply = _close(tx)
        case SubmitBatch():
            reply = Batched(event.event_id, _batch(tx, event.submissions, _submit))
        case CompleteBatch():
            reply = Batched(event.event_id, _batch(tx, event.completions, _complete))
        case _:
            assert_never(event)
    if not tx.changed:
        return state, (reply, *tx.effects)
    return tx.freeze(), (reply, *tx.effects)


def _batch(tx: _Tx, members: tuple[Any, ...], handler: Callable[[_Tx, Any], Reply]) -> Any:
    """The replies of a batch's members, each run in order under its own event id (EFFECT-4)."""
    replies = []
    for member in members:
        tx.event_id = member.event_id
        replies.append(handler(tx, member))
    return tuple(replies)


class _Tx:
    """One state, made writable column by column for the duration of one step.

    Until `open` (or `grow`) is called, the columns are the persistent vectors of the input
    state, read directly. `open` replaces the columns that any accepted event writes with
    evolvers, `grow` also those only a submission writes. Evolvers copy a vector node only when
    it is first written, so the input state is never touched and the output shares everything
    the step did not change; a step that writes nothing pays for no copy at all.

    Task ids first mentioned in this step are found through `fresh`, a plain dict, and join the
    hash table `index` only when the step is frozen: a batch of 10^5 submissions then probes the
    table for none of the ids it introduces.
    """

    __slots__ = (
        "base",
        "by_seq",
        "cells",
        "changed",
        "data",
        "dependents",
        "effects",
        "event_id",
        "fresh",
        "grown",
        "index",
        "leases",
        "phase",
        "ready",
        "running",
        "versions",
    )

    def __init__(self, base: State, event_id: EventId) -> None:
        self.base = base
        self.event_id = event_id
        self.effects: list[Effect] = []
        self.changed = False
        self.grown = False
        self.phase = base.phase
        self.running = base.running
        self.index = base.index
        self.fresh: dict[str, int] = {}
        self.cells: Any = base.cells
        self.versions: Any = base.versions
        self.dependents: Any = base.dependents
        self.data: Any = base.data
        self.by_seq: Any = base.by_seq
        self.ready: Any = base.ready
        self.leases = base.leases

    def open(self) -> None:
        """Make `cells`, `data` and `ready` writable; every write comes after this."""
        if not self.changed:
            self.changed = True
            self.cells = self.cells.evolver()
            self.data = self.data.evolver()
            self.ready = [level.evolver() for level in self.ready]

    def grow(self) -> None:
        """Also make the columns that only a submission writes writable."""
        if not self.grown:
            self.open()
            self.grown = True
            self.versions = self.versions.evolver()
            self.dependents = self.dependents.evolver()
            self.by_seq = self.by_seq.evolver()

    def freeze(self) -> State:
        """The next state (positional arguments, in field order: this runs once per step)."""
        base = self.base
        ready = tuple([level.persistent() for level in self.ready])
        if not self.grown:
            # Only a submission changes the graph: its columns are the input state's.
            return State(
                self.phase,
                base.limit,
                self.running,
                base.index,
                self.cells.persistent(),
                base.versions,
                base.dependents,
                self.data.persistent(),
                base.by_seq,
                ready,
                self.leases,
                base.expiry,
            )
        return State(
            self.phase,
            base.limit,
            self.running,
            self._merged_index() if self.fresh else base.index,
            self.cells.persistent(),
            self.versions.persistent(),
            self.dependents.persistent(),
            self.data.persistent(),
            self.by_seq.persistent(),
            ready,
            self.leases,
            base.expiry,
        )

    def _merged_index(self) -> Index:
        """The hash table with the ids of `fresh`, rebuilt larger if it would be over half full."""
        count = len(self.versions)
        if 2 * count > len(self.index) << BUCKET_SHIFT:
            return index_of(count, pairs_of(self.index), _drained(self.fresh))
        index = self.index.evolver()
        for task_id, i in self.fresh.items():
            place(index, task_id, i)
        merged: Index = index.persistent()
        return merged

    # Reads.

    def find(self, task_id: str) -> int | None:
        """Index of a task mentioned so far, submitted or not, else None."""
        i = self.fresh.get(task_id)
        return find(self.index, task_id) if i is None else i

    def lookup(self, task_id: str) -> int | None:
        """Index of a submitted task (one that has a version), else None."""
        i = self.fresh.get(task_id)
        if i is None:
            i = find(self.index, task_id)
        if i is None or self.cells[i] & STATE_MASK == ABSENT:
            return None
        return i

    def code(self, i: int) -> int:
        code: int = self.cells[i] & STATE_MASK
        return code

    def cause_from(self, i: int) -> Cause:
        """The blocking cause a dependent of unsuccessful version `i` inherits (BLOCK-2)."""
        code = self.code(i)
        if code == BLOCKED:
            cause = self.data[i]
            assert isinstance(cause, Cause)
            return cause
        assert code in (FAILED, CANCELLED)
        version = self.versions[i]
        return Cause(version[NAME], version[GENERATION], STATE_OF[code])

    def sorted_by_seq(self, indices: list[int]) -> list[int]:
        versions = self.versions
        return sorted(indices, key=lambda j: versions[j][SEQ])

    # Writes, after `open` or `grow`.

    def intern(self, task_id: str) -> int:
        """The index of `task_id`, creating an absent entry on first mention (after `grow`)."""
        found = self.find(task_id)
        return self.add(task_id) if found is None else found

    def add(self, task_id: str) -> int:
        """The index of a new, absent entry for `task_id`, which has none (after `grow`)."""
        i: int = len(self.cells)
        self.cells.append(ABSENT)
        self.versions.append((task_id, 0, -1))
        self.dependents.append(EMPTY_EDGES)
        self.data.append(None)
        self.fresh[task_id] = i
        return i

    def move(self, i: int, target: int, event: str) -> None:
        """The one place a version's state changes (STATE-2), with its bookkeeping."""
        if not self.changed:
            self.open()
        cells = self.cells
        cell = cells[i]
        source = cell & STATE_MASK
        assert _LEGAL[event] >> (source << STATE_BITS | target) & 1, (
            _SOURCE_STATE[source],
            STATE_OF[target],
            event,
        )
        cells[i] = (cell & _KEPT_BITS[target]) | _TARGET_BITS[target]
        if source == RUNNING:
            self.running -= 1
            if self.leases:
                self.end_lease(i)
        elif target == RUNNING:
            self.running += 1
        version = self.versions[i]
        if source == READY:
            self._ready_clear(version[SEQ])
        elif target == READY:
            self._ready_set(version[SEQ])
        self.effects.append(
            Transitioned(
                self.event_id,
                version[NAME],
                version[GENERATION],
                _SOURCE_STATE[source],
                STATE_OF[target],
            )
        )

    def move_all(self, indices: list[int], target: int, event: str) -> None:
        """`move` of each version of `indices` in turn, all to `target`: the same checks,
        cells, running count, ready index and notifications, in the same order, at less cost
        per version. The bits it clears in the ready index are cleared together at the end
        (`ready_clear_all`), each word written once when `indices` are in sequence order."""
        if not self.changed:
            self.open()
        legal, kept, bits = _LEGAL[event], _KEPT_BITS[target], _TARGET_BITS[target]
        cells, versions, effects, event_id = self.cells, self.versions, self.effects, self.event_id
        target_state = STATE_OF[target]
        running = self.running
        cleared = []
        for i in indices:
            cell = cells[i]
            source = cell & STATE_MASK
            assert legal >> (source << STATE_BITS | target) & 1, (
                _SOURCE_STATE[source],
                target_state,
                event,
            )
            cells[i] = (cell & kept) | bits
            if source == RUNNING:
                running -= 1
            elif target == RUNNING:
                running += 1
            version = versions[i]
            if source == READY:
                cleared.append(version[SEQ])
            elif target == READY:
                self._ready_set(version[SEQ])
            name, generation = version[NAME], version[GENERATION]
            source_state = _SOURCE_STATE[source]
            effects.append(Transitioned(event_id, name, generation, source_state, target_state))
        self.running = running
        if cleared:
            self.ready_clear_all(cleared)

    def end_lease(self, i: int) -> None:
        """The version at `i` stops running: its lease, if it holds one, ends (LEASE-1)."""
        if i in self.leases:
            self.leases = self.leases.delete(i)

    def set_phase(self, target: Phase, event: str) -> None:
        assert event in PHASE_TRANSITIONS.get((self.phase, target), ()), (self.phase, target)
        self.open()
        self.effects.append(PhaseChanged(self.event_id, self.phase, target))
        self.phase = target

    def finish_drain(self, event: str) -> None:
        """A closing scheduler is closed as soon as nothing runs (PHASE-1, CLOSE-3)."""
        if self.phase is Phase.CLOSING and self.running == 0:
            self.set_phase(Phase.CLOSED, event)

    # The ready index: a 64-ary bitmap tree over sequence numbers (see state.py).

    def _ready_set(self, seq: int) -> None:
        for level in self.ready:
            word = seq >> WORD_SHIFT
            old = level[word]
            level[word] = old | (1 << (seq & WORD_MASK))
            if old:
                return
            seq = word

    def _ready_clear(self, seq: int) -> None:
        for level in self.ready:
            word = seq >> WORD_SHIFT
            new = level[word] & ~(1 << (seq & WORD_MASK))
            level[word] = new
            if new:
                return
            seq = word

    def ready_clear_all(self, seqs: list[int]) -> None:
        """`_ready_clear` of every sequence number in `seqs` (distinct, all set, any order):
        the bits of one word are cleared together, and a word that becomes empty clears its
        own bit one level up, in the same way. In ascending order each word is written once;
        otherwise a word is read back and written again when its sequence numbers recur."""
        for level in self.ready:
            emptied = []
            word = seqs[0] >> WORD_SHIFT
            bits = level[word]
            for seq in seqs:
                if seq >> WORD_SHIFT != word:
                    level[word] = bits
                    if not bits:
                        emptied.append(word)
                    word = seq >> WORD_SHIFT
                    bits = level[word]
                bits &= ~(1 << (seq & WORD_MASK))
            level[word] = bits
            if bits:
                if not emptied:
                    return
            else:
                emptied.append(word)
            seqs = emptied

    def new_seq(self, i: int) -> int:
        """Allocate the next submission sequence number for task `i` (VER-3), after `grow`."""
        seq: int = len(self.by_seq)
        if seq == i:
            # A task submitted in the order it was first mentioned (the usual case) keeps one
            # int object for both numbers: at 10^6 tasks that is 28 MB less.
            seq = i
        self.by_seq.append(i)
        # Every level already has the word of `seq` unless `seq` starts a new leaf word.
        if not seq & WORD_MASK:
            self._grow_ready(seq)
        return seq

    def _grow_ready(self, seq: int) -> None:
        """Give `seq` a bit at every level of the ready index, keeping the top one word."""
        levels = self.ready
        k = 0
        while True:
            need = (seq >> (WORD_SHIFT * (k + 1))) + 1
            level = levels[k]
            while len(level) < need:
                level.append(0)
            if need == 1 and k == len(levels) - 1:
                return
            if k == len(levels) - 1:
                # A new top word summarises the old top, which had only word 0 until now.
                levels.append(pvector([1 if level[0] else 0]).evolver())
            k += 1

    # Blocking (BLOCK-1, BLOCK-2).

    def block_descendants(self, root: int, cause: Cause, event: str) -> None:
        """Block every pending version reachable from `root` through pending dependents."""
        blocked: list[int] = []
        seen: set[int] = set()
        frontier = [root]
        cells, dependents = self.cells, self.dependents
        while frontier:
            v = frontier.pop()
            for j in dependents[v]:
                code = cells[j] & STATE_MASK
                if code == PENDING and j not in seen:
                    seen.add(j)
                    blocked.append(j)
                    frontier.append(j)
        for j in self.sorted_by_seq(blocked):  # EFFECT-3
            self.move(j, BLOCKED, event)
            self.data[j] = cause


def _drained(fresh: dict[str, int]) -> Iterator[tuple[str, int]]:
    """The items of `fresh`, in order; once they are all taken, `fresh` is emptied.

    When the step is frozen the rebuilt hash table takes over from `fresh`: emptied as soon as
    the table has its slots, the dict's memory is free before the table's buckets are built,
    which lowers the memory peak of a large submission (5 MB at 10^5 tasks).
    """
    yield from fresh.items()
    fresh.clear()


# Shared checks for callbacks and cancel (DONE-6, DONE-7, CANCEL-5).


def _resolve(tx: _Tx, task_id: object, generation: object, allow_current: bool) -> int | Reply:
    """The index of the current version `(task_id, generation)` names, or the reply that
    settles the event without one: a rejection, or a stale-generation answer.

    With `allow_current`, a generation of None names the current version.
    """
    eid = tx.event_id
    if not isinstance(task_id, str) or not task_id:
        return Rejected(eid, InvalidTaskId(task_id))
    i = tx.lookup(task_id)
    if i is None:
        return Rejected(eid, UnknownTask(TaskId(task_id)))
    current: Generation = tx.versions[i][GENERATION]
    # The common case first: exactly the current generation, as a plain int.
    if generation.__class__ is int and generation == current:
        return i
    if generation is None and allow_current:
        return i
    tid = TaskId(task_id)
    if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
        return Rejected(eid, InvalidGeneration(tid, generation))
    if generation > current:
        return Rejected(eid, FutureGeneration(tid, Generation(generation), current))
    if generation < current:
        outcome = Outcome(OutcomeKind.STALE_GENERATION, tid, Generation(generation), None)
        return Answered(eid, outcome)
    return i


def _callback_target(tx: _Tx, task_id: object, generation: object) -> int | Reply:
    """The index of the running version a callback names, or the reply that settles it."""
    # The usual case first, without the general checks: a known id, the current generation as
    # a plain int, and a running version. Anything else takes the general path below, which
    # comes to the same answer here and settles the other cases.
    if task_id.__class__ is str and generation.__class__ is int:
        i = tx.fresh.get(task_id)
        if i is None:
            i = find(tx.index, task_id)
        if (
            i is not None
            and tx.cells[i] & STATE_MASK == RUNNING
            and tx.versions[i][GENERATION] == generation
        ):
            return i
    found = _resolve(tx, task_id, generation, allow_current=False)
    if not isinstance(found, int):
        return found
    i = found
    cell = tx.cells[i]
    code = cell & STATE_MASK
    if code == RUNNING:
        return i
    if cell & CLAIMED:
        assert code in TERMINAL_CODES
        return _answer(tx, OutcomeKind.ALREADY_TERMINAL, i)
    version = tx.versions[i]
    return Rejected(tx.event_id, NotClaimed(version[NAME], version[GENERATION], STATE_OF[code]))


def _answer(tx: _Tx, kind: OutcomeKind, i: int) -> Answered:
    """The answer naming the current version of task `i` in its state after the event."""
    version = tx.versions[i]
    outcome = Outcome(kind, version[NAME], version[GENERATION], STATE_OF[tx.code(i)])
    return Answered(tx.event_id, outcome)


# Handlers, one per event.


def _submit(tx: _Tx, ev: Submit) -> Reply:
    eid = tx.event_id
    task_id, deps = ev.task_id, ev.deps
    if not isinstance(task_id, str) or not task_id:
        return Rejected(eid, InvalidTaskId(task_id))
    # `TaskId(task_id)` without the call: a NewType is the identity at run time.
    tid: TaskId = task_id  # type: ignore[assignment]
    phase = tx.phase
    if phase is _CLOSING or phase is _CLOSED:
        return Rejected(eid, SchedulerClosed(tid))
    if not isinstance(deps, tuple):
        return Rejected(eid, InvalidDeps(tid, deps))
    problem = _deps_problem(tid, deps)
    if problem is not None:
        return Rejected(eid, problem)
    # `tx.find(tid)` and `tx.code(found)`, inline: this runs once per submission.
    found = tx.fresh.get(tid)
    if found is None:
        found = find(tx.index, tid)
    old = None if found is None or tx.cells[found] & STATE_MASK == ABSENT else found
    if ev.if_generation is not None:
        problem = _condition_problem(tx, tid, old, ev.if_generation)
        if problem is not None:
            return Rejected(eid, problem)
    started = phase is _STARTED
    if started and old is None:
        return Rejected(eid, GraphClosed(tid))
    if old is not None and tx.code(old) == RUNNING:
        return Rejected(eid, RunningConflict(tid, tx.versions[old][GENERATION]))
    if started:
        assert old is not None
        missing = tuple(sorted(d for d in deps if tx.lookup(d) is None))
        if missing:
            return Rejected(eid, UnknownDependencies(((tid, missing),)))
        cycle = _would_cycle(tx, old, deps)
        if cycle is not None:
            return Rejected(eid, Cycles((cycle,), ()))
    return _accept_submit(tx, found, tid, deps, ev.payload)


def _condition_problem(tx: _Tx, tid: TaskId, old: int | None, n: object) -> Rejection | None:
    """SUB-12: why a conditional submission of `tid` (current version at `old`) is refused, or
    None when `n` is the current generation (0 for a task with no version)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return InvalidIfGeneration(tid, n)
    current = Generation(0) if old is None else tx.versions[old][GENERATION]
    if n != current:
        return GenerationMismatch(tid, Generation(int(n)), current)
    return None


def _deps_problem(tid: TaskId, deps: tuple[object, ...]) -> Rejection | None:
    """SUB-1, SUB-2: the first dependency, in submitted order, that is not a non-empty str or
    repeats an earlier one; None when there is none."""
    for dep in deps:
        # The exact class is the cheap test of the usual case; a str subclass is checked below.
        if dep.__class__ is not str or not dep:
            break
    else:
        # All are valid ids: a set of the same size means no repeats, the usual case.
        if len(set(deps)) == len(deps):
            return None
    seen: set[str] = set()
    for dep in deps:
        if not isinstance(dep, str) or not dep:
            return InvalidDependency(tid, dep)
        if dep in seen:
            return DuplicateDependency(tid, TaskId(dep))
        seen.add(dep)
    # Every dependency is a valid id, one of them of a `str` subclass (an `enum.StrEnum`
    # member, say), which the fast test above sends here: nothing is wrong (SUB-1).
    return None


def _would_cycle(tx: _Tx, i: int, deps: tuple[str, ...]) -> tuple[TaskId, ...] | None:
    """The cycle a new version of task `i` with `deps` would close, as a path (SUB-9).

    The same rule as START-3 with `i` as `t0`: a shortest cycle through `i`, breadth-first
    along the new version's dependencies and then the current versions' ones, in submitted
    order. A self-dependency gives `[i, i]`.
    """
    versions = tx.versions
    new_deps: list[int] = []
    for d in deps:
        j = tx.lookup(d)
        assert j is not None, "the caller checked that every dependency was submitted"
        new_deps.append(j)
    cycle = graph.shortest_cycle(i, Dependencies(versions, i, tuple(new_deps)))
    return None if cycle is None else tuple(versions[v][NAME] for v in cycle)


def _accept_submit(
    tx: _Tx,
    found: int | None,
    tid: TaskId,
    deps: tuple[TaskId, ...],
    payload: object,
    event: str = "Submit",
) -> Submitted:
    """A new version of `tid` (at index `found`, if it was mentioned before) with `deps`, made
    by a submission or, with `event` "Expire", by a requeue (LEASE-3)."""
    if not tx.grown:
        tx.grow()
    i = tx.add(tid) if found is None else found
    cells, dependents, fresh = tx.cells, tx.dependents, tx.fresh
    previous: Version = tx.versions[i]
    code = cells[i] & STATE_MASK
    replaced = None
    if code != ABSENT:
        replaced = (previous[GENERATION], STATE_OF[code])
        _supersede(tx, i, previous, code)
    dep_indices = []
    remaining = 0
    cause: Cause | None = None
    for name in deps:
        # Most dependencies of a large batch were first mentioned in it: `fresh` has them.
        d = fresh.get(name)
        if d is None:
            d = tx.intern(name)
        dep_indices.append(d)
        edges = dependents[d]
        # `edges_add`, its usual case inline: a small tuple grows by one.
        if edges.__class__ is tuple and len(edges) < HUB_EDGES:
            dependents[d] = (*edges, i)
        else:
            dependents[d] = edges_add(edges, i)
        # A dependency on the task itself is on the new version: not succeeded, not a cause.
        dep_code = ABSENT if d == i else cells[d] & STATE_MASK
        if dep_code != SUCCEEDED:
            remaining += 1
            if cause is None and dep_code in UNSUCCESSFUL_CODES:
                cause = tx.cause_from(d)
    generation: Generation = previous[GENERATION] + 1
    tx.versions[i] = (tid, generation, tx.new_seq(i), *dep_indices)
    target = BLOCKED if cause is not None else READY if remaining == 0 else PENDING
    # A new version starts from ABSENT whatever the old one was: the old one is superseded.
    # The move keeps the remaining count only if the new version is pending.
    cells[i] = ABSENT | remaining << REMAINING_SHIFT
    tx.move(i, target, event)
    tx.data[i] = payload if cause is None else cause
    if cause is not None:
        tx.block_descendants(i, cause, event)
    return Submitted(tx.event_id, tid, generation, STATE_OF[target], replaced)


def _supersede(tx: _Tx, i: int, previous: Version, code: int) -> None:
    """Take the current version of task `i` out of the graph before a new one (SUB-6, SUB-8)."""
    cells, dependents = tx.cells, tx.dependents
    # SUB-6: remove the replaced version's reverse edges before registering new ones.
    for d in previous[DEPS:]:
        dependents[d] = edges_remove(dependents[d], i)
    if code == READY:
        tx._ready_clear(previous[SEQ])
    if code == SUCCEEDED:
        # SUB-8: pending dependents wait again for the new version.
        for j in dependents[i]:
            cell = cells[j]
            if cell & STATE_MASK == PENDING:
                cells[j] = cell + REMAINING_ONE


def _start(tx: _Tx) -> Reply:
    if tx.phase is not Phase.OPEN:
        return Started(tx.event_id, False)
    nodes = [i for seq, i in enumerate(tx.by_seq) if tx.versions[i][SEQ] == seq]
    if _names_unsubmitted(tx):
        return Rejected(tx.event_id, _unknown_dependencies(tx, nodes))
    rejection = _cycles(tx, nodes)
    if rejection is not None:
        return Rejected(tx.event_id, rejection)
    tx.set_phase(Phase.STARTED, "Start")
    return Started(tx.event_id, True)


def _names_unsubmitted(tx: _Tx) -> bool:
    """True when some current version depends on a task that was never submitted.

    Such a task is exactly an absent one with reverse edges, so one pass over the tasks
    answers without visiting every edge.
    """
    for cell, edges in zip(tx.cells, tx.dependents, strict=True):
        if cell & STATE_MASK == ABSENT and edges:
            return True
    return False


def _unknown_dependencies(tx: _Tx, nodes: list[int]) -> UnknownDependencies:
    """START-2: each task naming unsubmitted ids, in submission order, with those ids sorted."""
    missing = []
    for i in nodes:
        version = tx.versions[i]
        absent = sorted(tx.versions[d][NAME] for d in version[DEPS:] if tx.code(d) == ABSENT)
        if absent:
            missing.append((version[NAME], tuple(absent)))
    return UnknownDependencies(tuple(missing))


def _cycles(tx: _Tx, nodes: list[int]) -> Cycles | None:
    """START-2, START-3: one shortest cycle per cyclic component, and who depends on one."""
    versions, dependents = tx.versions, tx.dependents
    deps = Dependencies(versions)
    held = graph.held_by_cycles(nodes, deps, dependents)
    if not held:
        return None
    components = graph.strongly_connected(held, deps)
    cyclic = [c for c in components if len(c) > 1 or c[0] in deps[c[0]]]
    assert cyclic
    starts = [(min(c, key=lambda v: versions[v][SEQ]), set(c)) for c in cyclic]
    starts.sort(key=lambda pair: versions[pair[0]][SEQ])
    paths = tuple(
        tuple(versions[v][NAME] for v in _cycle_in(t0, members, deps)) for t0, members in starts
    )
    in_cycles = set().union(*(members for _, members in starts))
    downstream = graph.reachable(in_cycles, dependents) - in_cycles
    unexecutable = tuple(versions[v][NAME] for v in tx.sorted_by_seq(list(downstream)))
    return Cycles(paths, unexecutable)


def _cycle_in(t0: int, members: set[int], deps: graph.Adjacency) -> list[int]:
    cycle = graph.shortest_cycle(t0, deps, members)
    assert cycle is not None, "a cyclic component has a cycle through each member"
    return cycle


def _is_deadline(value: object) -> TypeGuard[int | float]:
    """LEASE-1, LEASE-3: a finite int or float, not a bool."""
    if isinstance(value, int):
        return not isinstance(value, bool)
    return isinstance(value, float) and math.isfinite(value)


def _claim(tx: _Tx, ev: Claim) -> Reply:
    max_tasks = ev.max_tasks
    if max_tasks is not None and (
        not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0
    ):
        return Rejected(tx.event_id, InvalidMaxTasks(max_tasks))
    worker, until = ev.worker, ev.lease_until
    if worker is not None and (not isinstance(worker, str) or not worker):
        return Rejected(tx.event_id, InvalidLeaseArgument("worker", worker))
    if until is not None and not _is_deadline(until):
        return Rejected(tx.event_id, InvalidLeaseArgument("lease_until", until))
    lease = (worker, until)
    if tx.phase is Phase.OPEN:
        return Rejected(tx.event_id, NotStarted())
    if tx.phase is not Phase.STARTED:
        return Claimed(tx.event_id, ())
    wanted = tx.base.limit - tx.running
    if max_tasks is not None:
        wanted = min(wanted, max_tasks)
    seqs = smallest_ready(tx.ready, wanted)  # CLAIM-3
    if not seqs:
        return Claimed(tx.event_id, ())
    by_seq, versions, data = tx.by_seq, tx.versions, tx.data
    claimed = [by_seq[seq] for seq in seqs]
    tx.move_all(claimed, RUNNING, "Claim")
    if worker is not None or until is not None:  # LEASE-1
        leases = tx.leases.mutate()
        for i in claimed:
            leases[i] = lease
        tx.leases = leases.finish()
    grants = []
    for i in claimed:
        version = versions[i]
        grants.append(Grant(version[NAME], version[GENERATION], data[i]))
    return Claimed(tx.event_id, tuple(grants))


def _complete(tx: _Tx, ev: Complete) -> Reply:
    i = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(i, int):
        return i
    tx.move(i, SUCCEEDED, "Complete")
    tx.data[i] = ev.result
    released: list[int] | None = None
    cells = tx.cells
    for j in tx.dependents[i]:
        cell = cells[j]
        if cell & STATE_MASK == PENDING:
            # A pending cell has no flags, so it is below REMAINING_ONE once its count is 0.
            cell -= REMAINING_ONE
            cells[j] = cell
            if cell < REMAINING_ONE:
                if released is None:
                    released = [j]
                else:
                    released.append(j)
    if released is not None:
        for j in tx.sorted_by_seq(released) if len(released) > 1 else released:  # EFFECT-3
            tx.move(j, READY, "Complete")
    if tx.phase is _CLOSING:
        tx.finish_drain("Complete")
    # `_answer(tx, OutcomeKind.ACCEPTED, i)`, inline: this runs once per completion.
    version = tx.versions[i]
    outcome = Outcome(
        _ACCEPTED, version[NAME], version[GENERATION], STATE_OF[cells[i] & STATE_MASK]
    )
    return Answered(tx.event_id, outcome)


def _fail(tx: _Tx, ev: Fail) -> Reply:
    i = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(i, int):
        return i
    tx.move(i, FAILED, "Fail")
    tx.data[i] = ev.error
    tx.block_descendants(i, tx.cause_from(i), "Fail")
    tx.finish_drain("Fail")
    return _answer(tx, OutcomeKind.ACCEPTED, i)


def _confirm_cancel(tx: _Tx, ev: ConfirmCancel) -> Reply:
    i = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(i, int):
        return i
    if not tx.cells[i] & CANCEL_REQUESTED:
        version = tx.versions[i]
        return Rejected(tx.event_id, CancelNotRequested(version[NAME], version[GENERATION]))
    tx.move(i, CANCELLED, "ConfirmCancel")
    tx.data[i] = REASON_CANCELLED
    tx.block_descendants(i, tx.cause_from(i), "ConfirmCancel")
    tx.finish_drain("ConfirmCancel")
    return _answer(tx, OutcomeKind.ACCEPTED, i)


def _heartbeat(tx: _Tx, ev: Heartbeat) -> Reply:
    """LEASE-2: a new deadline for the lease of the running version named, decided first by
    the callback rules."""
    until = ev.lease_until
    if until is not None and not _is_deadline(until):
        return Rejected(tx.event_id, InvalidLeaseArgument("lease_until", until))
    i = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(i, int):
        return i
    held = tx.leases.get(i)
    worker = None if held is None else held[0]
    if held != (worker, until) and (held is not None or until is not None):
        tx.open()
        if worker is None and until is None:
            tx.leases = tx.leases.delete(i)
        else:
            tx.leases = tx.leases.set(i, (worker, until))
    return _answer(tx, OutcomeKind.ACCEPTED, i)


def _expire(tx: _Tx, ev: Expire) -> Reply:
    """LEASE-3: end every lease due at `now`, in ascending submission sequence."""
    now: object = ev.now
    if not _is_deadline(now):
        return Rejected(tx.event_id, InvalidLeaseArgument("now", now))
    # The versions as they were before this expire: a requeue replaces only its own row.
    before = tx.versions
    due = [i for i, (_, until) in tx.leases.items() if until is not None and until <= now]
    due.sort(key=lambda i: before[i][SEQ])
    expired = []
    for i in due:
        version = before[i]
        expired.append((version[NAME], version[GENERATION]))
        if tx.cells[i] & CANCEL_REQUESTED:
            tx.move(i, CANCELLED, "Expire")
            tx.data[i] = REASON_CANCELLED
            tx.block_descendants(i, tx.cause_from(i), "Expire")
        elif tx.base.expiry == FAIL:
            tx.move(i, FAILED, "Expire")
            tx.data[i] = LEASE_EXPIRED
            tx.block_descendants(i, tx.cause_from(i), "Expire")
        elif tx.phase is _CLOSING:
            tx.move(i, CANCELLED, "Expire")
            tx.data[i] = REASON_SHUTDOWN
        else:
            _requeue(tx, i, version)
    tx.finish_drain("Expire")
    return Expired(tx.event_id, tuple(expired))


def _requeue(tx: _Tx, i: int, version: Version) -> None:
    """LEASE-3: supersede the running version at `i` by a new one of the same task, with the
    same dependencies and payload, decided as a submission is."""
    tx.open()
    tx.running -= 1
    tx.end_lease(i)
    deps = tuple([tx.versions[d][NAME] for d in version[DEPS:]])
    _accept_submit(tx, i, version[NAME], deps, tx.data[i], "Expire")


def _cancel(tx: _Tx, ev: Cancel) -> Reply:
    i = _resolve(tx, ev.task_id, ev.generation, allow_current=True)
    if not isinstance(i, int):
        return i
    cell = tx.cells[i]
    code = cell & STATE_MASK
    if code in (PENDING, READY):
        tx.move(i, CANCELLED, "Cancel")
        tx.data[i] = REASON_CANCELLED
        tx.block_descendants(i, tx.cause_from(i), "Cancel")
        return _answer(tx, OutcomeKind.ACCEPTED, i)
    if code == RUNNING:
        if not cell & CANCEL_REQUESTED:
            tx.open()
            tx.cells[i] = cell | CANCEL_REQUESTED
            version = tx.versions[i]
            tx.effects.append(CancelRequested(tx.event_id, version[NAME], version[GENERATION]))
        return _answer(tx, OutcomeKind.CANCEL_REQUESTED, i)
    return _answer(tx, OutcomeKind.ALREADY_TERMINAL, i)


def _close(tx: _Tx) -> Reply:
    if tx.phase in (Phase.CLOSING, Phase.CLOSED):
        return Closed(tx.event_id, False)
    tx.set_phase(Phase.CLOSING, "Close")
    # CLOSE-2: every queued version is cancelled at once, in sequence order; none is blocked.
    for seq, i in enumerate(tx.by_seq):
        if tx.versions[i][SEQ] == seq and tx.code(i) in (PENDING, READY):
            tx.move(i, CANCELLED, "Close")
            tx.data[i] = REASON_SHUTDOWN
    tx.finish_drain("Close")
    return Closed(tx.event_id, True)
