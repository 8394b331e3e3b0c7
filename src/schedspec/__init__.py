"""schedspec: a formally specified, dependency-aware task scheduler.

The contract is `spec/contract.md`; `schedspec.core` is its pure restatement as
`step(state, event) -> (state, effects)`; `TaskScheduler` is the thread-safe shell.
"""

from .core.types import Cause, Outcome, OutcomeKind, Phase, TaskState
from .errors import (
    CancelledByRequest,
    CancelNotRequestedError,
    ConflictError,
    CycleError,
    DuplicateDependencyError,
    EnvironmentFault,
    FutureGenerationError,
    GraphClosedError,
    InvalidArgumentError,
    NotClaimedError,
    NotStartedError,
    SchedspecError,
    SchedulerClosedError,
    SchedulerError,
    UnknownDependencyError,
    UnknownTaskError,
)
from .shell import (
    CancellationToken,
    Claim,
    CloseReport,
    Runner,
    RunReport,
    Snapshot,
    TaskScheduler,
    TaskView,
    VersionRef,
)

__all__ = [
    "CancelNotRequestedError",
    "CancellationToken",
    "CancelledByRequest",
    "Cause",
    "Claim",
    "CloseReport",
    "ConflictError",
    "CycleError",
    "DuplicateDependencyError",
    "EnvironmentFault",
    "FutureGenerationError",
    "GraphClosedError",
    "InvalidArgumentError",
    "NotClaimedError",
    "NotStartedError",
    "Outcome",
    "OutcomeKind",
    "Phase",
    "RunReport",
    "Runner",
    "SchedspecError",
    "SchedulerClosedError",
    "SchedulerError",
    "Snapshot",
    "TaskScheduler",
    "TaskState",
    "TaskView",
    "UnknownDependencyError",
    "UnknownTaskError",
    "VersionRef",
]
