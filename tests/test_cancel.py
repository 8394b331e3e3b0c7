"""CANCEL: cancel(task_id, generation=None) and confirm_cancel(task_id, generation)."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, record_effects, states, transitions
from schedspec import (
    CancelNotRequestedError,
    Cause,
    FutureGenerationError,
    InvalidArgumentError,
    NotClaimedError,
    Outcome,
    OutcomeKind,
    TaskState,
    UnknownTaskError,
)
from schedspec.core import Cancel, Claim, Start, Submit, initial_state, step
from schedspec.core import effects as fx


@pytest.mark.parametrize("start", [False, True])
def test_cancel_1_a_ready_or_pending_version_is_cancelled_and_blocks_descendants(
    start: bool,
) -> None:
    sched = build(1, [("r", ()), ("p", ("r",)), ("q", ("p",)), ("s", ("q",))], start=start)
    assert sched.cancel("p") == Outcome(OutcomeKind.ACCEPTED, "p", 1, TaskState.CANCELLED)
    assert sched.snapshot().task("p").detail == "cancelled"
    assert [sched.blocking_cause(t) for t in "qs"] == [Cause("p", 1, TaskState.CANCELLED)] * 2
    assert sched.cancel("r", 1) == Outcome(OutcomeKind.ACCEPTED, "r", 1, TaskState.CANCELLED)
    assert states(sched) == {"r": "cancelled", "p": "cancelled", "q": "blocked", "s": "blocked"}


def test_cancel_2_cancel_never_touches_an_unrelated_branch() -> None:
    sched = build(
        2, [("a", ()), ("a1", ("a",)), ("b", ()), ("b1", ("b",)), ("m", ("a1",)), ("n", ("b1",))]
    )
    with record_effects() as log:
        sched.cancel("a")
    ((_, effects),) = log
    assert transitions(effects) == [
        ("a", 1, "ready", "cancelled"),
        ("a1", 1, "pending", "blocked"),
        ("m", 1, "pending", "blocked"),
    ]
    assert states(sched) == {
        "a": "cancelled",
        "a1": "blocked",
        "b": "ready",
        "b1": "pending",
        "m": "blocked",
        "n": "pending",
    }


def test_cancel_3_cancelling_a_running_version_only_requests_it() -> None:
    sched = build(2, [("a", ()), ("b", ("a",))])
    (claim,) = sched.ready()
    with record_effects() as log:
        first = sched.cancel("a")
    assert first == Outcome(OutcomeKind.CANCEL_REQUESTED, "a", 1, TaskState.RUNNING)
    assert claim.token.cancelled is True
    assert states(sched) == {"a": "running", "b": "pending"}
    ((_, effects),) = log
    assert [type(e) for e in effects] == [fx.Answered, fx.CancelRequested]
    before = core(sched)
    with record_effects() as again_log:
        assert sched.cancel("a", 1) == first
    ((_, again),) = again_log
    assert [type(e) for e in again] == [fx.Answered]
    assert core(sched) is before


def test_cancel_3_asking_again_returns_the_very_same_core_state() -> None:
    s = initial_state(1)
    for event in (Submit("a", ()), Start(), Claim(), Cancel("a")):
        s, _ = step(s, event)
    after, effects = step(s, Cancel("a"))
    assert after is s
    assert effects == (
        fx.Answered(0, Outcome(OutcomeKind.CANCEL_REQUESTED, "a", 1, TaskState.RUNNING)),
    )


def test_cancel_4_confirm_cancel_after_a_request_cancels_and_blocks() -> None:
    sched = build(1, [("a", ()), ("b", ("a",))])
    assert claimed(sched) == [("a", 1)]
    sched.cancel("a")
    outcome = sched.confirm_cancel("a", 1)
    assert outcome == Outcome(OutcomeKind.ACCEPTED, "a", 1, TaskState.CANCELLED)
    assert sched.snapshot().task("a").detail == "cancelled"
    assert sched.blocking_cause("b") == Cause("a", 1, TaskState.CANCELLED)
    # Afterwards it follows DONE-4.
    assert sched.confirm_cancel("a", 1) == Outcome(
        OutcomeKind.ALREADY_TERMINAL, "a", 1, TaskState.CANCELLED
    )
    assert sched.complete("a", 1).kind is OutcomeKind.ALREADY_TERMINAL


def test_cancel_4_confirm_cancel_without_a_request_is_rejected() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    before = core(sched)
    with pytest.raises(CancelNotRequestedError) as caught:
        sched.confirm_cancel("a", 1)
    assert "'a'" in str(caught.value) and "generation 1" in str(caught.value)
    assert caught.value.rejection == fx.CancelNotRequested("a", 1)
    with pytest.raises(NotClaimedError):
        sched.confirm_cancel("b", 1)
    with pytest.raises(FutureGenerationError):
        sched.confirm_cancel("a", 2)
    with pytest.raises(UnknownTaskError):
        sched.confirm_cancel("zz", 1)
    assert core(sched) is before
    assert sched.state("a") is TaskState.RUNNING


def test_cancel_4_confirm_cancel_on_a_finished_version_answers_already_terminal() -> None:
    # The callback rules come first: without a request, a finished version is a duplicate race.
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    sched.complete("a", 1)
    outcome = sched.confirm_cancel("a", 1)
    assert (outcome.kind, outcome.state) == (OutcomeKind.ALREADY_TERMINAL, TaskState.SUCCEEDED)


def test_cancel_5_a_terminal_version_answers_already_terminal_claimed_or_not() -> None:
    sched = build(3, [("s", ()), ("f", ()), ("c", ()), ("k", ()), ("b", ("k",)), ("n", ())])
    sched.cancel("k")  # never claimed, cancelled
    sched.cancel("n")
    assert claimed(sched) == [("s", 1), ("f", 1), ("c", 1)]
    sched.complete("s", 1)
    sched.fail("f", 1, "e")
    sched.cancel("c")
    sched.confirm_cancel("c", 1)
    before = core(sched)
    for task_id, state in [
        ("s", TaskState.SUCCEEDED),
        ("f", TaskState.FAILED),
        ("c", TaskState.CANCELLED),
        ("k", TaskState.CANCELLED),
        ("b", TaskState.BLOCKED),
    ]:
        expected = Outcome(OutcomeKind.ALREADY_TERMINAL, task_id, 1, state)
        assert sched.cancel(task_id) == expected
        assert sched.cancel(task_id, 1) == expected
    assert core(sched) is before


def test_cancel_5_stale_unknown_invalid_and_future_generations() -> None:
    sched = build(1, [("a", ())])
    sched.submit("a", (), noop)
    before = core(sched)
    assert sched.cancel("a", 1) == Outcome(OutcomeKind.STALE_GENERATION, "a", 1, None)
    assert sched.state("a") is TaskState.READY
    with pytest.raises(UnknownTaskError) as unknown:
        sched.cancel("zz")
    assert "'zz'" in str(unknown.value)
    for generation in (0, -2, True, 1.5, "2"):
        with pytest.raises(InvalidArgumentError) as invalid:
            sched.cancel("a", generation)  # type: ignore[arg-type]
        assert repr(generation) in str(invalid.value)
    with pytest.raises(FutureGenerationError) as future:
        sched.cancel("a", 3)
    assert future.value.rejection == fx.FutureGeneration("a", 3, 2)
    assert core(sched) is before
    # None names the current version.
    assert sched.cancel("a") == Outcome(OutcomeKind.ACCEPTED, "a", 2, TaskState.CANCELLED)
