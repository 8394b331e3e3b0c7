"""A deliberately naive restatement of `spec/contract.md`, used only as a differential oracle.

How it works, and why it is written this way. The core keeps remaining-dependency counts,
reverse edges and a ready index, and updates them incrementally; a mistake in that bookkeeping
would still pass any test that asks the core about itself. This model keeps none of it. It holds,
per task id, the plain list of its versions (`Version`, ordinary mutable fields), and decides
everything by scanning that dict at the moment it is needed: who depends on a task, whether a
pending version may be released, which versions are blocked with it, which ready versions a claim
takes. It was written from the contract text, clause by clause (each handler cites its clauses),
not from the core.

It accepts the core's event classes and returns the core's effect classes, in the order the
contract prescribes (EFFECT-2, EFFECT-3), so a test can compare its output with the core's by
plain equality. Every handler checks the whole event before it writes anything, so a rejected
event leaves the model exactly as it was (SUB-3). Speed is not a goal: every step is quadratic or
worse in the number of tasks, which is fine for the small graphs the tests generate.

Choices where the contract text leaves room (each is reported in the change that added this file):
- A dependency on the task itself is judged against the new version, which is neither succeeded
  nor unsuccessful: it counts as unsucceeded (SUB-5) and is never a blocking cause.
- `deps` that is not a tuple is rejected (`InvalidDeps`); the shell turns any iterable into one.
- `ready()` checks `max_tasks` (CLAIM-2) before the phase (CLAIM-1).
"""

from __future__ import annotations

from dataclasses import dataclass

