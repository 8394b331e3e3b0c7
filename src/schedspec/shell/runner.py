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

Executors in other processes. On a `concurrent.futures.ProcessPoolExecutor`, or on the executor
of a `dask.distributed` client (`Client.get_executor()`), the runner sends the worker a
module-level call, `_call_elsewhere(fn, token, results)`, holding only what must travel: the
function, which must therefore be picklable (defined at module level), a `RemoteToken`, and the
dependencies' results when it asks for them (read when the claim is sent, and picklable too).
The worker calls the function and sends back what it returned or raised; the runner reports it
to the scheduler in its own process, exactly as for a thread. A cancellation request reaches the
function by polling: the runner looks at each running claim's own token at least every
`POLL_S` seconds and, once it is set, sets a flag the `RemoteToken` reads, a
`multiprocessing.Manager` event for a process pool, a `distributed.Event` for dask. Its limits:
the function sees the request only when it polls (`token.cancelled`, `token.wait`,
`token.raise_if_cancelled()`), up to `POLL_S` seconds plus one round trip after the scheduler
set it, and nothing is killed, as with threads. Any other executor is given the in-process
call, as a `ThreadPoolExecutor` is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import heapq
import inspect
import math
import multiprocessing
import threading
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

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

# How often, at least, the runner forwards cancellation requests to functions running in other
# processes (see the module docstring).
POLL_S = 0.05


class _Flag(Protocol):
    def set(self) -> Any: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class RemoteToken:
    """The cancellation token of a function running in another process (a process pool, dask).

    It reads a flag that the runner sets once the claim's own `CancellationToken` is set
    (CANCEL-3), so a function polls it as it would poll the token of a thread; see the module
    docstring for the delay."""

    __slots__ = ("_flag",)

    def __init__(self, flag: _Flag) -> None:
        self._flag = flag

    @property
    def cancelled(self) -> bool:
        """Whether a cancellation of this version was requested, as far as it has arrived."""
        return bool(self._flag.is_set())

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the request arrives or `timeout` seconds pass; return whether it came."""
        return bool(self._flag.wait(timeout))

    def raise_if_cancelled(self) -> None:
        """Raise `CancelledByRequest` if the request arrived: the runner then confirms it."""
        if self.cancelled:
            raise CancelledByRequest


def _call_elsewhere(
    fn: Callable[..., object], token: RemoteToken, results: Mapping[str, object] | None
) -> tuple[str, object]:
    """Run in the worker: call `fn` and return `("returned", value)`, `("cancelled", None)` or
    `("raised", exception)`; a `BaseException` that is not an `Exception` propagates, and the
    runner fails the version with it as for a thread."""
    try:
        result = fn(token) if results is None else fn(token, results=results)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
    except CancelledByRequest:
        return "cancelled", None
    except Exception as exc:
        return "raised", exc
    return "returned", result


class _Elsewhere:
    """The flags of one run on an executor in other processes, and how to make them."""

    def __init__(self, executor: cf.Executor) -> None:
        self._manager: Any = None
        self._dask = not isinstance(executor, cf.ProcessPoolExecutor)

    def flag(self) -> _Flag:
        if self._dask:
            from distributed import Event

            return Event(f"schedspec-cancel-{uuid.uuid4().hex}")  # type: ignore[no-untyped-call]
        if self._manager is None:
            self._manager = multiprocessing.Manager()
        return self._manager.Event()  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._manager is not None:
            self._manager.shutdown()


def _runs_elsewhere(executor: cf.Executor | None) -> bool:
    """A process pool, or a dask client's executor: the function runs in another process."""
    if isinstance(executor, cf.ProcessPoolExecutor):
        return True
    return executor is not None and type(executor).__module__.startswith("distributed")


@dataclass(frozen=True, slots=True)
class RunReport:
    """What one `Runner.run()` did: claims executed and the final count per state."""

    executed: int
    counts: dict[TaskState, int]


