"""The core against the naive statement of the rules (`schedspec.naive`), step by step.

`DifferentialMachine` drives `schedspec.core.step` and `schedspec.naive.step` with the same
events, compared through the explorer's bridge (`explore.differential.divergence`),
drawn from `schedspec.strategies` (bogus ones included) and from the machine's own knowledge of
which versions run and which were claimed (so that real completions, duplicates and stale
callbacks are common, not lucky). After every step it asserts that both gave the same reply and
the same notifications in the same order (EFFECT-2), that both changed the state or neither did,
that every task's current facts (state, generation, sequence number, flags, remaining count,
dependencies, detail) agree, and
that the core's invariants (`validate_state`, `check_transition`) hold, each version was claimed
at most once (CLAIM-4), running stays within the limit (CLAIM-5) and a rejected event returned
the very same state object (SUB-3).

Every reply is compared, rejections included, so the order in which the checks run (SUB-11 for
submit, DONE-7 for callbacks) and the generations each submission creates (VER-1) are checked
on every step too.

The other tests check EFFECT-4 (a batch means its members in sequence) and that the outputs do
not depend on the hash seed (VER-3).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from schedspec import naive
from schedspec.core import (
    Cancel,
    Claim,
    Close,
    Complete,
    CompleteBatch,
    ConfirmCancel,
    Event,
    Expire,
    Fail,
    Heartbeat,
    Start,
    State,
    Submit,
    SubmitBatch,
    initial_state,
    step,
)
from schedspec.core.effects import Batched, Claimed, Effect, Rejected, Reply, Submitted
from schedspec.core.invariants import check_transition, validate_state
from schedspec.explore.differential import divergence, same_facts
from schedspec.strategies import (
    callback_events,
    cancel_events,
    claim_events,
    complete_batches,
    dags,
    deadlines,
    expire_events,
    graphs,
    heartbeat_events,
    number_events,
    operation_sequences,
    submit_batches,
    submit_events,
)

ROOT = Path(__file__).resolve().parent.parent
IDS = ("a", "b", "c", "d", "e")
MISSING = "z"  # named as a dependency by some graphs, never submitted
STEPS_RUN = [0]  # steps driven through both implementations in this process


def observe(state: State) -> dict[str, Any]:
    """Everything the queries say about a core state (QUERY-1, QUERY-2), comparable by `==`."""
    tasks = {
        t: (
            state.state_of(t),
            state.generation_of(t),
            state.cause_of(t),
            state.detail_of(t),
        )
        for t in state.task_ids()
    }
    return {
        "phase": state.phase,
        "running": state.running,
        "counts": state.counts(),
        "tasks": dict(sorted(tasks.items())),
    }


def all_rejected(reply: Reply) -> bool:
    """A rejection, or a batch all of whose members were rejected: nothing may change (SUB-3)."""
    if isinstance(reply, Rejected):
        return True
    return isinstance(reply, Batched) and all(all_rejected(r) for r in reply.replies)


class Lockstepped(RuleBasedStateMachine):
    """Both implementations driven with the same events, compared after each (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.core = initial_state(0)
        self.world = naive.initial(0)
        self.next_event_id = 1
        self.steps = 0
        self.claims: dict[tuple[str, int], int] = {}  # version -> times claimed (CLAIM-4)

    # Driving both implementations.

    def apply(self, event: Event) -> tuple[Effect, ...]:
        (numbered,) = number_events([event], self.next_event_id)
        self.next_event_id += 1 + len(
            numbered.submissions
            if isinstance(numbered, SubmitBatch)
            else numbered.completions
            if isinstance(numbered, CompleteBatch)
            else ()
        )
        before = self.core
        after, effects = step(before, numbered)
        self.world, found = divergence(before, after, effects, numbered, self.world)
        assert found is None, f"event {numbered!r}: {found}"
        if all_rejected(effects[0]):
            assert after is before, f"rejected {numbered!r} but the state changed (SUB-3)"
        problems = check_transition(before, after, effects, numbered)
        assert not problems, problems
        for e in effects:
            if isinstance(e, Claimed):
                for g in e.grants:
                    key = (g.task_id, g.generation)
                    self.claims[key] = self.claims.get(key, 0) + 1
                    assert self.claims[key] == 1, f"{key} claimed twice (CLAIM-4)"
        self.core = after
        self.steps += 1
        STEPS_RUN[0] += 1
        return effects

    def running_versions(self) -> list[tuple[str, int]]:
        return [(t, v.generation) for t, v in self.world.tasks.items() if v.state == naive.RUNNING]

    # Invariants, after every rule.

    @invariant()
    def same_task_states(self) -> None:
        assert same_facts(self.core, self.world) is None
        for t in (*IDS, MISSING):
            assert (self.core.facts(t) is None) == (naive.facts(self.world, t) is None), t  # type: ignore[arg-type]

    @invariant()
    def core_invariants_hold(self) -> None:
        assert validate_state(self.core) == []

    @invariant()
    def running_within_limit(self) -> None:
        assert self.core.running <= self.core.limit  # CLAIM-5


class DifferentialMachine(Lockstepped):
    # Rules.

    @initialize(
        limit=st.sampled_from([0, 1, 2, 2, 3]),
        graph=st.one_of(dags(IDS), dags(IDS), graphs(IDS), graphs(IDS, missing=(MISSING,))),
        as_batch=st.booleans(),
        expiry=st.sampled_from(["requeue", "fail"]),
    )
    def submit_graph(
        self, limit: int, graph: list[tuple[str, tuple[str, ...]]], as_batch: bool, expiry: str
    ) -> None:
        self.core = initial_state(limit, expiry)
        self.world = naive.initial(limit, expiry)
        submissions = [Submit(t, deps, f"fn-{t}") for t, deps in graph]
        if as_batch:
            self.apply(SubmitBatch(tuple(submissions)))
        else:
            for s in submissions:
                self.apply(s)

    @rule(event=submit_events(IDS))
    def submit(self, event: Submit) -> None:
        self.apply(event)

    @rule(event=submit_batches(IDS))
    def submit_batch(self, event: SubmitBatch) -> None:
        self.apply(event)

    @rule(task=st.sampled_from(IDS), deps=st.sampled_from([(), (IDS[0],), (MISSING,)]))
    def submit_on_the_current_generation_twice(self, task: str, deps: tuple[str, ...]) -> None:
        """SUB-12, RESTART-4: a conditional submission on the current generation, sent again as
        by a caller that lost the reply: the retry of one that took effect changes nothing."""
        current = self.core.generation_of(task) or 0  # type: ignore[arg-type]
        first = self.apply(Submit(task, deps, "fn", if_generation=current))
        before = self.core
        self.apply(Submit(task, deps, "fn", if_generation=current))
        if isinstance(first[0], Submitted):
            assert self.core is before

    @rule()
    def start(self) -> None:
        self.apply(Start())

    @rule(event=claim_events(leases=True))
    def claim(self, event: Claim) -> None:
        self.apply(event)

    # Leases (LEASE-*): deadlines and `now`s on one small clock, so that they meet.

    @rule(event=heartbeat_events(IDS))
    def bogus_heartbeat(self, event: Heartbeat) -> None:
        self.apply(event)

    @rule(event=expire_events())
    def expire(self, event: Expire) -> None:
        self.apply(event)

    @rule(event=callback_events(IDS))
    def bogus_callback(self, event: Event) -> None:
        self.apply(event)

    @rule(event=cancel_events(IDS))
    def cancel(self, event: Cancel) -> None:
        self.apply(event)

    @precondition(lambda self: self.running_versions())
    @rule(data=st.data(), kind=st.sampled_from(["complete", "fail", "confirm", "cancel"]))
    def finish_running(self, data: st.DataObject, kind: str) -> None:
        t, g = data.draw(st.sampled_from(self.running_versions()))
        event: Event = {
            "complete": Complete(t, g, f"result-{t}{g}"),
            "fail": Fail(t, g, f"error-{t}{g}"),
            "confirm": ConfirmCancel(t, g),
            "cancel": Cancel(t, data.draw(st.sampled_from([None, g]))),
        }[kind]
        self.apply(event)

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), kind=st.sampled_from(["complete", "fail", "confirm", "cancel"]))
    def replay_claimed(self, data: st.DataObject, kind: str) -> None:
        """A duplicate, conflicting or stale callback for a version claimed before (DONE-4/5)."""
        t, g = data.draw(st.sampled_from(sorted(self.claims)))
        event: Event = {
            "complete": Complete(t, g, "late"),
            "fail": Fail(t, g, "late"),
            "confirm": ConfirmCancel(t, g),
            "cancel": Cancel(t, g),
        }[kind]
        self.apply(event)

    @rule(data=st.data(), bogus=complete_batches(IDS))
    def complete_batch(self, data: st.DataObject, bogus: CompleteBatch) -> None:
        real = [Complete(t, g, "batch") for t, g in [*self.running_versions(), *self.claims]]
        members = list(bogus.completions)
        if real:
            members += data.draw(st.lists(st.sampled_from(real), max_size=4))
        self.apply(CompleteBatch(tuple(data.draw(st.permutations(members)))))

    @precondition(lambda self: self.steps >= 12)
    @rule()
    def close(self) -> None:
        self.apply(Close())


DifferentialMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_effect_2_core_matches_naive_model = DifferentialMachine.TestCase


class LeaseMachine(Lockstepped):
    """LEASE-1..LEASE-6 in lockstep: a started acyclic graph, claims with leases on a small
    clock, heartbeats from live, expired and ended holders, `expire` at any `now`, callbacks
    racing expiry, cancels, re-submissions and close, under both expiry policies. The general
    machine above sends the same events at random; this one reaches the running versions
    whose leases they act on."""

    @initialize(
        limit=st.sampled_from([1, 2, 3]),
        graph=dags(IDS),
        expiry=st.sampled_from(["requeue", "fail"]),
    )
    def start_graph(
        self, limit: int, graph: list[tuple[str, tuple[str, ...]]], expiry: str
    ) -> None:
        self.core = initial_state(limit, expiry)
        self.world = naive.initial(limit, expiry)
        self.apply(SubmitBatch(tuple(Submit(t, deps, f"fn-{t}") for t, deps in graph)))
        self.apply(Start())

    @rule(
        max_tasks=st.sampled_from([None, 1, 2]),
        worker=st.sampled_from([None, "w1", "w2"]),
        until=st.integers(0, 6) | deadlines(valid_only=True),
    )
    def claim_with_lease(self, max_tasks: int | None, worker: str | None, until: object) -> None:
        self.apply(Claim(max_tasks, worker=worker, lease_until=until))

    @precondition(lambda self: self.running_versions())
    @rule(data=st.data())
    def cancel_running(self, data: st.DataObject) -> None:
        """CANCEL-3 before LEASE-3: a version whose cancellation was requested may expire."""
        t, g = data.draw(st.sampled_from(self.running_versions()))
        self.apply(Cancel(t, g))

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), until=deadlines())
    def heartbeat_claimed(self, data: st.DataObject, until: object) -> None:
        """LEASE-2, LEASE-5: a heartbeat from the holder of a version claimed before: live,
        expired and requeued, or ended."""
        t, g = data.draw(st.sampled_from(sorted(self.claims)))
        self.apply(Heartbeat(t, g, until))

    @precondition(lambda self: self.running_versions())
    @rule(now=st.integers(0, 7) | st.sampled_from([2.5, 4.5]))
    def expire(self, now: float) -> None:
        self.apply(Expire(now))

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), kind=st.sampled_from(["complete", "fail", "confirm", "cancel"]))
    def callback_claimed(self, data: st.DataObject, kind: str) -> None:
        """Callbacks and cancels of claimed versions: live ones, and ones whose lease expired
        (fenced, LEASE-5)."""
        t, g = data.draw(st.sampled_from(sorted(self.claims)))
        event: Event = {
            "complete": Complete(t, g, f"result-{t}{g}"),
            "fail": Fail(t, g, f"error-{t}{g}"),
            "confirm": ConfirmCancel(t, g),
            "cancel": Cancel(t, g),
        }[kind]
        self.apply(event)

    @rule(
        task=st.sampled_from(IDS),
        deps=st.lists(st.sampled_from(IDS), unique=True, max_size=2).map(tuple),
    )
    def resubmit(self, task: str, deps: tuple[str, ...]) -> None:
        """SUB-6, SUB-8 around leases: a dependency replaced while its dependent runs, so that
        a requeue meets dependencies pending, failed or blocked (LEASE-3)."""
        self.apply(Submit(task, deps, f"fn-{task}"))

    @precondition(lambda self: self.running_with_deps())
    @rule(data=st.data())
    def resubmit_a_dependency_of_a_running_version(self, data: st.DataObject) -> None:
        """SUB-8 then LEASE-3: the running version keeps the dependency that released it, but
        its requeue is decided from the new one, pending, ready or blocked."""
        t = data.draw(st.sampled_from(self.running_with_deps()))
        dep = data.draw(st.sampled_from(self.world.tasks[t].deps))
        self.apply(Submit(dep, self.world.tasks[dep].deps, f"fn-{dep}"))

    def running_with_deps(self) -> list[str]:
        return [t for t, _ in self.running_versions() if self.world.tasks[t].deps]

    @precondition(lambda self: self.steps >= 10)
    @rule()
    def close(self) -> None:
        self.apply(Close())


LeaseMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_lease_1_to_lease_6_core_matches_naive_model = LeaseMachine.TestCase


def test_effect_2_the_differential_run_drove_thousands_of_steps() -> None:
    """Runs after the machine above (pytest keeps the file's order): the run compared the core
    and the naive model on at least 2,000 steps, so a shrinking budget cannot go unnoticed."""
    if STEPS_RUN[0] == 0:
        pytest.skip("run together with test_effect_2_core_matches_naive_model")
    print(f"differential steps: {STEPS_RUN[0]}")
    assert STEPS_RUN[0] >= 2_000, STEPS_RUN[0]


# EFFECT-4: a batch means exactly its members in sequence.


def run(state: State, events: list[Event]) -> State:
    for e in events:
        state, _ = step(state, e)
    return state


def batch_against_sequence(state: State, batch: SubmitBatch | CompleteBatch) -> None:
    members: tuple[Submit, ...] | tuple[Complete, ...] = (
        batch.submissions if isinstance(batch, SubmitBatch) else batch.completions
    )
    batched_state, batched = step(state, batch)
    single_state = state
    replies: list[Reply] = []
    notifications: list[Effect] = []
    for m in members:
        single_state, effects = step(single_state, m)
        replies.append(effects[0])  # type: ignore[arg-type]
        notifications.extend(effects[1:])
    assert batched[0] == Batched(batch.event_id, tuple(replies))
    assert list(batched[1:]) == notifications
    assert observe(batched_state) == observe(single_state)
    assert validate_state(batched_state) == [] == validate_state(single_state)


