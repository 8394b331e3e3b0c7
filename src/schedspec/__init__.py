"""schedspec: a formally specified, dependency-aware task scheduler.

The contract is `spec/contract.md`; `schedspec.core` is its pure restatement as
`step(state, event) -> (state, effects)`; `TaskScheduler` is the thread-safe shell.
"""

from importlib.metadata import PackageNotFoundError, version

from .core.types import Cause, Lease, Outcome, OutcomeKind, Phase, TaskState
from .errors import (
    CancelledByRequest,
    CancelNotRequestedError,
    ConflictError,
    CycleError,
    DuplicateDependencyError,
    EnvironmentFault,
    FutureGenerationError,
    GenerationMismatchError,
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
    Change,
    Claim,
    CloseReport,
    Runner,
    RunReport,
    Snapshot,
    TaskScheduler,
    TaskView,
    VersionRef,
    Waiting,
)

try:
    __version__ = version("schedspec")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "CancelNotRequestedError",
    "CancellationToken",
    "CancelledByRequest",
    "Cause",
    "Change",
    "Claim",
    "CloseReport",
    "ConflictError",
    "CycleError",
    "DuplicateDependencyError",
    "EnvironmentFault",
    "FutureGenerationError",
    "GenerationMismatchError",
    "GraphClosedError",
    "InvalidArgumentError",
    "Lease",
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
    "Waiting",
]