class Runner:
    """Drive a started scheduler until nothing is running and nothing more can be claimed.

    `run()` claims what is ready (`TaskScheduler.ready`), calls each claimed version's
    function on `executor`, and reports how it ended: a returned value is its `complete`, a
    raised exception its `fail`, `CancelledByRequest` after a cancellation request its
    `confirm_cancel`. It decides no rule: every state change is the scheduler's.

    Args:
        scheduler: a `TaskScheduler`, started before `run()`.
        executor: any `concurrent.futures` executor; None: a thread pool of
            `max_concurrency` threads, shut down when `run()` returns. On a
            `ProcessPoolExecutor` or a dask client's executor the function runs in another
            process, so it must be picklable, and its token is a `RemoteToken`.
        retries: how many times a failed task is re-submitted with what it blocked
            (`TaskScheduler.retry`), an int >= 0.
        backoff_s: seconds before the first retry, doubling at each next one, a finite
            number >= 0.
        timeout_s: seconds after which a running version's cancellation is requested (its
            token is set; nothing is killed), or None for no deadline.
        timeouts: per task id, a deadline that replaces `timeout_s`.

    Raises:
        InvalidArgumentError: an argument outside the ranges above, named in the message.
    """

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
        """Claim, execute and report until nothing runs, nothing is ready and no retry is
        due; return how many versions were executed and the final count per state.

        With `progress`, a `rich` progress bar on `console` (standard error by default) counts
        the versions that ended, and its description the versions in each state. A function
        that declares a `results` parameter receives its succeeded dependencies' results.

        Raises:
            NotStartedError: the scheduler was not started (CLAIM-1).
            EnvironmentFault: the executor refused a function (it was shut down); the
                versions it refused are failed with its error first.
            BaseException: a function raised `KeyboardInterrupt`, `SystemExit` or the like;
                its version is failed with it and it is raised again, after the runner's own
                thread pool, if it made one, has finished the functions still running.

        Warns:
            RuntimeWarning: `max_concurrency` is 0, so nothing can ever be claimed.
        """
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
        elsewhere = _Elsewhere(executor) if _runs_elsewhere(executor) else None
        flags: dict[cf.Future[Any], _Flag] = {}  # of claims sent elsewhere, not yet forwarded
        executed = 0
        in_flight: dict[cf.Future[Any], Claim] = {}
        raising: BaseException | None = None
        attempts: dict[str, int] = {}
        due: list[tuple[float, int, str]] = []  # (when, order, task): retries to make
        try:
            while raising is None:
                self._retry_due(due)
                claims = self._scheduler.ready()
                for i, claim in enumerate(claims):
                    future: cf.Future[Any]
                    try:
                        if elsewhere is None:
                            future = executor.submit(self._execute, claim)
                        else:
                            flag = elsewhere.flag()
                            results = self._results_for(claim) if _wants_results(claim.fn) else None
                            future = executor.submit(
                                _call_elsewhere, claim.fn, RemoteToken(flag), results
                            )
                            flags[future] = flag
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
                if flags:  # forward cancellation requests at least every POLL_S
                    _forward(flags, in_flight)
                    wait = POLL_S if wait is None else min(wait, POLL_S)
                done, _ = cf.wait(in_flight, timeout=wait, return_when=cf.FIRST_COMPLETED)
                if bar is not None:
                    bar.update()
                for future in done:
                    claim = in_flight.pop(future)
                    flags.pop(future, None)
                    error = future.exception()
                    if error is None:
                        if elsewhere is None:
                            kind, outcome = future.result()
                        else:
                            kind, outcome = self._report(claim, *future.result())
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
            if elsewhere is not None:
                elsewhere.close()
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
        """Call the function in this process and report; returns which report it was, with
        its outcome."""
        try:
            if _wants_results(claim.fn):
                result = claim.fn(claim.token, results=self._results_for(claim))
            else:
                result = claim.fn(claim.token)
            if inspect.isawaitable(result):
                result = asyncio.run(_awaited(result))
        except CancelledByRequest:
            return self._report(claim, "cancelled", None)
        except Exception as exc:  # the task's own failure is data, not a crash of the runner
            return self._report(claim, "raised", exc)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt: fail, then let it go on
            self._scheduler.fail(claim.task_id, claim.generation, exc)
            raise
        return self._report(claim, "returned", result)

    def _report(self, claim: Claim, ended: str, value: object) -> tuple[str, Outcome]:
        """Report how the function ended (`_call_elsewhere`'s words) to the scheduler."""
        s, task, generation = self._scheduler, claim.task_id, claim.generation
        if ended == "returned":
            return "complete", s.complete(task, generation, value)
        if ended == "cancelled" and claim.token.cancelled:
            return "confirm_cancel", s.confirm_cancel(task, generation)
        error = value if ended == "raised" else CancelledByRequest()
        return "fail", s.fail(task, generation, error)


def _forward(flags: dict[cf.Future[Any], _Flag], in_flight: dict[cf.Future[Any], Claim]) -> None:
    """Set the flag of every claim sent elsewhere whose own token is set, once."""
    for future, flag in list(flags.items()):
        if in_flight[future].token.cancelled:
            flag.set()
            del flags[future]


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
