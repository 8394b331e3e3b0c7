"""Every `SchedulerError` carries the facts of its refusal as documented attributes (issue 13,
section 2): a program matches on data, not on the message, and needs no core object."""

from __future__ import annotations

import pytest

from schedspec import (
    ConflictError,
    DuplicateDependencyError,
    FutureGenerationError,
    InvalidArgumentError,
    NotClaimedError,
    SchedulerError,
    TaskScheduler,
    TaskState,
    UnknownTaskError,
)


def noop(token: object) -> None:
    return None


def refusal(call: object, *args: object) -> SchedulerError:
    with pytest.raises(SchedulerError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_each_refusal_carries_its_facts() -> None:
    s = TaskScheduler(max_concurrency=1)
    s.submit("a", [], noop)
    s.submit("b", ["a"], noop)
    s.start()
    cases: list[tuple[SchedulerError, type[SchedulerError], dict[str, object]]] = [
        (refusal(s.submit, 5, [], noop), InvalidArgumentError, {"value": 5, "task_id": None}),
        (refusal(s.submit, "a", ["c", "c"], noop), DuplicateDependencyError,
         {"task_id": "a", "dependency": "c"}),
        (refusal(s.complete, "zz", 1), UnknownTaskError, {"task_id": "zz"}),
        (refusal(s.complete, "a", 3), FutureGenerationError,
         {"task_id": "a", "generation": 3, "current": 1}),
        (refusal(s.complete, "a", 1), NotClaimedError,
         {"task_id": "a", "generation": 1, "state": TaskState.READY}),
        (refusal(s.complete, "a", 0), InvalidArgumentError, {"task_id": "a", "value": 0}),
    ]  # fmt: skip
    s.ready()
    cases.append(
        (refusal(s.submit, "a", [], noop), ConflictError, {"task_id": "a", "generation": 1})
    )
    for error, kind, facts in cases:
        assert type(error) is kind, error
        for name in SchedulerError.FACTS:
            assert getattr(error, name) == facts.get(name), (error, name)
