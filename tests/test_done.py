"""DONE: the callbacks complete, fail (and confirm_cancel, CANCEL-4)."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, record_effects, remaining, states
from schedspec import (
    Cause,
    FutureGenerationError,
    InvalidArgumentError,
    NotClaimedError,
    Outcome,
    OutcomeKind,
    TaskState,
    UnknownTaskError,
)
from schedspec.core import effects as fx


def test_done_1_complete_records_the_result_and_releases_pending_dependents() -> None:
    sched = build(3, [("a", ()), ("b", ()), ("d", ("a", "b")), ("e", ("a",)), ("f", ("d",))])
    assert claimed(sched) == [("a", 1), ("b", 1)]
    result = {"rows": 3}
    outcome = sched.complete("a", 1, result)
    assert outcome == Outcome(OutcomeKind.ACCEPTED, "a", 1, TaskState.SUCCEEDED)
    assert sched.snapshot().task("a").detail is result
    assert states(sched)["d"] == "pending" and remaining(core(sched), "d") == 1
    assert sched.state("e") is TaskState.READY
    # The second dependency completing right after releases d.
    sched.complete("b", 1)
    assert states(sched) == {
        "a": "succeeded",
        "b": "succeeded",
        "d": "ready",
        "e": "ready",
        "f": "pending",
    }
    assert remaining(core(sched), "f") == 1


def test_done_1_only_pending_direct_dependents_are_touched() -> None:
    sched = build(3, [("a", ()), ("r", ("a",)), ("x", ())])
    assert claimed(sched, 1) == [("a", 1)]
    sched.complete("a", 1)
    sched.submit("a", (), noop)
    assert claimed(sched) == [("r", 1), ("x", 1), ("a", 2)]
    with record_effects() as log:
        sched.complete("a", 2)
    ((_, effects),) = log
    # r is running: nothing about it is told or changed.
    assert [(e.task_id, str(e.target)) for e in effects[1:]] == [("a", "succeeded")]
    assert sched.state("r") is TaskState.RUNNING


def test_done_2_fail_records_the_error_and_blocks_pending_descendants() -> None:
    sched = build(
        2,
        [("a", ()), ("ok", ()), ("b", ("a",)), ("c", ("b", "ok")), ("d", ("c",)), ("o", ("ok",))],
    )
    assert claimed(sched) == [("a", 1), ("ok", 1)]
    error = ValueError("boom")
    outcome = sched.fail("a", 1, error)
    assert outcome == Outcome(OutcomeKind.ACCEPTED, "a", 1, TaskState.FAILED)
    assert sched.snapshot().task("a").detail is error
    cause = Cause("a", 1, TaskState.FAILED)
    assert [sched.blocking_cause(t) for t in "bcd"] == [cause, cause, cause]
    assert states(sched) == {
        "a": "failed",
        "ok": "running",
        "b": "blocked",
        "c": "blocked",
        "d": "blocked",
        "o": "pending",
    }


def test_done_3_callbacks_succeed_after_a_cancellation_request() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("c", ("b",))])
    claims = sched.ready()
    assert sched.cancel("a").kind is OutcomeKind.CANCEL_REQUESTED
    assert sched.cancel("b").kind is OutcomeKind.CANCEL_REQUESTED
    assert [c.token.cancelled for c in claims] == [True, True]
    assert sched.complete("a", 1, "r") == Outcome(OutcomeKind.ACCEPTED, "a", 1, TaskState.SUCCEEDED)
    assert sched.fail("b", 1, "e") == Outcome(OutcomeKind.ACCEPTED, "b", 1, TaskState.FAILED)
    assert sched.blocking_cause("c") == Cause("b", 1, TaskState.FAILED)


def test_done_4_duplicate_and_conflicting_callbacks_answer_already_terminal() -> None:
    sched = build(3, [("s", ()), ("f", ()), ("c", ()), ("n", ("s",))])
    assert claimed(sched) == [("s", 1), ("f", 1), ("c", 1)]
    sched.complete("s", 1, "first")
    sched.fail("f", 1, "first")
    sched.cancel("c")
    sched.confirm_cancel("c", 1)
    before = core(sched)
    for task_id, state in [
        ("s", TaskState.SUCCEEDED),
        ("f", TaskState.FAILED),
        ("c", TaskState.CANCELLED),
    ]:
        expected = Outcome(OutcomeKind.ALREADY_TERMINAL, task_id, 1, state)
        assert sched.complete(task_id, 1, "second") == expected
        assert sched.fail(task_id, 1, "second") == expected
        assert sched.confirm_cancel(task_id, 1) == expected
    assert core(sched) is before
    assert sched.snapshot().task("s").detail == "first"
    assert sched.snapshot().task("f").detail == "first"
    assert sched.state("n") is TaskState.READY


@pytest.mark.parametrize("how", ["pending", "succeeded", "failed"])
def test_done_5_a_stale_generation_changes_and_releases_nothing(how: str) -> None:
    sched = build(2, [("x", ()), ("a", ("x",)), ("d", ("a",))])
    if how != "pending":
        assert claimed(sched) == [("x", 1)]
        sched.complete("x", 1)
        assert claimed(sched) == [("a", 1)]
        if how == "succeeded":
            sched.complete("a", 1)
        else:
            sched.fail("a", 1, "e")
    assert sched.state("a").value == how
    # Re-submit `a` and run the new version so that a@1 is stale while a@2 runs.
    sched.submit("a", (), noop)
    if how == "failed":
        sched.submit("d", ("a",), noop)
    assert ("a", 2) in claimed(sched)
    before = core(sched)
    before_states = states(sched)
    expected = Outcome(OutcomeKind.STALE_GENERATION, "a", 1, None)
    assert sched.complete("a", 1, "late") == expected
    assert sched.fail("a", 1, "late") == expected
    assert sched.confirm_cancel("a", 1) == expected
    assert core(sched) is before
    assert states(sched) == before_states
    assert sched.state("a") is TaskState.RUNNING
    if how == "pending":
        # a@1 never ran; a late completion of it must not release d.
        assert sched.state("d") is TaskState.PENDING


def test_done_6_unknown_task_raises_naming_it() -> None:
    sched = build(1, [("a", ("x",)), ("x", ())])
    before = core(sched)
    for call in (sched.complete, sched.fail, sched.confirm_cancel):
        args = ("e",) if call == sched.fail else ()
        with pytest.raises(UnknownTaskError) as caught:
            call("nope", 1, *args)
        assert isinstance(caught.value, KeyError)
        assert str(caught.value) == "task 'nope' was never submitted"
        assert caught.value.rejection == fx.UnknownTask("nope")
    assert core(sched) is before


@pytest.mark.parametrize("task_id", ["", 5, None, ("a",)])
def test_done_6_a_task_id_that_is_not_a_non_empty_str_is_an_invalid_argument(
    task_id: object,
) -> None:
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    for call in (sched.complete, sched.confirm_cancel, sched.cancel):
        with pytest.raises(InvalidArgumentError) as caught:
            call(task_id, 1)  # type: ignore[arg-type]
        assert caught.value.rejection == fx.InvalidTaskId(task_id)
    assert core(sched) is before


@pytest.mark.parametrize("generation", [0, -1, True, 1.0, "1", None])
def test_done_6_generation_must_be_an_int_at_least_one(generation: object) -> None:
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    for call in (sched.complete, sched.confirm_cancel):
        with pytest.raises(InvalidArgumentError) as caught:
            call("a", generation)  # type: ignore[arg-type]
        assert repr(generation) in str(caught.value)
        assert caught.value.rejection == fx.InvalidGeneration("a", generation)
    with pytest.raises(InvalidArgumentError):
        sched.fail("a", generation, "e")  # type: ignore[arg-type]
    assert core(sched) is before


class Attempt(int):
    """An `int` subclass (an `enum.IntEnum` member, say): a generation by DONE-6 (`int >= 1`)."""


def test_done_6_a_generation_of_an_int_subclass_is_that_int() -> None:
    """DONE-6, DONE-5: the current generation given as an `int` subclass names the current
    version, and an older one as such is stale: neither is future, neither is refused."""
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    accepted = sched.complete("a", Attempt(1))
    assert accepted == Outcome(OutcomeKind.ACCEPTED, "a", 1, TaskState.SUCCEEDED)
    sched.submit("a", (), noop)
    assert claimed(sched) == [("a", 2)]
    before = core(sched)
    stale = sched.fail("a", Attempt(1), "late")
    assert stale == Outcome(OutcomeKind.STALE_GENERATION, "a", 1, None)
    assert core(sched) is before
    with pytest.raises(FutureGenerationError):
        sched.complete("a", Attempt(3))
    assert sched.fail("a", Attempt(2), "e").kind is OutcomeKind.ACCEPTED


def test_done_6_a_future_generation_raises_naming_both_generations() -> None:
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    with pytest.raises(FutureGenerationError) as caught:
        sched.complete("a", 3)
    assert "generation 3" in str(caught.value) and "current is 1" in str(caught.value)
    assert caught.value.rejection == fx.FutureGeneration("a", 3, 1)
    assert core(sched) is before


def test_done_6_a_version_never_claimed_raises_naming_its_state() -> None:
    sched = build(1, [("r", ()), ("p", ("r",)), ("k", ()), ("b", ("k",)), ("q", ())])
    sched.cancel("k")
    sched.cancel("q")
    assert states(sched) == {
        "r": "ready",
        "p": "pending",
        "k": "cancelled",
        "b": "blocked",
        "q": "cancelled",
    }
    before = core(sched)
    for task_id, state in [
        ("r", TaskState.READY),
        ("p", TaskState.PENDING),
        ("k", TaskState.CANCELLED),
        ("b", TaskState.BLOCKED),
    ]:
        for call in (
            lambda t: sched.complete(t, 1),
            lambda t: sched.fail(t, 1, "e"),
            lambda t: sched.confirm_cancel(t, 1),
        ):
            with pytest.raises(NotClaimedError) as caught:
                call(task_id)
            assert f"'{task_id}'" in str(caught.value) and f"(it is {state})" in str(caught.value)
            assert caught.value.rejection == fx.NotClaimed(task_id, 1, state)
    assert core(sched) is before


def test_done_7_checks_run_task_id_generation_future_stale_then_state() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    sched.submit("b", (), noop)  # b@2 is ready and was never claimed
    # An invalid task id comes first of all.
    with pytest.raises(InvalidArgumentError) as invalid_id:
        sched.complete(5, "x")  # type: ignore[arg-type]
    assert invalid_id.value.rejection == fx.InvalidTaskId(5)
    # Unknown task before generation type.
    with pytest.raises(UnknownTaskError):
        sched.complete("zz", "x")  # type: ignore[arg-type]
    # Generation type before future generation and state.
    with pytest.raises(InvalidArgumentError) as gen_type:
        sched.complete("b", 0)
    assert gen_type.value.rejection == fx.InvalidGeneration("b", 0)
    # Future generation before the state of the current version.
    with pytest.raises(FutureGenerationError):
        sched.complete("b", 3)
    # Stale generation before the state: b@2 is unclaimed, yet b@1 is simply stale.
    assert sched.complete("b", 1).kind is OutcomeKind.STALE_GENERATION
    # And last, the state of the current version.
    with pytest.raises(NotClaimedError):
        sched.complete("b", 2)
