"""Shell behaviours workflow users expect (issue 13, section 3), each documented where it lives:
async task functions are awaited (`shell/runner.py`), `run()` with no slot warns, and
`waiting_on` says why a version is pending (`Snapshot.waiting_on`)."""

from __future__ import annotations

import asyncio

import pytest

from schedspec import Runner, TaskScheduler, TaskState, Waiting


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
