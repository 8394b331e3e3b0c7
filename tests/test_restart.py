"""RESTART: what an in-memory scheduler loses on a crash, and what a durable one would keep.

Durability is not built (RESTART-3); these tests check the three facts the clauses rest on:
nothing outlives the process, the accepted events in order determine the whole state (so they
are what a durable implementation would log), and every run of a function has its own
`(task_id, generation)` key for idempotent side effects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from helpers_clauses import build, claimed
from schedspec import TaskScheduler, TaskState, UnknownTaskError
from schedspec.core import Event, State, initial_state, step
from schedspec.strategies import number_events, operation_sequences
from test_differential import IDS, all_rejected


def test_restart_1_nothing_outlives_the_scheduler_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RESTART-1: a whole lifecycle writes no file, and a new scheduler knows nothing of an
    earlier one."""
    monkeypatch.chdir(tmp_path)
    first = build(2, [("a", ()), ("b", ("a",))])
    (claim,) = first.ready()
    first.complete(claim.task_id, claim.generation)
    first.close(timeout=0)
    assert os.listdir(tmp_path) == []
    second = TaskScheduler(max_concurrency=2)
    with pytest.raises(UnknownTaskError):
        second.state("a")


def facts(state: State) -> tuple[object, ...]:
    """Every fact a durable scheduler would have to restore: phase, running count, and per task
    the current version's state, generation, sequence number, claim and cancellation flags,
    remaining count, dependencies in order, and result, error or cause."""
    tasks = tuple((t, state.facts(t)) for t in sorted(state.task_ids()))
    return (state.phase, state.running, state.ready_seqs(), tasks)


@settings(max_examples=80, deadline=None)
@given(operation_sequences(IDS, max_size=30))
def test_restart_2_the_accepted_events_in_order_rebuild_the_whole_state(
    events: list[Event],
) -> None:
    """A log of the accepted operations is enough to recover: replayed in order into a fresh
    core they give the very same facts, because `step` is a pure function and a rejected event
    changes nothing (SUB-3). This is the log RESTART-2 says a durable scheduler must keep."""
    state, log = initial_state(2), []
    for event in number_events(events):
        state, effects = step(state, event)
        if not all_rejected(effects[0]):  # type: ignore[arg-type]
            log.append(event)
    replayed = initial_state(2)
    for event in log:
        replayed, _ = step(replayed, event)
    assert facts(replayed) == facts(state)


def test_restart_3_each_run_of_a_function_has_its_own_idempotency_key() -> None:
    """A task that runs again (here after a failure and a re-submission, as after a recovery)
    is claimed under a new generation: `(task_id, generation)` tells the runs apart."""
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    sched.fail("a", 1, RuntimeError("lost"))
    assert sched.submit("a", [], lambda token: None) == 2
    (again,) = sched.ready()
    assert (again.task_id, again.generation) == ("a", 2)
    assert sched.state("a") is TaskState.RUNNING
