"""`Runner`: executes claimed functions in a `concurrent.futures.Executor`.

The runner only claims and reports; every decision is the scheduler's. Each claimed function is
called as `fn(token)`. Its return value is reported with `complete`, an exception with `fail`,
and `CancelledByRequest` raised after a cancellation request with `confirm_cancel`, always with
the claimed generation, so a late report after a re-submission is stale (DONE-5) rather than
wrong.
"""

from __future__ import annotations

import concurrent.futures as cf
from dataclasses import dataclass

from ..core.types import Outcome, TaskState
from ..errors import CancelledByRequest, EnvironmentFault
from .scheduler import Claim, TaskScheduler


@dataclass(frozen=True, slots=True)
class RunReport:
    """What one `Runner.run()` did: claims executed and the final count per state."""

    executed: int
    counts: dict[TaskState, int]


class Runner:
    """Drive a started scheduler until nothing is running and nothing more can be claimed."""

    def __init__(self, scheduler: TaskScheduler, executor: cf.Executor | None = None) -> None:
        self._scheduler = scheduler
        self._executor = executor

    def run(self) -> RunReport:
        """Claim, execute and report until quiescent. Call `start()` first."""
        own = self._executor is None
        executor = self._executor or cf.ThreadPoolExecutor(
            max_workers=max(1, self._scheduler.max_concurrency)
        )
        executed = 0
        in_flight: set[cf.Future[Outcome]] = set()
        try:
            while True:
                for claim in self._scheduler.ready():
                    try:
                        in_flight.add(executor.submit(self._execute, claim))
                    except RuntimeError as exc:  # a shut-down executor
                        raise EnvironmentFault(f"executor refused {claim.task_id!r}") from exc
                    executed += 1
                if not in_flight:
                    break
                done, in_flight = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    future.result()  # a report that raised is a bug worth surfacing
        finally:
            if own:
                executor.shutdown(wait=True)
        return RunReport(executed, self._scheduler.snapshot().counts())

    def _execute(self, claim: Claim) -> Outcome:
        s = self._scheduler
        try:
            result = claim.fn(claim.token)
        except CancelledByRequest:
            if claim.token.cancelled:
                return s.confirm_cancel(claim.task_id, claim.generation)
            return s.fail(claim.task_id, claim.generation, CancelledByRequest())
        except Exception as exc:  # the task's own failure is data, not a crash of the runner
            return s.fail(claim.task_id, claim.generation, exc)
        return s.complete(claim.task_id, claim.generation, result)
