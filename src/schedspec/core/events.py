"""Events: the stimuli the core accepts, one class per TLA+ action.

Each event carries an `event_id` that every effect it causes carries too, so any state can be
explained by the story of events that led to it. The batch events exist for speed only: they mean
exactly the same as their members in sequence (EFFECT-4).
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import fast_init
from .types import EventId


@fast_init
@dataclass(frozen=True, slots=True)
class Submit:
    """submit(task_id, deps, fn, if_generation) (SUB-*). `deps` keeps the submitted order;
    `if_generation` is None for an unconditional submission (SUB-12)."""

    task_id: object
    deps: object
    payload: object = None
    event_id: EventId = EventId(0)
    if_generation: object = None


@fast_init
@dataclass(frozen=True, slots=True)
class Start:
    """start() (START-*)."""

    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Claim:
    """ready(max_tasks, worker, lease_until) (CLAIM-*, LEASE-1)."""

    max_tasks: object = None
    event_id: EventId = EventId(0)
    worker: object = None
    lease_until: object = None


@fast_init
@dataclass(frozen=True, slots=True)
class Complete:
    """complete(task_id, generation, result) (DONE-1)."""

    task_id: object
    generation: object
    result: object = None
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Fail:
    """fail(task_id, generation, error) (DONE-2)."""

    task_id: object
    generation: object
    error: object = None
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Cancel:
    """cancel(task_id, generation=None) (CANCEL-1..3, CANCEL-5)."""

    task_id: object
    generation: object = None
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class ConfirmCancel:
    """confirm_cancel(task_id, generation): the running function stopped on request (CANCEL-4)."""

    task_id: object
    generation: object
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Heartbeat:
    """heartbeat(task_id, generation, lease_until): a new deadline for a running version's
    lease (LEASE-2)."""

    task_id: object
    generation: object
    lease_until: object = None
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Expire:
    """expire(now): end every lease whose deadline is `<= now` (LEASE-3). Time enters the core
    only here, as data."""

    now: object
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class Close:
    """close() (CLOSE-*)."""

    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class SubmitBatch:
    """Several submissions in one step, meaning the same as each in sequence (EFFECT-4)."""

    submissions: tuple[Submit, ...]
    event_id: EventId = EventId(0)


@fast_init
@dataclass(frozen=True, slots=True)
class CompleteBatch:
    """Several completions in one step, meaning the same as each in sequence (EFFECT-4)."""

    completions: tuple[Complete, ...]
    event_id: EventId = EventId(0)


Event = (
    Submit
    | Start
    | Claim
    | Complete
    | Fail
    | Cancel
    | ConfirmCancel
    | Heartbeat
    | Expire
    | Close
    | SubmitBatch
    | CompleteBatch
)
