"""RESTART-5, RESTART-6, RESTART-7 on every state of the `crash` scope (`explore.crash`).

The explorer serves each state's path with the reference server on a journal, kills it with a
torn record at the end of the file, and recovers: the recovered core must be the explored one;
the recovered server then takes a close, dies, and is recovered again. The real
journal passes on every state; each broken journal is caught with a shortest trace; a broken
core is judged against itself, not the real one.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from schedspec.conformance.journal_mutants import JOURNAL_MUTANTS
from schedspec.core import Claim, Expire, Start, Submit, initial_state, step
from schedspec.durable.journal import Journal, JsonObject
from schedspec.explore import mutants, scope, search
from schedspec.explore.crash import Recovery

CRASH = scope.find("crash")


class KeepsTornTail(Journal):
    """Recovery drops a torn last line when it reads the journal but leaves it in the file:
    the next record is written onto it, and the recovery after that finds no whole line."""

    def records(self) -> list[JsonObject]:
        data = self.path.read_bytes()
        return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


BROKEN: dict[str, type[Journal]] = {**JOURNAL_MUTANTS, "keeps-torn-tail": KeepsTornTail}

# Each broken journal: what recovery got wrong, at the empty path (only the create recorded).
CAUGHT = {
    # The reply went out before the record reached the file: the close after recovery is gone
    # when the server dies again.
    "ack-before-write": "a close after recovery rebuilt another state: phase: recovered "
    "<Phase.OPEN: 'open'>, explored <Phase.CLOSED: 'closed'>",
    # Recovery drops the last whole record: here the create itself.
    "loses-last-record": "rebuilt another state: no scheduler at all",
    # Recovery replays the last record twice: the close, which the second time changes nothing.
    "replays-twice": "a close after recovery failed: JournalError",
    # The torn line stays in the file, and the next record is written onto it.
    "keeps-torn-tail": "a close after recovery failed: JSONDecodeError",
}


@cache
def _explored(journal: str | None) -> search.Result:
    journal_type = Journal if journal is None else BROKEN[journal]
    return search.explore(CRASH, journal_type=journal_type)


def test_restart_5_recovery_rebuilds_every_explored_state_of_the_crash_scope() -> None:
    """RESTART-5, RESTART-6, RESTART-7: every state, each with a crash after its last request
    and a torn record of the next, is rebuilt exactly from the real journal, and so is the
    state after a close and a second crash."""
    assert CRASH.crash and CRASH.default
    result = _explored(None)
    assert result.violation is None, result.violation
    assert result.states == 1_472


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_restart_6_7_each_broken_journal_is_caught_with_a_shortest_trace(name: str) -> None:
    violation = _explored(name).violation
    assert violation is not None
    assert violation.check == "RecoveryRebuildsTheState"
    assert violation.trace == ()  # the create alone already shows it
    assert CAUGHT[name] in violation.message


def test_restart_7_the_second_crash_is_checked_in_a_started_state_too() -> None:
    """The close after recovery is accepted once started as well, so a journal that leaves the
    torn line in its file is caught there, not only before start."""
    path = [Submit("a", ()), Start(), Claim(1, worker="w1", lease_until=1)]
    core = initial_state(CRASH.limit, CRASH.expiry)
    for event in path:
        core, _ = step(core, event)
    for journal_type, problems in ((Journal, []), (KeepsTornTail, ["JSONDecodeError"])):
        recovery = Recovery(CRASH, step, journal_type)
        try:
            found = recovery.problems(path, core)
        finally:
            recovery.close()
        assert [p for p in problems if not any(p in f for f in found)] == []
        assert bool(found) == bool(problems)
        assert all("after 3 events and a close after recovery" in f for f in found)


def test_restart_7_recovery_names_a_state_the_requests_do_not_lead_to() -> None:
    """The check on one path: it passes the state the path leads to, and names any other."""
    recovery = Recovery(CRASH, step)
    try:
        path = [Submit("a", ())]
        after, _ = step(initial_state(CRASH.limit, CRASH.expiry), path[0])
        assert recovery.problems(path, after) == []
        before = initial_state(CRASH.limit, CRASH.expiry)
        assert recovery.problems(path, before) == [
            "the server holds another state than the explorer after 1 events"
        ]
    finally:
        recovery.close()


def test_the_server_steps_and_recovers_with_the_explorer_s_core() -> None:
    """The server is given the explorer's core: with a broken core (its requeue keeps the
    slot), the state the broken core reaches after an expire is recovered exactly, so the
    crash check does not pass off a difference from the real core as a journal fault; given
    the real core instead, it would."""
    mutant = next(m for m in mutants.mutants() if m.name == "requeue-keeps-slot")
    broken = mutants.mutated_step(mutant)
    path = [Submit("a", ()), Start(), Claim(1, worker="w1", lease_until=1), Expire(1)]
    core = initial_state(CRASH.limit, CRASH.expiry)
    for event in path:
        core, _ = broken(core, event)
    assert core.running == 1  # the slot the broken requeue kept
    for stepper, problems in ((broken, 0), (step, 1)):
        recovery = Recovery(CRASH, stepper)
        try:
            assert len(recovery.problems(path, core)) == problems
        finally:
            recovery.close()
