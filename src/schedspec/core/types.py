"""The contract's vocabulary: ids, task-version states, phases, causes and outcomes.

Member names of `TaskState` and `Phase` are the TLA+ constants of `tla/Scheduler.tla`; their
values are the contract's words, which is what the shell and the protocol print.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NewType

from .records import fast_init

TaskId = NewType("TaskId", str)
Generation = NewType("Generation", int)
EventId = NewType("EventId", int)


class TaskState(enum.StrEnum):
    """The state of one task version (STATE-1)."""

    PENDING = "pending"
    READY = "ready"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    BLOCKED = "blocked"

    def __str__(self) -> str:
        return self.value

    @property
    def terminal(self) -> bool:
        """Whether the state never changes again: succeeded, failed, cancelled, blocked."""
        return self in TERMINAL


TERMINAL = frozenset(
    {TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.BLOCKED}
)
QUEUED = frozenset({TaskState.PENDING, TaskState.READY})
UNSUCCESSFUL = frozenset({TaskState.FAILED, TaskState.CANCELLED, TaskState.BLOCKED})


class Phase(enum.StrEnum):
    """The phase of the scheduler (PHASE-1)."""

    OPEN = "open"
    STARTED = "started"
    CLOSING = "closing"
    CLOSED = "closed"

    def __str__(self) -> str:
        return self.value


class OutcomeKind(enum.StrEnum):
    """Which case of the contract a callback or a cancel met (DONE-4, DONE-5, CANCEL-3)."""

    ACCEPTED = "accepted"
    STALE_GENERATION = "stale_generation"
    ALREADY_TERMINAL = "already_terminal"
    CANCEL_REQUESTED = "cancel_requested"

    def __str__(self) -> str:
        return self.value


@fast_init
@dataclass(frozen=True, slots=True)
class Cause:
    """The root of a blocking (BLOCK-2): always a failed or cancelled version."""

    task_id: TaskId
    generation: Generation
    state: TaskState


@fast_init
@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer to a callback or a cancel.

    `generation` is the generation the caller named (or the current one for `cancel` without
    one); `state` is that version's state after the call, or None for a stale generation, whose
    state the scheduler no longer tracks.
    """

    kind: OutcomeKind
    task_id: TaskId
    generation: Generation
    state: TaskState | None


# Reasons recorded on cancelled versions (CANCEL-1, CLOSE-2).
REASON_CANCELLED = "cancelled"
REASON_SHUTDOWN = "shutdown"

# Expiry policies (LEASE-4), and the error recorded on a version failed by expiry (LEASE-3).
REQUEUE = "requeue"
FAIL = "fail"
EXPIRY_POLICIES = (REQUEUE, FAIL)
LEASE_EXPIRED = "lease_expired"


@fast_init
@dataclass(frozen=True, slots=True)
class Lease:
    """The lease a running version holds (LEASE-1): its worker, and a deadline on the caller's
    clock, None for a lease that never expires."""

    worker: str | None
    until: int | float | None
