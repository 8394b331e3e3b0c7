"""Effects: what a step hands back to the shell, as data (EFFECT-2).

Every step returns exactly one reply first (`Submitted`, `Started`, `Claimed`, `Answered`,
`Expired`, `Closed`, `Batched` or `Rejected`), then one notification per change (`Transitioned`,
`CancelRequested`, `PhaseChanged`) in the order the changes happened.

The shell's duties, written on the types:
- `Claimed`: hand each grant to a worker with a fresh cancellation token.
- `CancelRequested`: set the token of that version.
- `PhaseChanged` to `closed`: wake whoever waits in `close()`.
- `Rejected`: raise the `SchedulerError` subclass that names the rejection.
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import fast_init
from .types import Cause, EventId, Generation, Outcome, Phase, TaskId, TaskState

# Rejections: the typed reasons a step refuses an event. The state is unchanged (SUB-3).


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidTaskId:
    """SUB-1, DONE-6: the value given as a task id is not a non-empty str."""

    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidDeps:
    """SUB-1: `deps` is not a tuple of ids (the shell turns any iterable into one)."""

    task_id: TaskId
    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidDependency:
    """SUB-1: one element of `deps` is not a non-empty str."""

    task_id: TaskId
    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class DuplicateDependency:
    """SUB-2."""

    task_id: TaskId
    dependency: TaskId


@fast_init
@dataclass(frozen=True, slots=True)
class SchedulerClosed:
    """SUB-10."""

    task_id: TaskId


@fast_init
@dataclass(frozen=True, slots=True)
class GraphClosed:
    """SUB-9: a brand-new id after start."""

    task_id: TaskId


@fast_init
@dataclass(frozen=True, slots=True)
class RunningConflict:
    """SUB-7."""

    task_id: TaskId
    generation: Generation


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidIfGeneration:
    """SUB-12: `if_generation` is neither None nor an int >= 0."""

    task_id: TaskId
    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class GenerationMismatch:
    """SUB-12: a conditional submission on `generation` (its `if_generation`) that is not the
    current one (`current` is 0 for a task with no version)."""

    task_id: TaskId
    generation: Generation
    current: Generation


@fast_init
@dataclass(frozen=True, slots=True)
class UnknownDependencies:
    """START-2, SUB-9: task id -> its sorted missing ids, tasks in submission order."""

    missing: tuple[tuple[TaskId, tuple[TaskId, ...]], ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Cycles:
    """START-2, START-3, SUB-9."""

    cycles: tuple[tuple[TaskId, ...], ...]
    unexecutable: tuple[TaskId, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class NotStarted:
    """CLAIM-1."""


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidMaxTasks:
    """CLAIM-2."""

    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class UnknownTask:
    """DONE-6, QUERY-1."""

    task_id: TaskId


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidGeneration:
    """DONE-6."""

    task_id: TaskId
    value: object


@fast_init
@dataclass(frozen=True, slots=True)
class FutureGeneration:
    """DONE-6."""

    task_id: TaskId
    generation: Generation
    current: Generation


@fast_init
@dataclass(frozen=True, slots=True)
class NotClaimed:
    """DONE-6: the current version was never claimed."""

    task_id: TaskId
    generation: Generation
    state: TaskState


@fast_init
@dataclass(frozen=True, slots=True)
class CancelNotRequested:
    """CANCEL-4."""

    task_id: TaskId
    generation: Generation


@fast_init
@dataclass(frozen=True, slots=True)
class InvalidLeaseArgument:
    """LEASE-1..3: `worker`, `lease_until` or `now` is not what the clause allows."""

    argument: str
    value: object


Rejection = (
    InvalidTaskId
    | InvalidDeps
    | InvalidDependency
    | DuplicateDependency
    | SchedulerClosed
    | GraphClosed
    | RunningConflict
    | InvalidIfGeneration
    | GenerationMismatch
    | UnknownDependencies
    | Cycles
    | NotStarted
    | InvalidMaxTasks
    | UnknownTask
    | InvalidGeneration
    | FutureGeneration
    | NotClaimed
    | CancelNotRequested
    | InvalidLeaseArgument
)

# Replies.


@fast_init
@dataclass(frozen=True, slots=True)
class Rejected:
    """The event was refused for `rejection`; the state is the very same object (SUB-3)."""

    event_id: EventId
    rejection: Rejection


@fast_init
@dataclass(frozen=True, slots=True)
class Submitted:
    """The new version, and the version it replaced if any (SUB-6)."""

    event_id: EventId
    task_id: TaskId
    generation: Generation
    state: TaskState
    replaced: tuple[Generation, TaskState] | None


@fast_init
@dataclass(frozen=True, slots=True)
class Started:
    """`changed` is False when the scheduler was already past `open` (START-1)."""

    event_id: EventId
    changed: bool


@fast_init
@dataclass(frozen=True, slots=True)
class Grant:
    """One claimed version: what a worker needs to run it (CLAIM-6)."""

    task_id: TaskId
    generation: Generation
    payload: object


@fast_init
@dataclass(frozen=True, slots=True)
class Claimed:
    """The versions a claim handed out, in ascending submission sequence (CLAIM-3)."""

    event_id: EventId
    grants: tuple[Grant, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Answered:
    """The answer to a callback or a cancel: accepted, or a race that changed nothing
    (DONE-4, DONE-5, CANCEL-3, CANCEL-5)."""

    event_id: EventId
    outcome: Outcome


@fast_init
@dataclass(frozen=True, slots=True)
class Closed:
    """`changed` is False when the scheduler was already closing or closed (CLOSE-4)."""

    event_id: EventId
    changed: bool


@fast_init
@dataclass(frozen=True, slots=True)
class Batched:
    """The replies of a batch event's members, in order (EFFECT-4)."""

    event_id: EventId
    replies: tuple[Reply, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Expired:
    """The versions whose leases an `expire` ended, in ascending submission sequence (LEASE-3);
    what became of each is notified (EFFECT-5)."""

    event_id: EventId
    versions: tuple[tuple[TaskId, Generation], ...]


Reply = Rejected | Submitted | Started | Claimed | Answered | Closed | Batched | Expired

# Notifications.


@fast_init
@dataclass(frozen=True, slots=True)
class Transitioned:
    """A version changed state; `source` is None for a new version."""

    event_id: EventId
    task_id: TaskId
    generation: Generation
    source: TaskState | None
    target: TaskState


@fast_init
@dataclass(frozen=True, slots=True)
class CancelRequested:
    """The shell must set this version's cancellation token (CANCEL-3)."""

    event_id: EventId
    task_id: TaskId
    generation: Generation


@fast_init
@dataclass(frozen=True, slots=True)
class PhaseChanged:
    """The scheduler's phase moved from `source` to `target` (PHASE-1)."""

    event_id: EventId
    source: Phase
    target: Phase


Notification = Transitioned | CancelRequested | PhaseChanged
Effect = Reply | Notification

__all__ = [
    "Answered",
    "Batched",
    "CancelNotRequested",
    "CancelRequested",
    "Cause",
    "Claimed",
    "Closed",
    "Cycles",
    "DuplicateDependency",
    "Effect",
    "Expired",
    "FutureGeneration",
    "GenerationMismatch",
    "Grant",
    "GraphClosed",
    "InvalidDependency",
    "InvalidDeps",
    "InvalidGeneration",
    "InvalidIfGeneration",
    "InvalidLeaseArgument",
    "InvalidMaxTasks",
    "InvalidTaskId",
    "NotClaimed",
    "NotStarted",
    "Notification",
    "PhaseChanged",
    "Rejected",
    "Rejection",
    "Reply",
    "RunningConflict",
    "SchedulerClosed",
    "Started",
    "Submitted",
    "Transitioned",
    "UnknownDependencies",
    "UnknownTask",
]
