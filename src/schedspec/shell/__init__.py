"""The mutable shell: one lock, one write, effects carried out (see scheduler.py)."""

from .runner import RemoteToken, Runner, RunReport
from .scheduler import (
    CancellationToken,
    Change,
    Claim,
    CloseReport,
    Snapshot,
    TaskScheduler,
    TaskView,
    VersionRef,
    Waiting,
)

__all__ = [
    "CancellationToken",
    "Change",
    "Claim",
    "CloseReport",
    "RemoteToken",
    "RunReport",
    "Runner",
    "Snapshot",
    "TaskScheduler",
    "TaskView",
    "VersionRef",
    "Waiting",
]
