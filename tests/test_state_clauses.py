"""STATE, VER and PHASE: the states of a version, versions and generations, phases."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers_clauses import build, claimed, core, noop, record_effects, states, transitions
from schedspec import (
    InvalidArgumentError,
    OutcomeKind,
    Phase,
    TaskScheduler,
    TaskState,
)
from schedspec.core import Start, Submit, initial_state, step
from schedspec.core import effects as fx
from schedspec.core.table import PHASE_TRANSITIONS, TRANSITIONS

ROOT = Path(__file__).resolve().parent.parent


def _seven_state_scheduler() -> TaskScheduler:
    sched = build(
        4,
        [
            ("ok", ()),
            ("bad", ()),
            ("stop", ()),
            ("run", ()),
            ("child", ("bad",)),
            ("waiter", ("run",)),
            ("extra", ()),
        ],
    )
    assert claimed(sched) == [("ok", 1), ("bad", 1), ("stop", 1), ("run", 1)]
    sched.complete("ok", 1)
    sched.fail("bad", 1, "boom")
    sched.cancel("stop")
    sched.confirm_cancel("stop", 1)
    return sched


def test_state_1_a_version_is_in_exactly_one_of_seven_states() -> None:
    """STATE-1: a version is in exactly one of seven states."""
    assert [s.value for s in TaskState] == [
        "pending",
        "ready",
        "running",
        "succeeded",
        "failed",
        "cancelled",
        "blocked",
    ]
    sched = _seven_state_scheduler()
    assert states(sched) == {
        "ok": "succeeded",
        "bad": "failed",
        "stop": "cancelled",
        "run": "running",
        "child": "blocked",
        "waiter": "pending",
        "extra": "ready",
    }
    assert sched.snapshot().counts() == dict.fromkeys(TaskState, 1)


def _contract_table() -> set[tuple[str | None, str]]:
    text = (ROOT / "spec" / "contract.md").read_text()
    rows = re.findall(r"^\s*\| (\(new\)|`\w+`) \| `(\w+)` \|", text, flags=re.MULTILINE)
    return {(None if src == "(new)" else src.strip("`"), dst) for src, dst in rows}


def test_state_2_the_transition_table_is_the_contract_table() -> None:
    """STATE-2: the transition table is the contract table."""
    table = {(None if s is None else s.value, t.value) for s, t in TRANSITIONS}
    assert len(_contract_table()) == 11
    assert table == _contract_table()
    assert set(PHASE_TRANSITIONS) == {
        (Phase.OPEN, Phase.STARTED),
        (Phase.OPEN, Phase.CLOSING),
        (Phase.STARTED, Phase.CLOSING),
        (Phase.CLOSING, Phase.CLOSED),
    }


def test_state_2_every_observed_state_change_is_in_the_table() -> None:
    """STATE-2: every observed state change is in the table."""
    legal = {(None if s is None else s.value, t.value) for s, t in TRANSITIONS}
    with record_effects() as log:
        sched = _seven_state_scheduler()
        assert sched.submit("child", ("bad",), noop) == 2
        sched.complete("run", 1)
        assert sched.state("waiter") is TaskState.READY
        assert sched.submit("run", (), noop) == 2
        assert sched.submit("waiter", ("run",), noop) == 2
        sched.cancel("waiter")
        assert sched.submit("waiter", ("run",), noop) == 3
        sched.cancel("run")
        assert sched.state("waiter") is TaskState.BLOCKED
        sched.close()
        assert sched.state("extra") is TaskState.CANCELLED
    seen = {(src, dst) for _, effects in log for _, _, src, dst in transitions(effects)}
    assert seen <= legal
    # This one scenario exercises every row of the table.
    assert seen == legal


def test_state_3_terminal_states_never_change_and_replaced_versions_are_frozen() -> None:
    """STATE-3: terminal states never change and replaced versions are frozen."""
    sched = _seven_state_scheduler()
    before = core(sched)
    for task_id in ("ok", "bad", "stop", "child"):
        state = before.state_of(task_id)
        for call in (
            lambda t: sched.cancel(t),
            lambda t: sched.cancel(t, 1),
        ):
            outcome = call(task_id)
            assert outcome.kind is OutcomeKind.ALREADY_TERMINAL
            assert outcome.state is state
        assert sched.state(task_id) is state
    for task_id in ("ok", "bad", "stop"):
        assert sched.complete(task_id, 1).kind is OutcomeKind.ALREADY_TERMINAL
        assert sched.fail(task_id, 1, "late").kind is OutcomeKind.ALREADY_TERMINAL
        assert sched.confirm_cancel(task_id, 1).kind is OutcomeKind.ALREADY_TERMINAL
    assert core(sched) is before
    # Replacing a terminal version freezes it: every callback naming it is stale.
    assert sched.submit("ok", (), noop) == 2
    for call in (sched.complete, sched.confirm_cancel, sched.cancel):
        outcome = call("ok", 1)
        assert outcome.kind is OutcomeKind.STALE_GENERATION
        assert outcome.state is None
    assert sched.state("ok") is TaskState.READY


def test_state_4_ready_exactly_when_current_unclaimed_and_all_deps_succeeded() -> None:
    """STATE-4: ready exactly when current unclaimed and all deps succeeded."""
    sched = build(2, [("a", ()), ("b", ()), ("c", ("a", "b")), ("d", ("a",))], start=False)
    # Readiness does not depend on the phase.
    assert states(sched) == {"a": "ready", "b": "ready", "c": "pending", "d": "pending"}
    sched.start()
    assert claimed(sched, 1) == [("a", 1)]
    sched.complete("a", 1)
    assert states(sched) == {"a": "succeeded", "b": "ready", "c": "pending", "d": "ready"}
    # The SUB-8 exception: `d` was released by a@1 and stays ready after `a` is replaced.
    assert sched.submit("a", (), noop) == 2
    assert states(sched) == {"a": "ready", "b": "ready", "c": "pending", "d": "ready"}
    assert claimed(sched) == [("b", 1), ("d", 1)]


def test_ver_1_generations_start_at_one_grow_by_one_and_are_never_reused() -> None:
    sched = build(1, [("a", ())], start=False)
    assert sched.generation("a") == 1
    assert sched.submit("a", (), noop) == 2
    with pytest.raises(InvalidArgumentError):
        sched.submit("a", ("x", "x"), noop)
    assert sched.generation("a") == 2
    assert sched.submit("a", (), noop) == 3
    sched.start()
    assert claimed(sched) == [("a", 3)]
    sched.complete("a", 3)
    assert sched.submit("a", (), noop) == 4
    assert sched.complete("a", 3).kind is OutcomeKind.STALE_GENERATION


def test_ver_2_a_callback_is_decided_by_task_id_and_generation_alone() -> None:
    sched = build(2, [("a", ()), ("b", ())])
    assert claimed(sched) == [("a", 1), ("b", 1)]
    assert sched.complete("a", 1, "first").kind is OutcomeKind.ACCEPTED
    again = sched.complete("a", 1, "second")
    assert (again.kind, again.task_id, again.generation, again.state) == (
        OutcomeKind.ALREADY_TERMINAL,
        "a",
        1,
        TaskState.SUCCEEDED,
    )
    assert sched.snapshot().task("a").detail == "first"
    # The same pair on another task is another version.
    assert sched.complete("b", 1, "b-result").kind is OutcomeKind.ACCEPTED
    assert sched.cancel("a", 1).kind is OutcomeKind.ALREADY_TERMINAL


def test_ver_3_every_accepted_submission_gets_a_greater_sequence_number() -> None:
    s = initial_state(3)
    seqs = []
    for task_id in ["c", "a", "b", "a", "c"]:
        s, effects = step(s, Submit(task_id, ()))
        assert isinstance(effects[0], fx.Submitted)
        seqs.append(s.facts(task_id).seq)  # type: ignore[union-attr]
    # A rejected submission takes no number.
    rejected, effects = step(s, Submit("d", ("x", "x")))
    assert rejected is s and isinstance(effects[0], fx.Rejected)
    s, _ = step(s, Submit("d", ()))
    seqs.append(s.facts("d").seq)  # type: ignore[union-attr]
    assert seqs == [0, 1, 2, 3, 4, 5]
    s, _ = step(s, Start())
    sched_order = sorted(s.task_ids(), key=lambda t: s.facts(t).seq)  # type: ignore[union-attr]
    assert sched_order == ["b", "a", "c", "d"]


_HASH_SEED_SCRIPT = textwrap.dedent(
    """
    from schedspec import TaskScheduler, CycleError
    f = lambda: None
    s = TaskScheduler(100, validate=True)
    names = [f"t{i}" for i in range(60)]
    s.submit("hub", (), f)
    for n in reversed(names):
        s.submit(n, ("hub",), f)
    s.submit("z", tuple(names), f)
    s.start()
    out = [c.task_id for c in s.ready()]
    s.complete("hub", 1)
    out += [c.task_id for c in s.ready()]
    s.fail("t7", 1, "x")
    c = TaskScheduler(1)
    for i, n in enumerate(names):
        c.submit(n, tuple(dict.fromkeys([names[(i + 1) % 7], names[(i * 3) % 60]])), f)
    try:
        c.start()
    except CycleError as e:
        out.append(repr(e.cycles))
        out.append(repr(e.unexecutable))
    out.append(repr(s.blocking_cause("z")))
    print(out)
    """
)


def test_ver_3_no_order_depends_on_the_hash_seed() -> None:
    outputs = set()
    for seed in ("0", "1", "12345"):
        done = subprocess.run(
            [sys.executable, "-c", _HASH_SEED_SCRIPT],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
            timeout=60,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "'t59'" in outputs.pop()


def test_phase_1_open_started_closing_closed_in_order() -> None:
    sched = build(1, [("a", ()), ("b", ())], start=False)
    assert sched.phase is Phase.OPEN
    with record_effects() as log:
        sched.start()
        assert sched.phase is Phase.STARTED
        assert claimed(sched) == [("a", 1)]
        sched.close(timeout=0)
        assert sched.phase is Phase.CLOSING
        sched.complete("a", 1)
        assert sched.phase is Phase.CLOSED
    phases = [
        (str(e.source), str(e.target))
        for _, effects in log
        for e in effects
        if isinstance(e, fx.PhaseChanged)
    ]
    assert phases == [("open", "started"), ("started", "closing"), ("closing", "closed")]


def test_phase_1_close_with_nothing_running_is_closed_in_the_same_step() -> None:
    for start in (False, True):
        sched = build(1, [("a", ())], start=start)
        with record_effects() as log:
            report = sched.close()
        assert report.closed is True
        assert sched.phase is Phase.CLOSED
        ((_, effects),) = log
        phases = [(str(e.source), str(e.target)) for e in effects if isinstance(e, fx.PhaseChanged)]
        first = "started" if start else "open"
        assert phases == [(first, "closing"), ("closing", "closed")]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "max_concurrency must be an int, got bool True"),
        (False, "max_concurrency must be an int, got bool False"),
        (-1, "max_concurrency must be >= 0, got -1"),
        (1.5, "max_concurrency must be an int, got float 1.5"),
        ("2", "max_concurrency must be an int, got str '2'"),
        (None, "max_concurrency must be an int, got NoneType None"),
    ],
)
def test_phase_2_max_concurrency_must_be_an_int_at_least_zero(value: object, message: str) -> None:
    """The refusal names the value and, for a value that is no int, its type."""
    with pytest.raises(InvalidArgumentError) as caught:
        TaskScheduler(value)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize("value", [True, False, -1, 1.5, "2", None])
def test_phase_2_the_core_is_never_built_with_a_limit_the_shell_refuses(value: object) -> None:
    """PHASE-2 in the core: `initial_state` is given only a limit the shell has checked (an int,
    not a bool, >= 0); any value the shell refuses above fails its assertion instead of making
    a scheduler."""
    with pytest.raises(AssertionError):
        initial_state(value)  # type: ignore[arg-type]


def test_phase_2_max_concurrency_is_fixed_and_never_raised() -> None:
    sched = build(0, [("a", ())])
    assert sched.max_concurrency == 0
    assert sched.ready() == []
    sched.cancel("a")
    sched.close()
    assert sched.max_concurrency == 0
    assert core(sched).limit == 0
    assert TaskScheduler(0).max_concurrency == 0