@settings(max_examples=60, deadline=None)
@given(prefix=operation_sequences(IDS, max_size=12), batch=submit_batches(IDS))
def test_effect_4_submit_batch_equals_sequence(prefix: list[Event], batch: SubmitBatch) -> None:
    state = run(initial_state(2), prefix)
    (numbered,) = number_events([batch], 1000)
    assert isinstance(numbered, SubmitBatch)
    batch_against_sequence(state, numbered)


@settings(max_examples=60, deadline=None)
@given(
    limit=st.integers(1, 4),
    prefix=operation_sequences(IDS, max_size=8),
    bogus=complete_batches(IDS),
    data=st.data(),
)
def test_effect_4_complete_batch_equals_sequence(
    limit: int, prefix: list[Event], bogus: CompleteBatch, data: st.DataObject
) -> None:
    state = run(initial_state(limit), [*prefix, Start(), Claim()])
    versions = [(t, state.generation_of(t)) for t in state.task_ids()]
    real = [Complete(t, g, f"r-{t}") for t, g in versions if g is not None]
    members = [*bogus.completions, *data.draw(st.lists(st.sampled_from(real), max_size=6))]
    batch = CompleteBatch(tuple(data.draw(st.permutations(members))))
    (numbered,) = number_events([batch], 1000)
    assert isinstance(numbered, CompleteBatch)
    batch_against_sequence(state, numbered)


# VER-3: nothing depends on hash or set iteration order.

HASH_SCENARIO = textwrap.dedent(
    """
    import dataclasses

    from schedspec.core import *
    from schedspec.explore.differential import Lockstep

    # Ids whose str hashes vary with the seed; a wide fan-out so that releases, blockings and
    # claims each involve many versions at once; a cycle and a missing id for start's reports.
    ids = [f"task-{n}-{'x' * (n % 7)}" for n in range(60)]
    events = [Submit("root", ()), Submit("other", ())]
    events += [Submit(t, ("root", "other") if n % 2 else ("other", "root")) for n, t in
               enumerate(reversed(ids))]
    events += [Submit("loop-b", ("loop-a",)), Submit("loop-a", ("loop-b", "nowhere"))]
    events += [Start(), Submit("nowhere", ()), Start(), Submit("loop-a", ()), Start()]
    events += [Claim(), Complete("root", 1), Complete("other", 1), Claim(3), Claim()]
    events += [Submit(t, ("root",)) for t in ids[::5]]
    events += [Fail(ids[1], 1), Cancel("root"), Submit("root", (ids[3],)), Close()]
    events += [Complete(t, 1) for t in ids]
    lockstep = Lockstep(7)
    for n, event in enumerate(events):
        event = dataclasses.replace(event, event_id=n)
        effects, difference = lockstep.send(event)
        assert difference is None, difference
        print(n, effects)
    state = lockstep.core
    print(sorted(state.counts().items()), list(state.task_ids()))
    """
)


def transcript(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT / "src")])
    done = subprocess.run(
        [sys.executable, "-c", HASH_SCENARIO],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ver_3_outputs_do_not_depend_on_the_hash_seed() -> None:
    first, second = transcript("0"), transcript("4242")
    assert first.count("\n") > 100
    assert "Grant(" in first and "Cycles(" in first and "Transitioned(" in first
    assert first == second
