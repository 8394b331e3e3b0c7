"""SUB: submit(task_id, deps, fn) -> generation."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, record_effects, remaining, run_one, states
from schedspec import (
    Cause,
    ConflictError,
    CycleError,
    DuplicateDependencyError,
    GenerationMismatchError,
    GraphClosedError,
    InvalidArgumentError,
    OutcomeKind,
    SchedulerClosedError,
    TaskScheduler,
    TaskState,
    UnknownDependencyError,
)
from schedspec.core import (
    Cancel,
    Claim,
    Close,
    Complete,
    ConfirmCancel,
    Expire,
    Fail,
    Heartbeat,
    Start,
    Submit,
    initial_state,
    step,
)
from schedspec.core import effects as fx


class Unhashable(list):
    pass


@pytest.mark.parametrize("task_id", ["", 5, None, b"a", ["x"], {"k": 1}, 1.0])
def test_sub_1_task_id_must_be_a_non_empty_str(task_id: object) -> None:
    sched = build(1, [("a", ())], start=False)
    before = core(sched)
    with pytest.raises(InvalidArgumentError) as caught:
        sched.submit(task_id, (), noop)  # type: ignore[arg-type]
    assert type(caught.value) is InvalidArgumentError
    assert repr(task_id) in str(caught.value)
    assert caught.value.rejection == fx.InvalidTaskId(task_id)
    assert core(sched) is before


@pytest.mark.parametrize("deps", [5, None, "ab", b"ab", 1.5])
def test_sub_1_deps_must_be_an_iterable_of_ids_and_not_a_str(deps: object) -> None:
    sched = build(1, [("a", ())], start=False)
    before = core(sched)
    with pytest.raises(InvalidArgumentError) as caught:
        sched.submit("t", deps, noop)  # type: ignore[arg-type]
    assert type(caught.value) is InvalidArgumentError
    assert repr(deps) in str(caught.value)
    assert "'t'" in str(caught.value)
    assert caught.value.rejection == fx.InvalidDeps("t", deps)
    assert core(sched) is before


@pytest.mark.parametrize("bad", [3, "", None, ["x"], b"a"])
def test_sub_1_every_dependency_must_be_a_non_empty_str(bad: object) -> None:
    sched = build(1, [("a", ())], start=False)
    before = core(sched)
    with pytest.raises(InvalidArgumentError) as caught:
        sched.submit("t", ["a", bad], noop)  # type: ignore[list-item]
    assert type(caught.value) is InvalidArgumentError
    assert repr(bad) in str(caught.value)
    assert caught.value.rejection == fx.InvalidDependency("t", bad)
    assert core(sched) is before


def test_sub_1_fn_must_be_callable_and_is_checked_before_anything_else() -> None:
    sched = build(1, [("a", ())])
    sched.close()
    before = core(sched)
    # Bad task id, bad deps, closed scheduler: the shell still reports `fn` first.
    with pytest.raises(InvalidArgumentError) as caught:
        sched.submit("", "ab", 42)  # type: ignore[arg-type]
    assert "fn" in str(caught.value) and "42" in str(caught.value)
    assert caught.value.rejection is None
    assert core(sched) is before


def test_sub_1_deps_are_taken_in_iteration_order() -> None:
    sched = build(1, [("x", ()), ("y", ()), ("z", ())], start=False)
    sched.cancel("y")
    sched.cancel("z")
    sched.submit("t", (d for d in ["x", "z", "y"]), noop)
    snap = core(sched)
    assert snap.facts("t").deps == ("x", "z", "y")  # type: ignore[union-attr]
    # The first unsuccessful dependency in that order decides the cause (SUB-5).
    assert sched.blocking_cause("t") == Cause("z", 1, TaskState.CANCELLED)


def test_sub_2_the_same_dependency_twice_is_rejected_naming_it() -> None:
    sched = build(1, [("a", ()), ("b", ())], start=False)
    before = core(sched)
    with pytest.raises(DuplicateDependencyError) as caught:
        sched.submit("t", ["a", "b", "a"], noop)
    assert isinstance(caught.value, InvalidArgumentError)
    assert "'a'" in str(caught.value) and "'t'" in str(caught.value)
    assert caught.value.rejection == fx.DuplicateDependency("t", "a")
    assert core(sched) is before
    with pytest.raises(DuplicateDependencyError):
        sched.submit("t", ["t", "t"], noop)


def _rejecting_cases() -> list[tuple[str, object, object, type]]:
    """(name, state, event, rejection type) for every kind of rejection of every operation."""
    s0 = initial_state(2)
    s_open, _ = step(s0, Submit("a", ()))
    s_open, _ = step(s_open, Submit("b", ("a",)))
    s_missing, _ = step(s_open, Submit("c", ("zz",)))
    s_cycle, _ = step(s_open, Submit("c", ("c",)))
    s_started, _ = step(s_open, Start())
    s_running, _ = step(s_started, Claim())
    s_closed, _ = step(s_running, Close())
    return [
        ("submit: task id", s_open, Submit(5, ()), fx.InvalidTaskId),
        ("submit: deps", s_open, Submit("t", "ab"), fx.InvalidDeps),
        ("submit: dependency", s_open, Submit("t", ("a", 7)), fx.InvalidDependency),
        ("submit: duplicate", s_open, Submit("t", ("a", "a")), fx.DuplicateDependency),
        ("submit: closed", s_closed, Submit("a", ()), fx.SchedulerClosed),
        ("submit: new id", s_started, Submit("new", ()), fx.GraphClosed),
        ("submit: running", s_running, Submit("a", ()), fx.RunningConflict),
        (
            "submit: if_generation",
            s_open,
            Submit("a", (), if_generation=-1),
            fx.InvalidIfGeneration,
        ),
        ("submit: condition", s_open, Submit("a", (), if_generation=0), fx.GenerationMismatch),
        ("submit: unknown", s_started, Submit("b", ("zz",)), fx.UnknownDependencies),
        ("submit: cycle", s_started, Submit("a", ("b",)), fx.Cycles),
        ("start: unknown", s_missing, Start(), fx.UnknownDependencies),
        ("start: cycle", s_cycle, Start(), fx.Cycles),
        ("ready: not started", s_open, Claim(), fx.NotStarted),
        ("ready: max_tasks", s_started, Claim(-1), fx.InvalidMaxTasks),
        ("complete: task id", s_running, Complete(None, 1), fx.InvalidTaskId),
        ("complete: unknown", s_running, Complete("zz", 1), fx.UnknownTask),
        ("complete: generation", s_running, Complete("a", 0), fx.InvalidGeneration),
        ("complete: future", s_running, Complete("a", 2), fx.FutureGeneration),
        ("complete: not claimed", s_running, Complete("b", 1), fx.NotClaimed),
        ("fail: not claimed", s_started, Fail("a", 1, "e"), fx.NotClaimed),
        ("cancel: unknown", s_started, Cancel("zz"), fx.UnknownTask),
        ("cancel: generation", s_started, Cancel("a", True), fx.InvalidGeneration),
        ("cancel: future", s_started, Cancel("a", 9), fx.FutureGeneration),
        ("confirm: not requested", s_running, ConfirmCancel("a", 1), fx.CancelNotRequested),
        ("confirm: not claimed", s_running, ConfirmCancel("b", 1), fx.NotClaimed),
        ("ready: worker", s_started, Claim(worker=""), fx.InvalidLeaseArgument),
        ("ready: lease_until", s_open, Claim(lease_until=True), fx.InvalidLeaseArgument),
        ("heartbeat: lease_until", s_running, Heartbeat("a", 1, "soon"), fx.InvalidLeaseArgument),
        ("heartbeat: not claimed", s_running, Heartbeat("b", 1, 5), fx.NotClaimed),
        ("heartbeat: stale", s_running, Heartbeat("a", 0, 5), fx.InvalidGeneration),
        ("expire: now", s_running, Expire(float("nan")), fx.InvalidLeaseArgument),
    ]


def test_sub_3_every_rejection_of_every_operation_returns_the_very_same_state() -> None:
    cases = _rejecting_cases()
    kinds = {kind for _, _, _, kind in cases}
    assert kinds == set(fx.Rejection.__args__)  # every kind of rejection is exercised
    for name, state, event, kind in cases:
        after, effects = step(state, event)  # type: ignore[arg-type]
        assert after is state, name
        assert len(effects) == 1, name
        assert isinstance(effects[0], fx.Rejected), name
        assert isinstance(effects[0].rejection, kind), name


def test_sub_3_a_rejected_shell_call_leaves_the_snapshot_object_unchanged() -> None:
    sched = build(1, [("a", ()), ("b", ("a",))])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    calls = [
        lambda: sched.submit("new", (), noop),
        lambda: sched.submit("a", (), noop),
        lambda: sched.submit("b", ("zz",), noop),
        lambda: sched.submit("a", ("b",), noop),
        lambda: sched.ready(-1),
        lambda: sched.complete("b", 1),
        lambda: sched.complete("a", 5),
        lambda: sched.confirm_cancel("a", 1),
        lambda: sched.cancel("zz"),
    ]
    for call in calls:
        with pytest.raises(Exception) as caught:
            call()
        assert caught.value.rejection is not None
        assert core(sched) is before


def test_sub_4_while_open_unsubmitted_dependencies_and_self_loops_are_allowed() -> None:
    """SUB-4: while open unsubmitted dependencies and self loops are allowed."""
    sched = TaskScheduler(1, validate=True)
    assert sched.submit("a", ("x",), noop) == 1
    assert sched.submit("s", ("s",), noop) == 1
    assert states(sched) == {"a": "pending", "s": "pending"}
    with pytest.raises(UnknownDependencyError) as unknown:
        sched.start()
    assert unknown.value.missing == {"a": ["x"]}
    sched.submit("x", (), noop)
    with pytest.raises(CycleError) as cyc:
        sched.start()
    assert cyc.value.cycles == [["s", "s"]]
    sched.submit("s", (), noop)
    sched.start()
    # An unsubmitted id was never treated as succeeded: `a` waited for `x` throughout.
    assert states(sched) == {"a": "pending", "s": "ready", "x": "ready"}
    run_one(sched, "x")
    # `a` (sequence 0) is now ready and comes before s@2 (sequence 3).
    assert claimed(sched) == [("a", 1)]
    sched.complete("a", 1)
    assert claimed(sched) == [("s", 2)]


def test_sub_5_state_at_submission_comes_from_the_dependencies_current_versions() -> None:
    sched = build(
        3, [("ok", ()), ("bad", ()), ("stop", ()), ("slow", ()), ("kid", ("bad",)), ("t", ())]
    )
    assert claimed(sched, 2) == [("ok", 1), ("bad", 1)]
    sched.complete("ok", 1)
    sched.fail("bad", 1, "e")
    sched.cancel("stop")
    assert claimed(sched, 1) == [("slow", 1)]
    assert sched.blocking_cause("kid") == Cause("bad", 1, TaskState.FAILED)
    # All succeeded (or none): ready.
    assert sched.submit("t", ("ok",), noop) == 2
    assert sched.state("t") is TaskState.READY
    # Some not yet succeeded: pending, counting the unsucceeded ones.
    sched.submit("t", ("ok", "slow"), noop)
    assert sched.state("t") is TaskState.PENDING
    assert remaining(core(sched), "t") == 1
    # One unsuccessful: blocked at once, the first in submitted order deciding the cause.
    sched.submit("t", ("ok", "slow", "stop", "bad"), noop)
    assert sched.state("t") is TaskState.BLOCKED
    assert sched.blocking_cause("t") == Cause("stop", 1, TaskState.CANCELLED)
    sched.submit("t", ("bad", "stop"), noop)
    assert sched.blocking_cause("t") == Cause("bad", 1, TaskState.FAILED)
    # Through a blocked dependency, its cause.
    sched.submit("t", ("slow", "kid"), noop)
    assert sched.blocking_cause("t") == Cause("bad", 1, TaskState.FAILED)
    assert sched.generation("t") == 6


def test_sub_5_a_self_dependency_names_the_new_version_never_the_replaced_one() -> None:
    sched = build(1, [("a", ())], start=False)
    sched.cancel("a")
    assert sched.submit("a", ("a",), noop) == 2
    assert (sched.state("a"), sched.blocking_cause("a")) == (TaskState.PENDING, None)
    assert remaining(core(sched), "a") == 1


def test_sub_5_an_unsubmitted_dependency_counts_as_remaining() -> None:
    sched = build(1, [("a", ()), ("t", ("a", "x", "y"))], start=False)
    assert remaining(core(sched), "t") == 3
    sched.submit("x", (), noop)
    assert remaining(core(sched), "t") == 3
    sched.submit("y", (), noop)
    sched.start()
    run_one(sched, "a")
    assert remaining(core(sched), "t") == 2
    run_one(sched, "x")
    run_one(sched, "y")
    assert sched.state("t") is TaskState.READY


@pytest.mark.parametrize("how", ["pending", "ready", "succeeded", "failed", "cancelled", "blocked"])
def test_sub_6_resubmission_supersedes_the_current_version(how: str) -> None:
    sched = build(1, [("up", ()), ("a", ("up",)), ("other", ())])
    if how == "ready":
        run_one(sched, "up")
    elif how == "succeeded":
        run_one(sched, "up")
        run_one(sched, "a")
    elif how == "failed":
        run_one(sched, "up")
        assert claimed(sched) == [("a", 1)]
        sched.fail("a", 1, "e")
    elif how == "cancelled":
        sched.cancel("a")
    elif how == "blocked":
        sched.cancel("up")
    assert sched.state("a").value == how
    with record_effects() as log:
        assert sched.submit("a", ("other",), noop) == 2
    ((_, effects),) = log
    reply = effects[0]
    assert isinstance(reply, fx.Submitted)
    assert reply.replaced == (1, TaskState(how))
    # The replaced version is superseded, not cancelled: the only change told is the new one.
    assert [(e.task_id, e.generation, e.source) for e in effects[1:]] == [("a", 2, None)]
    snap = core(sched)
    assert snap.lookup("a") not in set(snap.dependents[snap.lookup("up")])
    assert set(snap.dependents[snap.lookup("other")]) == {snap.lookup("a")}


def test_sub_6_reverse_edges_of_the_replaced_version_are_removed() -> None:
    sched = build(2, [("x", ()), ("y", ()), ("a", ("x",))])
    sched.submit("a", ("y",), noop)
    assert claimed(sched) == [("x", 1), ("y", 1)]
    sched.complete("x", 1)
    # Completing x releases nothing: a@2 no longer depends on it.
    assert sched.state("a") is TaskState.PENDING
    sched.complete("y", 1)
    assert claimed(sched) == [("a", 2)]


def test_sub_7_resubmitting_a_running_version_is_a_conflict() -> None:
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    for requested in (False, True):
        if requested:
            assert sched.cancel("a").kind is OutcomeKind.CANCEL_REQUESTED
            before = core(sched)
        with pytest.raises(ConflictError) as caught:
            sched.submit("a", (), noop)
        assert "'a'" in str(caught.value) and "generation 1" in str(caught.value)
        assert caught.value.rejection == fx.RunningConflict("a", 1)
        assert core(sched) is before


def test_sub_8_pending_dependents_of_a_replaced_succeeded_version_wait_again() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("d", ("a", "b"))])
    assert claimed(sched, 1) == [("a", 1)]
    sched.complete("a", 1)
    assert remaining(core(sched), "d") == 1
    sched.submit("a", (), noop)
    assert remaining(core(sched), "d") == 2
    run_one(sched, "b")
    assert sched.state("d") is TaskState.PENDING
    assert remaining(core(sched), "d") == 1
    run_one(sched, "a")
    assert claimed(sched) == [("d", 1)]


def test_sub_8_replacing_a_non_succeeded_version_leaves_pending_counts_alone() -> None:
    sched = build(1, [("x", ()), ("a", ("x",)), ("d", ("a",))])
    assert remaining(core(sched), "d") == 1
    sched.submit("a", (), noop)
    assert remaining(core(sched), "d") == 1
    assert states(sched) == {"x": "ready", "a": "ready", "d": "pending"}


def test_sub_8_ready_running_and_terminal_dependents_keep_the_releasing_version() -> None:
    sched = build(3, [("a", ()), ("r", ("a",)), ("u", ("a",)), ("s", ("a",)), ("p", ("r",))])
    run_one(sched, "a")
    assert claimed(sched, 2) == [("r", 1), ("u", 1)]
    sched.complete("r", 1)
    assert claimed(sched) == [("s", 1), ("p", 1)]
    sched.complete("s", 1)
    # Now: u running, s succeeded, p running. Make a ready dependent as well.
    sched.submit("r", ("a",), noop)
    assert sched.state("r") is TaskState.READY
    before = states(sched)
    sched.submit("a", (), noop)
    after = states(sched)
    assert after == {**before, "a": "ready"}
    assert after == {
        "a": "ready",
        "r": "ready",
        "u": "running",
        "s": "succeeded",
        "p": "running",
    }


def test_sub_8_a_new_blocked_version_blocks_its_pending_descendants() -> None:
    sched = build(1, [("x", ()), ("a", ()), ("d", ("a", "y")), ("e", ("d",))], start=False)
    sched.cancel("x")
    sched.submit("a", ("x",), noop)
    cause = Cause("x", 1, TaskState.CANCELLED)
    assert states(sched) == {"x": "cancelled", "a": "blocked", "d": "blocked", "e": "blocked"}
    assert [sched.blocking_cause(t) for t in ("a", "d", "e")] == [cause, cause, cause]


def test_sub_9_after_start_a_brand_new_id_is_rejected() -> None:
    sched = build(1, [("a", ())])
    before = core(sched)
    with pytest.raises(GraphClosedError) as caught:
        sched.submit("brand-new", ("a",), noop)
    assert "'brand-new'" in str(caught.value)
    assert caught.value.rejection == fx.GraphClosed("brand-new")
    assert core(sched) is before


def test_sub_9_an_id_only_ever_named_as_a_dependency_is_brand_new_after_start() -> None:
    """SUB-9: an id once named as a dependency but never submitted is brand-new after start
    (start needs every dependency submitted, so its dependent was re-submitted without it)."""
    sched = build(1, [("a", ("x",))], start=False)
    sched.submit("a", (), noop)  # x is named by nothing any more
    sched.start()
    before = core(sched)
    with pytest.raises(GraphClosedError) as caught:
        sched.submit("x", (), noop)
    assert caught.value.rejection == fx.GraphClosed("x")
    assert core(sched) is before


def test_sub_9_after_start_a_resubmission_naming_unknown_ids_is_rejected() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    before = core(sched)
    with pytest.raises(UnknownDependencyError) as caught:
        sched.submit("b", ("zz", "a", "qq"), noop)
    assert caught.value.missing == {"b": ["qq", "zz"]}
    assert "'qq'" in str(caught.value) and "'zz'" in str(caught.value)
    assert core(sched) is before


def test_sub_9_after_start_a_resubmission_closing_a_cycle_is_rejected_with_it() -> None:
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ("b",)), ("d", ())])
    before = core(sched)
    with pytest.raises(CycleError) as caught:
        sched.submit("a", ("d", "c"), noop)
    assert caught.value.cycles == [["a", "c", "b", "a"]]
    assert caught.value.unexecutable == []
    assert "'a' -> 'c' -> 'b' -> 'a'" in str(caught.value)
    with pytest.raises(CycleError) as self_loop:
        sched.submit("d", ("d",), noop)
    assert self_loop.value.cycles == [["d", "d"]]
    assert core(sched) is before
    # Without the cycle the re-submission is accepted.
    assert sched.submit("a", ("d",), noop) == 2


def test_sub_9_the_cycle_reported_on_resubmission_starts_at_the_resubmitted_task() -> None:
    # SUB-9 takes the re-submitted task as `t0`, whatever its sequence number.
    sched = build(1, [("c", ()), ("b", ("c",)), ("a", ("b",))])
    with pytest.raises(CycleError) as caught:
        sched.submit("c", ("a",), noop)
    assert caught.value.cycles == [["c", "a", "b", "c"]]
    sched.submit("b", (), noop)  # b@2 now has the greatest sequence number
    with pytest.raises(CycleError) as again:
        sched.submit("b", ("a",), noop)
    assert again.value.cycles == [["b", "a", "b"]]


def test_sub_9_of_several_shortest_cycles_the_first_in_submitted_order_is_reported() -> None:
    # Found by the differential test: both `a` and `e` close a 2-cycle through `b`; the first
    # new dependency in submitted order decides, whatever the reverse edges' order.
    sched = build(1, [("b", ()), ("e", ("b",)), ("a", ("b",))])
    with pytest.raises(CycleError) as caught:
        sched.submit("b", ("a", "e"), noop)
    assert caught.value.cycles == [["b", "a", "b"]]
    with pytest.raises(CycleError) as swapped:
        sched.submit("b", ("e", "a"), noop)
    assert swapped.value.cycles == [["b", "e", "b"]]


def test_sub_10_closing_or_closed_rejects_every_submit() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    sched.close(timeout=0)
    for phase_word in ("closing", "closed"):
        assert str(sched.phase) == phase_word
        before = core(sched)
        for task_id in ("a", "b", "new"):
            with pytest.raises(SchedulerClosedError) as caught:
                sched.submit(task_id, (), noop)
            assert repr(task_id) in str(caught.value)
            assert caught.value.rejection == fx.SchedulerClosed(task_id)
        assert core(sched) is before
        sched.complete("a", 1)
    closed_open = TaskScheduler(1, validate=True)
    closed_open.close()
    with pytest.raises(SchedulerClosedError):
        closed_open.submit("x", (), noop)


def test_sub_11_the_condition_comes_after_the_deps_and_before_the_rest() -> None:
    closed = build(1, [("a", ())])
    closed.close()
    # Phase before the condition.
    with pytest.raises(SchedulerClosedError):
        closed.submit("a", (), noop, if_generation=7)
    sched = build(1, [("a", ()), ("b", ("a",))])
    assert claimed(sched) == [("a", 1)]
    # Deps before if_generation, if_generation before its condition.
    with pytest.raises(DuplicateDependencyError):
        sched.submit("b", ("x", "x"), noop, if_generation=-1)
    with pytest.raises(InvalidArgumentError) as invalid:
        sched.submit("b", (), noop, if_generation=-1)
    assert invalid.value.rejection == fx.InvalidIfGeneration("b", -1)
    # The condition before new id after start, running conflict, unknown deps and cycles.
    for task, deps in (("new", ()), ("a", ("zz",)), ("b", ("zz",)), ("b", ("b",))):
        with pytest.raises(GenerationMismatchError):
            sched.submit(task, deps, noop, if_generation=5)
    # Met, the condition lets the other checks decide as without it.
    with pytest.raises(GraphClosedError):
        sched.submit("new", (), noop, if_generation=0)
    with pytest.raises(ConflictError):
        sched.submit("a", (), noop, if_generation=1)


def test_sub_11_checks_run_in_contract_order() -> None:
    closed = build(1, [("a", ())])
    closed.close()
    # Task id before phase.
    with pytest.raises(InvalidArgumentError) as caught:
        closed.submit("", ("x", "x"), noop)
    assert caught.value.rejection == fx.InvalidTaskId("")
    # Phase before deps.
    with pytest.raises(SchedulerClosedError):
        closed.submit("a", "not deps", noop)
    with pytest.raises(SchedulerClosedError):
        closed.submit("a", ("x", "x"), noop)
    sched = build(1, [("a", ()), ("b", ("a",)), ("c", ())])
    assert claimed(sched) == [("a", 1)]
    # Deps elements in submitted order: the first problem met decides.
    with pytest.raises(DuplicateDependencyError):
        sched.submit("b", ("x", "x", 5), noop)
    with pytest.raises(InvalidArgumentError) as element:
        sched.submit("b", (5, "x", "x"), noop)
    assert element.value.rejection == fx.InvalidDependency("b", 5)
    # Deps before new id after start.
    with pytest.raises(DuplicateDependencyError):
        sched.submit("new", ("x", "x"), noop)
    with pytest.raises(InvalidArgumentError) as deps:
        sched.submit("new", 5, noop)  # type: ignore[arg-type]
    assert deps.value.rejection == fx.InvalidDeps("new", 5)
    # New id before unknown dependencies.
    with pytest.raises(GraphClosedError):
        sched.submit("new", ("zz",), noop)
    # Running conflict before unknown dependencies and cycles.
    with pytest.raises(ConflictError):
        sched.submit("a", ("zz",), noop)
    with pytest.raises(ConflictError):
        sched.submit("a", ("b",), noop)
    # Unknown dependencies before cycles.
    with pytest.raises(UnknownDependencyError) as unknown:
        sched.submit("c", ("c", "zz"), noop)
    assert unknown.value.missing == {"c": ["zz"]}
    with pytest.raises(CycleError):
        sched.submit("c", ("c",), noop)


def test_sub_12_a_conditional_submission_needs_the_current_generation() -> None:
    """SUB-12: accepted on the current generation only, 0 standing for no version."""
    sched = TaskScheduler(1)
    assert sched.submit("a", (), noop, if_generation=0) == 1  # 0: the task has no version
    before = sched.snapshot()
    with pytest.raises(GenerationMismatchError) as again:
        sched.submit("a", (), noop, if_generation=0)
    assert (again.value.task_id, again.value.generation, again.value.current) == ("a", 0, 1)
    assert again.value.rejection == fx.GenerationMismatch("a", 0, 1)
    assert "generation is 0, but it is 1" in str(again.value)
    assert sched.snapshot().core_state is before.core_state
    with pytest.raises(GenerationMismatchError) as future:
        sched.submit("a", (), noop, if_generation=2)
    assert future.value.current == 1
    assert sched.submit("a", ("x",), noop, if_generation=1) == 2
    # An id so far only named as a dependency has no version: its generation is 0.
    assert sched.submit("x", (), noop, if_generation=0) == 1
    assert states(sched) == {"a": "pending", "x": "ready"}


@pytest.mark.parametrize("value", [-1, True, False, 1.0, "1", [0]])
def test_sub_12_if_generation_must_be_none_or_an_int_of_at_least_zero(value: object) -> None:
    sched = build(1, [("a", ())], start=False)
    before = core(sched)
    with pytest.raises(InvalidArgumentError) as caught:
        sched.submit("a", (), noop, if_generation=value)  # type: ignore[arg-type]
    assert caught.value.rejection == fx.InvalidIfGeneration("a", value)
    assert "if_generation" in str(caught.value)
    assert core(sched) is before


@pytest.mark.parametrize("how", ["pending", "ready", "succeeded", "failed", "cancelled", "blocked"])
def test_sub_12_accepted_it_means_exactly_the_unconditional_submission(how: str) -> None:
    """Same reply, same notifications, same next state, whatever the version it replaces."""
    prefix = {
        "pending": [Submit("d", ()), Submit("a", ("d",)), Submit("c", ("a",))],
        "ready": [Submit("a", ()), Submit("c", ("a",))],
        "succeeded": [Submit("a", ()), Submit("c", ("a",)), Start(), Claim(1), Complete("a", 1)],
        "failed": [Submit("a", ()), Submit("c", ("a",)), Start(), Claim(1), Fail("a", 1)],
        "cancelled": [Submit("a", ()), Submit("c", ("a",)), Cancel("a")],
        "blocked": [Submit("d", ()), Submit("a", ("d",)), Cancel("d")],
    }[how]
    state = initial_state(1)
    for event in prefix:
        state, _ = step(state, event)
    assert state.state_of("a") is TaskState(how)
    plain = step(state, Submit("a", ("c",) if how == "pending" else ()))
    conditional = step(state, Submit("a", ("c",) if how == "pending" else (), if_generation=1))
    assert conditional[1] == plain[1]
    assert conditional[0] == plain[0]  # every column, every task: the very same next state
    assert conditional[0] is not state


def test_sub_12_submit_many_takes_conditional_quadruples() -> None:
    sched = build(1, [("a", ()), ("b", ())], start=False)
    with pytest.raises(GenerationMismatchError) as caught:
        sched.submit_many([("a", (), noop, 1), ("b", (), noop, 7), ("c", (), noop, 0)])
    assert caught.value.task_id == "b"
    assert {v.task_id: v.generation for v in sched.snapshot().tasks()} == {"a": 2, "b": 1, "c": 1}
    with pytest.raises(InvalidArgumentError, match="quadruple"):
        sched.submit_many([("a", (), noop, 2, "extra")])