# The breadth-first shortest cycle of START-3 is shared with the conformance module's plain
# implementation (both follow the contract's text over task ids; the core works on indices).
from schedspec.conformance.plain import shortest_cycle as _shortest_cycle
from schedspec.core.effects import (
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
    Reply,
    RunningConflict,
    SchedulerClosed,
    Started,
    Submitted,
    Transitioned,
    UnknownDependencies,
    UnknownTask,
)
from schedspec.core.events import (
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
from schedspec.core.types import (
    REASON_CANCELLED,
    REASON_SHUTDOWN,
    Cause,
    EventId,
    Generation,
    Outcome,
    OutcomeKind,
    Phase,
    TaskId,
    TaskState,
)

P, R, U = TaskState.PENDING, TaskState.READY, TaskState.RUNNING
S, F, C, B = TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.BLOCKED
UNSUCCESSFUL = (F, C, B)


@dataclass
class Version:
    """One version of a task: plain fields, nothing derived."""

    generation: int
    seq: int
    deps: tuple[str, ...]
    payload: object
    state: TaskState
    claimed: bool = False
    cancel_requested: bool = False
    detail: object = None  # result, error, cancellation reason or blocking Cause


class NaiveModel:
    """The whole scheduler as a dict of task id -> list of versions (newest last)."""

    def __init__(self, limit: int) -> None:
        self.phase = Phase.OPEN
        self.limit = limit
        self.tasks: dict[str, list[Version]] = {}
        self.next_seq = 0
        self._eid = EventId(0)
        self._effects: list[Effect] = []

    # Queries (QUERY-1), recomputed.

    def current(self, task_id: str) -> Version | None:
        versions = self.tasks.get(task_id)
        return versions[-1] if versions else None

    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def running(self) -> int:
        return sum(1 for t in self.tasks if self.tasks[t][-1].state is U)

    def cause(self, task_id: str) -> Cause | None:
        v = self.current(task_id)
        if v is None or v.state is not B:
            return None
        assert isinstance(v.detail, Cause)
        return v.detail

    def by_seq(self) -> list[str]:
        """Submitted task ids in ascending sequence number of their current versions (VER-3)."""
        return sorted(self.tasks, key=lambda t: self.tasks[t][-1].seq)

    def dependents(self, task_id: str) -> list[str]:
        """Tasks whose current version names `task_id` as a dependency, by scanning."""
        return [t for t in self.by_seq() if task_id in self.tasks[t][-1].deps]

    # The one entry point.

    def step(self, event: Event) -> tuple[Effect, ...]:
        self._eid = event.event_id
        self._effects = []
        reply = self._dispatch(event)
        return (reply, *self._effects)

    def _dispatch(self, event: Event) -> Reply:
        if isinstance(event, SubmitBatch):
            replies = []
            for member in event.submissions:
                self._eid = member.event_id
                replies.append(self._submit(member))
            return Batched(event.event_id, tuple(replies))
        if isinstance(event, CompleteBatch):
            replies = []
            for member in event.completions:
                self._eid = member.event_id
                replies.append(self._callback(member))
            return Batched(event.event_id, tuple(replies))
        if isinstance(event, Submit):
            return self._submit(event)
        if isinstance(event, Start):
            return self._start()
        if isinstance(event, Claim):
            return self._claim(event.max_tasks)
        if isinstance(event, Complete | Fail | ConfirmCancel):
            return self._callback(event)
        if isinstance(event, Cancel):
            return self._cancel(event)
        if isinstance(event, Close):
            return self._close()
        raise AssertionError(f"unknown event {event!r}")

    # Changes, each told as a notification (EFFECT-2).

    def _move(self, task_id: str, target: TaskState) -> None:
        v = self.tasks[task_id][-1]
        self._effects.append(
            Transitioned(self._eid, TaskId(task_id), v.generation, v.state, target)
        )
        v.state = target
        if target is U:
            v.claimed = True

    def _set_phase(self, target: Phase) -> None:
        self._effects.append(PhaseChanged(self._eid, self.phase, target))
        self.phase = target

    def _drain(self) -> None:
        """PHASE-1, CLOSE-3: closing becomes closed once nothing is running."""
        if self.phase is Phase.CLOSING and self.running() == 0:
            self._set_phase(Phase.CLOSED)

    def _block_from(self, root: str, cause: Cause) -> None:
        """BLOCK-1: every pending current version reachable through pending dependents."""
        reached: list[str] = []
        frontier = [root]
        while frontier:
            v = frontier.pop()
            for t in self.dependents(v):
                if t not in reached and self.tasks[t][-1].state is P:
                    reached.append(t)
                    frontier.append(t)
        for t in sorted(reached, key=lambda t: self.tasks[t][-1].seq):  # EFFECT-3
            self._move(t, B)
            self.tasks[t][-1].detail = cause

    def _root_cause(self, task_id: str) -> Cause:
        """BLOCK-2: the cause a dependent of this unsuccessful version inherits."""
        v = self.tasks[task_id][-1]
        if v.state is B:
            assert isinstance(v.detail, Cause)
            return v.detail
        return Cause(TaskId(task_id), Generation(v.generation), v.state)

    # submit (SUB-*), checks in the order of SUB-11.

    def _submit(self, ev: Submit) -> Reply:
        eid = self._eid
        tid, deps = ev.task_id, ev.deps
        if not isinstance(tid, str) or tid == "":
            return Rejected(eid, InvalidTaskId(tid))
        task = TaskId(tid)
        if self.phase in (Phase.CLOSING, Phase.CLOSED):
            return Rejected(eid, SchedulerClosed(task))
        if not isinstance(deps, tuple):
            return Rejected(eid, InvalidDeps(task, deps))
        for k, d in enumerate(deps):
            if not isinstance(d, str) or d == "":
                return Rejected(eid, InvalidDependency(task, d))
            if d in deps[:k]:
                return Rejected(eid, DuplicateDependency(task, TaskId(d)))
        old = self.current(tid)
        if self.phase is Phase.STARTED and old is None:
            return Rejected(eid, GraphClosed(task))
        if old is not None and old.state is U:
            return Rejected(eid, RunningConflict(task, Generation(old.generation)))
        if self.phase is Phase.STARTED:
            missing = sorted(d for d in deps if d not in self.tasks)
            if missing:
                return Rejected(eid, UnknownDependencies(((task, tuple(missing)),)))
            cycle = self._cycle_through(tid, deps)
            if cycle is not None:
                return Rejected(eid, Cycles((tuple(TaskId(t) for t in cycle),), ()))
        # SUB-5: decided from the current versions of the dependencies, in submitted order.
        cause: Cause | None = None
        all_succeeded = True
        for d in deps:
            dv = self.current(d) if d != tid else None
            if dv is not None and dv.state is S:
                continue
            all_succeeded = False
            if cause is None and dv is not None and dv.state in UNSUCCESSFUL:
                cause = self._root_cause(d)
        state = B if cause is not None else R if all_succeeded else P
        generation = 1 if old is None else old.generation + 1  # VER-1
        new = Version(generation, self.next_seq, deps, ev.payload, state, detail=cause)
        self.next_seq += 1  # VER-3
        self.tasks.setdefault(tid, []).append(new)  # SUB-6: the old version is superseded
        self._effects.append(Transitioned(eid, task, Generation(generation), None, state))
        if cause is not None:
            self._block_from(tid, cause)  # SUB-8, BLOCK-1
        replaced = None if old is None else (Generation(old.generation), old.state)
        return Submitted(eid, task, Generation(generation), state, replaced)

    def _deps_of(self, task_id: str) -> tuple[str, ...]:
        v = self.current(task_id)
        return () if v is None else v.deps

    def _cycle_through(self, tid: str, new_deps: tuple[str, ...]) -> list[str] | None:
        """SUB-9: a shortest cycle through `tid` once it depends on `new_deps`, or None.

        Breadth-first along dependencies in submitted order, as START-3 does for start.
        """

        def deps_of(t: str) -> tuple[str, ...]:
            return new_deps if t == tid else self._deps_of(t)

        return _shortest_cycle(tid, deps_of)

    # start (START-*).

    def _start(self) -> Reply:
        if self.phase is not Phase.OPEN:
            return Started(self._eid, False)
        order = self.by_seq()
        missing = []
        for t in order:
            absent = sorted(d for d in self._deps_of(t) if d not in self.tasks)
            if absent:
                missing.append((TaskId(t), tuple(TaskId(d) for d in absent)))
        if missing:
            return Rejected(self._eid, UnknownDependencies(tuple(missing)))
        reach = {t: self._reachable(t) for t in order}
        cyclic = [t for t in order if t in reach[t]]
        if cyclic:
            cycles = []
            covered: set[str] = set()
            for t0 in cyclic:  # ascending sequence: the first member seen is the component's t0
                if t0 in covered:
                    continue
                component = {t for t in cyclic if t in reach[t0] and t0 in reach[t]}
                covered |= component
                path = _shortest_cycle(t0, self._deps_of)
                assert path is not None
                cycles.append(tuple(TaskId(t) for t in path))
            unexecutable = tuple(
                TaskId(t) for t in order if t not in covered and reach[t] & covered
            )
            return Rejected(self._eid, Cycles(tuple(cycles), unexecutable))
        self._set_phase(Phase.STARTED)
        return Started(self._eid, True)

    def _reachable(self, t: str) -> set[str]:
        """Every task reachable from `t` along one or more dependency edges."""
        seen: set[str] = set()
        frontier = list(self._deps_of(t))
        while frontier:
            d = frontier.pop()
            if d not in seen:
                seen.add(d)
                frontier.extend(self._deps_of(d))
        return seen

    # ready (CLAIM-*).

    def _claim(self, max_tasks: object) -> Reply:
        if max_tasks is not None and (
            not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0
        ):
            return Rejected(self._eid, InvalidMaxTasks(max_tasks))
        if self.phase is Phase.OPEN:
            return Rejected(self._eid, NotStarted())
        if self.phase is not Phase.STARTED:
            return Claimed(self._eid, ())
        free = self.limit - self.running()
        wanted = free if max_tasks is None else min(free, max_tasks)
        ready = [t for t in self.by_seq() if self.tasks[t][-1].state is R]
        grants = []
        for t in ready[: max(wanted, 0)]:
            self._move(t, U)
            v = self.tasks[t][-1]
            grants.append(Grant(TaskId(t), Generation(v.generation), v.payload))
        return Claimed(self._eid, tuple(grants))

    # Version resolution shared by callbacks and cancel (DONE-6, DONE-7, CANCEL-5).

    def _resolve(self, tid: object, generation: object, allow_none: bool) -> Reply | Version:
        eid = self._eid
        if not isinstance(tid, str) or tid == "":
            return Rejected(eid, InvalidTaskId(tid))
        task = TaskId(tid)
        v = self.current(tid)
        if v is None:
            return Rejected(eid, UnknownTask(task))
        if generation is None and allow_none:
            return v
        if not isinstance(generation, int) or isinstance(generation, bool) or generation < 1:
            return Rejected(eid, InvalidGeneration(task, generation))
        if generation > v.generation:
            return Rejected(
                eid, FutureGeneration(task, Generation(generation), Generation(v.generation))
            )
        if generation < v.generation:
            outcome = Outcome(OutcomeKind.STALE_GENERATION, task, Generation(generation), None)
            return Answered(eid, outcome)
        return v

    def _answer(self, kind: OutcomeKind, tid: str, v: Version) -> Answered:
        return Answered(self._eid, Outcome(kind, TaskId(tid), Generation(v.generation), v.state))

    def _callback(self, ev: Complete | Fail | ConfirmCancel) -> Reply:
        found = self._resolve(ev.task_id, ev.generation, allow_none=False)
        if not isinstance(found, Version):
            return found
        tid, v = str(ev.task_id), found
        task, gen = TaskId(tid), Generation(v.generation)
        if v.state is not U:
            if v.claimed:  # DONE-4
                return self._answer(OutcomeKind.ALREADY_TERMINAL, tid, v)
            return Rejected(self._eid, NotClaimed(task, gen, v.state))
        if isinstance(ev, Complete):  # DONE-1
            self._move(tid, S)
            v.detail = ev.result
            released = [
                t
                for t in self.dependents(tid)
                if self.tasks[t][-1].state is P
                and all(
                    d != t and d in self.tasks and self.tasks[d][-1].state is S
                    for d in self.tasks[t][-1].deps
                )
            ]
            for t in released:  # `dependents` is in ascending sequence already (EFFECT-3)
                self._move(t, R)
        elif isinstance(ev, Fail):  # DONE-2
            self._move(tid, F)
            v.detail = ev.error
            self._block_from(tid, Cause(task, gen, F))
        else:  # CANCEL-4
            if not v.cancel_requested:
                return Rejected(self._eid, CancelNotRequested(task, gen))
            self._move(tid, C)
            v.detail = REASON_CANCELLED
            self._block_from(tid, Cause(task, gen, C))
        self._drain()
        return self._answer(OutcomeKind.ACCEPTED, tid, v)

    # cancel (CANCEL-1..3, CANCEL-5).

    def _cancel(self, ev: Cancel) -> Reply:
        found = self._resolve(ev.task_id, ev.generation, allow_none=True)
        if not isinstance(found, Version):
            return found
        tid, v = str(ev.task_id), found
        if v.state in (P, R):
            self._move(tid, C)
            v.detail = REASON_CANCELLED
            self._block_from(tid, Cause(TaskId(tid), Generation(v.generation), C))
            return self._answer(OutcomeKind.ACCEPTED, tid, v)
        if v.state is U:
            if not v.cancel_requested:
                v.cancel_requested = True
                self._effects.append(
                    CancelRequested(self._eid, TaskId(tid), Generation(v.generation))
                )
            return self._answer(OutcomeKind.CANCEL_REQUESTED, tid, v)
        return self._answer(OutcomeKind.ALREADY_TERMINAL, tid, v)

    # close (CLOSE-*).

    def _close(self) -> Reply:
        if self.phase in (Phase.CLOSING, Phase.CLOSED):
            return Closed(self._eid, False)
        self._set_phase(Phase.CLOSING)
        for t in self.by_seq():
            if self.tasks[t][-1].state in (P, R):
                self._move(t, C)
                self.tasks[t][-1].detail = REASON_SHUTDOWN
        self._drain()
        return Closed(self._eid, True)
