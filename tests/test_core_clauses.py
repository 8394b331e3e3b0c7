"""Clause tests that drive the pure core directly, across areas (shell tests are per area)."""

from __future__ import annotations

from schedspec.core import (
    Cancel,
    Claim,
    Close,
    Complete,
    Fail,
    OutcomeKind,
    Start,
    Submit,
    TaskState,
    initial_state,
    step,
)
from schedspec.core import effects as fx
from schedspec.core.invariants import validate_state


def run(limit, events):
    s = initial_state(limit)
    out = []
    for e in events:
        s, effects = step(s, e)
        assert validate_state(s) == []
        out.append(effects[0])
    return s, out


def test_sub_3_every_rejection_returns_the_same_state_object() -> None:
    s, _ = run(2, [Submit("a", ()), Start()])
    for bad in [
        Submit("", ()),
        Submit("b", ("a", "a")),
        Submit("new", ()),
        Claim(-1),
        Complete("zzz", 1),
        Complete("a", 2),
        Complete("a", 1),
    ]:
        after, effects = step(s, bad)
        assert after is s
        assert isinstance(effects[0], fx.Rejected)


def test_start_3_cycle_paths_are_exact_and_unexecutable_listed() -> None:
    _, replies = run(
        1,
        [
            Submit("a", ("b",)),
            Submit("b", ("c",)),
            Submit("c", ("a",)),
            Submit("d", ("d",)),
            Submit("e", ("a",)),
            Start(),
        ],
    )
    assert replies[-1] == fx.Rejected(0, fx.Cycles((("a", "b", "c", "a"), ("d", "d")), ("e",)))


def test_claim_3_claims_in_submission_order_up_to_free_slots() -> None:
    s, replies = run(2, [Submit(t, ()) for t in "cab"] + [Start(), Claim(5)])
    assert [g.task_id for g in replies[-1].grants] == ["c", "a"]
    assert s.running == 2


def test_done_4_done_5_duplicate_and_stale_callbacks_change_nothing() -> None:
    _s, replies = run(
        1,
        [Submit("a", ()), Start(), Claim(), Complete("a", 1), Submit("a", ()), Complete("a", 1)],
    )
    assert replies[-1].outcome.kind is OutcomeKind.STALE_GENERATION
    s2, r2 = run(1, [Submit("a", ()), Start(), Claim(), Complete("a", 1), Fail("a", 1)])
    assert r2[-1].outcome.kind is OutcomeKind.ALREADY_TERMINAL
    assert s2.state_of("a") is TaskState.SUCCEEDED


def test_block_2_cause_is_the_root_through_several_levels() -> None:
    s, _ = run(
        1,
        [Submit("a", ()), Submit("b", ("a",)), Submit("c", ("b",)), Start(), Claim(), Fail("a", 1)],
    )
    for t in "bc":
        cause = s.cause_of(t)
        assert s.state_of(t) is TaskState.BLOCKED
        assert cause is not None and (cause.task_id, cause.state) == ("a", TaskState.FAILED)


def test_close_2_queued_versions_are_cancelled_for_shutdown_not_blocked() -> None:
    s, _ = run(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Claim(), Close()])
    assert s.state_of("b") is TaskState.CANCELLED and s.detail_of("b") == "shutdown"
    assert s.state_of("a") is TaskState.RUNNING
    s, effects = step(s, Complete("a", 1))
    assert str(s.phase) == "closed"
    s, effects = step(s, Cancel("b"))
    assert effects[0].outcome.kind is OutcomeKind.ALREADY_TERMINAL
