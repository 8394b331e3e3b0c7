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
from schedspec.core import invariants as inv
from schedspec.core.effects import (
    Claimed,
    Effect,
    Expired,
    Grant,
    Rejected,
    Submitted,
    Transitioned,
)
from schedspec.core.state import (
    ABSENT,
    BLOCKED,
    CANCEL_REQUESTED,
    CLAIMED,
    PENDING,
    READY,
    REMAINING_ONE,
    RUNNING,
    STATE_MASK,
    SUCCEEDED,
)
from schedspec.core.types import Cause, Phase, TaskState
from test_invariants import DIAMOND, at, built
from test_lease import leased


def with_cell(s: State, task_id: str, cell: int) -> State:
    return replace(s, cells=s.cells.set(at(s, task_id), cell))


def with_version(s: State, task_id: str, version: tuple[object, ...]) -> State:
    return replace(s, versions=s.versions.set(at(s, task_id), version))


def with_data(s: State, task_id: str, detail: object) -> State:
    return replace(s, data=s.data.set(at(s, task_id), detail))


def with_dependents(s: State, task_id: str, dependents: tuple[int, ...]) -> State:
    return replace(s, dependents=s.dependents.set(at(s, task_id), dependents))


ONE = [Submit("a", ())]
STARTED = [Submit("a", ()), Start()]
RUNNING_A = [Submit("a", ()), Start(), Claim()]
B_ON_A = [Submit("b", ("a",))]  # a is only named: ABSENT
A_DONE_B_WAITS = [Submit("a", ()), Submit("b", ("a",)), Start(), Claim(), Complete("a", 1)]
A_DONE = [Submit("a", ()), Start(), Claim(), Complete("a", 1)]
B_ON_A_CANCELLED = [Submit("a", ()), Submit("b", ("a",)), Start(), Cancel("a")]
B_AND_C_ON_A_CANCELLED = [
    Submit("a", ()),
    Submit("b", ("a",)),
    Submit("c", ("a",)),
    Start(),
    Cancel("a"),
]
# A checked task after one that is not: x, pending behind the unsubmitted y, comes first (task
# indices in order of first mention: x 0, y 1, b 2, a 3), so a check that stopped at the first
# entry it skips, instead of going on to the next, would never look at b.
X_WAITS_THEN_B_ON_A = [Submit("x", ("y",)), Submit("b", ("a",))]


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


def _seventy_one_running_sixty_nine_ready() -> State:
    """70 tasks, t0 claimed: fewer ready versions than sequence numbers, so a walk of the ready
    index for all of them reads every word the summary points to (none is left unread)."""
    return built(1, [*(Submit(f"t{k}", ()) for k in range(70)), Start(), Claim()])


