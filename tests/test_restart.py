"""RESTART: what an in-memory scheduler loses on a crash, and what a durable one would keep.

`TaskScheduler` keeps no journal (RESTART-1; the reference server's is in `test_crash.py`).
These tests check the facts the clauses rest on: nothing outlives the process, the accepted
events in order determine the whole state (so they are what a durable implementation logs), and
every run of a function has its own `(task_id, generation)` key for idempotent side effects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from helpers_clauses import build, claimed, core, noop
from schedspec import (
    GenerationMismatchError,
    OutcomeKind,
    TaskScheduler,
    TaskState,
    UnknownTaskError,
)
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
    """RESTART-3: a task that runs again (here after a failure and a re-submission, as after a
    recovery) is claimed under a new generation: `(task_id, generation)` tells the runs
    apart."""
    sched = build(1, [("a", ())])
    assert claimed(sched) == [("a", 1)]
    sched.fail("a", 1, RuntimeError("lost"))
    assert sched.submit("a", [], lambda token: None) == 2
    (again,) = sched.ready()
    assert (again.task_id, again.generation) == ("a", 2)
    assert sched.state("a") is TaskState.RUNNING


def test_restart_4_a_retry_is_safe_where_the_contract_says_so() -> None:
    """RESTART-4: each request sent twice, as by a caller that never received the first
    reply."""
    sched = build(2, [("a", ()), ("b", ("a",)), ("c", ())])
    assert claimed(sched) == [("a", 1), ("c", 1)]
    # A callback: the retry is answered as already terminal and changes nothing.
    sched.complete("a", 1)
    before = core(sched)
    assert sched.complete("a", 1).kind is OutcomeKind.ALREADY_TERMINAL
    assert core(sched) is before
    # A cancel naming its generation: the request is recorded once.
    first = sched.cancel("c", 1)
    before = core(sched)
    assert sched.cancel("c", 1) == first and core(sched) is before
    # start() and close() sent again change nothing; here start().
    sched.start()
    assert core(sched) is before
    # A conditional submission takes effect once; its retry is told the generation it made.
    assert sched.submit("a", (), noop, if_generation=1) == 2
    before = core(sched)
    with pytest.raises(GenerationMismatchError) as retry:
        sched.submit("a", (), noop, if_generation=1)
    assert (retry.value.generation, retry.value.current) == (1, 2)
    assert core(sched) is before
    # A plain one would have made generation 3: it is not safe to retry.
    assert sched.submit("a", (), noop) == 3
    # Nor is a cancel without a generation: sent again after a re-submission, it names the
    # new version.
    sched.cancel("a")
    assert sched.state("a") is TaskState.CANCELLED
    assert sched.submit("a", (), noop, if_generation=3) == 4
    assert sched.cancel("a").generation == 4
