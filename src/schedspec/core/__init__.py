"""The pure core: `step(state, event) -> (state, effects)` over immutable data.

Imports only the standard library, `immutables` and `pyrsistent` (a test walks the imports).
"""

from .effects import *  # noqa: F403
from .events import (
    Cancel,
    Claim,
    Close,
    Complete,
    CompleteBatch,
    ConfirmCancel,
    Event,
    Expire,
    Fail,
    Heartbeat,
    Start,
    Submit,
    SubmitBatch,
)
from .state import State, expiry_problem, initial_state, limit_problem
from .step import step
from .types import (
    Cause,
    EventId,
    Generation,
    Lease,
    Outcome,
    OutcomeKind,
    Phase,
    TaskId,
    TaskState,
)

__all__ = [
    "Cancel",
    "Cause",
    "Claim",
    "Close",
    "Complete",
    "CompleteBatch",
    "ConfirmCancel",
    "Event",
    "EventId",
    "Expire",
    "Fail",
    "Generation",
    "Heartbeat",
    "Lease",
    "Outcome",
    "OutcomeKind",
    "Phase",
    "Start",
    "State",
    "Submit",
    "SubmitBatch",
    "TaskId",
    "TaskState",
    "expiry_problem",
    "initial_state",
    "limit_problem",
    "step",
]
