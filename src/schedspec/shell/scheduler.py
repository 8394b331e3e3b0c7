"""`TaskScheduler`: the thin, thread-safe shell around the pure core.

It holds the current core state under one lock and has one write:
`self._state, effects = step(self._state, event)`. It then carries out the effects as their
types say (`core/effects.py`): hand out claims with fresh cancellation tokens, set a token when a
cancellation is requested, wake `close()` waiters when the phase becomes `closed`, and turn a
`Rejected` reply into the `SchedulerError` that names it. It never decides a rule itself, with
one exception that the core cannot see: `fn` must be callable.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core import effects as fx
from ..core import events as ev
from ..core.invariants import check_transition, validate_state
from ..core.state import State, expiry_problem, initial_state, limit_problem
from ..core.step import step
from ..core.types import (
    Cause,
    EventId,
    Generation,
    Lease,
    Outcome,
    Phase,
    TaskId,
    TaskState,
)
from ..errors import (
    InvalidArgumentError,
    SchedulerError,
    UnknownTaskError,
    error_for,
    shown,
)

# Guards the lazy creation of a token's event against a concurrent `_set`.
_TOKEN_EVENT_LOCK = threading.Lock()


class CancellationToken:
    """Set when cancellation of one claimed version was requested (CLAIM-6, CANCEL-3).

    A task function polls it (`cancelled`, `wait`) and, to stop on request, raises
    `CancelledByRequest` via `raise_if_cancelled()`; the runner then confirms the cancellation.

    Every claim gets a token and few are ever waited on, so the `threading.Event` a `wait`
    blocks on (a condition and a lock, several microseconds to make) is made on the first
    `wait`; until then the token is a flag. Making the event and setting the token hold the
    same lock, so a `wait` never misses a `_set`.
    """

    __slots__ = ("_event", "_is_set")

    def __init__(self) -> None:
        self._is_set = False
        self._event: threading.Event | None = None

    @property
    def cancelled(self) -> bool:
        """Whether a cancellation of this version was requested (CANCEL-3)."""
        return self._is_set

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a cancellation is requested or `timeout` seconds pass (None: no limit);
        return whether it was requested. A long job can wait on its token instead of sleeping."""
        with _TOKEN_EVENT_LOCK:
            if self._event is None:
                self._event = threading.Event()
                if self._is_set:
                    self._event.set()
            event = self._event
        return event.wait(timeout)

    def raise_if_cancelled(self) -> None:
        """Raise `CancelledByRequest` if a cancellation was requested: the runner then confirms
        it (`confirm_cancel`, CANCEL-4) and the version ends `cancelled`."""
        from ..errors import CancelledByRequest

        if self._is_set:
            raise CancelledByRequest

    def _set(self) -> None:
        with _TOKEN_EVENT_LOCK:
            self._is_set = True
            if self._event is not None:
                self._event.set()


@dataclass(frozen=True, slots=True)
class Claim:
    """One claimed version, handed to a worker by `ready()` (CLAIM-6)."""

    task_id: TaskId
    generation: Generation
    fn: Callable[..., Any]
    token: CancellationToken


@dataclass(frozen=True, slots=True)
class VersionRef:
    """One version, named as callbacks name it: `(task_id, generation)` (VER-2)."""

    task_id: TaskId
    generation: Generation


@dataclass(frozen=True, slots=True)
class CloseReport:
    """What `close()` found (CLOSE-5)."""

    closed: bool
    cancelled: tuple[VersionRef, ...]
    still_running: tuple[VersionRef, ...]


@dataclass(frozen=True, slots=True)
class TaskView:
    """The current version of a task at one instant (QUERY-1): its generation, its state, its
    root cause if blocked (BLOCK-2), and its detail once it ended: the result, the error, the
    reason of a cancellation or the cause of a blocked version (None before)."""

    task_id: TaskId
    generation: Generation
    state: TaskState
    cause: Cause | None
    detail: object