def _ready_past_the_first_middle_word() -> State:
    """4097 ready versions: three levels, 65 words of leaves, and a second word in the middle
    level whose bit 0 stands for leaf word 64 (sequence numbers 4096..4159)."""
    s = built(1, [*(Submit(f"t{k}", ()) for k in range(4097)), Start()])
    assert [len(level) for level in s.ready] == [65, 2, 1]
    return s


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
        # Leaf words 0 and 1 exist; a summary bit for word 2 points past them. The walk of the
        # index reads that word as empty (it holds nothing ready), and only the summary check
        # reports it: neither raises.
        "a summary bit past the last leaf word",
        inv.ReadyIndexMatches,
        lambda: (lambda s: replace(s, ready=(s.ready[0], s.ready[1].set(0, 0b111))))(
            _seventy_one_running_sixty_nine_ready()
        ),
        ["ready index level 1 bit 2 disagrees"],
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
    (
        "a version of generation 0 after a task named only as a dependency",
        inv.TypeOK,
        # b 0, a 1 (absent, skipped), c 2
        lambda: with_version(built(1, [*B_ON_A, Submit("c", ())]), "c", ("c", 0, 1)),
        ["'c' has generation 0"],
    ),
    (
        "a pending version that missed a decrement",
        inv.CountsMatchRecount,
        lambda: with_cell(built(1, DIAMOND), "d", PENDING | 3 * REMAINING_ONE),
        ["'d': remaining 3, recount 2"],
    ),
    (
        "a lost reverse edge",
        inv.ReverseEdgesMatch,
        # a 0, b 1, c 2, d 3: a's dependents are b and c
        lambda: with_dependents(built(1, DIAMOND), "a", (1,)),
        ["dependents of 'a': kept [1], expected [1, 2]"],
    ),
    (
        "more running than the limit",
        inv.RunningWithinLimit,
        lambda: replace(built(1, RUNNING_A), limit=0),
        ["1 running, limit 0"],
    ),
    (
        "a lost word in the middle of a three-level ready index",
        inv.ReadyIndexMatches,
        lambda: (lambda s: replace(s, ready=(s.ready[0], s.ready[1].set(1, 0), s.ready[2])))(
            _ready_past_the_first_middle_word()
        ),
        [
            f"ready index {list(range(4096))}, ready versions {list(range(4097))}",
            "ready index level 1 bit 64 disagrees",
            "ready index level 2 bit 1 disagrees",
        ],
    ),
    (
        "a release on an unsubmitted dependency, after a pending version",
        inv.ReleasedVersionsHaveRealDeps,
        lambda: with_cell(built(1, X_WAITS_THEN_B_ON_A), "b", READY),
        ["'b' released with dependency 'a' unmet"],
    ),
    (
        "two blocked versions, with a cause that is not a Cause and one naming no version",
        inv.BlockedHasRootCause,
        lambda: with_data(
            with_data(built(1, B_AND_C_ON_A_CANCELLED), "b", "a failed"),
            "c",
            Cause("z", 1, TaskState.FAILED),  # type: ignore[arg-type]
        ),
        [
            "'b' is blocked with cause 'a failed'",
            "'c' is blocked by an unknown version"
            " Cause(task_id='z', generation=1, state=<TaskState.FAILED: 'failed'>)",
        ],
    ),
    (
        "blocked versions whose causes name an unhashable id and a generation that is not one",
        inv.BlockedHasRootCause,
        lambda: with_data(
            with_data(built(1, B_AND_C_ON_A_CANCELLED), "b", Cause(["a"], 1, TaskState.CANCELLED)),  # type: ignore[arg-type]
            "c",
            Cause("a", "1", TaskState.CANCELLED),  # type: ignore[arg-type]
        ),
        [
            "'b' is blocked by an unknown version"
            " Cause(task_id=['a'], generation=1, state=<TaskState.CANCELLED: 'cancelled'>)",
            "'c' is blocked by an unknown version"
            " Cause(task_id='a', generation='1', state=<TaskState.CANCELLED: 'cancelled'>)",
        ],
    ),
    (
        "a blocked version whose cause gives its version the wrong state",
        inv.BlockedHasRootCause,
        # a was cancelled, not failed
        lambda: with_data(
            built(1, B_ON_A_CANCELLED),
            "b",
            Cause("a", 1, TaskState.FAILED),  # type: ignore[arg-type]
        ),
        [
            "'b': cause Cause(task_id='a', generation=1, state=<TaskState.FAILED: 'failed'>)"
            " is not in that state"
        ],
    ),
    (
        "closing with nothing running, never closed",
        inv.NothingQueuedAfterClose,
        lambda: replace(built(1, A_DONE), phase=Phase.CLOSING),
        ["closing with nothing running"],
    ),
    (
        "started past a cycle of a cancelled and a blocked version",
        inv.GraphValidWhenStarted,
        # START-2: start refuses this cycle whatever its members' states
        lambda: replace(
            built(1, [Submit("a", ("b",)), Submit("b", ("a",)), Cancel("a")]), phase=Phase.STARTED
        ),
        ["cycle among ['a', 'b'] while started"],
    ),
    (
        "a pending version behind a failed dependency",
        inv.PendingWaitsOnlyOnLiveDeps,
        lambda: with_cell(
            built(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Claim(), Fail("a", 1)]),
            "b",
            PENDING | REMAINING_ONE,
        ),
        ["'b' is pending behind unsuccessful ['a']"],
    ),
    (
        "a release behind an unsubmitted dependency, after a pending version",
        inv.ReleasedOnlyAfterDeps,
        lambda: with_cell(built(1, X_WAITS_THEN_B_ON_A), "b", READY),
        ["'b' was released while 'a', submitted before it, is unsubmitted"],
    ),
    (
        "a release behind a running dependency",
        inv.ReleasedOnlyAfterDeps,
        lambda: with_cell(
            built(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Claim()]), "b", READY
        ),
        ["'b' was released while 'a', submitted before it, is running"],
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


