"""The Runner on executors in other processes: a process pool and a dask `LocalCluster`.

The runner sends the worker only the function (module-level, so picklable), a `RemoteToken`
and, when asked for, the dependencies' results; it reports what came back in its own process
(src/schedspec/shell/runner.py). These tests run the same small graph on both executors and
check that every function ran in another process, that results flowed to a dependent, that a
failure blocked its dependent, that an `async def` function was awaited there, and that a
cancellation request reached a function polling its token there.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

import pytest

import helpers_elsewhere as fns
from schedspec import Runner, TaskScheduler, TaskState

TESTS = Path(__file__).resolve().parent


def graph(executor: Executor) -> TaskScheduler:
    """Run a small graph on `executor` and return the closed scheduler."""
    s = TaskScheduler(max_concurrency=2, validate=True)
    s.submit("a", [], fns.pid)
    s.submit("b", ["a"], fns.pid)
    s.submit("both", ["a", "b"], fns.names)
    s.submit("bad", [], fns.boom)
    s.submit("after-bad", ["bad"], fns.pid)
    s.submit("async", [], fns.awaited)
    s.start()
    report = Runner(s, executor).run()
    assert report.executed == 5 and report.counts[TaskState.RUNNING] == 0
    assert s.close(timeout=None).closed
    return s


def check(s: TaskScheduler) -> None:
    snap = s.snapshot()
    for task in ("a", "b"):
        view = snap.task(task)
        assert view.state is TaskState.SUCCEEDED and view.detail != os.getpid(), view
    assert snap.task("both").detail == ["a", "b"]
    bad = snap.task("bad")
    assert bad.state is TaskState.FAILED and isinstance(bad.detail, ValueError)
    assert snap.task("after-bad").state is TaskState.BLOCKED
    assert snap.task("async").detail == "awaited elsewhere"


def cancelled_by_timeout(executor: Executor) -> TaskState:
    """A function that polls its token, past a 0.3 s timeout: the request must reach it."""
    s = TaskScheduler(max_concurrency=1)
    s.submit("slow", [], fns.poll_until_cancelled)
    s.start()
    Runner(s, executor, timeout_s=0.3).run()
    return s.state("slow")


def test_the_runner_on_a_process_pool_runs_functions_there_and_reports_here() -> None:
    with ProcessPoolExecutor(max_workers=2) as pool:
        check(graph(pool))


def test_a_cancellation_request_reaches_a_function_in_a_process_pool() -> None:
    """CANCEL-3, CANCEL-4 across processes: by polling, within the runner's POLL_S."""
    with ProcessPoolExecutor(max_workers=1) as pool:
        assert cancelled_by_timeout(pool) is TaskState.CANCELLED


def test_without_forwarding_the_request_never_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a runner that forwards nothing leaves the function polling
    until it gives up (a forked pool inherits the shorter poll) and it succeeds."""
    from schedspec.shell import runner

    monkeypatch.setattr(runner, "_forward", lambda flags, in_flight: None)
    monkeypatch.setattr(fns, "POLL_FOR_S", 1.0)
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        assert cancelled_by_timeout(pool) is TaskState.SUCCEEDED


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[Executor]:
    distributed = pytest.importorskip("distributed")
    # Dask's worker processes import the test functions by module name.
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), old) if p)
    try:
        with (
            distributed.LocalCluster(
                n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client.get_executor()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def test_the_runner_on_a_dask_cluster_runs_functions_there_and_reports_here(
    dask_executor: Executor,
) -> None:
    check(graph(dask_executor))


def test_a_cancellation_request_reaches_a_function_on_a_dask_worker(
    dask_executor: Executor,
) -> None:
    assert cancelled_by_timeout(dask_executor) is TaskState.CANCELLED
