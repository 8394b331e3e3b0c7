"""BLOCK: blocking of pending descendants, and the recorded cause."""

from __future__ import annotations

from helpers_clauses import build, claimed, noop, record_effects, run_one, states, transitions
from schedspec import Cause, TaskState


def test_block_1_the_walk_blocks_pending_versions_through_pending_dependents() -> None:
    sched = build(1, [("x", ()), ("ok", ()), ("y", ("x",)), ("z", ("y", "ok")), ("w", ("z",))])
    assert claimed(sched) == [("x", 1)]
    with record_effects() as log:
        sched.fail("x", 1, "e")
    ((_, effects),) = log
    assert transitions(effects) == [
        ("x", 1, "running", "failed"),
        ("y", 1, "pending", "blocked"),
        ("z", 1, "pending", "blocked"),
        ("w", 1, "pending", "blocked"),
    ]
    assert sched.state("ok") is TaskState.READY


def test_block_1_the_walk_does_not_pass_through_a_running_version() -> None:
    sched = build(2, [("x", ()), ("y", ("x",)), ("z", ("y",))])
    run_one(sched, "x")
    assert claimed(sched) == [("y", 1)]
    sched.submit("x", (), noop)
    assert claimed(sched) == [("x", 2)]
    with record_effects() as log:
        sched.fail("x", 2, "e")
    ((_, effects),) = log
    assert transitions(effects) == [("x", 2, "running", "failed")]
    assert states(sched) == {"x": "failed", "y": "running", "z": "pending"}


def test_block_1_the_walk_does_not_pass_through_a_ready_version() -> None:
    sched = build(2, [("x", ()), ("y", ("x",)), ("z", ("y",))])
    run_one(sched, "x")
    sched.submit("x", (), noop)
    assert states(sched) == {"x": "ready", "y": "ready", "z": "pending"}
    with record_effects() as log:
        sched.cancel("x")
    ((_, effects),) = log
    assert transitions(effects) == [("x", 2, "ready", "cancelled")]
    assert states(sched) == {"x": "cancelled", "y": "ready", "z": "pending"}


def test_block_1_the_walk_does_not_pass_through_a_terminal_version() -> None:
    sched = build(2, [("x", ()), ("slow", ()), ("y", ("x",)), ("z", ("y", "slow"))])
    assert claimed(sched, 1) == [("x", 1)]
    sched.complete("x", 1)
    assert claimed(sched) == [("slow", 1), ("y", 1)]
    sched.complete("y", 1)
    sched.submit("x", (), noop)
    sched.cancel("x")
    assert states(sched) == {"x": "cancelled", "slow": "running", "y": "succeeded", "z": "pending"}


def test_block_1_cancel_confirm_cancel_and_submission_block_too() -> None:
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ()), ("d", ("c",)), ("f", ()), ("e", ("f",))])
    sched.cancel("a")
    assert sched.blocking_cause("b") == Cause("a", 1, TaskState.CANCELLED)
    assert claimed(sched) == [("c", 1)]
    sched.cancel("c")
    sched.confirm_cancel("c", 1)
    assert sched.blocking_cause("d") == Cause("c", 1, TaskState.CANCELLED)
    sched.submit("f", ("b",), noop)
    assert sched.blocking_cause("f") == Cause("a", 1, TaskState.CANCELLED)
    assert sched.blocking_cause("e") == Cause("a", 1, TaskState.CANCELLED)


def test_block_1_close_cancels_queued_versions_and_blocks_none() -> None:
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ("b",))])
    report = sched.close()
    assert states(sched) == {"a": "cancelled", "b": "cancelled", "c": "cancelled"}
    assert [sched.blocking_cause(t) for t in "abc"] == [None, None, None]
    assert [v.task_id for v in report.cancelled] == ["a", "b", "c"]


def test_block_2_the_cause_is_the_root_through_several_levels() -> None:
    sched = build(1, [("root", ()), ("l1", ("root",)), ("l2", ("l1",)), ("l3", ("l2", "l1"))])
    assert claimed(sched) == [("root", 1)]
    sched.fail("root", 1, "e")
    cause = Cause("root", 1, TaskState.FAILED)
    assert [sched.blocking_cause(t) for t in ("l1", "l2", "l3")] == [cause, cause, cause]
    assert sched.blocking_cause("root") is None


def test_block_2_at_submission_the_first_unsuccessful_dependency_decides() -> None:
    sched = build(2, [("f", ()), ("c", ()), ("bf", ("f",)), ("t", ())])
    assert claimed(sched, 1) == [("f", 1)]
    sched.fail("f", 1, "e")
    sched.cancel("c")
    sched.submit("t", ("c", "bf"), noop)
    assert sched.blocking_cause("t") == Cause("c", 1, TaskState.CANCELLED)
    sched.submit("t", ("bf", "c"), noop)
    assert sched.blocking_cause("t") == Cause("f", 1, TaskState.FAILED)


def test_block_3_blocked_versions_stay_blocked_when_the_failed_task_is_resubmitted() -> None:
    """BLOCK-3: blocked versions stay blocked when the failed task is resubmitted."""
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ("b",))])
    assert claimed(sched) == [("a", 1)]
    sched.fail("a", 1, "e")
    assert sched.submit("a", (), noop) == 2
    cause = Cause("a", 1, TaskState.FAILED)
    assert states(sched) == {"a": "ready", "b": "blocked", "c": "blocked"}
    assert [sched.blocking_cause(t) for t in "bc"] == [cause, cause]
    # Re-run them with new versions of their own, in dependency order.
    assert sched.submit("b", ("a",), noop) == 2
    assert sched.submit("c", ("b",), noop) == 2
    assert states(sched) == {"a": "ready", "b": "pending", "c": "pending"}
    run_one(sched, "a")
    run_one(sched, "b")
    run_one(sched, "c")
    assert states(sched) == {"a": "succeeded", "b": "succeeded", "c": "succeeded"}
