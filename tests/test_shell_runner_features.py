"""Shell behaviours workflow users expect (issue 13, section 3), each documented where it lives:
async task functions are awaited (`shell/runner.py`), `run()` with no slot warns, `waiting_on`
says why a version is pending (`Snapshot.waiting_on`), `retry` re-submits a failed task and what
it blocked (`TaskScheduler.retry`), and the runner retries with a backoff (`shell/runner.py`)."""

from __future__ import annotations

import asyncio
import io
import logging

import pytest
from rich.console import Console

from schedspec import (
    CancellationToken,
    Cause,
    Change,
    InvalidArgumentError,
    Runner,
    SchedulerClosedError,
    SchedulerError,
    TaskScheduler,
    TaskState,
    UnknownTaskError,
    VersionRef,
    Waiting,
)


async def seven(token: object) -> int:
    await asyncio.sleep(0)
    return 7


async def broken(token: object) -> int:
    await asyncio.sleep(0)
    raise ValueError("async failure")


def test_an_async_function_is_awaited_and_its_result_reported() -> None:
    s = TaskScheduler(max_concurrency=2)
    s.submit("a", [], seven)
    s.submit("b", [], broken)
    s.submit("c", ["b"], seven)
    s.start()
    Runner(s).run()
    assert s.snapshot().task("a").detail == 7  # the value, not a coroutine object
    assert s.state("b") is TaskState.FAILED and isinstance(
        s.snapshot().task("b").detail, ValueError
    )
    assert s.state("c") is TaskState.BLOCKED


def test_run_with_no_slot_warns_that_nothing_can_run() -> None:
    s = TaskScheduler(max_concurrency=0)
    s.submit("a", [], seven)
    s.start()
    with pytest.warns(RuntimeWarning, match="max_concurrency is 0"):
        report = Runner(s).run()
    assert report.executed == 0 and s.state("a") is TaskState.READY


def test_waiting_on_lists_the_dependencies_and_what_is_left() -> None:
    s = TaskScheduler(max_concurrency=2)
    s.submit("a", [], seven)
    s.submit("b", [], seven)
    s.submit("c", ["a", "b", "later"], seven)
    assert s.waiting_on("c") == Waiting(
        "c", 1, TaskState.PENDING, (("a", 1, TaskState.READY), ("b", 1, TaskState.READY),
                                    ("later", None, None)), 3,
    )  # fmt: skip
    s.submit("later", [], seven)
    s.start()
    claims = s.ready()
    s.complete(claims[0].task_id, claims[0].generation)
    waiting = s.waiting_on("c")
    assert waiting.remaining == 2
    assert waiting.deps[:2] == (("a", 1, TaskState.SUCCEEDED), ("b", 1, TaskState.RUNNING))
    assert s.waiting_on("a").remaining == 0  # not pending: it waits for nothing


def ok(token: object) -> str:
    return "ok"


def boom(token: object) -> None:
    raise RuntimeError("boom")


def test_retry_resubmits_the_failed_task_and_what_it_blocked_in_dependency_order() -> None:
    s = TaskScheduler(max_concurrency=1)
    s.submit("c", ["b"], ok)  # submitted before its dependency: the order is not the sequence
    s.submit("a", [], boom)
    s.submit("b", ["a"], ok)
    s.submit("y", [], boom)
    s.submit("e", ["y"], ok)
    s.start()
    Runner(s).run()
    assert s.blocking_cause("c") == Cause("a", 1, TaskState.FAILED)
    made = s.retry("a")
    assert made == [VersionRef("a", 2), VersionRef("b", 2), VersionRef("c", 2)]
    assert [s.state(t) for t in "abc"] == [TaskState.READY, TaskState.PENDING, TaskState.PENDING]
    assert s.state("e") is TaskState.BLOCKED  # blocked by another cause: not retried
    assert s.waiting_on("c").deps == (("b", 2, TaskState.PENDING),)


def test_retry_refuses_what_cannot_be_retried_and_changes_nothing() -> None:
    s = TaskScheduler(max_concurrency=1)
    s.submit("a", [], ok)
    s.submit("f", [], boom)
    s.start()
    Runner(s).run()
    with pytest.raises(InvalidArgumentError, match="'a' is succeeded"):
        s.retry("a")
    with pytest.raises(UnknownTaskError):
        s.retry("nope")
    s.close()
    before = s.snapshot().core_state
    with pytest.raises(SchedulerClosedError):
        s.retry("f")
    assert s.snapshot().core_state is before


def flaky(failures: int) -> object:
    calls = []

    def fn(token: object) -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise RuntimeError(f"attempt {len(calls)}")
        return "done"

    return fn


