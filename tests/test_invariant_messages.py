"""Every problem a check of `core/invariants.py` can report, on a planted corruption, word for
word.

`tests/test_invariants.py` shows that each invariant catches a corruption; the explorer only
ever runs the checks on a correct core, where they report nothing. So the branches that build
a report, and the report itself, were checked by no one: the mutation score found them (a
message that names the wrong task, or raises while naming it, survived every run). Each case
here builds a valid state through `step`, corrupts one fact as a bookkeeping bug would, and
asserts the check's whole report, written out by hand from the check's docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from schedspec.core import (
    Cancel,
    Claim,
    Complete,
    CompleteBatch,
    Start,
    State,
    Submit,
    step,
)
from schedspec.core import invariants as inv
from schedspec.core.effects import Claimed, Grant, Submitted
from schedspec.core.state import (
    ABSENT,
    CANCEL_REQUESTED,
    CLAIMED,
    PENDING,
    READY,
    REMAINING_ONE,
    RUNNING,
)
from schedspec.core.types import Cause, Phase, TaskState
from test_invariants import at, built


def with_cell(s: State, task_id: str, cell: int) -> State:
    return replace(s, cells=s.cells.set(at(s, task_id), cell))


def with_version(s: State, task_id: str, version: tuple[object, ...]) -> State:
    return replace(s, versions=s.versions.set(at(s, task_id), version))


ONE = [Submit("a", ())]
STARTED = [Submit("a", ()), Start()]
RUNNING_A = [Submit("a", ()), Start(), Claim()]
B_ON_A = [Submit("b", ("a",))]  # a is only named: ABSENT
A_DONE_B_WAITS = [Submit("a", ()), Submit("b", ("a",)), Start(), Claim(), Complete("a", 1)]


def _dropped_from_index(s: State) -> State:
    """The index bucket that holds 'a' with its slot emptied."""
    for b, bucket in enumerate(s.index):
        if "a" in bucket[0::2]:
            k = bucket.index("a")
            emptied = (*bucket[:k], None, -1, *bucket[k + 2 :])
            return replace(s, index=s.index.set(b, emptied))
    raise AssertionError("'a' is in no bucket")


def _seventy_ready() -> State:
    return built(1, [*(Submit(f"t{k}", ()) for k in range(70)), Start()])


# (name, check, the corrupted state, the check's whole report)
STATE_CASES: list[tuple[str, Callable[[State], list[str]], Callable[[], State], list[str]]] = [
    (
        "a column one entry too long",
        inv.TypeOK,
        lambda: (lambda s: replace(s, data=s.data.append(None)))(built(1, ONE)),
        ["column data has 2 entries, not 1"],
    ),
    (
        "a task lost from the index",
        inv.TypeOK,
        lambda: _dropped_from_index(built(1, ONE)),
        ["index holds [] in 16 slots, not 0..0", "index does not map 'a' to 0"],
    ),
    (
        "a task named only as a dependency with a generation",
        inv.TypeOK,
        lambda: with_version(built(1, B_ON_A), "a", ("a", 1, -1)),
        [f"absent task 'a' has facts: {ABSENT}, ('a', 1, -1)"],
    ),
    (
        "a version of generation 0",
        inv.TypeOK,
        lambda: with_version(built(1, STARTED), "a", ("a", 0, 0)),
        ["'a' has generation 0"],
    ),
    (
        "a ready version with a remaining count",
        inv.TypeOK,
        lambda: with_cell(built(1, STARTED), "a", READY | REMAINING_ONE),
        ["'a' is ready with a remaining count"],
    ),
    (
        "a ready version with a cancel request",
        inv.TypeOK,
        lambda: with_cell(built(1, STARTED), "a", READY | CANCEL_REQUESTED),
        ["'a' is ready with a cancel request"],
    ),
    (
        "a running version never claimed",
        inv.TypeOK,
        lambda: with_cell(built(1, RUNNING_A), "a", RUNNING),
        ["'a' is running but was never claimed"],
    ),
    (
        "a running count with nothing running",
        inv.RunningWithinLimit,
        lambda: replace(built(1, STARTED), running=1),
        ["running count 1, recount 0"],
    ),
    (
        "a second-level ready bit with nothing below it",
        inv.ReadyIndexMatches,
        lambda: (lambda s: replace(s, ready=(s.ready[0], s.ready[1].set(0, 0b1))))(
            _seventy_ready()
        ),
        [
            f"ready index {list(range(64))}, ready versions {list(range(70))}",
            "ready index level 1 bit 1 disagrees",
        ],
    ),
    (
        "a blocked version whose cause is not a Cause",
        inv.BlockedHasRootCause,
        lambda: (lambda s: replace(s, data=s.data.set(at(s, "b"), "a failed")))(
            built(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Cancel("a")])
        ),
        ["'b' is blocked with cause 'a failed'"],
    ),
    (
        "a blocked version whose cause names an unknown version",
        inv.BlockedHasRootCause,
        lambda: (
            lambda s: replace(
                s,
                data=s.data.set(at(s, "b"), Cause("z", 1, TaskState.FAILED)),  # type: ignore[arg-type]
            )
        )(built(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Cancel("a")])),
        [
            "'b' is blocked by an unknown version"
            " Cause(task_id='z', generation=1, state=<TaskState.FAILED: 'failed'>)"
        ],
    ),
    (
        "closed with a version running",
        inv.NothingQueuedAfterClose,
        lambda: replace(built(1, RUNNING_A), phase=Phase.CLOSED),
        ["closed with 1 running"],
    ),
    (
        "a pending version every dependency of which succeeded",
        inv.PendingWaitsOnlyOnLiveDeps,
        lambda: with_cell(built(1, A_DONE_B_WAITS), "b", PENDING),
        ["'b' is pending with every dependency succeeded"],
    ),
]


@pytest.mark.parametrize(
    ("check", "corrupted", "report"),
    [case[1:] for case in STATE_CASES],
    ids=[case[0] for case in STATE_CASES],
)
def test_a_state_check_reports_the_planted_corruption_word_for_word(
    check: Callable[[State], list[str]], corrupted: Callable[[], State], report: list[str]
) -> None:
    assert check(corrupted()) == report


def test_the_claimed_flag_cases_of_type_ok_are_reported_apart() -> None:
    """TypeOK reports a running version without the flag and a ready one with it, each once."""
    s = built(2, [Submit("a", ()), Submit("b", ()), Start(), Claim(1)])
    bad = with_cell(with_cell(s, "a", RUNNING), "b", READY | CLAIMED)
    assert inv.TypeOK(bad) == [
        "'a' is running but was never claimed",
        "'b' is ready but was claimed",
    ]


def test_nothing_claimed_or_submitted_after_close_names_each_breach() -> None:
    """CLOSE-1, SUB-10, CLAIM-1: a claim, a submission and a phase that goes back are each
    reported, in that order."""
    before = replace(built(1, STARTED), phase=Phase.CLOSING)
    after = replace(before, phase=Phase.STARTED)
    effects = (
        Claimed(0, (Grant("a", 1, None),)),  # type: ignore[arg-type]
        Submitted(0, "b", 1, TaskState.READY, None),  # type: ignore[arg-type]
    )
    assert inv.NothingClaimedOrSubmittedAfterClose(before, after, effects, Claim()) == [
        "claimed ['a'] while closing",
        "accepted a submission of 'b' while closing",
        "phase went back from closing to started",
    ]
    closed = replace(before, phase=Phase.CLOSED)
    assert inv.NothingClaimedOrSubmittedAfterClose(closed, before, (), Claim()) == [
        "phase went back from closed to closing"
    ]


def test_a_batch_of_completions_names_every_version_it_calls_back() -> None:
    """EFFECT-2, DONE-*: a completion batch names each of its versions, so a batch that ends
    one of them is no stale callback, and one naming another generation is."""
    before = built(2, [Submit("a", ()), Submit("b", ()), Start(), Claim()])
    event = CompleteBatch((Complete("a", 1), Complete("b", 1)))
    after, effects = step(before, event)
    assert inv.StaleCallbackReleasesNothing(before, after, effects, event) == []
    other = CompleteBatch((Complete("a", 2), Complete("b", 2)))
    assert inv.StaleCallbackReleasesNothing(before, after, effects, other) != []


def test_a_claim_of_a_refused_size_is_left_to_the_differential() -> None:
    """CLAIM-2: a claim whose size is not an int is refused; ClaimTakesSmallestSeqs leaves a
    claim effect for it to the differential rather than compare it with a rule it has not."""
    before = built(2, [Submit("a", ()), Start()])
    effects = (Claimed(0, (Grant("a", 1, None),)),)  # type: ignore[arg-type]
    assert inv.ClaimTakesSmallestSeqs(before, before, effects, Claim("2")) == []  # type: ignore[arg-type]
    assert inv.ClaimTakesSmallestSeqs(before, before, effects, Claim(0)) == [
        "claimed sequence numbers [0], the rule takes []"
    ]
