"""`step(state, event) -> (state, effects)`: the whole scheduler, as one total function.

Theory of operation. A step opens a transient copy of the state (`_Tx`: evolvers over the
persistent columns, so only touched nodes are copied), runs the handler of the event, and
freezes the copy into the next state. Every handler first checks the event against the
contract without writing anything; a refused event returns the very same state object and one
`Rejected` reply (SUB-3). Every version state change goes through `_Tx.move`, which checks it
against `table.TRANSITIONS`, keeps the running count and the ready index in step with the cell,
and records a `Transitioned` notification; every phase change goes through `_Tx.set_phase`.

The legality rules live here and only here: the shell, the explorer and the conformance oracle
all ask this function.
"""

from __future__ import annotations

from typing import Any, assert_never

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
    FutureGeneration,
    Grant,
    GraphClosed,
    InvalidDependency,
    InvalidDeps,
    InvalidGeneration,
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
    Fail,
    Start,
    Submit,
    SubmitBatch,
)
from .state import (
    ABSENT,
    BLOCKED,
    CANCEL_REQUESTED,
    CANCELLED,
    CLAIMED,
    CODE_OF,
    EMPTY_EDGES,
    FAILED,
    PENDING,
    READY,
    REMAINING_ONE,
    REMAINING_SHIFT,
    RUNNING,
    STATE_MASK,
    STATE_OF,
    SUCCEEDED,
    TERMINAL_CODES,
    WORD_MASK,
    WORD_SHIFT,
    State,
    edges_add,
    edges_remove,
)
from .table import PHASE_TRANSITIONS, TRANSITIONS
from .types import (
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

# The transition table in cell codes, for a cheap check on the hot path. A new version's
# source is ABSENT.
_LEGAL: frozenset[tuple[int, int, str]] = frozenset(
    (ABSENT if source is None else CODE_OF[source], CODE_OF[target], event)
    for (source, target), events in TRANSITIONS.items()
    for event in events
)
_FLAGS = CLAIMED | CANCEL_REQUESTED


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
        case Close():
            reply = _close(tx)
        case SubmitBatch():
            reply = Batched(
                event.event_id, tuple(_member(tx, m, _submit) for m in event.submissions)
            )
        case CompleteBatch():
            reply = Batched(
                event.event_id, tuple(_member(tx, m, _complete) for m in event.completions)
            )
        case _:
            assert_never(event)
    if not tx.changed:
        return state, (reply, *tx.effects)
    return tx.freeze(), (reply, *tx.effects)


def _member(tx: _Tx, member: Any, handler: Any) -> Reply:
    """Run one member of a batch under its own event id (EFFECT-4)."""
    tx.event_id = member.event_id
    reply: Reply = handler(tx, member)
    return reply


class _Tx:
    """A transient, private copy of one state for the duration of one step.

    Evolvers copy a vector node only when it is first written, so the input state is never
    touched and the output shares everything the step did not change.
    """

    __slots__ = (
        "base",
        "by_seq",
        "cells",
        "changed",
        "dependents",
        "deps",
        "details",
        "effects",
        "event_id",
        "generations",
        "index",
        "names",
        "payloads",
        "phase",
        "ready",
        "running",
        "seqs",
    )

    def __init__(self, base: State, event_id: EventId) -> None:
        self.base = base
        self.event_id = event_id
        self.changed = False
        self.effects: list[Effect] = []
        self.phase = base.phase
        self.running = base.running
        self.index = base.index.mutate()
        self.names = base.names.evolver()
        self.cells = base.cells.evolver()
        self.generations = base.generations.evolver()
        self.seqs = base.seqs.evolver()
        self.deps = base.deps.evolver()
        self.dependents = base.dependents.evolver()
        self.payloads = base.payloads.evolver()
        self.details = base.details.evolver()
        self.by_seq = base.by_seq.evolver()
        self.ready = [level.evolver() for level in base.ready]

    def freeze(self) -> State:
        return State(
            phase=self.phase,
            limit=self.base.limit,
            running=self.running,
            index=self.index.finish(),
            names=self.names.persistent(),
            cells=self.cells.persistent(),
            generations=self.generations.persistent(),
            seqs=self.seqs.persistent(),
            deps=self.deps.persistent(),
            dependents=self.dependents.persistent(),
            payloads=self.payloads.persistent(),
            details=self.details.persistent(),
            by_seq=self.by_seq.persistent(),
            ready=tuple(level.persistent() for level in self.ready),
        )

    # Reads.

    def lookup(self, task_id: TaskId) -> int | None:
        """Index of a submitted task (one that has a version), else None."""
        i: int | None = self.index.get(task_id)
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
            cause = self.details[i]
            assert isinstance(cause, Cause)
            return cause
        assert code in (FAILED, CANCELLED)
        return Cause(self.names[i], Generation(self.generations[i]), STATE_OF[code])

    def sorted_by_seq(self, indices: list[int]) -> list[int]:
        seqs = self.seqs
        return sorted(indices, key=lambda j: seqs[j])

    # Writes. Every one sets `changed`.

    def intern(self, task_id: TaskId) -> int:
        """The index of `task_id`, creating an absent entry on first mention."""
        i: int | None = self.index.get(task_id)
        if i is not None:
            return i
        self.changed = True
        i = len(self.names)
        self.index[task_id] = i
        self.names.append(task_id)
        self.cells.append(ABSENT)
        self.generations.append(0)
        self.seqs.append(-1)
        self.deps.append(())
        self.dependents.append(EMPTY_EDGES)
        self.payloads.append(None)
        self.details.append(None)
        return i

    def move(self, i: int, target: int, event: str) -> None:
        """The one place a version's state changes (STATE-2), with its bookkeeping."""
        cell = self.cells[i]
        source = cell & STATE_MASK
        assert (source, target, event) in _LEGAL, (STATE_OF[source], STATE_OF[target], event)
        self.changed = True
        new_cell = (cell & _FLAGS) | target
        if target == RUNNING:
            new_cell |= CLAIMED
            self.running += 1
        elif source == RUNNING:
            self.running -= 1
        if source == READY:
            self._ready_clear(self.seqs[i])
        elif target == READY:
            self._ready_set(self.seqs[i])
        self.cells[i] = new_cell
        self.effects.append(
            Transitioned(
                self.event_id,
                self.names[i],
                Generation(self.generations[i]),
                None if source == ABSENT else STATE_OF[source],
                STATE_OF[target],
            )
        )

    def set_phase(self, target: Phase, event: str) -> None:
        assert event in PHASE_TRANSITIONS.get((self.phase, target), ()), (self.phase, target)
        self.changed = True
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

    def ready_pop(self) -> int | None:
        """The smallest ready sequence number, without removing it."""
        levels = self.ready
        position = 0
        for level in reversed(levels):
            bits = level[position]
            if not bits:
                return None
            position = (position << WORD_SHIFT) + (bits & -bits).bit_length() - 1
        return position

    def new_seq(self, i: int) -> int:
        """Allocate the next submission sequence number for task `i` (VER-3)."""
        seq = len(self.by_seq)
        self.by_seq.append(i)
        self.seqs[i] = seq
        # Grow the bitmap tree so that `seq` has a bit at every level and the top stays one word.
        levels = self.ready
        k = 0
        while True:
            need = (seq >> (WORD_SHIFT * (k + 1))) + 1
            level = levels[k]
            while len(level) < need:
                level.append(0)
            if need == 1 and k == len(levels) - 1:
                return seq
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
                if j not in seen and cells[j] & STATE_MASK == PENDING:
                    seen.add(j)
                    blocked.append(j)
                    frontier.append(j)
        for j in self.sorted_by_seq(blocked):  # EFFECT-3
            self.details[j] = cause
            self.move(j, BLOCKED, event)


# Shared checks for callbacks and cancel (DONE-6, DONE-7, CANCEL-5).


def _version(
    tx: _Tx, task_id: object, generation: object, allow_current: bool
) -> tuple[int, Generation] | Rejection | Outcome:
    """Resolve `(task_id, generation)` to the current version's index, or say why not.

    Returns the index and generation of the current version when `generation` names it, a
    stale-generation `Outcome` when it names an older one, or the rejection.
    """
    if not isinstance(task_id, str) or not task_id:
        return InvalidTaskId(task_id)
    tid = TaskId(task_id)
    i = tx.lookup(tid)
    if i is None:
        return UnknownTask(tid)
    current = Generation(tx.generations[i])
    if generation is None and allow_current:
        return i, current
    if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
        return InvalidGeneration(tid, generation)
    if generation > current:
        return FutureGeneration(tid, Generation(generation), current)
    if generation < current:
        return Outcome(OutcomeKind.STALE_GENERATION, tid, Generation(generation), None)
    return i, current


def _callback_target(
    tx: _Tx, task_id: object, generation: object
) -> tuple[int, Generation] | Reply:
    """The running version a callback names, or the reply that settles the callback."""
    found = _version(tx, task_id, generation, allow_current=False)
    if isinstance(found, Outcome):
        return Answered(tx.event_id, found)
    if not isinstance(found, tuple):
        return Rejected(tx.event_id, found)
    i, gen = found
    cell = tx.cells[i]
    code = cell & STATE_MASK
    if code == RUNNING:
        return i, gen
    if cell & CLAIMED:
        assert code in TERMINAL_CODES
        return Answered(
            tx.event_id,
            Outcome(OutcomeKind.ALREADY_TERMINAL, tx.names[i], gen, STATE_OF[code]),
        )
    return Rejected(tx.event_id, NotClaimed(tx.names[i], gen, STATE_OF[code]))


def _accepted(tx: _Tx, i: int, gen: Generation) -> Answered:
    return Answered(
        tx.event_id, Outcome(OutcomeKind.ACCEPTED, tx.names[i], gen, STATE_OF[tx.code(i)])
    )


# Handlers, one per event.


def _submit(tx: _Tx, ev: Submit) -> Reply:
    eid = tx.event_id
    task_id, deps = ev.task_id, ev.deps
    if not isinstance(task_id, str) or not task_id:
        return Rejected(eid, InvalidTaskId(task_id))
    tid = TaskId(task_id)
    if tx.phase in (Phase.CLOSING, Phase.CLOSED):
        return Rejected(eid, SchedulerClosed(tid))
    if not isinstance(deps, tuple):
        return Rejected(eid, InvalidDeps(tid, deps))
    seen: set[str] = set()
    for dep in deps:
        if not isinstance(dep, str) or not dep:
            return Rejected(eid, InvalidDependency(tid, dep))
        if dep in seen:
            return Rejected(eid, DuplicateDependency(tid, TaskId(dep)))
        seen.add(dep)
    old = tx.lookup(tid)
    started = tx.phase is Phase.STARTED
    if started and old is None:
        return Rejected(eid, GraphClosed(tid))
    if old is not None and tx.code(old) == RUNNING:
        return Rejected(eid, RunningConflict(tid, Generation(tx.generations[old])))
    if started:
        assert old is not None
        missing = tuple(sorted(d for d in deps if tx.lookup(TaskId(d)) is None))
        if missing:
            return Rejected(eid, UnknownDependencies(((tid, missing),)))
        cycle = _would_cycle(tx, old, deps)
        if cycle is not None:
            return Rejected(eid, Cycles((cycle,), ()))
    return _accept_submit(tx, tid, deps, ev.payload)


def _would_cycle(tx: _Tx, i: int, deps: tuple[str, ...]) -> tuple[TaskId, ...] | None:
    """The cycle a new version of task `i` with `deps` would close, as a path (SUB-9).

    The same rule as START-3 with `i` as `t0`: a shortest cycle through `i`, breadth-first
    along the new version's dependencies and then the current versions' ones, in submitted
    order. A self-dependency gives `[i, i]`.
    """
    new_deps = tuple(tx.index[TaskId(d)] for d in deps)
    cycle = graph.shortest_cycle(i, lambda v: new_deps if v == i else tx.deps[v])
    return None if cycle is None else tuple(tx.names[v] for v in cycle)


def _accept_submit(tx: _Tx, tid: TaskId, deps: tuple[str, ...], payload: object) -> Submitted:
    i = tx.intern(tid)
    replaced: tuple[Generation, Any] | None = None
    code = tx.code(i)
    if code != ABSENT:
        replaced = (Generation(tx.generations[i]), STATE_OF[code])
        # SUB-6: remove the replaced version's reverse edges before registering new ones.
        for d in tx.deps[i]:
            tx.dependents[d] = edges_remove(tx.dependents[d], i)
        if code == READY:
            tx._ready_clear(tx.seqs[i])
        if code == SUCCEEDED:
            # SUB-8: pending dependents wait again for the new version.
            for j in tx.dependents[i]:
                if tx.cells[j] & STATE_MASK == PENDING:
                    tx.cells[j] += REMAINING_ONE
    dep_indices = tuple(tx.intern(TaskId(d)) for d in deps)
    generation = Generation(tx.generations[i] + 1)
    tx.generations[i] = generation
    tx.new_seq(i)
    tx.deps[i] = dep_indices
    tx.payloads[i] = payload
    tx.details[i] = None
    remaining = 0
    cause: Cause | None = None
    for d in dep_indices:
        tx.dependents[d] = edges_add(tx.dependents[d], i)
        dep_code = ABSENT if d == i else tx.code(d)
        if dep_code == SUCCEEDED:
            continue
        remaining += 1
        if cause is None and dep_code in (FAILED, CANCELLED, BLOCKED):
            cause = tx.cause_from(d)
    target = BLOCKED if cause is not None else READY if remaining == 0 else PENDING
    # A new version starts from ABSENT whatever the old one was: the old one is superseded.
    tx.cells[i] = ABSENT
    tx.move(i, target, "Submit")
    if target == PENDING:
        tx.cells[i] += remaining << REMAINING_SHIFT
    if cause is not None:
        tx.details[i] = cause
        tx.block_descendants(i, cause, "Submit")
    return Submitted(tx.event_id, tid, generation, STATE_OF[target], replaced)


def _start(tx: _Tx) -> Reply:
    if tx.phase is not Phase.OPEN:
        return Started(tx.event_id, False)
    nodes = [tx.by_seq[s] for s in range(len(tx.by_seq)) if tx.seqs[tx.by_seq[s]] == s]
    missing = []
    for i in nodes:
        absent = sorted(tx.names[d] for d in tx.deps[i] if tx.code(d) == ABSENT)
        if absent:
            missing.append((tx.names[i], tuple(absent)))
    if missing:
        return Rejected(tx.event_id, UnknownDependencies(tuple(missing)))
    rejection = _cycles(tx, nodes)
    if rejection is not None:
        return Rejected(tx.event_id, rejection)
    tx.set_phase(Phase.STARTED, "Start")
    return Started(tx.event_id, True)


def _cycles(tx: _Tx, nodes: list[int]) -> Cycles | None:
    """START-2, START-3: one shortest cycle per cyclic component, and who depends on one."""
    deps = tx.deps
    components = graph.strongly_connected(nodes, deps.__getitem__, len(tx.names))
    cyclic = [c for c in components if len(c) > 1 or c[0] in deps[c[0]]]
    if not cyclic:
        return None
    seqs = tx.seqs
    starts = [(min(c, key=lambda v: seqs[v]), set(c)) for c in cyclic]
    starts.sort(key=lambda pair: seqs[pair[0]])
    paths = tuple(
        tuple(tx.names[v] for v in _cycle_in(t0, members, deps.__getitem__))
        for t0, members in starts
    )
    in_cycles = set().union(*(members for _, members in starts))
    downstream = graph.reachable(in_cycles, lambda v: tx.dependents[v]) - in_cycles
    unexecutable = tuple(tx.names[v] for v in tx.sorted_by_seq(list(downstream)))
    return Cycles(paths, unexecutable)


def _cycle_in(t0: int, members: set[int], deps: graph.Neighbours) -> list[int]:
    cycle = graph.shortest_cycle(t0, deps, members)
    assert cycle is not None, "a cyclic component has a cycle through each member"
    return cycle


def _claim(tx: _Tx, ev: Claim) -> Reply:
    max_tasks = ev.max_tasks
    if max_tasks is not None and (
        not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0
    ):
        return Rejected(tx.event_id, InvalidMaxTasks(max_tasks))
    if tx.phase is Phase.OPEN:
        return Rejected(tx.event_id, NotStarted())
    if tx.phase is not Phase.STARTED:
        return Claimed(tx.event_id, ())
    wanted = tx.base.limit - tx.running
    if max_tasks is not None:
        wanted = min(wanted, max_tasks)
    grants = []
    for _ in range(wanted):
        seq = tx.ready_pop()
        if seq is None:
            break
        i = tx.by_seq[seq]
        tx.move(i, RUNNING, "Claim")
        grants.append(Grant(tx.names[i], Generation(tx.generations[i]), tx.payloads[i]))
    return Claimed(tx.event_id, tuple(grants))


def _complete(tx: _Tx, ev: Complete) -> Reply:
    target = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(target, tuple):
        return target
    i, gen = target
    tx.move(i, SUCCEEDED, "Complete")
    tx.details[i] = ev.result
    released = []
    cells = tx.cells
    for j in tx.dependents[i]:
        cell = cells[j]
        if cell & STATE_MASK == PENDING:
            cell -= REMAINING_ONE
            cells[j] = cell
            if cell >> REMAINING_SHIFT == 0:
                released.append(j)
    for j in tx.sorted_by_seq(released) if len(released) > 1 else released:
        tx.move(j, READY, "Complete")
    tx.finish_drain("Complete")
    return _accepted(tx, i, gen)


def _fail(tx: _Tx, ev: Fail) -> Reply:
    target = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(target, tuple):
        return target
    i, gen = target
    tx.move(i, FAILED, "Fail")
    tx.details[i] = ev.error
    tx.block_descendants(i, Cause(tx.names[i], gen, STATE_OF[FAILED]), "Fail")
    tx.finish_drain("Fail")
    return _accepted(tx, i, gen)


def _confirm_cancel(tx: _Tx, ev: ConfirmCancel) -> Reply:
    target = _callback_target(tx, ev.task_id, ev.generation)
    if not isinstance(target, tuple):
        return target
    i, gen = target
    if not tx.cells[i] & CANCEL_REQUESTED:
        return Rejected(tx.event_id, CancelNotRequested(tx.names[i], gen))
    tx.move(i, CANCELLED, "ConfirmCancel")
    tx.details[i] = REASON_CANCELLED
    tx.block_descendants(i, Cause(tx.names[i], gen, STATE_OF[CANCELLED]), "ConfirmCancel")
    tx.finish_drain("ConfirmCancel")
    return _accepted(tx, i, gen)


def _cancel(tx: _Tx, ev: Cancel) -> Reply:
    found = _version(tx, ev.task_id, ev.generation, allow_current=True)
    if isinstance(found, Outcome):
        return Answered(tx.event_id, found)
    if not isinstance(found, tuple):
        return Rejected(tx.event_id, found)
    i, gen = found
    cell = tx.cells[i]
    code = cell & STATE_MASK
    name = tx.names[i]
    if code in (PENDING, READY):
        tx.move(i, CANCELLED, "Cancel")
        tx.details[i] = REASON_CANCELLED
        tx.block_descendants(i, Cause(name, gen, STATE_OF[CANCELLED]), "Cancel")
        return _accepted(tx, i, gen)
    if code == RUNNING:
        if not cell & CANCEL_REQUESTED:
            tx.changed = True
            tx.cells[i] = cell | CANCEL_REQUESTED
            tx.effects.append(CancelRequested(tx.event_id, name, gen))
        return Answered(
            tx.event_id, Outcome(OutcomeKind.CANCEL_REQUESTED, name, gen, STATE_OF[code])
        )
    return Answered(tx.event_id, Outcome(OutcomeKind.ALREADY_TERMINAL, name, gen, STATE_OF[code]))


def _close(tx: _Tx) -> Reply:
    if tx.phase in (Phase.CLOSING, Phase.CLOSED):
        return Closed(tx.event_id, False)
    tx.set_phase(Phase.CLOSING, "Close")
    # CLOSE-2: every queued version is cancelled at once, in sequence order; none is blocked.
    for seq in range(len(tx.by_seq)):
        i = tx.by_seq[seq]
        if tx.seqs[i] == seq and tx.code(i) in (PENDING, READY):
            tx.move(i, CANCELLED, "Close")
            tx.details[i] = REASON_SHUTDOWN
    tx.finish_drain("Close")
    return Closed(tx.event_id, True)