@dataclass(frozen=True, slots=True)
class Change:
    """One version's change of state, as the hook `on_change` of `TaskScheduler` receives it:
    the event that made it (events are numbered 1, 2, ... in the order they were applied), the
    version, and its state before (None for a new version) and after."""

    event_id: EventId
    task_id: TaskId
    generation: Generation
    source: TaskState | None
    target: TaskState


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why a version is where it is (`Snapshot.waiting_on`): its dependencies in submitted
    order, each with its current generation and state (None for an id never submitted), and
    how many of them its release still waits for (`remaining`, 0 unless it is pending)."""

    task_id: TaskId
    generation: Generation
    state: TaskState
    deps: tuple[tuple[TaskId, Generation | None, TaskState | None], ...]
    remaining: int


class Snapshot:
    """An immutable view of the whole scheduler at one instant (QUERY-2).

    It wraps one core state, which never changes, so taking it costs nothing and reading it
    needs no lock.
    """

    __slots__ = ("_state",)

    def __init__(self, state: State) -> None:
        self._state = state

    @property
    def core_state(self) -> State:
        """The core's own immutable state, for those who use the core (`schedspec.core`)."""
        return self._state

    @property
    def phase(self) -> Phase:
        """The scheduler's phase: open, started, closing or closed (PHASE-1)."""
        return self._state.phase

    @property
    def running(self) -> int:
        """How many versions are running, that is, hold a slot (CLAIM-5)."""
        return self._state.running

    def counts(self) -> dict[TaskState, int]:
        """How many current versions are in each state; every state is a key."""
        return self._state.counts()

    def task_ids(self) -> list[TaskId]:
        """Every task id ever submitted, in the order of first submission."""
        return list(self._state.task_ids())

    def waiting_on(self, task_id: TaskId) -> Waiting:
        """Why is this pending? The version's dependencies with their states, and how many of
        them it still waits for (STATE-4). Raises `UnknownTaskError` as `task` does."""
        view = self.task(task_id)
        facts = self._state.facts(view.task_id)
        assert facts is not None
        s = self._state
        deps = tuple((d, s.generation_of(d), s.state_of(d)) for d in facts.deps)
        return Waiting(view.task_id, view.generation, view.state, deps, facts.remaining)

    def task(self, task_id: TaskId) -> TaskView:
        """The current version of `task_id`: generation, state, cause (if blocked) and detail
        (the result, the error or the reason, once it ended). Raises `UnknownTaskError` for an
        id never submitted (QUERY-1)."""
        s = self._state
        key = _plain(task_id)
        if not isinstance(key, str):  # no such task was ever submitted (QUERY-1), and a list,
            # say, cannot even be looked up
            raise UnknownTaskError(f"task {shown(task_id)} was never submitted")
        state = s.state_of(TaskId(key))
        generation = s.generation_of(TaskId(key))
        if state is None or generation is None:
            raise UnknownTaskError(f"task {shown(key)} was never submitted")
        return TaskView(
            TaskId(key), generation, state, s.cause_of(TaskId(key)), s.detail_of(TaskId(key))
        )

    def tasks(self) -> list[TaskView]:
        """`task` of every task id, in the order of first submission."""
        return [self.task(t) for t in self._state.task_ids()]


