"""`Runner`: executes claimed functions in a `concurrent.futures.Executor`.

The runner only claims and reports; every decision is the scheduler's. Each claimed function is
called as `fn(token)`. Its return value is reported with `complete`, an exception with `fail`,
and `CancelledByRequest` raised after a cancellation request with `confirm_cancel`, always with
the claimed generation, so a late report after a re-submission is stale (DONE-5) rather than
wrong.

No claimed version is left `running` by the runner, whatever goes wrong:
- a function that raises a `BaseException` that is not an `Exception` (`SystemExit`,
  `KeyboardInterrupt`) fails its version with it, and `run()` then raises it;
- a claim the executor refuses (it was shut down) fails its version, and every later claim of
  the same batch, with the executor's error, and `run()` raises `EnvironmentFault`;
- work the executor accepts but cannot run (a process pool that cannot pickle it, a broken
  pool) fails its version with the executor's error, and the run goes on.
A report on a version that was already reported is harmless: it is answered `already_terminal`
(DONE-4).

Results flow to dependents, when asked for: a function with a parameter named `results` is
called as `fn(token, results=...)`, a mapping from each of its version's dependencies to that
dependency's result (what its function returned), read when the function starts. A dependency
whose current version is not `succeeded` is left out: that happens only when it was re-submitted
after this version was released (SUB-8). Other functions are called as `fn(token)`.

With `retries=N`, a version whose function failed (its `fail` accepted) is retried, up to N
times per task, through `TaskScheduler.retry`, which re-submits it and the versions it blocked
as new generations; the k-th retry of a task waits `backoff_s * 2**(k-1)` seconds, while the
rest of the work goes on. A retry the scheduler refuses (it is closing) is dropped.

With `timeout_s` (every task) or `timeouts` (per task id, overriding it), a running version's
time is bounded cooperatively: at the deadline the runner asks `cancel` for it, which sets its
token (CANCEL-3); a function that polls its token raises `CancelledByRequest` and the version is
`cancelled` (CANCEL-4), one that finishes anyway is `succeeded` or `failed` (DONE-3). Nothing is
killed: Python cannot stop a thread, and the contract's answer to a late worker is DONE-3.

A function may be `async def` (or return any awaitable): the runner awaits it on an event loop
of its own, in the worker, and reports what the awaited call returns or raises, never the
coroutine object itself. `run()` on a scheduler whose `max_concurrency` is 0 warns
(`RuntimeWarning`): nothing can ever be claimed, so it returns at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import heapq
import inspect
import math
import threading
import time
import warnings
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from ..core.types import Outcome, OutcomeKind, TaskState
from ..errors import (
    CancelledByRequest,
    EnvironmentFault,
    InvalidArgumentError,
    SchedulerError,
    shown,
)
from .scheduler import Claim, TaskScheduler


@dataclass(frozen=True, slots=True)
class RunReport:
    """What one `Runner.run()` did: claims executed and the final count per state."""

    executed: int
    counts: dict[TaskState, int]


class Runner:
    """Drive a started scheduler until nothing is running and nothing more can be claimed."""

    def __init__(
        self,
        scheduler: TaskScheduler,
        executor: cf.Executor | None = None,
        *,
        retries: int = 0,
        backoff_s: float = 0.0,
        timeout_s: float | None = None,
        timeouts: Mapping[str, float] | None = None,
    ) -> None:
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise InvalidArgumentError(f"retries must be an int >= 0, got {shown(retries)}")
        if not (_is_seconds(backoff_s) or (backoff_s == 0 and not isinstance(backoff_s, bool))):
            raise InvalidArgumentError(
                f"backoff_s must be a finite number >= 0, got {shown(backoff_s)}"
            )
        self._timeouts = dict(timeouts or {})
        for name, seconds in [("timeout_s", timeout_s), *self._timeouts.items()]:
            if seconds is not None and not _is_seconds(seconds):
                raise InvalidArgumentError(
                    f"timeout of {shown(name)} must be a finite number > 0, got {shown(seconds)}"
                )
        self._timeout_s = timeout_s
        self._scheduler = scheduler
        self._executor = executor
        self._retries = retries
        self._backoff_s = float(backoff_s)

    def run(self, progress: bool = False, console: Console | None = None) -> RunReport:
        """Claim, execute and report until quiescent. Call `start()` first. With `progress`, a
        `rich` progress bar on `console` (standard error by default) counts the versions that
        ended, and its description the versions in each state."""
        if self._scheduler.max_concurrency == 0:
            warnings.warn(
                "max_concurrency is 0: nothing can ever be claimed, so run() returns at once",
                RuntimeWarning,
                stacklevel=2,
            )
        own = self._executor is None
        executor = self._executor or cf.ThreadPoolExecutor(
            max_workers=max(1, self._scheduler.max_concurrency)
        )
        bar = _Bar(self._scheduler, console) if progress else None
        executed = 0
        in_flight: dict[cf.Future[tuple[str, Outcome]], Claim] = {}
        raising: BaseException | None = None
        attempts: dict[str, int] = {}
        due: list[tuple[float, int, str]] = []  # (when, order, task): retries to make
        try:
            while raising is None:
                self._retry_due(due)
                claims = self._scheduler.ready()
                for i, claim in enumerate(claims):
                    try:
                        future = executor.submit(self._execute, claim)
                        in_flight[future] = claim
                        self._bound(claim, future)
                    except RuntimeError as exc:  # a shut-down executor
                        for refused in claims[i:]:
                            self._scheduler.fail(refused.task_id, refused.generation, exc)
                        raise EnvironmentFault(
                            f"executor refused {shown(claim.task_id)}: {shown(str(exc))}"
                        ) from exc
                    executed += 1
                if not in_flight and not due:
                    break
                wait = None if not due else max(0.0, due[0][0] - time.monotonic())
                if not in_flight:
                    time.sleep(wait or 0.0)
                    continue
                done, _ = cf.wait(in_flight, timeout=wait, return_when=cf.FIRST_COMPLETED)
                if bar is not None:
                    bar.update()
                for future in done:
                    claim = in_flight.pop(future)
                    error = future.exception()
                    if error is None:
                        kind, outcome = future.result()
                        if kind == "fail" and outcome.kind is OutcomeKind.ACCEPTED:
                            self._schedule_retry(claim.task_id, attempts, due)
                        continue
                    # Raised outside the function's own handling (it cannot be pickled, the
                    # pool broke) or a BaseException: the version fails with it, if not yet.
                    self._scheduler.fail(claim.task_id, claim.generation, error)
                    if not isinstance(error, Exception):
                        raising = error
            if raising is not None:
                raise raising
        finally:
            if own:
                executor.shutdown(wait=True)
            if bar is not None:
                bar.close()
        return RunReport(executed, self._scheduler.snapshot().counts())

    def _results_for(self, claim: Claim) -> dict[str, object]:
        """The results of the claimed version's dependencies that have succeeded."""
        snapshot = self._scheduler.snapshot()
        found: dict[str, object] = {}
        for dep, _, state in snapshot.waiting_on(claim.task_id).deps:
            if state is TaskState.SUCCEEDED:
                found[dep] = snapshot.task(dep).detail
        return found

    def _bound(self, claim: Claim, future: cf.Future[tuple[str, Outcome]]) -> None:
        """Ask for the version's cancellation at its deadline, unless it is done by then."""
        seconds = self._timeouts.get(claim.task_id, self._timeout_s)
        if seconds is None:
            return
        timer = threading.Timer(seconds, self._scheduler.cancel, (claim.task_id, claim.generation))
        timer.daemon = True
        timer.start()
        future.add_done_callback(lambda _: timer.cancel())

    def _schedule_retry(
        self, task_id: str, attempts: dict[str, int], due: list[tuple[float, int, str]]
    ) -> None:
        made = attempts.get(task_id, 0)
        if made >= self._retries:
            return
        attempts[task_id] = made + 1
        when = time.monotonic() + self._backoff_s * 2**made
        heapq.heappush(due, (when, sum(attempts.values()), task_id))

    def _retry_due(self, due: list[tuple[float, int, str]]) -> None:
        while due and due[0][0] <= time.monotonic():
            _, _, task_id = heapq.heappop(due)
            with contextlib.suppress(SchedulerError):  # closing, or already re-submitted
                self._scheduler.retry(task_id)

    def _execute(self, claim: Claim) -> tuple[str, Outcome]:
        """Call the function and report; returns which report it was, with its outcome."""
        s = self._scheduler
        try:
            if _wants_results(claim.fn):
                result = claim.fn(claim.token, results=self._results_for(claim))
            else:
                result = claim.fn(claim.token)
            if inspect.isawaitable(result):
                result = asyncio.run(_awaited(result))
        except CancelledByRequest:
            if claim.token.cancelled:
                return "confirm_cancel", s.confirm_cancel(claim.task_id, claim.generation)
            return "fail", s.fail(claim.task_id, claim.generation, CancelledByRequest())
        except Exception as exc:  # the task's own failure is data, not a crash of the runner
            return "fail", s.fail(claim.task_id, claim.generation, exc)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt: fail, then let it go on
            s.fail(claim.task_id, claim.generation, exc)
            raise
        return "complete", s.complete(claim.task_id, claim.generation, result)


async def _awaited(awaitable: Awaitable[object]) -> object:
    return await awaitable


def _is_seconds(value: object) -> bool:
    """A finite number of seconds > 0 (not a bool)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _wants_results(fn: object) -> bool:
    """Whether `fn` declares a parameter named `results` (then it is given its dependencies'
    results)."""
    try:
        return "results" in inspect.signature(fn).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):  # a builtin without a signature
        return False


class _Bar:
    """`Runner.run(progress=True)`: versions ended out of all current ones, counts per state."""

    def __init__(self, scheduler: TaskScheduler, console: Console | None) -> None:
        self._scheduler = scheduler
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} ended"),
            console=console,
        )
        self._progress.start()
        self._task = self._progress.add_task("", total=None)
        self.update()

    def update(self) -> None:
        counts = self._scheduler.snapshot().counts()
        ended = sum(n for s, n in counts.items() if s in _ENDED)
        described = "  ".join(f"{s.value} {n}" for s, n in counts.items() if n)
        self._progress.update(
            self._task, completed=ended, total=sum(counts.values()), description=described
        )

    def close(self) -> None:
        self.update()
        self._progress.stop()


_ENDED = (TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.BLOCKED)
