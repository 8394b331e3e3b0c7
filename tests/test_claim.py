"""CLAIM: ready(max_tasks=None) -> list[Claim]."""

from __future__ import annotations

import pytest

from helpers_clauses import build, claimed, core, noop, run_one, states
from schedspec import Claim, InvalidArgumentError, NotStartedError, TaskScheduler, TaskState
from schedspec.core import effects as fx


def test_claim_1_ready_before_start_raises_not_started() -> None:
    sched = build(1, [("a", ())], start=False)
    assert sched.state("a") is TaskState.READY
    before = core(sched)
    with pytest.raises(NotStartedError) as caught:
        sched.ready()
    assert caught.value.rejection == fx.NotStarted()
    assert core(sched) is before


def test_claim_1_ready_while_closing_or_closed_returns_nothing() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    sched.close(timeout=0)
    assert str(sched.phase) == "closing"
    assert sched.ready() == []
    assert sched.ready(5) == []
    sched.complete("a", 1)
    assert str(sched.phase) == "closed"
    assert sched.ready() == []


@pytest.mark.parametrize("value", [-1, True, False, 1.5, "1", [1]])
def test_claim_2_max_tasks_must_be_none_or_an_int_at_least_zero(value: object) -> None:
    sched = build(2, [("a", ())])
    before = core(sched)
    with pytest.raises(InvalidArgumentError) as caught:
        sched.ready(value)  # type: ignore[arg-type]
    assert repr(value) in str(caught.value)
    assert caught.value.rejection == fx.InvalidMaxTasks(value)
    assert core(sched) is before


@pytest.mark.parametrize("phase", ["open", "closing"])
def test_claim_2_an_invalid_max_tasks_is_refused_in_every_phase(phase: str) -> None:
    sched = build(1, [("a", ())], start=phase != "open")
    if phase == "closing":
        assert claimed(sched) == [("a", 1)]
        sched.close(timeout=0)
    assert str(sched.phase) == phase
    with pytest.raises(InvalidArgumentError):
        sched.ready(-1)


def test_claim_2_none_means_every_free_slot() -> None:
    sched = build(3, [(t, ()) for t in "abcde"])
    assert claimed(sched, None) == [("a", 1), ("b", 1), ("c", 1)]
    assert claimed(sched) == []


def test_claim_3_claims_the_smallest_sequence_numbers_up_to_the_free_slots() -> None:
    sched = build(3, [(t, ()) for t in ["c", "a", "e", "b", "d"]])
    assert claimed(sched, 2) == [("c", 1), ("a", 1)]
    # A batch larger than the free slots returns what fits.
    assert claimed(sched, 10) == [("e", 1)]
    assert claimed(sched, 10) == []
    sched.complete("a", 1)
    assert claimed(sched, 0) == []
    assert claimed(sched) == [("b", 1)]


def test_claim_3_a_resubmitted_version_takes_its_new_place_in_the_order() -> None:
    sched = build(5, [(t, ()) for t in "abc"], start=False)
    sched.submit("a", (), noop)
    sched.start()
    assert claimed(sched) == [("b", 1), ("c", 1), ("a", 2)]


def test_claim_3_released_versions_are_claimed_in_sequence_order_not_release_order() -> None:
    sched = build(10, [("late", ("y",)), ("x", ()), ("y", ()), ("early", ("x",))])
    assert claimed(sched) == [("x", 1), ("y", 1)]
    sched.complete("x", 1)
    sched.complete("y", 1)
    # `early` was released first, but `late` has the smaller sequence number.
    assert claimed(sched) == [("late", 1), ("early", 1)]


def test_claim_3_a_diamond_runs_in_dependency_then_sequence_order() -> None:
    sched = build(4, [("a", ()), ("b", ("a",)), ("c", ("a",)), ("d", ("b", "c"))])
    assert claimed(sched) == [("a", 1)]
    sched.complete("a", 1)
    assert claimed(sched) == [("b", 1), ("c", 1)]
    sched.complete("c", 1)
    assert sched.state("d") is TaskState.PENDING
    sched.complete("b", 1)
    assert claimed(sched) == [("d", 1)]


def test_claim_4_every_claimed_version_is_running_and_claimed_at_most_once() -> None:
    sched = build(4, [("a", ()), ("b", ()), ("c", ("a",))])
    claims = sched.ready()
    assert [(c.task_id, c.generation) for c in claims] == [("a", 1), ("b", 1)]
    assert states(sched) == {"a": "running", "b": "running", "c": "pending"}
    assert claimed(sched) == []
    sched.complete("a", 1)
    sched.fail("b", 1, "e")
    assert claimed(sched) == [("c", 1)]
    sched.complete("c", 1)
    assert claimed(sched) == []
    # A new version is a new claim.
    sched.submit("a", (), noop)
    assert claimed(sched) == [("a", 2)]
    assert claimed(sched) == []


def test_claim_5_running_never_exceeds_max_concurrency() -> None:
    sched = build(2, [(f"t{i}", ()) for i in range(6)])
    seen = []
    for _ in range(3):
        batch = claimed(sched, 5)
        seen += batch
        assert core(sched).running <= 2
        assert len(batch) == 2
        assert claimed(sched) == []
        for task_id, generation in batch:
            sched.complete(task_id, generation)
    assert [t for t, _ in seen] == [f"t{i}" for i in range(6)]


def test_claim_5_with_max_concurrency_zero_nothing_is_ever_claimed() -> None:
    sched = build(0, [("a", ()), ("b", ("a",))])
    assert sched.ready() == []
    assert sched.ready(10) == []
    assert states(sched) == {"a": "ready", "b": "pending"}
    report = sched.close()
    assert report.closed is True
    assert [(v.task_id, v.generation) for v in report.cancelled] == [("a", 1), ("b", 1)]


def test_claim_6_a_claim_carries_id_generation_fn_and_a_token() -> None:
    def work() -> str:
        return "w"

    sched = build(2, [("a", ())], start=False)
    sched.submit("a", (), work)
    sched.submit("b", (), noop)
    sched.start()
    first, second = sched.ready()
    assert isinstance(first, Claim)
    assert (first.task_id, first.generation, first.fn) == ("a", 2, work)
    assert (second.task_id, second.generation, second.fn) == ("b", 1, noop)
    assert (first.token.cancelled, second.token.cancelled) == (False, False)
    sched.cancel("a")
    assert (first.token.cancelled, second.token.cancelled) == (True, False)
    assert first.token.wait(0) is True
    sched.complete("b", 1)
    assert second.token.cancelled is False
    run_states = states(sched)
    assert run_states == {"a": "running", "b": "succeeded"}


def test_claim_4_a_chain_of_100000_tasks_is_claimed_one_link_at_a_time() -> None:
    n = 100_000
    sched = TaskScheduler(1)
    sched.submit_many((f"t{i}", (f"t{i - 1}",) if i else (), noop) for i in range(n))
    sched.start()
    for i in range(2000):
        run_one(sched, f"t{i}")
    assert core(sched).counts()[TaskState.SUCCEEDED] == 2000
    assert claimed(sched) == [("t2000", 1)]
