"""RESTART-5, RESTART-6, RESTART-7 on every state of the `crash` scope (`explore.crash`).

The explorer serves each state's path with the reference server on a journal, kills it with a
torn record at the end of the file, and recovers: the recovered core must be the explored one.
The real journal passes on every state; each broken journal of `conformance.journal_mutants`
is caught with a shortest trace; a broken core is judged against itself, not the real one.
"""

from __future__ import annotations

from functools import cache

import pytest

from schedspec.conformance.journal_mutants import JOURNAL_MUTANTS
from schedspec.core import Submit, initial_state, step
from schedspec.durable.journal import Journal
from schedspec.explore import mutants, scope, search
from schedspec.explore.crash import Recovery

CRASH = scope.find("crash")

# Each broken journal: the moves of its shortest counterexample, and what recovery rebuilt.
CAUGHT = {
    # The reply went out before the record reached the file: the first submission is gone.
    "ack-before-write": (["Submit('a', [])"], "'a': recovered None"),
    # Recovery drops the last whole record: here the create itself.
    "loses-last-record": ([], "no scheduler at all"),
    # Recovery replays the last record twice: a second generation of a. (A create replayed
    # twice makes the same empty scheduler, so the empty path passes.)
    "replays-twice": (["Submit('a', [])"], "'a': recovered Facts(state=<TaskState.READY"),
}


@cache
def _explored(journal: str | None) -> search.Result:
    journal_type = Journal if journal is None else JOURNAL_MUTANTS[journal]
    return search.explore(CRASH, journal_type=journal_type)


def test_restart_5_recovery_rebuilds_every_explored_state_of_the_crash_scope() -> None:
    """RESTART-5, RESTART-6, RESTART-7: every state, each with a crash after its last request
    and a torn record of the next, is rebuilt exactly from the real journal."""
    assert CRASH.crash and CRASH.default
    result = _explored(None)
    assert result.violation is None, result.violation
    assert result.states == 1_192


@pytest.mark.parametrize("name", sorted(JOURNAL_MUTANTS))
def test_restart_6_7_each_broken_journal_is_caught_with_a_shortest_trace(name: str) -> None:
    moves, rebuilt = CAUGHT[name]
    violation = _explored(name).violation
    assert violation is not None
    assert violation.check == "RecoveryRebuildsTheState"
    assert [s.move.describe() for s in violation.trace] == moves
    assert rebuilt in violation.message
    assert set(CAUGHT) == set(JOURNAL_MUTANTS)


def test_restart_7_recovery_drops_the_torn_record_and_the_check_names_a_wrong_state() -> None:
    """The check itself, on one state: with the real journal it reports nothing; told that the
    state is the one before the last request, it names the difference."""
    recovery = Recovery(CRASH, step)
    try:
        after, _ = step(initial_state(CRASH.limit, CRASH.expiry), Submit("a", ()))
        assert recovery.problems([Submit("a", ())], after) == []
        before = initial_state(CRASH.limit, CRASH.expiry)
        [problem] = recovery.problems([Submit("a", ())], before)
        assert problem == "the server holds another state than the explorer after 1 events"
    finally:
        recovery.close()


def test_the_server_recovers_with_the_explorer_s_core_so_a_broken_core_is_judged_by_its_rule() -> (
    None
):
    """A broken core on the crash scope is reported by the check it breaks: the server steps
    and recovers with the same broken core, so recovery agrees with it, and the crash check
    does not pass off a difference from the real core as a journal fault."""
    mutant = next(m for m in mutants.mutants() if m.name == "requeue-keeps-slot")
    result = search.explore(CRASH, step=mutants.mutated_step(mutant))
    assert result.violation is not None
    assert result.violation.check == "SlotsFreedOnExpiry"
