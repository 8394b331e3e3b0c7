"""Every state invariant of `core/invariants.py` catches a planted corruption.

Each test builds a valid state through `step`, corrupts one fact with `dataclasses.replace` (the
way a bookkeeping bug would), and checks that the named invariant reports it. An invariant that
no corruption can break would be checking nothing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from schedspec.core import Claim, Complete, Fail, Start, State, Submit, initial_state, step
from schedspec.core import invariants as inv
from schedspec.core.effects import Claimed, Grant, Transitioned
from schedspec.core.state import (
    ABSENT,
    CLAIMED,
    READY,
    REMAINING_ONE,
    RUNNING,
    SUCCEEDED,
    find,
)
from schedspec.core.types import Cause, Phase, TaskState


def built(limit: int, events: list[object]) -> State:
    s = initial_state(limit)
    for e in events:
        s, _ = step(s, e)  # type: ignore[arg-type]
    assert inv.validate_state(s) == []
    return s


DIAMOND = [Submit("a", ()), Submit("b", ("a",)), Submit("c", ("a",)), Submit("d", ("b", "c"))]


def at(s: State, task_id: str) -> int:
    """The task index of `task_id`, submitted or only named as a dependency."""
    i = find(s.index, task_id)
    assert i is not None
    return i


def flagged(s: State) -> set[str]:
    return {p.split(":")[0] for p in inv.validate_state(s)}


def test_validate_state_runs_every_invariant() -> None:
    assert len(inv.INVARIANTS) == 11


def test_type_ok_catches_a_claimed_flag_on_a_pending_version() -> None:
    s = built(1, DIAMOND)
    i = at(s, "d")
    assert "TypeOK" in flagged(replace(s, cells=s.cells.set(i, s.cells[i] | CLAIMED)))


def test_counts_match_recount_catches_a_lost_decrement() -> None:
    s = built(1, DIAMOND)
    i = at(s, "d")
    bad = replace(s, cells=s.cells.set(i, s.cells[i] + REMAINING_ONE))
    assert flagged(bad) == {"CountsMatchRecount"}


def test_reverse_edges_match_catches_a_stale_edge() -> None:
    s = built(1, DIAMOND)
    bad = replace(s, dependents=s.dependents.set(at(s, "d"), (at(s, "a"),)))
    assert flagged(bad) == {"ReverseEdgesMatch"}


def test_running_within_limit_catches_an_over_claim() -> None:
    s = built(1, [Submit("a", ()), Submit("b", ()), Start(), Claim()])
    i = at(s, "b")
    cell = (s.cells[i] & ~7) | RUNNING | CLAIMED
    bad = replace(s, cells=s.cells.set(i, cell), running=2)
    assert "RunningWithinLimit" in flagged(bad)


def test_ready_index_matches_catches_a_lost_ready_bit() -> None:
    s = built(1, [Submit("a", ())])
    bad = replace(s, ready=(s.ready[0].set(0, 0),))
    assert flagged(bad) == {"ReadyIndexMatches"}


def test_released_versions_have_real_deps_catches_a_release_on_a_missing_id() -> None:
    s = built(1, [Submit("b", ("a",))])
    i = at(s, "b")
    assert s.cells[at(s, "a")] == ABSENT
    bad = replace(s, cells=s.cells.set(i, READY))
    assert "ReleasedVersionsHaveRealDeps" in flagged(bad)


def test_blocked_has_root_cause_catches_a_cause_naming_a_succeeded_version() -> None:
    s = built(1, [*DIAMOND, Start(), Claim(), Fail("a", 1)])
    wrong = Cause("a", 1, TaskState.SUCCEEDED)  # type: ignore[arg-type]
    bad = replace(s, data=s.data.set(at(s, "d"), wrong))
    assert flagged(bad) == {"BlockedHasRootCause"}


def test_nothing_queued_after_close_catches_a_queued_version_while_closing() -> None:
    s = built(1, [Submit("a", ()), Submit("b", ()), Start(), Claim()])
    assert flagged(replace(s, phase=Phase.CLOSING)) == {"NothingQueuedAfterClose"}


def test_graph_valid_when_started_catches_a_cycle_and_a_missing_id() -> None:
    cyclic = built(1, [Submit("a", ("b",)), Submit("b", ("a",))])
    assert flagged(replace(cyclic, phase=Phase.STARTED)) == {"GraphValidWhenStarted"}
    missing = built(1, [Submit("a", ("z",))])
    assert flagged(replace(missing, phase=Phase.STARTED)) == {"GraphValidWhenStarted"}


@pytest.mark.parametrize("corruption", ["unannounced", "illegal release", "claimed not ready"])
def test_check_transition_catches_each_planted_step(corruption: str) -> None:
    before = built(2, [*DIAMOND, Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    assert inv.check_transition(before, after, effects) == []
    if corruption == "unannounced":
        effects = tuple(e for e in effects if not isinstance(e, Transitioned) or e.task_id != "b")
    elif corruption == "illegal release":
        i = at(after, "d")
        after = replace(after, cells=after.cells.set(i, READY))
        effects = (*effects, Transitioned(0, "d", 1, TaskState.PENDING, TaskState.READY))  # type: ignore[arg-type]
    else:
        after, effects = step(before, Claim())  # nothing is ready: fake a grant of d
        effects = (Claimed(0, (Grant("d", 1, None),)),)  # type: ignore[arg-type]
    assert inv.check_transition(before, after, effects) != []


def test_check_transition_catches_a_terminal_version_that_moved() -> None:
    before = built(1, [Submit("a", ()), Start(), Claim(), Complete("a", 1)])
    i = at(before, "a")
    assert before.cells[i] & 7 == SUCCEEDED
    after = replace(before, cells=before.cells.set(i, (before.cells[i] & ~7) | READY))
    assert any("terminal" in p for p in inv.check_transition(before, after, ()))


def test_stale_callback_releases_nothing_catches_a_callback_ending_another_version() -> None:
    """A `fail` naming generation 1 that ended generation 2 (as a core that ignored the
    generation would) is caught, though its reply looks like an acceptance."""
    before = built(
        1, [Submit("a", ()), Start(), Claim(), Complete("a", 1), Submit("a", ()), Claim()]
    )
    after, effects = step(before, Fail("a", 2))
    assert inv.check_transition(before, after, effects, Fail("a", 2)) == []
    problems = inv.check_transition(before, after, effects, Fail("a", 1))
    assert problems and problems[0].startswith("StaleCallbackReleasesNothing: 'a'@2 left running")
    assert inv.check_transition(before, after, effects, Claim()) != []
