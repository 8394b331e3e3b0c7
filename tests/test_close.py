"""CLOSE: close() cancels queued versions, drains running ones, and reports."""

from __future__ import annotations

import threading
import time

from helpers_clauses import build, claimed, core, noop, record_effects, states, transitions
from schedspec import OutcomeKind, Phase, TaskState, VersionRef
from schedspec.core import Close, initial_state, step
from schedspec.core import effects as fx


def test_close_1_close_moves_to_closing_and_stops_submits_and_claims() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    report = sched.close(timeout=0)
    assert sched.phase is Phase.CLOSING
    assert report.closed is False
    assert sched.ready() == []
    assert sched.state("b") is TaskState.CANCELLED


def test_close_2_queued_versions_are_cancelled_with_reason_shutdown_in_sequence_order() -> None:
    sched = build(
        1, [("run", ()), ("p", ("run",)), ("r", ()), ("q", ("p",)), ("old", ())], start=False
    )
    sched.submit("r", (), noop)  # r@2 now comes after q and old
    sched.start()
    assert claimed(sched) == [("run", 1)]
    with record_effects() as log:
        report = sched.close(timeout=0)
    ((_, effects),) = log
    assert [type(e) for e in effects[:2]] == [fx.Closed, fx.PhaseChanged]
    assert transitions(effects) == [
        ("p", 1, "pending", "cancelled"),
        ("q", 1, "pending", "cancelled"),
        ("old", 1, "ready", "cancelled"),
        ("r", 2, "ready", "cancelled"),
    ]
    assert report.cancelled == (
        VersionRef("p", 1),
        VersionRef("q", 1),
        VersionRef("old", 1),
        VersionRef("r", 2),
    )
    assert report.still_running == (VersionRef("run", 1),)
    snap = sched.snapshot()
    assert [snap.task(t).detail for t in ("p", "q", "old", "r")] == ["shutdown"] * 4
    assert [sched.blocking_cause(t) for t in ("p", "q", "old", "r")] == [None] * 4


def test_close_3_running_versions_drain_and_the_phase_becomes_closed() -> None:
    sched = build(3, [("a", ()), ("b", ()), ("c", ()), ("d", ("a",))])
    claims = sched.ready()
    assert [c.task_id for c in claims] == ["a", "b", "c"]
    sched.close(timeout=0)
    assert sched.cancel("c").kind is OutcomeKind.CANCEL_REQUESTED
    assert claims[2].token.cancelled is True
    assert sched.complete("a", 1).kind is OutcomeKind.ACCEPTED
    assert sched.phase is Phase.CLOSING
    # d was cancelled by close, so completing a released nothing.
    assert sched.state("d") is TaskState.CANCELLED
    assert sched.fail("b", 1, "e").kind is OutcomeKind.ACCEPTED
    assert sched.phase is Phase.CLOSING
    with record_effects() as log:
        assert sched.confirm_cancel("c", 1).kind is OutcomeKind.ACCEPTED
    ((_, effects),) = log
    assert [type(e) for e in effects] == [fx.Answered, fx.Transitioned, fx.PhaseChanged]
    assert sched.phase is Phase.CLOSED
    assert states(sched) == {"a": "succeeded", "b": "failed", "c": "cancelled", "d": "cancelled"}


def test_close_4_close_on_a_closing_or_closed_scheduler_changes_nothing() -> None:
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    first = sched.close(timeout=0)
    assert first.cancelled == (VersionRef("b", 1),)
    before = core(sched)
    second = sched.close(timeout=0)
    assert (second.closed, second.cancelled, second.still_running) == (
        False,
        (),
        (VersionRef("a", 1),),
    )
    assert core(sched) is before
    sched.complete("a", 1)
    closed = core(sched)
    third = sched.close()
    assert (third.closed, third.cancelled, third.still_running) == (True, (), ())
    assert core(sched) is closed
    s = initial_state(1)
    s, _ = step(s, Close())
    again, effects = step(s, Close())
    assert again is s
    assert effects == (fx.Closed(0, False),)


def test_close_5_timeout_zero_returns_at_once_and_none_waits_for_the_drain() -> None:
    """CLOSE-5: timeout zero returns at once and none waits for the drain."""
    sched = build(2, [("a", ()), ("b", ())])
    claims = sched.ready()
    # Nothing completes until close returns, so a close that waited for the drain would never
    # return: returning at all shows it did not wait.
    report = sched.close(timeout=0)
    assert report.closed is False
    assert report.still_running == (VersionRef("a", 1), VersionRef("b", 1))

    def finish() -> None:
        time.sleep(0.05)
        for c in claims:
            sched.complete(c.task_id, c.generation)

    worker = threading.Thread(target=finish)
    worker.start()
    report = sched.close()  # timeout=None waits
    worker.join()
    assert (report.closed, report.cancelled, report.still_running) == (True, (), ())
    assert sched.phase is Phase.CLOSED


def test_close_5_a_short_timeout_gives_up_and_reports_what_still_runs() -> None:
    """CLOSE-5: a short timeout gives up and reports what still runs."""
    sched = build(1, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1)]
    began = time.monotonic()
    report = sched.close(timeout=0.05)
    waited = time.monotonic() - began
    # It waited at least the timeout (a lower bound, which load cannot break); returning at all
    # while `a` never completes shows it did not wait for the drain.
    assert waited >= 0.04
    assert (report.closed, report.cancelled, report.still_running) == (
        False,
        (VersionRef("b", 1),),
        (VersionRef("a", 1),),
    )


def test_close_5_reported_versions_are_in_submission_sequence_order() -> None:
    # `a` is mentioned first, but its current version (a re-submission) is the newest.
    """CLOSE-5: reported versions are in submission sequence order."""
    sched = build(3, [("a", ()), ("b", ()), ("a", ()), ("c", ("a",)), ("d", ())], start=False)
    sched.start()
    assert claimed(sched, 2) == [("b", 1), ("a", 2)]
    report = sched.close(timeout=0)
    assert report.still_running == (VersionRef("b", 1), VersionRef("a", 2))
    assert report.cancelled == (VersionRef("c", 1), VersionRef("d", 1))
    again = sched.close(timeout=0)
    assert again.cancelled == () and again.still_running == report.still_running


def test_close_3_close_5_callbacks_racing_close_are_all_accepted() -> None:
    n = 16
    sched = build(n, [(f"t{i}", ()) for i in range(n)] + [("queued", ("t0",))])
    claims = sched.ready()
    assert len(claims) == n
    go = threading.Barrier(n + 1)
    outcomes: list[object] = []
    lock = threading.Lock()

    def worker(task_id: str, generation: int) -> None:
        go.wait()
        outcome = sched.complete(task_id, generation)
        with lock:
            outcomes.append(outcome.kind)

    threads = [threading.Thread(target=worker, args=(c.task_id, c.generation)) for c in claims]
    for t in threads:
        t.start()
    go.wait()
    report = sched.close(timeout=10)
    for t in threads:
        t.join()
    assert report.closed is True
    assert outcomes == [OutcomeKind.ACCEPTED] * n
    assert sched.phase is Phase.CLOSED
    counts = sched.snapshot().counts()
    assert counts[TaskState.SUCCEEDED] == n
    # `queued` was either cancelled by close or released and then cancelled by close: never run.
    assert sched.state("queued") is TaskState.CANCELLED
    assert report.cancelled == (VersionRef("queued", 1),)
