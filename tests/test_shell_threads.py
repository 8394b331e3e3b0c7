"""The shell under threads: one lock, every version claimed at most once (CLAIM-4), and the
final states are the contract's."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from schedspec import (
    CancellationToken,
    CancelledByRequest,
    EnvironmentFault,
    NotClaimedError,
    OutcomeKind,
    Phase,
    Runner,
    TaskScheduler,
    TaskState,
)


def _noop(token: CancellationToken) -> None:
    return None


def test_claim_4_threads_hammering_one_shell_claim_each_version_at_most_once() -> None:
    rng = random.Random(7)
    n = 600
    s = TaskScheduler(max_concurrency=8, validate=False)
    for i in range(n):
        deps = sorted({f"t{rng.randrange(i)}" for _ in range(min(2, i))})
        s.submit(f"t{i}", deps, _noop)
    s.start()
    claims: Counter[tuple[str, int]] = Counter()
    fail_ids = {f"t{i}" for i in range(0, n, 37)}
    cancel_ids = [f"t{i}" for i in range(5, n, 41)]
    lock = threading.Lock()
    stop = threading.Event()

    def worker(seed: int) -> None:
        r = random.Random(seed)
        while not stop.is_set():
            batch = s.ready(max_tasks=r.randint(1, 3))
            if not batch:
                time.sleep(0.0005)
                continue
            for c in batch:
                with lock:
                    claims[(c.task_id, c.generation)] += 1
                if c.task_id in fail_ids:
                    s.fail(c.task_id, c.generation, RuntimeError("planned"))
                else:
                    s.complete(c.task_id, c.generation, c.task_id)
                # A duplicate callback from a confused worker is harmless (DONE-4).
                again = s.complete(c.task_id, c.generation)
                assert again.kind is OutcomeKind.ALREADY_TERMINAL

    def canceller() -> None:
        for t in cancel_ids:
            s.cancel(t)
            time.sleep(0.0002)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    threads.append(threading.Thread(target=canceller))
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        counts = s.snapshot().counts()
        if (
            counts[TaskState.RUNNING] == 0
            and counts[TaskState.READY] == 0
            and not threads[-1].is_alive()
        ) and counts[TaskState.PENDING] == 0:
            break
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join()
    assert max(claims.values()) == 1
    snap = s.snapshot()
    counts = snap.counts()
    assert counts[TaskState.PENDING] == counts[TaskState.READY] == counts[TaskState.RUNNING] == 0
    # The final states are those the contract gives for the callbacks that happened.
    for view in snap.tasks():
        claimed = (view.task_id, view.generation) in claims
        if view.state is TaskState.SUCCEEDED:
            assert claimed and view.task_id not in fail_ids
        elif view.state is TaskState.FAILED:
            assert claimed and view.task_id in fail_ids
        elif view.state is TaskState.CANCELLED:
            assert not claimed and view.task_id in cancel_ids
        else:
            assert view.state is TaskState.BLOCKED and not claimed
            assert view.cause is not None
            root = snap.task(view.cause.task_id)
            assert root.state is view.cause.state
            assert root.state in (TaskState.FAILED, TaskState.CANCELLED)


def test_close_3_runner_drains_and_confirms_cooperative_cancellation() -> None:
    s = TaskScheduler(max_concurrency=2, validate=True)
    started = threading.Event()

    def slow(token: CancellationToken) -> str:
        started.set()
        token.wait(10)
        token.raise_if_cancelled()
        return "finished"

    def refuses(token: CancellationToken) -> None:
        raise CancelledByRequest  # without a request this is a plain failure

    s.submit("slow", [], slow)
    s.submit("after-slow", ["slow"], _noop)
    s.submit("refuses", [], refuses)
    s.start()
    runner = threading.Thread(target=Runner(s).run)
    runner.start()
    assert started.wait(5)
    assert s.cancel("slow").kind is OutcomeKind.CANCEL_REQUESTED
    runner.join(10)
    assert not runner.is_alive()
    assert s.state("slow") is TaskState.CANCELLED
    assert s.state("after-slow") is TaskState.BLOCKED
    assert s.state("refuses") is TaskState.FAILED
    report = s.close(timeout=0)
    assert report.closed and report.cancelled == () and report.still_running == ()
    assert s.phase is Phase.CLOSED


def test_close_5_timeout_reports_what_still_runs_and_late_callbacks_still_count() -> None:
    """CLOSE-5: timeout reports what still runs and late callbacks still count."""
    s = TaskScheduler(max_concurrency=1, validate=True)
    s.submit("a", [], _noop)
    s.submit("b", ["a"], _noop)
    s.start()
    (_claim,) = s.ready()
    report = s.close(timeout=0.01)
    assert not report.closed
    assert [(v.task_id, v.generation) for v in report.still_running] == [("a", 1)]
    assert [(v.task_id, v.generation) for v in report.cancelled] == [("b", 1)]
    waiter_result: list[bool] = []
    waiter = threading.Thread(target=lambda: waiter_result.append(s.close().closed))
    waiter.start()
    assert s.complete("a", 1).kind is OutcomeKind.ACCEPTED
    waiter.join(5)
    assert waiter_result == [True]
    with pytest.raises(NotClaimedError):
        s.complete("b", 1)


def test_runner_reports_an_executor_that_refuses_work_as_an_environment_fault() -> None:
    import concurrent.futures as cf

    s = TaskScheduler(max_concurrency=1)
    s.submit("a", [], _noop)
    s.start()
    executor = cf.ThreadPoolExecutor(max_workers=1)
    executor.shutdown()
    with pytest.raises(EnvironmentFault, match="'a'"):
        Runner(s, executor).run()
