"""LEASE: leases, heartbeats and expiry (and CLAIM-7, EFFECT-5), through the shell.

Every scheduler here validates each step (`helpers_clauses.build`): every invariant and every
transition property, `StaleCallbackReleasesNothing` and `ExpireEndsExactlyTheDueLeases`
among them, hold after each call. `tests/test_differential.py` (`LeaseMachine`) drives the
same rules against the naive model at random."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from helpers_clauses import build, claimed, core, noop, record_effects, states, transitions
from schedspec import (
    Cause,
    InvalidArgumentError,
    Lease,
    NotClaimedError,
    NotStartedError,
    Outcome,
    OutcomeKind,
    TaskScheduler,
    TaskState,
    UnknownTaskError,
    VersionRef,
)
from schedspec.core import (
    Claim,
    Complete,
    Expire,
    Heartbeat,
    Start,
    Submit,
    SubmitBatch,
    initial_state,
    step,
)
from schedspec.core import effects as fx
from schedspec.core import invariants as inv
from schedspec.core.invariants import check_transition, validate_state

ACCEPTED, STALE = OutcomeKind.ACCEPTED, OutcomeKind.STALE_GENERATION
TERMINAL = OutcomeKind.ALREADY_TERMINAL
BAD_DEADLINES = [True, math.nan, math.inf, -math.inf, "3", [1]]


def test_lease_1_a_claim_holds_its_lease_until_the_version_stops_running() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("c", ("a",))])
    assert [c.task_id for c in sched.ready(1, worker="w1", lease_until=10)] == ["a"]
    assert [c.task_id for c in sched.ready(worker="w2")] == ["b"]
    assert sched.lease("a") == Lease("w1", 10) and sched.lease("b") == Lease("w2", None)
    assert sched.lease("c") is None  # pending: no lease
    sched.complete("a", 1)
    assert sched.lease("a") is None and core(sched).leases.get(0) is None
    [c] = sched.ready()  # no worker, no deadline: no lease at all
    assert c.task_id == "c" and sched.lease("c") is None
    with pytest.raises(UnknownTaskError):
        sched.lease("nope")


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"worker": ""}, "worker"), ({"worker": 7}, "worker")]
    + [({"lease_until": v}, "lease_until") for v in BAD_DEADLINES],
)
def test_claim_7_lease_arguments_are_checked_after_max_tasks_and_before_the_phase(
    kwargs: dict[str, object], argument: str
) -> None:
    """CLAIM-7, LEASE-1: a bad worker or deadline is refused in every phase, naming the
    argument, and changes nothing; `max_tasks` is checked first, the phase after."""
    for sched in (build(1, [("a", ())], start=False), build(1, [("a", ())])):
        before = core(sched)
        with pytest.raises(InvalidArgumentError, match=argument) as caught:
            sched.ready(**kwargs)  # type: ignore[arg-type]
        assert len(str(caught.value)) < 200 and core(sched) is before
        with pytest.raises(InvalidArgumentError, match="max_tasks"):
            sched.ready(-1, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(NotStartedError):
        build(1, [("a", ())], start=False).ready(worker="w", lease_until=1.5)


def test_lease_2_a_heartbeat_sets_the_deadline_and_keeps_the_worker() -> None:
    sched = build(1, [("a", ())])
    sched.ready(worker="w", lease_until=5)
    assert sched.heartbeat("a", 1, 9) == Outcome(ACCEPTED, "a", 1, TaskState.RUNNING)
    assert sched.lease("a") == Lease("w", 9)
    sched.heartbeat("a", 1, 2.5)  # earlier: the caller's clock decides
    assert sched.lease("a") == Lease("w", 2.5)
    sched.heartbeat("a", 1, None)
    assert sched.lease("a") == Lease("w", None)
    before = core(sched)
    with record_effects() as log:
        assert sched.heartbeat("a", 1, None).kind is ACCEPTED
    assert core(sched) is before  # the deadline it already has: nothing changes
    assert [len(effects) for _, effects in log] == [1]  # a reply, no notification (EFFECT-5)


def test_lease_2_a_heartbeat_for_a_version_claimed_without_a_lease_gives_it_one() -> None:
    sched = build(1, [("a", ())])
    sched.ready()
    sched.heartbeat("a", 1, 3)
    assert sched.lease("a") == Lease(None, 3)
    sched.heartbeat("a", 1, None)
    assert sched.lease("a") is None and not core(sched).leases


def test_lease_2_a_heartbeat_is_decided_as_a_callback_after_its_deadline() -> None:
    sched = build(2, [("a", ()), ("b", ("a",))])
    sched.ready(lease_until=1)
    for bad in BAD_DEADLINES:
        with pytest.raises(InvalidArgumentError, match="lease_until"):
            sched.heartbeat("nope", 0, bad)  # type: ignore[arg-type]  # the deadline first
    with pytest.raises(NotClaimedError):
        sched.heartbeat("b", 1, 5)
    sched.complete("a", 1)
    before = core(sched)
    assert sched.heartbeat("a", 1, 5) == Outcome(TERMINAL, "a", 1, TaskState.SUCCEEDED)
    sched.submit("b", (), noop)
    assert sched.heartbeat("b", 1, 5) == Outcome(STALE, "b", 1, None)
    assert core(sched).leases == before.leases


def test_lease_3_expire_ends_the_due_leases_in_sequence_order_and_requeues() -> None:
    sched = build(3, [("a", ()), ("b", ()), ("c", ()), ("d", ("a",))])
    sched.ready(worker="w", lease_until=5)
    sched.heartbeat("a", 1, 7)
    before = core(sched)
    assert sched.expire(4.5) == [] and core(sched) is before  # nothing due: nothing changes
    with record_effects() as log:
        assert sched.expire(5) == [VersionRef("b", 1), VersionRef("c", 1)]  # `<=`
    ((_, effects),) = log
    assert transitions(effects) == [("b", 2, None, "ready"), ("c", 2, None, "ready")]
    assert states(sched) == {"a": "running", "b": "ready", "c": "ready", "d": "pending"}
    assert core(sched).running == 1 and sched.lease("b") is None
    # The requeued versions come after every earlier submission, in the order they expired.
    assert [(c.task_id, c.generation) for c in sched.ready()] == [("b", 2), ("c", 2)]
    assert sched.expire(5) == []  # sent again: nothing more is due (RESTART-4)


def test_lease_3_a_requeued_version_is_decided_as_a_submission_from_its_dependencies() -> None:
    """Its dependency replaced while it ran (SUB-8), the requeued version waits for the new
    one; a dependency that failed since blocks it, and its pending dependents, by its cause."""
    for fails, state in ((False, TaskState.PENDING), (True, TaskState.BLOCKED)):
        sched = build(2, [("a", ()), ("b", ("a",)), ("c", ("b",))])
        claimed(sched)
        sched.complete("a", 1)
        sched.ready(lease_until=1)  # b
        sched.submit("a", (), noop)
        if fails:
            sched.ready()
            sched.fail("a", 2, "boom")
        assert sched.expire(3) == [VersionRef("b", 1)]
        assert (sched.state("b"), sched.generation("b")) == (state, 2)
        cause = Cause("a", 2, TaskState.FAILED) if fails else None
        assert sched.blocking_cause("b") == cause and sched.blocking_cause("c") == cause
        assert sched.state("c") is (TaskState.BLOCKED if fails else TaskState.PENDING)


def test_lease_3_a_requeued_version_keeps_its_dependencies_in_their_submitted_order() -> None:
    """The new version names the same dependencies in the same order (SUB-5 reads them in
    that order: the first unsuccessful one is the cause)."""
    sched = build(3, [("z", ()), ("a", ()), ("t", ("z", "a"))])
    claimed(sched)
    sched.complete("z", 1)
    sched.complete("a", 1)
    sched.ready(lease_until=1)  # t
    sched.submit("z", (), noop)
    sched.submit("a", (), noop)
    sched.ready()
    sched.fail("a", 2, "first")
    sched.fail("z", 2, "second")
    sched.expire(1)
    assert [d for d, _, _ in sched.waiting_on("t").deps] == ["z", "a"]
    assert sched.blocking_cause("t") == Cause("z", 2, TaskState.FAILED)


def test_lease_3_an_expired_version_whose_cancellation_was_requested_is_cancelled() -> None:
    for expiry in ("requeue", "fail"):
        sched = build(1, [("a", ()), ("b", ("a",))], expiry=expiry)
        sched.ready(lease_until=2)
        sched.cancel("a")
        sched.expire(2)
        assert sched.state("a") is TaskState.CANCELLED
        assert sched.snapshot().task("a").detail == "cancelled"
        assert sched.blocking_cause("b") == Cause("a", 1, TaskState.CANCELLED)


def test_lease_3_under_the_fail_policy_an_expired_version_fails_and_blocks() -> None:
    sched = build(2, [("a", ()), ("b", ("a",)), ("c", ("b",)), ("z", ())], expiry="fail")
    sched.ready(lease_until=3)
    assert sched.expire(3) == [VersionRef("a", 1), VersionRef("z", 1)]
    assert sched.state("a") is TaskState.FAILED
    assert sched.snapshot().task("a").detail == "lease_expired"
    cause = Cause("a", 1, TaskState.FAILED)
    assert sched.blocking_cause("b") == cause and sched.blocking_cause("c") == cause
    assert core(sched).running == 0


def test_lease_3_while_closing_a_requeue_is_a_shutdown_cancel_and_closes() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("c", ("a",))])
    sched.ready(lease_until=4)
    report = sched.close(timeout=0)
    assert not report.closed and sched.phase == "closing"
    sched.complete("b", 1)
    assert sched.expire(4) == [VersionRef("a", 1)]
    assert sched.state("a") is TaskState.CANCELLED and sched.generation("a") == 1
    assert sched.snapshot().task("a").detail == "shutdown"
    assert sched.phase == "closed"


def test_lease_3_a_bad_now_is_refused_and_changes_nothing() -> None:
    sched = build(1, [("a", ())])
    sched.ready(lease_until=1)
    before = core(sched)
    for bad in [*BAD_DEADLINES, None]:
        with pytest.raises(InvalidArgumentError, match="now") as caught:
            sched.expire(bad)  # type: ignore[arg-type]
        assert len(str(caught.value)) < 200
    assert core(sched) is before
    assert sched.expire(10**30) == [VersionRef("a", 1)]  # a large int is a number


def test_lease_4_the_expiry_policy_is_fixed_at_construction() -> None:
    """LEASE-4: "requeue" by default, or "fail"; anything else is refused."""
    assert TaskScheduler(1).expiry == "requeue"
    assert TaskScheduler(1, expiry="fail").expiry == "fail"
    for bad in ["FAIL", "", None, 1]:
        with pytest.raises(InvalidArgumentError, match="expiry"):
            TaskScheduler(1, expiry=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError) as refused:
        TaskScheduler(1, expiry="retry")  # type: ignore[arg-type]
    assert str(refused.value) == "expiry must be one of 'requeue', 'fail', got 'retry'"


def test_lease_4_under_requeue_the_generation_counts_the_attempts() -> None:
    sched = build(1, [("a", ())])
    for attempt in (1, 2, 3):
        [c] = sched.ready(lease_until=attempt)
        assert c.generation == attempt
        sched.expire(attempt)
    assert sched.generation("a") == 4 and sched.state("a") is TaskState.READY


@pytest.mark.parametrize("expiry", ["requeue", "fail"])
def test_lease_5_the_holder_of_an_expired_lease_is_fenced(expiry: str) -> None:
    sched = build(2, [("a", ()), ("b", ("a",))], expiry=expiry)
    [claim] = sched.ready(lease_until=1)
    sched.expire(1)
    assert claim.token.cancelled  # the shell tells a worker still running
    before = core(sched)
    kind = STALE if expiry == "requeue" else TERMINAL
    assert sched.complete("a", 1).kind is kind
    assert sched.fail("a", 1, "late").kind is kind
    assert sched.confirm_cancel("a", 1).kind is kind
    assert sched.heartbeat("a", 1, 100).kind is kind
    assert core(sched) is before and sched.state("b") is not TaskState.READY


def test_lease_6_a_version_without_a_deadline_is_never_expired() -> None:
    sched = build(1, [("a", ())])
    sched.ready(worker="lost")
    before = core(sched)
    assert sched.expire(10**9) == [] and core(sched) is before
    assert sched.ready() == []  # its slot stays taken


def test_effect_5_expiry_is_notified_as_state_changes_and_replied_as_versions() -> None:
    sched = build(2, [("a", ()), ("b", ()), ("c", ("b",))], expiry="fail")
    sched.ready(lease_until=1)
    sched.cancel("a")
    with record_effects() as log:
        sched.expire(1)
    ((_, effects),) = log
    assert effects[0] == fx.Expired(effects[0].event_id, (("a", 1), ("b", 1)))
    assert transitions(effects) == [
        ("a", 1, "running", "cancelled"),
        ("b", 1, "running", "failed"),
        ("c", 1, "pending", "blocked"),
    ]


# The checks that hold these rules on every step catch them broken (planted corruptions).


def leased(expiry: str = "requeue") -> tuple[object, ...]:
    """A started core: a and b running on leases due at 1 and 5, c pending on a."""
    s = initial_state(2, expiry)
    s, _ = step(s, SubmitBatch((Submit("a", ()), Submit("b", ()), Submit("c", ("a",)))))
    s, _ = step(s, Start())
    s, _ = step(s, Claim(1, worker="w", lease_until=1))
    s, _ = step(s, Claim(1, lease_until=5))
    return s, *step(s, Expire(1))


def test_lease_1_type_ok_names_a_lease_held_where_no_running_version_is() -> None:
    s, _, _ = leased()
    assert validate_state(s) == []
    c = s.lookup("c")
    bad = replace(s, leases=s.leases.set(c, ("w", 3)))
    assert "TypeOK: 'c' holds a lease while pending" in validate_state(bad)
    a = s.lookup("a")
    for lease in [("w", "soon"), (None, None), ("", 1), "w"]:
        wrong = replace(s, leases=s.leases.set(a, lease))
        assert f"TypeOK: 'a' holds the lease {lease!r}" in validate_state(wrong)
    beyond = replace(s, leases=s.leases.set(99, ("w", 1)))
    assert "TypeOK: a lease is held by 99, which is no task index" in validate_state(beyond)


def test_lease_3_expire_ends_exactly_the_due_leases_names_a_wrong_list() -> None:
    before, after, effects = leased()
    assert check_transition(before, after, effects, Expire(1)) == []
    # The same step judged as an expire at 0, when nothing was due: a core that expired early.
    assert inv.ExpireEndsExactlyTheDueLeases(before, after, effects, Expire(0)) == [
        "expire(0) ended [('a', 1)], due were []"
    ]
    # A core that named a but left it running.
    kept = replace(after, cells=before.cells, versions=before.versions, leases=before.leases)
    assert "'a' still runs after its lease expired" in inv.ExpireEndsExactlyTheDueLeases(
        before, kept, effects, Expire(1)
    )
    # A core that moved another running version's deadline on the way.
    b = before.lookup("b")
    moved = replace(after, leases=after.leases.set(b, (None, 9)))
    assert inv.ExpireEndsExactlyTheDueLeases(before, moved, effects, Expire(1)) == [
        "'b' runs on with its lease changed (None, 5)"
    ]


def test_lease_5_a_version_ended_by_an_expire_that_does_not_name_it_is_reported() -> None:
    before, after, effects = leased("fail")
    silent = (fx.Expired(effects[0].event_id, ()), *effects[1:])
    assert inv.StaleCallbackReleasesNothing(before, after, silent, Expire(1)) == [
        "'a'@1 left running on Expire naming []"
    ]


def test_lease_3_blocked_by_picked_cause_judges_the_walk_of_each_expired_version() -> None:
    before, after, effects = leased("fail")
    assert check_transition(before, after, effects, Expire(1)) == []
    c = after.lookup("c")
    wrong = replace(after, data=after.data.set(c, Cause("b", 1, TaskState.FAILED)))
    assert inv.BlockedByPickedCause(before, wrong, effects, Expire(1)) == [
        "'c' blocked with cause Cause(task_id='b', generation=1, state=<TaskState.FAILED: "
        "'failed'>), the rule picks Cause(task_id='a', generation=1, state=<TaskState.FAILED: "
        "'failed'>)"
    ]


def test_lease_5_expired_holder_changes_nothing_judges_the_state_not_the_reply() -> None:
    """LEASE-5: a's lease expired and its requeued version runs for w2. Whatever a core
    answers w1, the expired holder, its heartbeat and its completion must change nothing: the
    check reads who runs from the state before the step, so a core that answers `accepted`
    and moves w2's deadline, or completes w2's version, is named."""
    s = initial_state(1)
    for event in [Submit("a", ()), Start(), Claim(1, worker="w1", lease_until=1), Expire(1)]:
        s, _ = step(s, event)
    before, _ = step(s, Claim(1, worker="w2", lease_until=5))
    a = before.lookup("a")
    beat = Heartbeat("a", 1, 9)
    same, effects = step(before, beat)
    assert same is before and effects[0].outcome.kind is STALE
    assert check_transition(before, same, effects, beat) == []
    moved = replace(before, leases=before.leases.set(a, ("w2", 9)))
    accepted = (replace(effects[0], outcome=replace(effects[0].outcome, kind=ACCEPTED)),)
    assert inv.ExpiredHolderChangesNothing(before, moved, accepted, beat) == [
        "Heartbeat naming 'a'@1, which was not running, changed the state or reported a change"
    ]
    late = Complete("a", 1)
    done, _ = step(before, Complete("a", 2))
    assert inv.ExpiredHolderChangesNothing(before, done, accepted, late) == [
        "Complete naming 'a'@1, which was not running, changed the state or reported a change"
    ]
    # The running holder's own heartbeat is not this check's to judge.
    assert inv.ExpiredHolderChangesNothing(before, moved, accepted, Heartbeat("a", 2, 9)) == []


def test_lease_3_slots_freed_on_expiry_names_a_slot_kept() -> None:
    """LEASE-3, CLAIM-5: expire(1) ends a's lease and frees its slot, requeued or failed; a
    core that kept the count where it was is named."""
    for expiry in ("requeue", "fail"):
        before, after, effects = leased(expiry)
        assert (before.running, after.running) == (2, 1)
        assert inv.SlotsFreedOnExpiry(before, after, effects, Expire(1)) == []
        kept = replace(after, running=before.running)
        assert inv.SlotsFreedOnExpiry(before, kept, effects, Expire(1)) == [
            "expire ended 1 leases, running went from 2 to 2"
        ]