class TaskScheduler:
    """A dependency-aware task scheduler whose behaviour is `spec/contract.md`.

    Thread-safe: each operation is one step of the pure core (`schedspec.core.step`) under one
    lock, and a query reads an immutable snapshot.

    Args:
        max_concurrency: the number of slots, an int >= 0; at most this many versions run at
            once (CLAIM-5, PHASE-2). With 0, nothing is ever claimed.
        validate: check every invariant and every transition property after each step and
            raise `AssertionError` on a violation (for tests and debugging; it costs O(V + E)
            a step).
        on_change: called with a `Change` for every state change of a version, in order,
            outside the lock (EFFECT-3).
        expiry: what `expire` does to a version whose lease ran out (LEASE-3, LEASE-4):
            "requeue" (the default, at least once) runs it again as a new generation, "fail"
            (at most once) makes it failed with error "lease_expired".

    Raises:
        InvalidArgumentError: `max_concurrency` is not an int >= 0, `on_change` is not
            callable, or `expiry` is neither "requeue" nor "fail".
    """

    def __init__(
        self,
        max_concurrency: int,
        *,
        validate: bool = False,
        on_change: Callable[[Change], object] | None = None,
        expiry: str = "requeue",
    ) -> None:
        if on_change is not None and not callable(on_change):
            raise InvalidArgumentError(f"on_change must be callable, got {shown(on_change)}")
        for problem in (limit_problem(max_concurrency), expiry_problem(expiry)):
            if problem is not None:
                raise InvalidArgumentError(problem)
        self._lock = threading.Lock()
        self._phase_changed = threading.Condition(self._lock)
        self._state = initial_state(max_concurrency, expiry)
        self._tokens: dict[tuple[TaskId, Generation], CancellationToken] = {}
        # The function of each task's current version, for `retry`: the core keeps a version's
        # function only until the version is claimed or ends.
        self._fns: dict[TaskId, object] = {}
        self._next_event_id = 1
        self._validate = validate
        self._on_change = on_change

    # The one write.

    def _apply(self, make: Callable[[EventId], ev.Event]) -> tuple[fx.Effect, ...]:
        return self._apply_claiming(make)[0]

    def _apply_claiming(
        self, make: Callable[[EventId], ev.Event]
    ) -> tuple[tuple[fx.Effect, ...], list[CancellationToken]]:
        """Apply one event; also return the tokens made for its claims, in grant order."""
        with self._lock:
            event = make(EventId(self._next_event_id))
            self._next_event_id += 1
            before = self._state
            self._state, effects = step(before, event)
            if self._validate:
                self._check(before, event, self._state, effects)
            tokens = self._carry_out(effects)
            self._keep_functions(event, effects[0])
        reply = effects[0]
        _log_step(event, effects)
        if self._on_change is not None:  # outside the lock: the hook may call the scheduler
            for e in effects:
                if isinstance(e, fx.Transitioned):
                    self._on_change(Change(e.event_id, e.task_id, e.generation, e.source, e.target))
        if isinstance(reply, fx.Rejected):
            raise error_for(reply.rejection)
        return effects, tokens

    def _keep_functions(self, event: ev.Event, reply: fx.Effect) -> None:
        """Remember the function of every version a submission made current."""
        if isinstance(event, ev.Submit) and isinstance(reply, fx.Submitted):
            self._fns[reply.task_id] = event.payload
        elif isinstance(event, ev.SubmitBatch) and isinstance(reply, fx.Batched):
            for member, answer in zip(event.submissions, reply.replies, strict=True):
                if isinstance(answer, fx.Submitted):
                    self._fns[answer.task_id] = member.payload

    def _carry_out(self, effects: tuple[fx.Effect, ...]) -> list[CancellationToken]:
        """Do what each effect's type says; called with the lock held."""
        made: list[CancellationToken] = []
        for effect in effects:
            match effect:
                case fx.Claimed(grants=grants):
                    for g in grants:
                        token = CancellationToken()
                        self._tokens[(g.task_id, g.generation)] = token
                        made.append(token)
                case fx.CancelRequested(task_id=task_id, generation=generation):
                    self._tokens[(task_id, generation)]._set()
                case fx.Expired(versions=versions):
                    # The holder of an expired lease is fenced (LEASE-5): its token tells a
                    # worker still running that its result will change nothing.
                    for version in versions:
                        self._tokens.pop(version)._set()
                case fx.Transitioned(source=TaskState.RUNNING, task_id=t, generation=g):
                    self._tokens.pop((t, g), None)  # an expired version's went with the reply
                case fx.PhaseChanged(target=Phase.CLOSED):
                    self._phase_changed.notify_all()
                case _:
                    pass
        return made

    @staticmethod
    def _check(
        before: State, event: ev.Event, after: State, effects: tuple[fx.Effect, ...]
    ) -> None:
        problems = validate_state(after) + check_transition(before, after, effects, event)
        if isinstance(effects[0], fx.Rejected) and after is not before:
            problems.append("a rejected event changed the state")
        if problems:
            raise AssertionError("; ".join(problems))

    # Operations.

    def submit(
        self,
        task_id: str,
        deps: Iterable[str],
        fn: Callable[..., Any],
        if_generation: int | None = None,
    ) -> int:
        """Submit a version of `task_id` that depends on `deps` and runs `fn`; return its
        generation: 1 for a new id, one more than the replaced version's for a re-submission
        (VER-1, SUB-6).

        With `if_generation=n`, only if `n` is the task's current generation (0: the task has
        no version yet), so that the submission takes effect at most once however often it is
        sent, and a caller that lost the reply can send it again (SUB-12, RESTART-4).

        `deps` is read in its iteration order, the submitted order (SUB-1), which decides the
        first cause of a blocked version (SUB-5). The new version's state is decided now, from
        the current versions of its dependencies: `blocked` if one of them failed, was
        cancelled or is blocked, else `ready` if all succeeded, else `pending` (SUB-5). A
        re-submission supersedes the current version without cancelling it; if that version had
        succeeded, its pending dependents wait again (SUB-8). While open, a dependency not yet
        submitted is allowed (SUB-4). A refused submission changes nothing (SUB-3); the first
        failing check, in SUB-11's order, decides the error.

        Raises:
            InvalidArgumentError: `task_id` is not a non-empty str, `deps` is not an iterable
                of them (a str included) or raised while read, or `fn` is not callable (SUB-1).
            SchedulerClosedError: the scheduler is closing or closed (SUB-10).
            DuplicateDependencyError: an id appears twice in `deps` (SUB-2).
            InvalidArgumentError: `if_generation` is neither None nor an int >= 0 (SUB-12).
            GenerationMismatchError: `if_generation` is not the current generation; its
                `current` says which is (SUB-12).
            GraphClosedError: after `start()`, `task_id` was never submitted (SUB-9).
            ConflictError: the current version of `task_id` is running (SUB-7).
            UnknownDependencyError: after `start()`, a dependency was never submitted (SUB-9).
            CycleError: after `start()`, the new dependencies would close a cycle; `cycles`
                holds it (SUB-9).
        """
        sub = _submission(task_id, deps, fn, if_generation)
        effects = self._apply(
            lambda eid: ev.Submit(sub.task_id, sub.deps, sub.payload, eid, sub.if_generation)
        )
        reply = effects[0]
        assert isinstance(reply, fx.Submitted)
        return reply.generation

    def submit_many(self, items: Iterable[tuple[Any, ...]]) -> None:
        """Submit several versions in one step; same meaning as one `submit` each (EFFECT-4).

        Each item is a `(task_id, deps, fn)` triple, or a `(task_id, deps, fn, if_generation)`
        quadruple for a conditional submission (SUB-12), judged as `submit` judges its arguments,
        in order, as by a loop that goes on past a refused `submit`: a refused item is left
        out and the others are submitted. Then the error of the first refused item, if any, is
        raised. Items that raise while being read end the reading there.
        """
        subs: list[ev.Submit] = []
        positions: list[int] = []  # the item index of each member of `subs`
        refusals: list[tuple[int, SchedulerError]] = []
        i = -1
        try:
            for i, item in enumerate(items):
                try:
                    subs.append(_submission(*_item(i, item)))
                    positions.append(i)
                except SchedulerError as e:
                    refusals.append((i, e))
        except Exception as e:  # the items' own iteration raised
            refusals.append(
                (
                    i + 1,
                    InvalidArgumentError(
                        f"reading the items of submit_many raised {type(e).__name__}: "
                        f"{shown(str(e))}"
                    ),
                )
            )
        if subs:
            batch = tuple(subs)
            effects = self._apply(lambda eid: ev.SubmitBatch(batch, eid))
            reply = effects[0]
            assert isinstance(reply, fx.Batched)
            for position, member in zip(positions, reply.replies, strict=True):
                if isinstance(member, fx.Rejected):
                    refusals.append((position, error_for(member.rejection)))
        if refusals:
            raise min(refusals, key=lambda refusal: refusal[0])[1]

    def retry(self, task_id: str) -> list[VersionRef]:
        """Re-submit a failed or cancelled task and, in dependency order, every version blocked
        with it as cause (BLOCK-2), each as a new generation with the same dependencies and
        function; returns the versions made, in the order submitted.

        The core never retries by itself: blocked versions stay blocked when the failed task is
        re-submitted (BLOCK-3), so this is the helper that re-submits the whole chain, in one
        step (a `submit_many`). Raises `UnknownTaskError` for a task never submitted and
        `InvalidArgumentError` unless its current version is failed or cancelled; any refusal
        of the re-submission itself (the scheduler is closing, say) is raised as `submit`
        would raise it, and then nothing changed."""
        key = _plain(task_id)

        def make(eid: EventId) -> ev.Event:  # under the lock: the state cannot move meanwhile
            order = _retry_order(self._state, key)
            subs = tuple(
                ev.Submit(t, self._state.facts(t).deps, self._fns.get(t))  # type: ignore[union-attr]
                for t in order
            )
            return ev.SubmitBatch(subs, eid)

        reply = self._apply(make)[0]
        assert isinstance(reply, fx.Batched)
        made: list[VersionRef] = []
        for member in reply.replies:
            if isinstance(member, fx.Rejected):
                raise error_for(member.rejection)
            assert isinstance(member, fx.Submitted)
            made.append(VersionRef(member.task_id, member.generation))
        return made

    def start(self) -> None:
        """Validate the graph of the current versions and let versions be claimed (START-1).

        After it, a brand-new task id is refused and existing ones may only be re-submitted
        (SUB-9). On a scheduler already started, closing or closed it does nothing.

        Raises:
            UnknownDependencyError: a current version names an id never submitted; `missing`
                maps each such task to its missing ids (START-2). Nothing changes (START-4).
            CycleError: the graph has a cycle; `cycles` holds one shortest path per cyclic
                component and `unexecutable` what depends on one (START-2, START-3). Nothing
                changes: fix the graph and call `start()` again (START-4).
        """
        self._apply(ev.Start)

    def ready(
        self,
        max_tasks: int | None = None,
        *,
        worker: str | None = None,
        lease_until: float | None = None,
    ) -> list[Claim]:
        """Claim up to `max_tasks` ready versions (None: as many as there are free slots) and
        return them, smallest submission sequence first (CLAIM-3).

        Each holds the lease `(worker, lease_until)` while it runs (LEASE-1): `lease_until`
        is a deadline on your clock, which `expire(now)` compares; None never expires.

        Each returned version is `running` before this returns and is never claimed again
        (CLAIM-4); it holds a slot until it ends (CLAIM-5). A `Claim` carries the task id, the
        generation to name in its callback, the function and a `CancellationToken` that is set
        when a cancellation of that version is requested (CLAIM-6). While closing or closed it
        returns `[]` (CLAIM-1).

        Raises:
            InvalidArgumentError: `max_tasks` is not None or an int >= 0 (a bool included),
                `worker` not None or a non-empty str, `lease_until` not None or a finite int
                or float; checked in every phase (CLAIM-2, LEASE-1).
            NotStartedError: `start()` was not called yet (CLAIM-1).
        """
        holder = _plain(worker)
        effects, tokens = self._apply_claiming(
            lambda eid: ev.Claim(max_tasks, eid, holder, lease_until)
        )
        reply = effects[0]
        assert isinstance(reply, fx.Claimed)
        return [
            Claim(g.task_id, g.generation, g.payload, token)  # type: ignore[arg-type]
            for g, token in zip(reply.grants, tokens, strict=True)
        ]

    def _answer(self, event: Callable[[EventId], ev.Event]) -> Outcome:
        reply = self._apply(event)[0]
        assert isinstance(reply, fx.Answered)
        return reply.outcome

    def complete(self, task_id: str, generation: int, result: object = None) -> Outcome:
        """Report that the claimed version `(task_id, generation)` succeeded with `result`.

        The version becomes `succeeded` and each pending direct dependent waits for one
        dependency fewer, those that reach none becoming `ready` (DONE-1), even if its
        cancellation was requested (DONE-3). Races are answers, not errors: the returned
        `Outcome` is `accepted`, `already_terminal` for a version that already ended (a
        duplicate, or a `complete` after a `fail`, DONE-4) or `stale_generation` for a
        version that was replaced since (DONE-5); the last two change nothing.

        Raises:
            InvalidArgumentError: `task_id` is not a non-empty str, or `generation` not an
                int >= 1 (DONE-6).
            UnknownTaskError: `task_id` was never submitted.
            FutureGenerationError: `generation` is newer than the current one.
            NotClaimedError: the current version was never claimed (DONE-6).
        """
        return self._answer(lambda eid: ev.Complete(_plain(task_id), generation, result, eid))

    def fail(self, task_id: str, generation: int, error: object) -> Outcome:
        """Report that the claimed version `(task_id, generation)` failed with `error`.

        The version becomes `failed`, recording `error`, and every pending version that
        depends on it, directly or through other pending versions, becomes `blocked` with it
        as cause (DONE-2, BLOCK-1, BLOCK-2). Answers and errors are those of `complete`
        (DONE-3 to DONE-7).
        """
        return self._answer(lambda eid: ev.Fail(_plain(task_id), generation, error, eid))

    def cancel(self, task_id: str, generation: int | None = None) -> Outcome:
        """Cancel a version of `task_id`: the current one when `generation` is None.

        A `pending` or `ready` version becomes `cancelled` and its pending descendants
        `blocked` with it as cause (CANCEL-1, CANCEL-2): `accepted`. A `running` version is
        only asked to stop: its token is set and the answer is `cancel_requested` (CANCEL-3);
        the worker then calls `confirm_cancel`, or finishes anyway (DONE-3). A version that
        already ended answers `already_terminal`, an older generation `stale_generation`
        (CANCEL-5), and neither changes anything.

        Raises:
            InvalidArgumentError, UnknownTaskError, FutureGenerationError: as for `complete`
                (CANCEL-5, DONE-6); a version never claimed is cancelled, not refused.
        """
        return self._answer(lambda eid: ev.Cancel(_plain(task_id), generation, eid))

    def confirm_cancel(self, task_id: str, generation: int) -> Outcome:
        """Report that the running version `(task_id, generation)` stopped on request.

        After a `cancel` that asked it to stop, the version becomes `cancelled` and its
        pending descendants `blocked` with it as cause (CANCEL-4): `accepted`. On a version
        that already ended it answers `already_terminal`, on an older generation
        `stale_generation`, as the other callbacks do.

        Raises:
            CancelNotRequestedError: the version is running but no cancel asked it to stop.
            InvalidArgumentError, UnknownTaskError, FutureGenerationError, NotClaimedError:
                as for `complete` (DONE-6).
        """
        return self._answer(lambda eid: ev.ConfirmCancel(_plain(task_id), generation, eid))

    def heartbeat(self, task_id: str, generation: int, lease_until: float | None) -> Outcome:
        """Set the deadline of the running version `(task_id, generation)`'s lease to
        `lease_until` (None: never expires), keeping its worker (LEASE-2): `accepted`.

        A version whose lease expired was requeued or ended: the heartbeat is answered
        `stale_generation` or `already_terminal` and extends nothing (LEASE-5).

        Raises:
            InvalidArgumentError: `lease_until` is not None or a finite int or float, or as
                for `complete` (DONE-6).
            UnknownTaskError, FutureGenerationError, NotClaimedError: as for `complete`.
        """
        return self._answer(lambda eid: ev.Heartbeat(_plain(task_id), generation, lease_until, eid))

    def expire(self, now: float) -> list[VersionRef]:
        """End every lease whose deadline is `<= now` (a number on the clock of the
        deadlines) and return those versions, smallest submission sequence first (LEASE-3).

        Each expired version is cancelled if its cancellation was requested, failed under
        the "fail" policy, cancelled with reason "shutdown" while closing, and otherwise
        requeued: replaced by a new generation with the same dependencies and function. Its
        cancellation token is set: a worker still running it is fenced (LEASE-5).

        Raises:
            InvalidArgumentError: `now` is not a finite int or float.
        """
        reply = self._apply(lambda eid: ev.Expire(now, eid))[0]
        assert isinstance(reply, fx.Expired)
        return [VersionRef(t, g) for t, g in reply.versions]

    def lease(self, task_id: str) -> Lease | None:
        """The lease of the current version of `task_id` while it runs and holds one (a worker
        or a deadline), else None (LEASE-1).

        Raises:
            UnknownTaskError: `task_id` was never submitted, whatever its type.
        """
        with self._lock:
            state = self._state
        view = Snapshot(state).task(TaskId(task_id))
        return state.lease_of(view.task_id)

    def close(self, timeout: float | None = None) -> CloseReport:
        """Stop claiming, cancel the queued versions and wait for the running ones to drain.

        On an open or started scheduler the phase becomes `closing`: submissions are refused
        and nothing more is claimed (CLOSE-1); every pending or ready version is `cancelled`
        with reason `shutdown`, and none is blocked (CLOSE-2). Running versions drain, their
        callbacks accepted as before; the phase becomes `closed` when none runs (CLOSE-3). A
        second `close` changes nothing (CLOSE-4).

        `timeout` is None (wait for the drain) or a finite number of seconds >= 0 (`0` returns
        at once); a timeout beyond `threading.TIMEOUT_MAX` (some 292 years) waits as None
        does. The returned `CloseReport` says whether the scheduler is closed, which versions
        this call cancelled and which still run, in submission order (CLOSE-5).

        Raises:
            InvalidArgumentError: `timeout` is not None or a finite number >= 0; nothing
                changed.
        """
        if timeout is not None and (
            not isinstance(timeout, int | float)
            or isinstance(timeout, bool)
            or not math.isfinite(timeout)
            or timeout < 0
        ):
            raise InvalidArgumentError(
                f"timeout must be None or a finite number >= 0, got {shown(timeout)}"
            )
        if timeout is not None and timeout > threading.TIMEOUT_MAX:
            timeout = None
        effects = self._apply(ev.Close)
        cancelled = tuple(
            VersionRef(e.task_id, e.generation)
            for e in effects
            if isinstance(e, fx.Transitioned) and e.target is TaskState.CANCELLED
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._state.phase is not Phase.CLOSED:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._phase_changed.wait(remaining)
            state = self._state
        facts = [(t, state.facts(t)) for t in state.task_ids()]
        running = tuple(
            VersionRef(t, f.generation)
            for t, f in sorted(facts, key=lambda pair: pair[1].seq if pair[1] else -1)
            if f is not None and f.state is TaskState.RUNNING
        )
        return CloseReport(state.phase is Phase.CLOSED, cancelled, running)

    # Queries (QUERY-*).

    def snapshot(self) -> Snapshot:
        """An immutable view of the whole scheduler at this instant (QUERY-2)."""
        with self._lock:
            return Snapshot(self._state)

    def state(self, task_id: str) -> TaskState:
        """The state of the current version of `task_id` (QUERY-1).

        Raises:
            UnknownTaskError: `task_id` was never submitted, whatever its type.
        """
        return self.snapshot().task(TaskId(task_id)).state

    def generation(self, task_id: str) -> int:
        """The generation of the current version of `task_id`: 1 for its first submission,
        one more for each accepted re-submission (QUERY-1, VER-1).

        Raises:
            UnknownTaskError: `task_id` was never submitted, whatever its type.
        """
        return self.snapshot().task(TaskId(task_id)).generation

    def blocking_cause(self, task_id: str) -> Cause | None:
        """The root cause of a blocked version: the version whose failure or cancellation
        blocked it (BLOCK-2); None unless blocked (QUERY-1)."""
        return self.snapshot().task(TaskId(task_id)).cause

    def waiting_on(self, task_id: str) -> Waiting:
        """Why is this pending? See `Snapshot.waiting_on`."""
        return self.snapshot().waiting_on(TaskId(task_id))

    @property
    def expiry(self) -> str:
        """The expiry policy, fixed at construction (LEASE-4)."""
        return self._state.expiry

    @property
    def max_concurrency(self) -> int:
        """The number of slots, fixed at construction (PHASE-2)."""
        return self._state.limit

    @property
    def phase(self) -> Phase:
        """The scheduler's phase: open, started, closing or closed (PHASE-1)."""
        with self._lock:
            return self._state.phase


# One validation path for `submit` and `submit_many`.


def _plain(value: object) -> object:
    """A `str` subclass as the plain `str` of the same code points, so that its own `__hash__`,
    `__eq__` or `__str__` never runs inside the scheduler; anything else as it is, for the core
    to judge (SUB-1)."""
    return str.__str__(value) if isinstance(value, str) and type(value) is not str else value


def _read_deps(task_id: object, deps: object) -> object:
    """`deps` as a tuple, read only as far as the core looks (SUB-1, SUB-2): up to the first
    element that is not a non-empty str or repeats an earlier one, which the core then reports
    (it reports the first such element). So an iterator that never ends is read up to its first
    repeat, and one that raises is refused without the exception leaking. A str, or anything
    that is not iterable, is passed as it is: the core refuses it as `deps`."""
    if isinstance(deps, str | bytes):
        return deps
    try:
        elements = iter(deps)  # type: ignore[call-overload]
    except TypeError:
        return deps
    read: list[object] = []
    seen: set[str] = set()
    try:
        for element in elements:
            dep = _plain(element)
            read.append(dep)
            if not isinstance(dep, str) or not dep or dep in seen:
                break
            seen.add(dep)
    except Exception as e:
        raise InvalidArgumentError(
            f"reading the deps of {shown(task_id)} raised {type(e).__name__}: {shown(str(e))}"
        ) from None
    return tuple(read)


def _item(i: int, item: object) -> tuple[object, object, object, object]:
    """Item `i` of `submit_many` as `(task_id, deps, fn, if_generation)`, `if_generation` None
    for a triple, or why it is neither a triple nor such a quadruple."""
    try:
        fields = tuple(itertools.islice(item, 5))  # type: ignore[call-overload]
        task_id, deps, fn, if_generation = fields if len(fields) != 3 else (*fields, None)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"item {i} of submit_many must be a (task_id, deps, fn) triple or a (task_id, deps, "
            f"fn, if_generation) quadruple, got {type(item).__name__} {shown(item)}"
        ) from None
    return task_id, deps, fn, if_generation


