"""QUERY: state, generation, blocking_cause and snapshot."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, states
from schedspec import Cause, Phase, TaskState, UnknownTaskError


def test_query_1_queries_answer_for_the_current_version() -> None:
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ())])
    assert claimed(sched) == [("a", 1)]
    sched.fail("a", 1, "e")
    sched.submit("a", (), noop)
    assert (sched.state("a"), sched.generation("a"), sched.blocking_cause("a")) == (
        TaskState.READY,
        2,
        None,
    )
    assert (sched.state("b"), sched.generation("b"), sched.blocking_cause("b")) == (
        TaskState.BLOCKED,
        1,
        Cause("a", 1, TaskState.FAILED),
    )
    assert sched.blocking_cause("c") is None


@pytest.mark.parametrize("task_id", ["zz", "x", 5, ""])
def test_query_1_an_id_never_submitted_raises_unknown_task(task_id: object) -> None:
    # `x` is mentioned as a dependency but was never submitted itself.
    sched = build(1, [("a", ("x",))], start=False)
    for query in (sched.state, sched.generation, sched.blocking_cause):
        with pytest.raises(UnknownTaskError) as caught:
            query(task_id)  # type: ignore[arg-type]
        assert repr(task_id) in str(caught.value)
    with pytest.raises(UnknownTaskError):
        sched.snapshot().task(task_id)  # type: ignore[arg-type]


@pytest.mark.parametrize("task_id", ["zz", "x", 5, ""])
def test_query_1_the_cores_queries_answer_none_for_an_id_never_submitted(task_id: object) -> None:
    """The core's State queries take any task id and answer None where the shell raises
    UnknownTaskError: for an id never mentioned, one only named as a dependency (`x`), one that
    is no str."""
    s = core(build(1, [("a", ("x",))], start=False))
    assert s.lookup(task_id) is None
    for query in (s.state_of, s.generation_of, s.cause_of, s.detail_of, s.facts):
        assert query(task_id) is None  # type: ignore[arg-type]


def test_query_2_a_snapshot_never_changes_afterwards() -> None:
    sched = build(2, [("a", ()), ("b", ("a",))])
    snap = sched.snapshot()
    assert claimed(sched) == [("a", 1)]
    sched.complete("a", 1, "r")
    sched.submit("a", (), noop)
    sched.close(timeout=0)
    assert snap.phase is Phase.STARTED
    assert snap.running == 0
    assert [(v.task_id, v.generation, str(v.state)) for v in snap.tasks()] == [
        ("a", 1, "ready"),
        ("b", 1, "pending"),
    ]
    assert snap.core_state is not core(sched)
    later = sched.snapshot()
    assert later.phase is Phase.CLOSED
    assert [(v.task_id, v.generation, str(v.state)) for v in later.tasks()] == [
        ("a", 2, "cancelled"),
        ("b", 1, "cancelled"),
    ]
    with pytest.raises(AttributeError):
        snap.extra = 1  # type: ignore[attr-defined]


def test_query_2_counts_count_current_versions_only() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("c", ("a",))])
    assert claimed(sched, 1) == [("a", 1)]
    sched.complete("a", 1)
    for _ in range(3):
        sched.submit("a", (), noop)
    counts = sched.snapshot().counts()
    assert sum(counts.values()) == 3
    assert counts == {
        TaskState.PENDING: 0,
        TaskState.READY: 3,
        TaskState.RUNNING: 0,
        TaskState.SUCCEEDED: 0,
        TaskState.FAILED: 0,
        TaskState.CANCELLED: 0,
        TaskState.BLOCKED: 0,
    }
    assert states(sched) == {"a": "ready", "b": "ready", "c": "ready"}
    assert sched.snapshot().task_ids() == ["a", "b", "c"]


def test_query_1_detail_is_result_error_reason_or_cause_and_cancel_requests_stay_recorded() -> None:
    sched = build(4, [("ok", ()), ("bad", ()), ("stop", ()), ("slow", ()), ("down", ("bad",))])
    assert len(claimed(sched)) == 4
    sched.complete("ok", 1, {"rows": 3})
    sched.fail("bad", 1, "boom")
    sched.cancel("stop")
    sched.confirm_cancel("stop", 1)
    sched.cancel("slow")
    views = {v.task_id: v for v in sched.snapshot().tasks()}
    assert views["ok"].detail == {"rows": 3}
    assert views["bad"].detail == "boom"
    assert views["stop"].detail == "cancelled"
    assert views["down"].detail == Cause("bad", 1, TaskState.FAILED) == views["down"].cause
    assert views["slow"].detail is None and views["slow"].state is TaskState.RUNNING
    sched.complete("slow", 1)  # the worker finished first (DONE-3); the request stays recorded
    facts = core(sched).facts("slow")
    assert facts is not None and facts.cancel_requested and facts.detail is None
    sched.close(timeout=0)
    assert core(sched).facts("ok") is not None
