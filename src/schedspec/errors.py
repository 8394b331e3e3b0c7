"""The public exceptions: one small hierarchy.

`SchedulerError` is a caller's mistake (the contract names each case); the scheduler is left
exactly as it was. `EnvironmentFault` is a failure of what the shell depends on (an executor that
refuses work), never of the contract. Each `SchedulerError` carries the core's typed `rejection`
so a program can match on it instead of parsing messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .core import effects as fx
from .core.types import TaskId

T = TypeVar("T")


SHOWN_MAX = 80  # characters of one value in a message
LISTED_MAX = 8  # items of a list in a message (missing ids, cycles)


def shown(value: object) -> str:
    """`repr(value)` for a message: at most SHOWN_MAX characters, and never raising, so that
    a value whose `repr` raises or runs to a megabyte cannot break or flood an error. `repr`
    escapes newlines, NUL and lone surrogates, so the result is safe to print and to log."""
    try:
        text = repr(value)
    except Exception as e:  # the value's own repr is broken: say so instead
        return f"<{type(value).__name__} whose repr() raised {type(e).__name__}>"
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


def listed(items: Iterable[T], show: Callable[[T], str] = shown, limit: int = LISTED_MAX) -> str:
    """At most `limit` items, each through `show`, then how many more there are."""
    values = list(items)
    head = ", ".join(show(v) for v in values[:limit])
    return head + (f", ... ({len(values) - limit} more)" if len(values) > limit else "")


def _path(cycle: Sequence[TaskId]) -> str:
    cut = " -> ..." if len(cycle) > LISTED_MAX else ""
    return " -> ".join(shown(t) for t in cycle[:LISTED_MAX]) + cut


class SchedspecError(Exception):
    """Base of every exception schedspec raises on purpose."""


class SchedulerError(SchedspecError):
    """A caller's mistake: the operation was refused and nothing changed (SUB-3).

    Besides the message, the facts of the refusal as plain attributes, None where the refusal
    has no such fact, so that a program matches on data, never on the message:

    - `task_id`: the task the refused operation named (or whose dependency was wrong);
    - `generation`: the generation it named (`FutureGenerationError`, `NotClaimedError`,
      `ConflictError`, `CancelNotRequestedError`, and the `if_generation` of a
      `GenerationMismatchError`);
    - `current`: the task's current generation (`FutureGenerationError`,
      `GenerationMismatchError`);
    - `state`: the version's state (`NotClaimedError`);
    - `dependency`: the dependency named twice (`DuplicateDependencyError`);
    - `value`: the offending value of a wrong argument (`InvalidArgumentError`);
    - `missing` and `cycles`/`unexecutable` on the two `start()` refusals (their classes).

    `rejection` is the core's own record of the refusal, for those who use the core.
    """

    FACTS = ("task_id", "generation", "current", "state", "dependency", "value")

    def __init__(self, message: str, rejection: fx.Rejection | None = None) -> None:
        super().__init__(message)
        self.rejection = rejection
        self.task_id: TaskId | None = getattr(rejection, "task_id", None)
        self.generation: int | None = getattr(rejection, "generation", None)
        self.current: int | None = getattr(rejection, "current", None)
        self.state: object = getattr(rejection, "state", None)
        self.dependency: TaskId | None = getattr(rejection, "dependency", None)
        self.value: object = getattr(rejection, "value", None)


class EnvironmentFault(SchedspecError):
    """Something the shell relies on failed (for example the executor refused a task)."""


class JournalError(EnvironmentFault):
    """A journal that cannot be recovered (RESTART-7): `path` names it, `record` the 1-based
    number of the record that could not be read or replayed, and the message says why."""

    def __init__(self, path: object, record: int, reason: str) -> None:
        super().__init__(f"journal {shown(str(path))}, record {record}: {reason}")
        self.path = path
        self.record = record
        self.reason = reason


class InvalidArgumentError(SchedulerError):
    """A value of the wrong type or range (SUB-1, CLAIM-2, DONE-6, PHASE-2)."""


class DuplicateDependencyError(InvalidArgumentError):
    """The same id appears twice in one `deps` (SUB-2); `dependency` names it."""


class ConflictError(SchedulerError):
    """The task's current version is running and cannot be replaced (SUB-7); `task_id` and
    `generation` name it. Cancel it, or wait for it to end, then re-submit."""


class GenerationMismatchError(SchedulerError):
    """A conditional submission whose `if_generation` is not the task's current generation;
    `task_id`, `generation` (the `if_generation`) and `current` (0 for a task with no version)
    name them (SUB-12). The retry of a conditional submission that took effect gets this
    error (RESTART-4)."""


class GraphClosedError(SchedulerError):
    """A task id never submitted before, submitted after `start()`: the graph is closed to new
    tasks, and only existing ones may be re-submitted (SUB-9)."""


class SchedulerClosedError(SchedulerError):
    """A submission after `close()`: a closing or closed scheduler takes no work (SUB-10)."""


class UnknownDependencyError(SchedulerError):
    """START-2, SUB-9. `missing` maps each task id to the sorted list of ids it lacks."""

    def __init__(self, message: str, rejection: fx.UnknownDependencies) -> None:
        super().__init__(message, rejection)
        self.missing: dict[TaskId, list[TaskId]] = {t: list(m) for t, m in rejection.missing}


class CycleError(SchedulerError):
    """START-2, START-3, SUB-9.

    `cycles`: one path `[t0, ..., t0]` per cyclic component, each `t_i` depending on `t_i+1`.
    `unexecutable`: the tasks outside every cycle that depend on one, in submission order.
    """

    def __init__(self, message: str, rejection: fx.Cycles) -> None:
        super().__init__(message, rejection)
        self.cycles: list[list[TaskId]] = [list(c) for c in rejection.cycles]
        self.unexecutable: list[TaskId] = list(rejection.unexecutable)


class NotStartedError(SchedulerError):
    """`ready()` before `start()`: nothing can be claimed until the graph is validated
    (CLAIM-1)."""


class UnknownTaskError(SchedulerError, KeyError):
    """A callback, a cancel or a query names a task id that was never submitted, whatever its
    type (DONE-6, QUERY-1); `task_id` names it when it is a str."""

    def __str__(self) -> str:  # KeyError would quote the message again
        return str(self.args[0])


class FutureGenerationError(SchedulerError):
    """A callback or a cancel names a generation newer than the task's current one (DONE-6);
    `generation` is the one named and `current` the task's."""