def test_a_released_version_that_depends_on_itself_is_reported_once_by_the_owner_check() -> None:
    """STATE-4: a released version that depends on itself is ReleasedVersionsHaveRealDeps's
    case ("never ... itself as one"); ReleasedOnlyAfterDeps reports dependencies submitted
    before the released version, and a version is not submitted before itself. Started, the
    self-loop is also a cycle (START-2)."""
    s = built(1, [Submit("a", ("a",))])
    bad = replace(with_cell(s, "a", RUNNING | CLAIMED), running=1, phase=Phase.STARTED)
    assert inv.validate_state(bad) == [
        "ReleasedVersionsHaveRealDeps: 'a' released with dependency 'a' unmet",
        "GraphValidWhenStarted: cycle among ['a'] while started",
    ]


def test_a_three_level_ready_index_in_its_second_middle_word_is_consistent() -> None:
    """ReadyIndexMatches finds the children of word `w` of a level at `64 * w ...`: on a
    correct index past 4096 ready versions, where the middle level has two words, it reports
    nothing (the corrupted one is in STATE_CASES)."""
    assert inv.ReadyIndexMatches(_ready_past_the_first_middle_word()) == []


def test_released_only_when_deps_succeeded_names_the_release_and_its_unmet_dependencies() -> None:
    """STATE-4, DONE-1: d released when a completed, while b and c are only ready."""
    before = built(2, [*DIAMOND, Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    after = with_cell(after, "d", READY)
    effects = (*effects, Transitioned(0, "d", 1, TaskState.PENDING, TaskState.READY))  # type: ignore[arg-type]
    assert inv.ReleasedOnlyWhenDepsSucceeded(before, after, effects, Complete("a", 1)) == [
        "released 'd' with unmet dependencies ['b', 'c']"
    ]


def test_released_only_when_deps_succeeded_names_each_grant_that_was_not_ready() -> None:
    """CLAIM-3: a claim that grants the pending d and a task never submitted reports both."""
    before = built(2, [*DIAMOND, Start(), Claim()])
    effects = (Claimed(0, (Grant("d", 1, None), Grant("z", 1, None))),)  # type: ignore[arg-type]
    assert inv.ReleasedOnlyWhenDepsSucceeded(before, before, effects, Claim()) == [
        "claimed 'd' which was not ready",
        "claimed 'z' which was not ready",
    ]


def test_every_change_notified_names_the_unannounced_version_with_its_facts() -> None:
    """EFFECT-2: b released by a's completion without its notification; the report gives
    (generation, state code) before and after: pending is 0, ready is 1."""
    before = built(2, [*DIAMOND, Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    effects = tuple(e for e in effects if not isinstance(e, Transitioned) or e.task_id != "b")
    assert inv.EveryChangeNotified(before, after, effects, Complete("a", 1)) == [
        "'b' changed (1, 0) -> (1, 1) without a notification"
    ]


def test_a_rejected_event_that_reports_a_change_or_changes_the_state_is_named() -> None:
    """SUB-3, DONE-4: a rejection returns the very same state and only its reply; one more
    effect, or another state, is reported with the reply's type and the reply."""
    before = built(1, [Submit("a", ()), Start()])
    after, effects = step(before, Claim(-1))
    assert after is before and inv.StaleCallbackReleasesNothing(before, after, effects) == []
    said = "Rejected Rejected(event_id=0, rejection=InvalidMaxTasks(value=-1))"
    grant = Claimed(0, (Grant("a", 1, None),))  # type: ignore[arg-type]
    assert inv.StaleCallbackReleasesNothing(before, before, (*effects, grant), Claim(-1)) == [
        f"{said} changed the state or reported a change"
    ]
    changed = replace(before, running=1)
    assert inv.StaleCallbackReleasesNothing(before, changed, effects, Claim(-1)) == [
        f"{said} changed the state or reported a change"
    ]


def test_a_callback_that_ends_another_generation_is_named_with_the_event() -> None:
    """DONE-5, VER-2: a `fail` naming generation 1 that ended generation 2."""
    before = built(
        1, [Submit("a", ()), Start(), Claim(), Complete("a", 1), Submit("a", ()), Claim()]
    )
    after, effects = step(before, Fail("a", 2))
    assert inv.StaleCallbackReleasesNothing(before, after, effects, Fail("a", 1)) == [
        "'a'@2 left running on Fail naming [('a', 1)]"
    ]


def test_a_claim_granting_a_task_never_submitted_shows_it_as_sequence_number_minus_one() -> None:
    """CLAIM-3: the grant of a task the index does not hold is reported, as -1 (no sequence
    number, like an unsubmitted task's), against the ready versions the rule takes."""
    before = built(2, [Submit("a", ()), Start()])
    effects = (Claimed(0, (Grant("z", 1, None),)),)  # type: ignore[arg-type]
    assert inv.ClaimTakesSmallestSeqs(before, before, effects, Claim()) == [
        "claimed sequence numbers [-1], the rule takes [0]"
    ]


def test_a_step_that_lost_every_effect_is_reported_not_raised() -> None:
    """EFFECT-2, BLOCK-1, BLOCK-2: a failure that changed the state with no effect at all, not
    even its reply, is reported as an unnotified change; the checks that look for the reply to
    find the failed version (BlockedByPickedCause, BlockWalkExact) find none, and say nothing.
    The state codes: running is 2, failed is 4."""
    before = built(1, [Submit("a", ()), Start(), Claim()])
    after, _ = step(before, Fail("a", 1))
    assert inv.check_transition(before, after, (), Fail("a", 1)) == [
        "EveryChangeNotified: 'a' changed (1, 2) -> (1, 4) without a notification"
    ]


def test_released_only_when_deps_succeeded_names_a_release_the_index_does_not_hold() -> None:
    """STATE-4: a release notified for a task never submitted is reported, not asserted on."""
    before = built(1, [Submit("a", ()), Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    ghost = Transitioned(0, "z", 1, TaskState.PENDING, TaskState.READY)  # type: ignore[arg-type]
    found = inv.ReleasedOnlyWhenDepsSucceeded(before, after, (*effects, ghost), Complete("a", 1))
    assert found == ["released 'z', which the index does not hold"]


def test_blocked_by_picked_cause_names_a_submission_blocked_with_no_unsuccessful_dependency() -> (
    None
):
    """BLOCK-2, SUB-5: b submitted again behind the succeeded a, but blocked at once: no
    dependency is unsuccessful, so the rule picks no cause, and that is the report (not a
    raise)."""
    before = built(1, [Submit("a", ()), Submit("b", ("a",)), Start(), Claim(), Complete("a", 1)])
    after, _ = step(before, Submit("b", ("a",)))
    after = with_cell(after, "b", BLOCKED)
    effects = (
        Submitted(0, "b", 2, TaskState.BLOCKED, None),  # type: ignore[arg-type]
        Transitioned(0, "b", 2, None, TaskState.BLOCKED),  # type: ignore[arg-type]
    )
    assert inv.BlockedByPickedCause(before, after, effects, Submit("b", ("a",))) == [
        "'b' blocked at submission with no unsuccessful dependency"
    ]


def _b_blocked_by_cancelling_a() -> tuple[State, State, tuple[Effect, ...]]:
    """a ready and b pending on it, then `cancel(a)`: a cancelled, b blocked by the walk."""
    before = built(1, [Submit("a", ()), Submit("b", ("a",)), Start()])
    after, effects = step(before, Cancel("a"))
    return before, after, effects


def test_blocked_by_picked_cause_names_a_blocked_task_the_index_does_not_hold() -> None:
    """BLOCK-2: a block notified for a task never submitted records no cause at all; it is
    reported with the cause None against the one the rule picks, not raised on."""
    before, after, effects = _b_blocked_by_cancelling_a()
    ghost = Transitioned(0, "z", 1, TaskState.PENDING, TaskState.BLOCKED)  # type: ignore[arg-type]
    assert inv.BlockedByPickedCause(before, after, (*effects, ghost), Cancel("a")) == [
        "'z' blocked with cause None, the rule picks"
        " Cause(task_id='a', generation=1, state=<TaskState.CANCELLED: 'cancelled'>)"
    ]


def test_blocked_by_picked_cause_picks_no_cause_on_a_step_that_changed_nothing() -> None:
    """BLOCK-2: the rule picks its cause from the version the step made unsuccessful, read in
    the state after the step. A step that returned the very state it was given made none: its
    `a` is still ready, which no cause can name, so the check picks nothing and reports
    nothing, whatever the effects claim."""
    before, _, effects = _b_blocked_by_cancelling_a()
    assert inv.BlockedByPickedCause(before, before, effects, Cancel("a")) == []


def _y_blocked_by_replacing_x() -> tuple[State, Submit]:
    """x succeeded and z running, y pending on both; then x is submitted again behind the
    failed f: the new x is blocked at submission, and the walk from it blocks y."""
    before = built(
        3,
        [
            Submit("f", ()),
            Submit("x", ()),
            Submit("z", ()),
            Submit("y", ("x", "z")),
            Start(),
            Claim(),
            Fail("f", 1),
            Complete("x", 1),
        ],
    )
    return before, Submit("x", ("f",))


def test_block_walk_exact_judges_the_walk_of_a_single_submission() -> None:
    """BLOCK-1: the walk from the blocked new x reaches exactly y."""
    before, submit = _y_blocked_by_replacing_x()
    after, effects = step(before, submit)
    assert [e.task_id for e in effects if isinstance(e, Transitioned) and e.source is not None] == [
        "y"
    ]
    assert inv.BlockWalkExact(before, after, effects, submit) == []


def test_block_walk_exact_leaves_batches_and_unknown_events_alone() -> None:
    """BLOCK-1, EFFECT-4: the same submission in a batch blocks y too, but a batch's blocks are
    its members' walks, each in turn, which the check does not redo: it reports nothing. Given
    no event, it cannot know where the walk starts, and reports nothing either (so a caller
    that knows the event must give it: `check_transition`)."""
    before, submit = _y_blocked_by_replacing_x()
    batch = SubmitBatch((submit,))
    after, effects = step(before, batch)
    assert [e.task_id for e in effects if isinstance(e, Transitioned) and e.source is not None] == [
        "y"
    ]
    assert inv.BlockWalkExact(before, after, effects, batch) == []
    after, effects = step(before, submit)
    assert inv.BlockWalkExact(before, after, effects, None) == []


def test_notified_in_seq_order_leaves_a_completion_batch_in_its_own_order() -> None:
    """EFFECT-3, EFFECT-4: a batch means its members in sequence, so completing b then a
    releases y (sequence 3, on b) before x (sequence 2, on a). That is the batch's order, not a
    breach of EFFECT-3, which orders what one step releases together."""
    before = built(
        2,
        [
            Submit("a", ()),
            Submit("b", ()),
            Submit("x", ("a",)),
            Submit("y", ("b",)),
            Start(),
            Claim(),
        ],
    )
    batch = CompleteBatch((Complete("b", 1), Complete("a", 1)))
    after, effects = step(before, batch)
    released = [
        e.task_id for e in effects if isinstance(e, Transitioned) and e.target is TaskState.READY
    ]
    assert released == ["y", "x"]
    assert inv.NotifiedInSeqOrder(before, after, effects, batch) == []


def test_notified_in_seq_order_shows_a_task_the_index_does_not_hold_as_minus_one() -> None:
    """EFFECT-3: a's completion releases b and c (sequence 1 and 2), told in order; a release
    notified after them for a task never submitted has no sequence number, shown as -1, and
    breaks the order."""
    before = built(2, [*DIAMOND, Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    ghost = Transitioned(0, "z", 1, TaskState.PENDING, TaskState.READY)  # type: ignore[arg-type]
    assert inv.NotifiedInSeqOrder(before, after, effects, Complete("a", 1)) == []
    assert inv.NotifiedInSeqOrder(before, after, (*effects, ghost), Complete("a", 1)) == [
        "ready notified in sequence order [1, 2, -1]"
    ]


# Leases (LEASE-1..LEASE-5). The mutation score found each case below: a branch of a lease check
# that reports, or skips, what only a broken core produces, and that no correct run reaches.


def test_type_ok_names_every_lease_held_by_no_task_index_and_every_bad_shape() -> None:
    """LEASE-1: each key that is no task index is reported, however many there are and in
    whatever order the map gives them (a check that stopped at the first would miss the
    rest), as is a lease that is a tuple of the wrong length."""
    s, _, _ = leased()
    n = len(s.versions)
    a = s.lookup("a")
    beyond = {n: ("w", 1), n + 1: ("w", 1), "x": ("w", 1), a: ("w", 1, 2)}
    bad = replace(s, leases=s.leases.update(beyond))
    assert sorted(inv.TypeOK(bad)) == [
        "'a' holds the lease ('w', 1, 2)",
        "a lease is held by 'x', which is no task index",
        f"a lease is held by {n}, which is no task index",
        f"a lease is held by {n + 1}, which is no task index",
    ]


def _two_roots_fail_policy() -> tuple[State, State, tuple[Effect, ...]]:
    """Under the fail policy, a and z run on leases due at 1, b waits on a and y on z: one
    expire fails both and starts two walks, which block b by a and y by z."""
    s = initial_state(2, "fail")
    s, _ = step(
        s,
        SubmitBatch((Submit("a", ()), Submit("z", ()), Submit("b", ("a",)), Submit("y", ("z",)))),
    )
    s, _ = step(s, Start())
    s, _ = step(s, Claim(2, lease_until=1))
    after, effects = step(s, Expire(1))
    assert inv.check_transition(s, after, effects, Expire(1)) == []
    return s, after, effects


def test_blocked_by_picked_cause_picks_the_first_walk_s_cause_for_a_task_it_cannot_find() -> None:
    """LEASE-3, BLOCK-2: of an expire's several walks, a blocked task the index does not hold
    is judged against the cause of the first (a's), not the last (z's)."""
    before, after, effects = _two_roots_fail_policy()
    ghost = Transitioned(effects[0].event_id, "ghost", 1, TaskState.PENDING, TaskState.BLOCKED)
    assert inv.BlockedByPickedCause(before, after, (*effects, ghost), Expire(1)) == [
        "'ghost' blocked with cause None, the rule picks Cause(task_id='a', generation=1, "
        "state=<TaskState.FAILED: 'failed'>)"
    ]


def test_blocked_by_picked_cause_names_a_requeue_blocked_with_no_unsuccessful_dependency() -> None:
    """LEASE-3, SUB-5: a requeued version is decided as a submission; blocked when none of its
    dependencies is unsuccessful, it is named, as a submission would be."""
    s = initial_state(2)
    s, _ = step(s, SubmitBatch((Submit("a", ()), Submit("b", ("a",)), Submit("c", ("b",)))))
    for event in [Start(), Claim(), Complete("a", 1), Claim(1, lease_until=1), Submit("a", ())]:
        s, _ = step(s, event)
    for event in [Claim(), Fail("a", 2, "boom")]:
        s, _ = step(s, event)
    after, effects = step(s, Expire(3))  # b is requeued blocked by a@2, c blocked by the walk
    assert (
        after.state_of("b") is TaskState.BLOCKED
        and inv.check_transition(s, after, effects, Expire(3)) == []
    )
    a_succeeded = with_cell(after, "a", s.cells[at(s, "a")] & ~STATE_MASK | SUCCEEDED)
    assert inv.BlockedByPickedCause(s, a_succeeded, effects, Expire(3)) == [
        "'b' blocked at requeue with no unsuccessful dependency"
    ]


def test_an_expire_reply_naming_versions_the_index_does_not_hold_skips_them() -> None:
    """LEASE-3, BLOCK-1: the walks start from each named version that ended unsuccessful; one
    the index does not hold (an unhashable id, an unknown task) is skipped, not the end of the
    list. A version named with a generation that is not its current one starts no walk, even
    when its task's current version is failed."""
    before, after, effects = leased("fail")
    eid = effects[0].event_id
    odd = Expired(eid, ((["x"], 1), ("zz", 1), ("a", 1)))  # type: ignore[arg-type]
    assert inv.BlockWalkExact(before, after, (odd, *effects[1:]), Expire(1)) == []
    other = Expired(eid, (("a", 7),))
    assert inv.BlockWalkExact(before, after, (other, *effects[1:]), Expire(1)) == [
        "blocked ['c'], the walk reaches []"
    ]


def test_blocked_by_picked_cause_finds_no_root_in_a_callback_that_was_not_accepted() -> None:
    """BLOCK-2: a stale fail starts no walk; a block a broken core reports with it is
    `StaleCallbackReleasesNothing`'s to name, and this check leaves the step alone."""
    before, _, _ = _b_blocked_by_cancelling_a()
    stale = Fail("a", 9, "late")
    after, effects = step(before, stale)
    assert after is before
    forged = (
        *effects,
        Transitioned(effects[0].event_id, "b", 1, TaskState.PENDING, TaskState.BLOCKED),
    )
    # A broken core that wrote a new state for it too: still no root, no cause to judge.
    assert inv.BlockedByPickedCause(before, replace(after), forged, stale) == []


def test_released_only_when_deps_succeeded_names_every_release_in_turn() -> None:
    """STATE-4: releases of tasks the index does not hold (an unhashable id among them) are
    each named, and the check goes on to the next release after them."""
    before = built(2, [*DIAMOND, Start(), Claim()])
    after, effects = step(before, Complete("a", 1))
    eid = effects[0].event_id
    forged = (
        *effects,
        Transitioned(eid, ["g"], 1, TaskState.PENDING, TaskState.READY),  # type: ignore[arg-type]
        Transitioned(eid, "ghost", 1, TaskState.PENDING, TaskState.READY),
        Transitioned(eid, "d", 1, TaskState.PENDING, TaskState.READY),
    )
    assert inv.ReleasedOnlyWhenDepsSucceeded(before, after, forged, Complete("a", 1)) == [
        "released ['g'], which the index does not hold",
        "released 'ghost', which the index does not hold",
        "released 'd' with unmet dependencies ['b', 'c']",
    ]


def test_expire_ends_exactly_the_due_leases_reads_no_refused_expire_as_one() -> None:
    """LEASE-3: a refused expire is not judged as an expire (its `now` may be no number); a
    broken core that moved a lease on it is still named, as any step would be."""
    before, _, _ = leased()
    bad = Expire("soon")
    same, effects = step(before, bad)
    assert same is before and isinstance(effects[0], Rejected)
    b = before.lookup("b")
    moved = replace(before, leases=before.leases.set(b, (None, 9)))
    assert inv.ExpireEndsExactlyTheDueLeases(before, moved, effects, bad) == [
        "'b' runs on with its lease changed (None, 5)"
    ]


def test_expire_ends_exactly_the_due_leases_names_a_heartbeat_that_changed_more() -> None:
    """LEASE-2: an accepted heartbeat changes nothing but its version's deadline, to its own:
    a changed state of another task is named, and so is a deadline it did not set."""
    before, _, _ = leased()
    beat = Heartbeat("b", 1, 9)
    after, effects = step(before, beat)
    assert inv.ExpireEndsExactlyTheDueLeases(before, after, effects, beat) == []
    c = at(after, "c")
    other_cell = replace(after, cells=after.cells.set(c, after.cells[c] ^ REMAINING_ONE))
    assert inv.ExpireEndsExactlyTheDueLeases(before, other_cell, effects, beat) == [
        "a heartbeat for 'b' changed more than a lease"
    ]
    b = before.lookup("b")
    wrong = replace(after, leases=after.leases.set(b, (None, 8)))
    assert inv.ExpireEndsExactlyTheDueLeases(before, wrong, effects, beat) == [
        "a heartbeat left 'b' the lease (None, 8)"
    ]
    # A lease held beyond the table is TypeOK's to name (above), not this check's.
    n = len(before.versions)
    beyond = replace(before, leases=before.leases.set(n, ("w", 1)))
    assert inv.ExpireEndsExactlyTheDueLeases(beyond, after, effects, beat) == []
