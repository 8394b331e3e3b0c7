"""Shared helpers for the clause-by-clause tests (one module per contract area).

Shell tests build a `TaskScheduler(..., validate=True)`, so every invariant and every transition
property is checked after each step; core tests drive `step` directly and validate each state.
`record_effects` spies on the shell's one write to see the effects the core handed back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from schedspec import TaskScheduler, TaskState
from schedspec.core import State, initial_state, step
from schedspec.core import effects as fx
from schedspec.core.invariants import check_transition, validate_state
from schedspec.core.state import REMAINING_SHIFT
from schedspec.shell import scheduler as shell_module


def noop() -> None:
    """The task function used everywhere: the scheduler never calls it (EFFECT-1)."""


def build(
    limit: int,
    tasks: Iterable[tuple[str, tuple[str, ...]]],
    *,
    start: bool = True,
    expiry: str = "requeue",
) -> TaskScheduler:
    """A validating scheduler with `tasks` submitted in order, started unless told otherwise."""
    sched = TaskScheduler(limit, validate=True, expiry=expiry)
    for task_id, deps in tasks:
        sched.submit(task_id, deps, noop)
    if start:
        sched.start()
    return sched


def claimed(sched: TaskScheduler, max_tasks: int | None = None) -> list[tuple[str, int]]:
    """Claim and return `(task_id, generation)` of every claimed version, in order."""
    return [(c.task_id, c.generation) for c in sched.ready(max_tasks)]


def run_one(sched: TaskScheduler, task_id: str) -> None:
    """Claim exactly `task_id` (it must be the next ready version) and complete it."""
    claims = sched.ready(1)
    assert [c.task_id for c in claims] == [task_id]
    sched.complete(task_id, claims[0].generation)


def states(sched: TaskScheduler) -> dict[str, str]:
    """Every submitted task's current state, as the contract's words."""
    return {v.task_id: str(v.state) for v in sched.snapshot().tasks()}


def core(sched: TaskScheduler) -> State:
    return sched.snapshot().core_state


def remaining(state: State, task_id: str) -> int:
    """The remaining-dependency count kept for a pending version (SUB-5)."""
    i = state.lookup(task_id)
    assert i is not None and state.state_of(task_id) is TaskState.PENDING
    return int(state.cells[i] >> REMAINING_SHIFT)


def run_core(limit: int, events: Iterable[object]) -> tuple[State, list[tuple[fx.Effect, ...]]]:
    """Apply `events` in order from a fresh state, validating each step; return all effects."""
    s = initial_state(limit)
    history = []
    for event in events:
        before = s
        s, effects = step(s, event)  # type: ignore[arg-type]
        assert validate_state(s) == []
        assert check_transition(before, s, effects, event) == []  # type: ignore[arg-type]
        history.append(effects)
    return s, history


@contextmanager
def record_effects() -> Iterator[list[tuple[object, tuple[fx.Effect, ...]]]]:
    """Record `(event, effects)` of every step the shell takes inside the block."""
    log: list[tuple[object, tuple[fx.Effect, ...]]] = []
    original = shell_module.step

    def spy(state, event):  # type: ignore[no-untyped-def]
        result = original(state, event)
        log.append((event, result[1]))
        return result

    shell_module.step = spy  # type: ignore[assignment]
    try:
        yield log
    finally:
        shell_module.step = original  # type: ignore[assignment]


def transitions(effects: Iterable[fx.Effect]) -> list[tuple[str, int, str | None, str]]:
    """The `Transitioned` notifications as `(task, generation, source, target)` words."""
    return [
        (e.task_id, e.generation, None if e.source is None else str(e.source), str(e.target))
        for e in effects
        if isinstance(e, fx.Transitioned)
    ]