class NotClaimedError(SchedulerError):
    """A callback for the current version of a task, which was never claimed (DONE-6); `state`
    says where it is (pending, ready, or cancelled or blocked before any claim)."""


class CancelNotRequestedError(SchedulerError):
    """`confirm_cancel` for a running version that no `cancel` asked to stop (CANCEL-4): report
    how it ended with `complete` or `fail` instead."""


class CancelledByRequest(Exception):
    """Raised by a task function (via `token.raise_if_cancelled()`) to confirm a cancellation."""


def _invalid(what: str, rule: str, value: object, rejection: fx.Rejection) -> SchedulerError:
    """An argument of the wrong form: which it is, what it must be, and what it was."""
    return InvalidArgumentError(
        f"{what} must be {rule}, got {type(value).__name__} {shown(value)}", rejection
    )


# What each lease argument must be (LEASE-1..3).
_LEASE_RULES = {
    "worker": "None or a non-empty str",
    "lease_until": "None or a finite int or float",
    "now": "a finite int or float",
}


def error_for(rejection: fx.Rejection) -> SchedulerError:
    """The exception that tells the caller exactly what was wrong."""
    match rejection:
        case fx.InvalidTaskId(value):
            return _invalid("task id", "a non-empty str", value, rejection)
        case fx.InvalidDeps(task_id, value):
            return _invalid(
                f"deps of {shown(task_id)}", "an iterable of task ids (not a str)", value, rejection
            )
        case fx.InvalidDependency(task_id, value):
            return _invalid(f"dependency of {shown(task_id)}", "a non-empty str", value, rejection)
        case fx.DuplicateDependency(task_id, dependency):
            return DuplicateDependencyError(
                f"task {shown(task_id)} names dependency {shown(dependency)} more than once",
                rejection,
            )
        case fx.SchedulerClosed(task_id):
            return SchedulerClosedError(
                f"cannot submit {shown(task_id)}: the scheduler is closing or closed", rejection
            )
        case fx.GraphClosed(task_id):
            return GraphClosedError(
                f"cannot submit new task {shown(task_id)} after start(): the graph is closed; "
                "only existing tasks may be re-submitted",
                rejection,
            )
        case fx.RunningConflict(task_id, generation):
            return ConflictError(
                f"task {shown(task_id)} generation {generation} is running and cannot be replaced",
                rejection,
            )
        case fx.InvalidIfGeneration(task_id, value):
            return _invalid(
                f"if_generation for {shown(task_id)}", "None or an int >= 0", value, rejection
            )
        case fx.GenerationMismatch(task_id, generation, current):
            return GenerationMismatchError(
                f"task {shown(task_id)} was submitted if its generation is {generation}, "
                f"but it is {current}",
                rejection,
            )
        case fx.UnknownDependencies(missing):
            needs = listed(missing, lambda tm: f"{shown(tm[0])} needs [{listed(tm[1])}]", 4)
            return UnknownDependencyError(f"unknown dependencies: {needs}", rejection)
        case fx.Cycles(cycles, unexecutable):
            paths = listed(cycles, _path, 4)
            tail = f" (unexecutable: {listed(unexecutable)})" if unexecutable else ""
            return CycleError(f"dependency cycle: {paths}{tail}", rejection)
        case fx.NotStarted():
            return NotStartedError("ready() called before start()", rejection)
        case fx.InvalidMaxTasks(value):
            return _invalid("max_tasks", "None or an int >= 0", value, rejection)
        case fx.UnknownTask(task_id):
            return UnknownTaskError(f"task {shown(task_id)} was never submitted", rejection)
        case fx.InvalidGeneration(task_id, value):
            return _invalid(f"generation for {shown(task_id)}", "an int >= 1", value, rejection)
        case fx.FutureGeneration(task_id, generation, current):
            return FutureGenerationError(
                f"task {shown(task_id)} has no generation {generation} yet (current is {current})",
                rejection,
            )
        case fx.NotClaimed(task_id, generation, state):
            return NotClaimedError(
                f"task {shown(task_id)} generation {generation} was never claimed (it is {state})",
                rejection,
            )
        case fx.CancelNotRequested(task_id, generation):
            return CancelNotRequestedError(
                f"task {shown(task_id)} generation {generation}: confirm_cancel without a cancel "
                "request",
                rejection,
            )
        case fx.InvalidLeaseArgument(argument, value):
            return _invalid(argument, _LEASE_RULES[argument], value, rejection)
    raise AssertionError(f"unhandled rejection {rejection!r}")
