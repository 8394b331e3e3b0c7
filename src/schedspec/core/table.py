"""The legal state changes, as data (STATE-2, PHASE-1).

Every state change in the core goes through one helper (or its batch form) that checks it
against these tables, and `spec/diagram.md` is generated from them (`schedspec diagram`), so the
rules, the code and the picture cannot drift apart.
"""

from __future__ import annotations

from .types import Phase, TaskState

P, R, U = TaskState.PENDING, TaskState.READY, TaskState.RUNNING
S, F, C, B = TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.BLOCKED

# (source, target) -> the events that may cause it. `None` as source is a new version.
TRANSITIONS: dict[tuple[TaskState | None, TaskState], tuple[str, ...]] = {
    (None, P): ("Submit", "Expire"),
    (None, R): ("Submit", "Expire"),
    (None, B): ("Submit", "Expire"),
    (P, R): ("Complete",),
    (R, U): ("Claim",),
    (U, S): ("Complete",),
    (U, F): ("Fail", "Expire"),
    (U, C): ("ConfirmCancel", "Expire"),
    (P, C): ("Cancel", "Close"),
    (R, C): ("Cancel", "Close"),
    (P, B): ("Submit", "Fail", "Cancel", "ConfirmCancel", "Expire"),
}

PHASE_TRANSITIONS: dict[tuple[Phase, Phase], tuple[str, ...]] = {
    (Phase.OPEN, Phase.STARTED): ("Start",),
    (Phase.OPEN, Phase.CLOSING): ("Close",),
    (Phase.STARTED, Phase.CLOSING): ("Close",),
    (Phase.CLOSING, Phase.CLOSED): ("Close", "Complete", "Fail", "ConfirmCancel", "Expire"),
}


def is_legal(source: TaskState | None, target: TaskState, event: str) -> bool:
    """True when `event` may move a version from `source` to `target`."""
    return event in TRANSITIONS.get((source, target), ())


def is_legal_phase(source: Phase, target: Phase, event: str) -> bool:
    """True when `event` may move the scheduler from phase `source` to `target`."""
    return event in PHASE_TRANSITIONS.get((source, target), ())
