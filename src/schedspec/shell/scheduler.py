"""`TaskScheduler`: the thin, thread-safe shell around the pure core.

It holds the current core state under one lock and has one write:
`self._state, effects = step(self._state, event)`. It then carries out the effects as their
types say (`core/effects.py`): hand out claims with fresh cancellation tokens, set a token when a
cancellation is requested, wake `close()` waiters when the phase becomes `closed`, and turn a
`Rejected` reply into the `SchedulerError` that names it. It never decides a rule itself, with
one exception that the core cannot see: `fn` must be callable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core import effects as fx
from ..core import events as ev
from ..core.invariants import check_transition, validate_state
from ..core.state import State, initial_state, limit_problem
from ..core.step import step
from ..core.types import (
    Cause,
    EventId,
    Generation,
    Outcome,
    Phase,
    TaskId,
    TaskState,
)
from ..errors import InvalidArgumentError, UnknownTaskError, error_for

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
        return self._is_set

    def wait(self, timeout: float | None = None) -> bool:
        with _TOKEN_EVENT_LOCK:
            if self._event is None:
                self._event = threading.Event()
                if self._is_set:
                    self._event.set()
            event = self._event
        return event.wait(timeout)

    def raise_if_cancelled(self) -> None:
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
    task_id: TaskId
    generation: Generation
    state: TaskState
    cause: Cause | None
    detail: object


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
        return self._state

    @property
    def phase(self) -> Phase:
        return self._state.phase

    @property
    def running(self) -> int:
        return self._state.running

    def counts(self) -> dict[TaskState, int]:
        return self._state.counts()

    def task_ids(self) -> list[TaskId]:
        return list(self._state.task_ids())

    def task(self, task_id: TaskId) -> TaskView:
        s = self._state
        state = s.state_of(task_id)
        generation = s.generation_of(task_id)
        if state is None or generation is None:
            raise UnknownTaskError(f"task {task_id!r} was never submitted")
        return TaskView(task_id, generation, state, s.cause_of(task_id), s.detail_of(task_id))

    def tasks(self) -> list[TaskView]:
        return [self.task(t) for t in self._state.task_ids()]


class TaskScheduler:
    """A dependency-aware task scheduler whose behaviour is `spec/contract.md`.

    `validate=True` checks every invariant and every transition property after each step and
    raises `AssertionError` on a violation (for tests and debugging; it costs O(V + E) a step).
    """

    def __init__(self, max_concurrency: int, *, validate: bool = False) -> None:
        problem = limit_problem(max_concurrency)
        if problem is not None:
            raise InvalidArgumentError(problem)
        self._lock = threading.Lock()
        self._phase_changed = threading.Condition(self._lock)
        self._state = initial_state(max_concurrency)
        self._tokens: dict[tuple[TaskId, Generation], CancellationToken] = {}
        self._next_event_id = 1
        self._validate = validate

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
        reply = effects[0]
        if isinstance(reply, fx.Rejected):
            raise error_for(reply.rejection)
        return effects, tokens

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
                case fx.Transitioned(source=TaskState.RUNNING, task_id=t, generation=g):
                    del self._tokens[(t, g)]
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

    def submit(self, task_id: str, deps: Iterable[str], fn: Callable[..., Any]) -> int:
        """Submit a task version; returns its generation (SUB-*)."""
        if not callable(fn):
            raise InvalidArgumentError(
                f"fn of {task_id!r} must be callable, got {type(fn).__name__} {fn!r}"
            )
        dep_tuple: object = deps
        if not isinstance(deps, str | bytes):
            try:
                dep_tuple = tuple(deps)
            except TypeError:
                dep_tuple = deps  # the core rejects it with InvalidDeps
        effects = self._apply(lambda eid: ev.Submit(task_id, dep_tuple, fn, eid))
        reply = effects[0]
        assert isinstance(reply, fx.Submitted)
        return reply.generation

    def submit_many(self, items: Iterable[tuple[str, Iterable[str], Callable[..., Any]]]) -> None:
        """Submit several versions in one step; same meaning as one `submit` each (EFFECT-4).

        Raises the error of the first refused member; members before it are accepted, as they
        would be in sequence.
        """
        subs = tuple(ev.Submit(t, tuple(d), f) for t, d, f in items)
        effects = self._apply(lambda eid: ev.SubmitBatch(subs, eid))
        reply = effects[0]
        assert isinstance(reply, fx.Batched)
        for member in reply.replies:
            if isinstance(member, fx.Rejected):
                raise error_for(member.rejection)

    def start(self) -> None:
        """Validate and freeze the graph (START-*)."""
        self._apply(ev.Start)

    def ready(self, max_tasks: int | None = None) -> list[Claim]:
        """Claim a batch of ready versions, smallest submission sequence first (CLAIM-*)."""
        effects, tokens = self._apply_claiming(lambda eid: ev.Claim(max_tasks, eid))
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
        """DONE-1, DONE-3..7."""
        return self._answer(lambda eid: ev.Complete(task_id, generation, result, eid))

    def fail(self, task_id: str, generation: int, error: object) -> Outcome:
        """DONE-2..7."""
        return self._answer(lambda eid: ev.Fail(task_id, generation, error, eid))

    def cancel(self, task_id: str, generation: int | None = None) -> Outcome:
        """CANCEL-1..3, CANCEL-5."""
        return self._answer(lambda eid: ev.Cancel(task_id, generation, eid))

    def confirm_cancel(self, task_id: str, generation: int) -> Outcome:
        """CANCEL-4: the running function stopped on request."""
        return self._answer(lambda eid: ev.ConfirmCancel(task_id, generation, eid))

    def close(self, timeout: float | None = None) -> CloseReport:
        """Stop claiming, cancel queued versions, and wait for the drain (CLOSE-*)."""
        if timeout is not None and (
            not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout < 0
        ):
            raise InvalidArgumentError(f"timeout must be None or >= 0, got {timeout!r}")
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
        with self._lock:
            return Snapshot(self._state)

    def state(self, task_id: str) -> TaskState:
        return self.snapshot().task(TaskId(task_id)).state

    def generation(self, task_id: str) -> int:
        return self.snapshot().task(TaskId(task_id)).generation

    def blocking_cause(self, task_id: str) -> Cause | None:
        return self.snapshot().task(TaskId(task_id)).cause

    @property
    def max_concurrency(self) -> int:
        return self._state.limit

    @property
    def phase(self) -> Phase:
        with self._lock:
            return self._state.phase