@pytest.mark.parametrize(("retries", "final"), [(2, TaskState.SUCCEEDED), (1, TaskState.FAILED)])
def test_the_runner_retries_a_failed_task_up_to_its_limit(retries: int, final: TaskState) -> None:
    s = TaskScheduler(max_concurrency=2)
    s.submit("a", [], flaky(2))  # type: ignore[arg-type]
    s.submit("b", ["a"], ok)
    s.start()
    Runner(s, retries=retries, backoff_s=0.001).run()
    assert s.state("a") is final and s.generation("a") == 1 + retries
    expected = TaskState.SUCCEEDED if final is TaskState.SUCCEEDED else TaskState.BLOCKED
    assert s.state("b") is expected


@pytest.mark.parametrize(
    "options",
    [
        {"retries": -1},
        {"retries": True},
        {"backoff_s": float("nan")},
        {"backoff_s": -1},
        {"backoff_s": False},
    ],
)
def test_absurd_retry_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        Runner(TaskScheduler(max_concurrency=1), **options)  # type: ignore[arg-type]


def polite_sleeper(token: CancellationToken) -> str:
    token.wait(30)  # a long job that polls its token
    token.raise_if_cancelled()
    return "finished"


def test_a_task_past_its_timeout_is_asked_to_stop_and_ends_as_the_contract_says() -> None:
    s = TaskScheduler(max_concurrency=2)
    s.submit("slow", [], polite_sleeper)
    s.submit("quick", [], ok)
    s.submit("after", ["slow"], ok)
    s.start()
    Runner(s, timeouts={"slow": 0.05}, timeout_s=30).run()
    assert s.state("slow") is TaskState.CANCELLED  # it polled its token: CANCEL-4
    assert s.state("after") is TaskState.BLOCKED
    assert s.state("quick") is TaskState.SUCCEEDED  # its own timeout never fired


@pytest.mark.parametrize(
    "options", [{"timeout_s": 0}, {"timeout_s": float("inf")}, {"timeouts": {"a": -1}}]
)
def test_absurd_timeouts_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError, match="timeout of"):
        Runner(TaskScheduler(max_concurrency=1), **options)  # type: ignore[arg-type]


def test_a_function_asking_for_results_gets_its_dependencies_results() -> None:
    seen: list[dict[str, object]] = []

    def combine(token: object, results: dict[str, object]) -> object:
        seen.append(results)
        return sorted(results.items())

    s = TaskScheduler(max_concurrency=2)
    s.submit("x", [], lambda token: 1)
    s.submit("y", [], lambda token: {"rows": 2})
    s.submit("both", ["x", "y"], combine)
    s.submit("plain", ["both"], ok)  # no `results` parameter: called as fn(token)
    s.start()
    Runner(s).run()
    assert seen == [{"x": 1, "y": {"rows": 2}}]
    assert s.snapshot().task("both").detail == [("x", 1), ("y", {"rows": 2})]
    assert s.state("plain") is TaskState.SUCCEEDED


def test_on_change_hears_every_change_of_state_in_event_order() -> None:
    heard: list[Change] = []
    s = TaskScheduler(max_concurrency=1, on_change=heard.append)
    s.submit("a", [], boom)
    s.submit("b", ["a"], ok)
    s.start()
    Runner(s).run()
    assert [(c.task_id, c.source, c.target) for c in heard] == [
        ("a", None, TaskState.READY),
        ("b", None, TaskState.PENDING),
        ("a", TaskState.READY, TaskState.RUNNING),
        ("a", TaskState.RUNNING, TaskState.FAILED),
        ("b", TaskState.PENDING, TaskState.BLOCKED),
    ]
    assert [c.event_id for c in heard] == sorted(c.event_id for c in heard)


def test_the_shell_logs_each_event_with_its_id(caplog: pytest.LogCaptureFixture) -> None:
    s = TaskScheduler(max_concurrency=1)
    with caplog.at_level(logging.DEBUG, logger="schedspec"):
        s.submit("a", [], ok)
        with pytest.raises(SchedulerError):
            s.submit("a", ["a", "a"], ok)
    records = [(r.levelname, r.event_id, r.getMessage()) for r in caplog.records]  # type: ignore[attr-defined]
    assert records == [
        ("DEBUG", 1, "event 1: Submit"),
        ("DEBUG", 1, "event 1: 'a' generation 1: new -> ready"),
        ("INFO", 2, "event 2: Submit refused: DuplicateDependency"),
    ]


def test_run_with_progress_shows_the_counts() -> None:
    out = io.StringIO()
    s = TaskScheduler(max_concurrency=2)
    s.submit("a", [], ok)
    s.submit("b", ["a"], boom)
    s.submit("c", ["b"], ok)
    s.start()
    Runner(s).run(progress=True, console=Console(file=out, width=120))
    assert "succeeded 1  failed 1  blocked 1" in out.getvalue() and "3/3 ended" in out.getvalue()