def _submission(
    task_id: object, deps: object, fn: object, if_generation: object = None
) -> ev.Submit:
    """The core's `Submit` for `submit(task_id, deps, fn, if_generation)`, or the shell's own
    refusal of a function that is not callable or of deps that cannot be read."""
    if not callable(fn):
        raise InvalidArgumentError(
            f"fn of {shown(task_id)} must be callable, got {type(fn).__name__} {shown(fn)}"
        )
    plain = _plain(task_id)
    return ev.Submit(plain, _read_deps(task_id, deps), fn, if_generation=if_generation)


def _retry_order(state: State, key: object) -> list[TaskId]:
    """`retry`'s versions: the failed or cancelled one, then those blocked with it as cause, in
    dependency order (ties by submission sequence), so each is re-submitted after the
    dependencies it has among them, and finds them pending or ready instead of unsuccessful."""
    facts = state.facts(TaskId(key)) if isinstance(key, str) else None
    if facts is None:
        raise UnknownTaskError(f"task {shown(key)} was never submitted")
    if facts.state not in (TaskState.FAILED, TaskState.CANCELLED):
        raise InvalidArgumentError(
            f"task {shown(key)} is {facts.state.value}: only a failed or cancelled version is "
            "retried"
        )
    root = TaskId(key)  # type: ignore[arg-type]
    cause = (root, facts.generation)
    chosen = {root: facts}
    for t in state.task_ids():
        c = state.cause_of(t)
        if c is not None and (c.task_id, c.generation) == cause:
            found = state.facts(t)
            assert found is not None
            chosen[t] = found
    waiting = {t: {d for d in f.deps if d in chosen and d != t} for t, f in chosen.items()}
    dependents: dict[TaskId, list[TaskId]] = {t: [] for t in chosen}
    for t, deps in waiting.items():
        for d in deps:
            dependents[d].append(t)
    ready = [(f.seq, t) for t, f in chosen.items() if not waiting[t]]
    heapq.heapify(ready)
    order: list[TaskId] = []
    while ready:
        _, t = heapq.heappop(ready)
        order.append(t)
        for u in dependents[t]:
            waiting[u].discard(t)
            if not waiting[u]:
                heapq.heappush(ready, (chosen[u].seq, u))
    # A cycle among them (possible only while open, where forward dependencies are allowed):
    # the rest in sequence order.
    order += sorted((t for t in chosen if t not in order), key=lambda t: chosen[t].seq)
    return order


# Logging: the shell, never the core, logs (`logging.getLogger("schedspec")`).

LOGGER = logging.getLogger("schedspec")


def _log_step(event: ev.Event, effects: tuple[fx.Effect, ...]) -> None:
    """One DEBUG record per event and one per change of state, each with the event's id in
    `record.event_id`; a refusal at INFO."""
    if not LOGGER.isEnabledFor(logging.INFO):
        return
    eid = effects[0].event_id if hasattr(effects[0], "event_id") else None
    extra = {"event_id": eid}
    reply = effects[0]
    if isinstance(reply, fx.Rejected):
        LOGGER.info("event %s: %s refused: %s", eid, type(event).__name__,
                    type(reply.rejection).__name__, extra=extra)  # fmt: skip
        return
    LOGGER.debug("event %s: %s", eid, type(event).__name__, extra=extra)
    for e in effects:
        if isinstance(e, fx.Transitioned):
            source = "new" if e.source is None else e.source.value
            LOGGER.debug("event %s: %s generation %s: %s -> %s", eid, shown(e.task_id),
                         e.generation, source, e.target.value, extra=extra)  # fmt: skip
